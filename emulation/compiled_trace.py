"""A trace compiled onto a topology: the static tables a run reads and never changes.

``compile_trace`` numbers the trace's stages, jobs, coflow templates (one per coflow of a
job's iteration) and template flows in trace order (stages, jobs, coflows, flows), and
computes from them the paths and per-link loads that the run state (``ClusterState``,
``emulation/state.py``), the policies' view and the packet capture's reader read.
``CompiledTrace`` holds them; its fields are not rebound, and its arrays are shared with
the run state and the kernels, which only read them.

Units: ``cap_bps`` bits/s, ``cap`` bytes/s (one entry per link, then a dummy link of
infinite capacity that pads ``path_links``), sizes and loads in bytes, times in seconds.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from emulation.topology import Topology
from workloads.hpo import planned_successors
from workloads.trace import Trace

CSR = tuple[np.ndarray, np.ndarray, np.ndarray]


@dataclass(frozen=True, eq=False)
class CompiledTrace:
    """The static tables of one trace on one topology (``compile_trace``). Prefixes:
    ``stage_`` per stage, ``job_`` per job, ``tmpl_`` per coflow template, ``t_`` the
    flows of each template (``t_f0[t]:t_f1[t]``), ``tf_`` per template flow."""

    trace: Trace
    topo: Topology
    release_at_zero: bool
    L: int  # links (the dummy link is index L)
    cap_bps: np.ndarray
    cap: np.ndarray  # bytes/s, dummy last
    stage_ids: list[str]
    stage_app: list[str]
    stage_weight: np.ndarray
    stage_followed: np.ndarray  # the tuner's plan certainly follows the stage (chained)
    stage_arrival: np.ndarray  # its app's arrival (0 with release_at_zero)
    stage_num_deps: np.ndarray  # stages it depends on
    stage_children: list[list[int]]  # stages that depend on it
    stage_jobs: list[list[int]]
    job_ids: list[str]
    job_stage: np.ndarray
    job_iters: np.ndarray
    job_compute: np.ndarray  # compute seconds per iteration
    job_t0: np.ndarray  # the job's templates are job_t0[j]:job_t1[j], in iteration order
    job_t1: np.ndarray
    P: int  # links on the longest path (path_links' width)
    path_links: np.ndarray  # paths x P, padded with the dummy link
    tf_pid: np.ndarray  # path of each template flow
    tf_links: np.ndarray
    tf_size: np.ndarray  # bytes
    tf_tol: np.ndarray  # bytes left at or below which the flow counts as finished
    tf_src: list[str]
    tf_dst: list[str]
    t_f0: np.ndarray
    t_f1: np.ndarray
    tmpl_lb: np.ndarray  # templates x L bytes
    tmpl_sync_s: np.ndarray  # uncontended time of the template
    tmpl_size: np.ndarray  # bytes
    tmpl_after_lb: np.ndarray  # bytes of the job's templates after it, same iteration
    tmpl_after_s: np.ndarray
    job_iter_lb: np.ndarray  # jobs x L bytes of one iteration
    job_iter_sync_s: np.ndarray
    job_lb_csr: CSR  # job_iter_lb as sparse rows (ptr, column, value)
    tmpl_after_csr: CSR  # tmpl_after_lb likewise
    pair_pid: dict[tuple[str, str], int]  # the path of each (src, dst) host pair

    def coflow_sizes_bytes(self) -> np.ndarray:
        """Sizes of every coflow instance the trace will release (for policies' prepare)."""
        tmpl_job = np.zeros(len(self.t_f0), dtype=np.int64)
        for j, (a, b) in enumerate(zip(self.job_t0.tolist(), self.job_t1.tolist())):
            tmpl_job[a:b] = j  # in template order (a job placed during the run: at the end)
        return np.repeat(self.tmpl_size, self.job_iters[tmpl_job]) if len(tmpl_job) else np.zeros(0)


def _csr(m: np.ndarray) -> CSR:
    """(ptr, column, value) of the nonzero entries of a 2-D array, row by row."""
    rows, cols = np.nonzero(m)
    ptr = np.searchsorted(rows, np.arange(m.shape[0] + 1)).astype(np.int64)
    return ptr, cols.astype(np.int64), m[rows, cols].astype(float)


def _suffix_tables(link_bytes: np.ndarray, sync_s: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """For one job's templates in iteration order (their bytes on each link and
    uncontended times ``sync_s``): the bytes and time of the templates after each, and
    the whole iteration's bytes and time."""
    after_bytes = np.zeros_like(link_bytes)
    after_s = np.zeros(len(sync_s))
    acc_bytes, acc_s = np.zeros(link_bytes.shape[1]), 0.0
    for t in range(len(sync_s) - 1, -1, -1):
        after_bytes[t] = acc_bytes
        after_s[t] = acc_s
        acc_bytes = acc_bytes + link_bytes[t]
        acc_s += sync_s[t]
    return after_bytes, after_s, acc_bytes, acc_s


def place_job(ct: CompiledTrace, j: int, coflows: list) -> CompiledTrace:
    """``ct`` with job ``j``'s coflow templates (``CoflowSpec``s, in iteration order; the
    job had none) appended after every template, for a job placed during the run. Its
    flows' host pairs must have paths (``compile_trace`` numbers every pair of a trace
    with a cluster)."""
    flows = [f for c in coflows for f in c.flows]
    if not flows:
        return ct
    L, T0, F0 = ct.L, len(ct.t_f0), len(ct.tf_size)
    pid = np.array([ct.pair_pid[(f.src, f.dst)] for f in flows], dtype=np.int64)
    size = np.array([f.size_bytes for f in flows], dtype=float)
    counts = np.array([len(c.flows) for c in coflows], dtype=np.int64)
    f1 = F0 + np.cumsum(counts)
    links = ct.path_links[pid]
    link_bytes = np.zeros((len(coflows), L + 1))
    np.add.at(link_bytes, (np.repeat(np.repeat(np.arange(len(coflows)), counts), ct.P),
                           links.ravel()), np.repeat(size, ct.P))
    link_bytes = link_bytes[:, :L]
    sync_s = (link_bytes / ct.cap[None, :L]).max(axis=1, initial=0.0)
    after_lb, after_s, iter_lb, iter_s = _suffix_tables(link_bytes, sync_s)
    job_t0, job_t1 = ct.job_t0.copy(), ct.job_t1.copy()
    job_t0[j], job_t1[j] = T0, T0 + len(coflows)
    job_iter_lb = ct.job_iter_lb.copy()
    job_iter_lb[j] = iter_lb
    job_iter_sync_s = ct.job_iter_sync_s.copy()
    job_iter_sync_s[j] = iter_s
    tmpl_after_lb = np.concatenate([ct.tmpl_after_lb, after_lb])
    tf_size = np.concatenate([ct.tf_size, size])
    return dataclasses.replace(
        ct, job_t0=job_t0, job_t1=job_t1, tf_pid=np.concatenate([ct.tf_pid, pid]),
        tf_links=np.concatenate([ct.tf_links, links]), tf_size=tf_size,
        tf_tol=1e-9 * tf_size + 1e-6, tf_src=ct.tf_src + [f.src for f in flows],
        tf_dst=ct.tf_dst + [f.dst for f in flows],
        t_f0=np.concatenate([ct.t_f0, f1 - counts]), t_f1=np.concatenate([ct.t_f1, f1]),
        tmpl_lb=np.concatenate([ct.tmpl_lb, link_bytes]),
        tmpl_sync_s=np.concatenate([ct.tmpl_sync_s, sync_s]),
        tmpl_size=np.concatenate([ct.tmpl_size, np.add.reduceat(size, f1 - counts - F0)]),
        tmpl_after_lb=tmpl_after_lb, tmpl_after_s=np.concatenate([ct.tmpl_after_s, after_s]),
        job_iter_lb=job_iter_lb, job_iter_sync_s=job_iter_sync_s,
        job_lb_csr=_csr(job_iter_lb), tmpl_after_csr=_csr(tmpl_after_lb))


def compile_trace(trace: Trace, topo: Topology, *, release_at_zero: bool = False
                  ) -> CompiledTrace:
    """The static tables of ``trace`` on ``topo``; with ``release_at_zero`` every app
    arrives at t = 0. A trace with a cluster has a path for every pair of its hosts
    (numbered after its flows' pairs), for the jobs it places during the run
    (``place_job``)."""
    L = len(topo.links)
    cap_bps = np.array([l.rate_bps for l in topo.links], dtype=float)
    cap = np.concatenate([cap_bps / 8.0, [np.inf]])  # bytes/s, dummy last
    stages = trace.stages()
    stage_ids = [s.stage_id for s in stages]
    sidx = {sid: i for i, sid in enumerate(stage_ids)}
    arrival = {a.app_id: a.arrival_s for a in trace.apps}
    followed = planned_successors(trace)
    stage_children: list[list[int]] = [[] for _ in stages]
    for i, s in enumerate(stages):
        for d in s.depends_on:
            stage_children[sidx[d]].append(i)
    jt = _jobs_and_templates(stages)
    flows = jt["flows"]
    tf_src = [f.src for f in flows]
    tf_dst = [f.dst for f in flows]
    tf_pid, path_links, pair_pid = _paths(trace, topo, tf_src, tf_dst)
    P = path_links.shape[1]
    tf_links = path_links[tf_pid] if len(tf_pid) else np.zeros((0, P), dtype=np.int64)
    tf_size_a = np.array([f.size_bytes for f in flows], dtype=float)
    job_t0_a = np.array(jt["job_t0"], dtype=np.int64)
    job_t1_a = np.array(jt["job_t1"], dtype=np.int64)
    tt = _template_tables(jt["t_f0"], jt["t_f1"], tf_links, tf_size_a, cap, job_t0_a,
                          job_t1_a)
    return CompiledTrace(
        trace=trace, topo=topo, release_at_zero=release_at_zero, L=L, cap_bps=cap_bps,
        cap=cap, stage_ids=stage_ids, stage_app=[s.app_id for s in stages],
        stage_weight=np.array([s.weight for s in stages], dtype=float),
        stage_followed=np.array([s.stage_id in followed for s in stages], dtype=bool),
        stage_arrival=np.array([0.0 if release_at_zero else arrival[s.app_id] for s in stages]),
        stage_num_deps=np.array([len(s.depends_on) for s in stages], dtype=np.int64),
        stage_children=stage_children, stage_jobs=jt["stage_jobs"], job_ids=jt["job_ids"],
        job_stage=np.array(jt["job_stage"], dtype=np.int64),
        job_iters=np.array(jt["job_iters"], dtype=np.int64),
        job_compute=np.array(jt["job_compute"], dtype=float), job_t0=job_t0_a,
        job_t1=job_t1_a, P=P, path_links=path_links, tf_pid=tf_pid, tf_links=tf_links,
        tf_size=tf_size_a, tf_tol=1e-9 * tf_size_a + 1e-6, tf_src=tf_src, tf_dst=tf_dst,
        t_f0=np.array(jt["t_f0"], dtype=np.int64), t_f1=np.array(jt["t_f1"], dtype=np.int64),
        **tt, pair_pid=pair_pid)


def _jobs_and_templates(stages: list) -> dict[str, list]:
    """Jobs in stage order with their per-iteration coflow templates; the templates'
    flows in trace order (``t_f0``/``t_f1``: each template's first and past-last flow)."""
    out: dict[str, list] = {k: [] for k in ("job_stage", "job_iters", "job_compute",
                                            "job_t0", "job_t1", "job_ids", "stage_jobs",
                                            "t_f0", "t_f1", "flows")}
    flows = out["flows"]
    for si, s in enumerate(stages):
        js = []
        for job in s.jobs:
            js.append(len(out["job_ids"]))
            out["job_ids"].append(job.job_id)
            out["job_stage"].append(si)
            out["job_iters"].append(job.iterations)
            out["job_compute"].append(job.compute_s)
            out["job_t0"].append(len(out["t_f0"]))
            for c in job.coflows:
                out["t_f0"].append(len(flows))
                flows.extend(c.flows)
                out["t_f1"].append(len(flows))
            out["job_t1"].append(len(out["t_f0"]))
        out["stage_jobs"].append(js)
    return out


def _paths(trace: Trace, topo: Topology, tf_src: list[str], tf_dst: list[str]
           ) -> tuple[np.ndarray, np.ndarray, dict[tuple[str, str], int]]:
    """One path per (src, dst) pair, numbered in order of first appearance (a trace with a
    cluster: every pair of its hosts after its flows' pairs): each flow's path, the
    paths' links (padded with the dummy link ``L``), and the path of each host pair."""
    L = len(topo.links)
    cluster_hosts = list(trace.hosts) if trace.cluster is not None else []
    host_code, host_names = pd.factorize(np.array(tf_src + tf_dst + cluster_hosts, dtype=object))
    num_hosts = len(host_names)
    nf = len(tf_src)
    every = host_code[2 * nf:]
    every_pair = (np.repeat(every, len(every)) * num_hosts + np.tile(every, len(every)))
    every_pair = every_pair[np.repeat(every, len(every)) != np.tile(every, len(every))]
    tf_pid, pairs = pd.factorize(np.concatenate(
        [host_code[:nf] * num_hosts + host_code[nf:2 * nf], every_pair]))
    tf_pid = tf_pid[:nf].astype(np.int64)
    ends = list(zip((pairs // max(num_hosts, 1)).tolist(),
                    (pairs % max(num_hosts, 1)).tolist()))
    paths = [topo.path_indices(host_names[a], host_names[b]) for a, b in ends]
    P = max([1] + [len(p) for p in paths])
    path_links = np.full((len(paths), P), L, dtype=np.int64)
    for i, p in enumerate(paths):
        path_links[i, : len(p)] = p
    pair_pid = {(str(host_names[a]), str(host_names[b])): i for i, (a, b) in enumerate(ends)}
    return tf_pid, path_links, pair_pid


def _template_tables(t_f0: list[int], t_f1: list[int], tf_links: np.ndarray,
                     tf_size_a: np.ndarray, cap: np.ndarray, job_t0_a: np.ndarray,
                     job_t1_a: np.ndarray) -> dict[str, Any]:
    """Per template: bytes on each link (T x L), uncontended time, size, and the suffix
    sums inside its job's iteration (bytes and time of the templates after it); per
    job: one iteration's bytes per link and time; the compressed rows of both."""
    T, L, P = len(t_f0), len(cap) - 1, tf_links.shape[1]
    tl = np.zeros((T, L + 1))
    if T:
        tmpl_of_tf = np.repeat(np.arange(T), np.array(t_f1, dtype=np.int64)
                               - np.array(t_f0, dtype=np.int64))
        cell = np.repeat(tmpl_of_tf, P) * (L + 1) + tf_links.ravel()
        tl = np.bincount(cell, weights=np.repeat(tf_size_a, P),
                         minlength=T * (L + 1)).reshape(T, L + 1)
    tmpl_lb = tl[:, :L]
    tmpl_sync_s = (tmpl_lb / cap[None, :L]).max(axis=1, initial=0.0)
    tmpl_size = np.array([tf_size_a[a:b].sum() for a, b in zip(t_f0, t_f1)])
    tmpl_after_lb = np.zeros_like(tmpl_lb)
    tmpl_after_s = np.zeros(T)
    J = len(job_t0_a)
    job_iter_lb = np.zeros((J, L))
    job_iter_sync_s = np.zeros(J)
    for j in range(J):
        a, b = job_t0_a[j], job_t1_a[j]
        (tmpl_after_lb[a:b], tmpl_after_s[a:b], job_iter_lb[j],
         job_iter_sync_s[j]) = _suffix_tables(tmpl_lb[a:b], tmpl_sync_s[a:b])
    return {"tmpl_lb": tmpl_lb, "tmpl_sync_s": tmpl_sync_s, "tmpl_size": tmpl_size,
            "tmpl_after_lb": tmpl_after_lb, "tmpl_after_s": tmpl_after_s,
            "job_iter_lb": job_iter_lb, "job_iter_sync_s": job_iter_sync_s,
            "job_lb_csr": _csr(job_iter_lb), "tmpl_after_csr": _csr(tmpl_after_lb)}
