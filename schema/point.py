"""One sweep point of an experiment TOML checked before any run: its first error
(``point_error``: the ``[experiment]``, ``[topology]``, ``[cluster]`` and ``[workload]``
values, the trace file validated whole, ``trace_file_hosts``), its ``[cluster]``
(``point_cluster``) and the topology's hosts against the trace's, with a note on hosts
no flow uses (``check_topology_hosts``; ``hosts_source`` names where the trace's hosts
come from).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from schema.experiment import ExperimentSection
from workloads.config import ConfigError, as_toml, build


def trace_file_hosts(path: Path, key: str = "experiment.trace") -> tuple[str, ...]:
    """The hosts of a trace file, validated whole as a run loads it
    (``coflow_benchmark.load_any``: a JSON trace's ``hosts``, a coflow-benchmark file's
    ports ``h0..``; FB2010's 706,397 flows in about 0.3 s). ConfigError naming ``key``
    (the TOML key that names the file) and the trace's problem (``TraceError``'s line,
    which names the file) if it is not a valid trace."""
    from workloads import coflow_benchmark
    from workloads.trace import TraceError
    try:
        return coflow_benchmark.load_any(path).hosts
    except TraceError as exc:
        raise ConfigError(f"{key}: {exc}") from None


def check_topology_hosts(topo: Any, trace_hosts: tuple[str, ...], *, hosts_key: str
                         ) -> str | None:
    """Check before any run that the topology ``topo`` (a ``TopologyConfig``) holds every
    host of the trace (``trace_hosts``; ``hosts_key`` says where their number comes from,
    e.g. ``workload.num_hosts = 16``): ConfigError naming ``topology.num_hosts`` if not.
    Returns a one-line note naming the topology's hosts the trace does not have (no flow
    can use them), else None: those of a ``topology.num_hosts`` larger than the trace's
    host count, and the kind's own (``TopologyKind.notes``: for a leaf-spine, the hosts it
    adds to fill its last leaf, and one leaf, whose spines no flow crosses)."""
    from emulation.topology import TOPOLOGIES, build_topology, host_span
    wanted = topo.num_hosts or len(trace_hosts)
    built = build_topology(topo, trace_hosts, hosts_key=hosts_key)
    parts = []
    used = set(trace_hosts)
    unused = [h for h in built.hosts[:wanted] if h not in used]
    if unused:
        parts.append(f"topology.num_hosts = {topo.num_hosts} is more than the trace's host "
                     f"count ({hosts_key}): "
                     + (f"the {len(unused)} hosts {host_span(unused)}, not in the trace, carry"
                        if len(unused) > 1 else f"the host {host_span(unused)}, not in the "
                        "trace, carries")
                     + " no traffic")
    source = f"topology.num_hosts = {topo.num_hosts}" if topo.num_hosts else hosts_key
    parts += TOPOLOGIES[topo.kind].notes(topo, built, wanted=wanted, source=source)
    return "; ".join(parts) or None


def hosts_source(exp: Any, workload: Any, hosts: tuple[str, ...]) -> str:
    """How a host-count message names where the trace's hosts come from."""
    if exp.trace:
        return f"experiment.trace {exp.trace}: {len(hosts)} hosts"
    return f"workload.num_hosts = {workload.num_hosts}"


def point_error(path: Path, tables: dict[str, dict[str, Any]],
                trace_hosts: dict[str, tuple[str, ...] | ConfigError]) -> str | None:
    """The first error of one sweep point's tables (as ``ConfigError`` words it, without
    the file's path), or None: ``[experiment]`` and ``[topology]`` values, ``[workload]``
    under each seed, the trace file (validated whole: ``trace_file_hosts``) and the
    topology's hosts against the trace's (``trace_hosts`` caches each trace file's hosts,
    or its error, by resolved path: one load per file; a missing trace file is left to
    the caller)."""
    from emulation.topology import TopologyConfig
    from workloads.generator import WorkloadConfig, check_trial_sizes
    try:
        exp = build(ExperimentSection, tables["experiment"], "experiment")
        topo = build(TopologyConfig, tables["topology"], "topology")
        cluster = point_cluster(tables)
        if exp.trace and not (path.parent / exp.trace).resolve().exists():
            return None
        if exp.trace and cluster is not None:
            raise ConfigError("[cluster]: places the trials of generated traces; "
                              "experiment.trace names a pinned trace file")
        workload = [build(WorkloadConfig, {**tables["workload"], "seed": seed}, "workload")
                    for seed in (exp.seeds[:1] if exp.trace else exp.seeds)][0]
        if not exp.trace:
            check_trial_sizes(workload, cluster)
        if exp.trace:
            tp = (path.parent / exp.trace).resolve()
            if str(tp) not in trace_hosts:
                try:
                    trace_hosts[str(tp)] = trace_file_hosts(
                        tp, key=f"experiment.trace = {as_toml(exp.trace)}")
                except ConfigError as exc:
                    trace_hosts[str(tp)] = exc
            hosts = trace_hosts[str(tp)]
            if isinstance(hosts, ConfigError):
                raise hosts
        else:
            hosts = tuple(f"h{i}" for i in range(workload.num_hosts))  # the generator's names
        check_topology_hosts(topo, hosts, hosts_key=hosts_source(exp, workload, hosts))
    except ConfigError as exc:
        return str(exc)
    return None


def point_cluster(tables: dict[str, dict[str, Any]]) -> Any:
    """The ``ClusterConfig`` of one sweep point's tables, or None for a file without a
    ``[cluster]`` table (pinned traces)."""
    from workloads.cluster import ClusterConfig
    if "cluster" not in tables:
        return None
    return build(ClusterConfig, tables["cluster"], "cluster")
