"""The names of coflow and flow instances, written and read here only. A coflow instance
is ``<job id>/i<iteration>/c<index>`` (the job's ``index``-th coflow of iteration
``iteration``, both from 0); a flow is ``<coflow id>/f<index>`` (the ``index``-th flow of
its coflow). Both backends' records and the packet capture's name them so.
"""
from __future__ import annotations


def coflow_id(job_id: str, iteration: int, index: int) -> str:
    """The name of the job's ``index``-th coflow in iteration ``iteration``."""
    return f"{job_id}/i{iteration}/c{index}"


def flow_id(coflow: str, index: int) -> str:
    """The name of the ``index``-th flow of the coflow named ``coflow``."""
    return f"{coflow}/f{index}"


def flow_ids(coflows: list[str], indices: list[int]) -> list[str]:
    """``flow_id(c, i)`` for each pair of ``coflows`` and ``indices`` (equal lengths),
    with each distinct index's suffix formatted once (the FB2010 trace's records name
    706,397 flows)."""
    if len(coflows) != len(indices):
        raise ValueError(f"{len(coflows)} coflow names for {len(indices)} flow indices")
    if indices and min(indices) < 0:
        raise ValueError(f"flow index {min(indices)} < 0")
    suffix = [flow_id("", i) for i in range(max(indices, default=-1) + 1)]
    return [c + suffix[i] for c, i in zip(coflows, indices)]


def parse_coflow_id(name: str) -> tuple[str, int, int]:
    """(job id, iteration, index) of a coflow name; ValueError if it is not one."""
    job, it, c = name.rsplit("/", 2)
    if not (it.startswith("i") and c.startswith("c")):
        raise ValueError(f"not a coflow id: {name!r}")
    return job, int(it[1:]), int(c[1:])


def parse_flow_id(name: str) -> tuple[str, int]:
    """(coflow name, index) of a flow name; ValueError if it is not one."""
    coflow, f = name.rsplit("/", 1)
    if not f.startswith("f"):
        raise ValueError(f"not a flow id: {name!r}")
    return coflow, int(f[1:])
