"""The policies' read-only ``View`` (``emulation/scheduler/base.py``) of a run's state, built
from a ``ClusterState`` (``emulation/state.py``) at each decision, the same way in both
backends.

``ViewBuilder`` owns what keeps building cheap: the index part (active coflow ids, stages
and jobs, their local numbering and id tuples) is cached until the sets of active coflows,
stages or jobs change (``ClusterState.structure_version``), and every field that costs
more than a lookup is a callable evaluated on first read, so a policy pays only for what
it reads. The link loads (bytes) run compiled in ``emulation/view_kernels.py``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from emulation import view_kernels
from emulation.scheduler.base import View

if TYPE_CHECKING:
    from emulation.state import ClusterState


class ViewIndex(NamedTuple):
    """The index part of a view: the active coflow ids (``cids``), stages and jobs, their
    local numbering (``s_local``: stage -> row; ``j_local``, ``c_local``: row per job
    and coflow id, -1 if not active), each active coflow's job (``c_job``) and the id
    strings of coflows, stages and jobs (read-only arrays)."""

    cids: np.ndarray
    stages: np.ndarray
    s_local: dict[int, int]
    jobs: np.ndarray
    j_local: np.ndarray
    c_local: np.ndarray
    c_job: np.ndarray
    coflow_ids: tuple[str, ...]
    stage_ids: tuple[str, ...]
    job_ids: tuple[str, ...]


class ViewBuilder:
    """Builds the views of one ``ClusterState``, keeping their index part between calls."""

    def __init__(self) -> None:
        self._index: tuple[int, ViewIndex] | None = None

    def index(self, st: ClusterState) -> ViewIndex:
        """The view's index part; cached until the active sets change."""
        if self._index is not None and self._index[0] == st.structure_version:
            return self._index[1]
        ct = st.compiled
        cids = np.fromiter(st.active_coflows, dtype=np.int64, count=len(st.active_coflows))
        stages = np.fromiter(st.active_stages, dtype=np.int64, count=len(st.active_stages))
        s_local = {int(s): i for i, s in enumerate(stages)}
        jobs = np.array([j for s in stages for j in ct.stage_jobs[s] if not st.job_done[j]],
                        dtype=np.int64)
        j_local = np.full(len(ct.job_ids), -1, dtype=np.int64)
        j_local[jobs] = np.arange(len(jobs))
        c_local = np.full(len(st.c_job), -1, dtype=np.int64)
        c_local[cids] = np.arange(len(cids))
        c_job = np.array([st.c_job[c] for c in cids], dtype=np.int64)
        for a in (cids, stages, jobs, j_local, c_local, c_job):
            a.setflags(write=False)
        out = ViewIndex(cids, stages, s_local, jobs, j_local, c_local, c_job,
                        tuple(st.c_ids[c] for c in cids),
                        tuple(ct.stage_ids[s] for s in stages),
                        tuple(ct.job_ids[j] for j in jobs))
        self._index = (st.structure_version, out)
        return out

    def build(self, st: ClusterState) -> tuple[View, np.ndarray]:
        """The policy's read-only view of ``st`` now, and the coflow ids (cids) its rows
        stand for."""
        ix = self.index(st)
        ct = st.compiled
        f = _Fields(st, ix)
        cids, stages, jobs, c_job, s_local = ix.cids, ix.stages, ix.jobs, ix.c_job, ix.s_local
        # cheap fields are callables too: a policy pays only for what it reads
        view = View(
            now_s=st.now,
            coflow_ids=ix.coflow_ids,
            stage_ids=ix.stage_ids,
            job_ids=ix.job_ids,
            capacity_bps=ct.cap_bps,
            coflow_stage=lambda: np.array([s_local[int(ct.job_stage[j])] for j in c_job],
                                          dtype=np.int64),
            coflow_job=lambda: ix.j_local[c_job],
            coflow_release_s=lambda: np.array([st.c_release[c] for c in cids]),
            coflow_seq=cids,
            coflow_size_bytes=lambda: np.array([ct.tmpl_size[st.c_tmpl[c]] for c in cids]),
            coflow_sent_bytes=lambda: st.coflow_sent_bytes(cids, ix.c_local[st.a_cf]),
            coflow_link_bytes=f.coflow_link_bytes,
            stage_weight=lambda: ct.stage_weight[stages],
            stage_followed=lambda: ct.stage_followed[stages],
            stage_start_s=lambda: st.stage_start[stages],
            stage_link_bytes=f.stage_link_bytes,
            job_stage=lambda: np.array([s_local[int(s)] for s in ct.job_stage[jobs]],
                                       dtype=np.int64),
            job_remaining_iterations=lambda: ct.job_iters[jobs] - st.job_iter[jobs],
            job_critical_path_s=f.critical_path,
            job_link_bytes=f.job_link_bytes,
        )
        return view, cids


class _Fields:
    """The view fields that cost more than a lookup, computed when first read (the
    coflows' link bytes once per view)."""

    def __init__(self, st: ClusterState, ix: ViewIndex):
        self.st, self.ix = st, ix
        self._clb: np.ndarray | None = None

    def coflow_link_bytes(self) -> np.ndarray:
        if self._clb is None:
            st, ct = self.st, self.st.compiled
            m = view_kernels.coflow_link_bytes(self.ix.c_local, st.a_cf, st.a_pid, st.a_rem,
                                               ct.path_links, len(self.ix.cids), ct.L + 1)
            self._clb = m[:, :ct.L]
        return self._clb

    def _remaining_link_bytes(self, rows: np.ndarray, num_rows: int) -> np.ndarray:
        """Bytes every remaining iteration of each active job puts on each link,
        summed into row ``rows[k]`` for job ``jobs[k]``."""
        st, ct, jobs = self.st, self.st.compiled, self.ix.jobs
        L = ct.L
        if not len(jobs):
            return np.zeros((num_rows, L))
        ph = st.job_phase[jobs]
        full = ct.job_iters[jobs] - st.job_iter[jobs] - (ph >= 0)
        inflight_t = np.where(ph >= 0, ct.job_t0[jobs] + ph, -1)
        cur = np.where(ph >= 0, self.ix.c_local[st.job_coflow[jobs]], -1)
        clb = self.coflow_link_bytes() if (cur >= 0).any() else np.zeros((0, L))
        return view_kernels.stage_link_bytes(jobs, rows, full, inflight_t, cur,
                                             *ct.job_lb_csr, *ct.tmpl_after_csr,
                                             np.ascontiguousarray(clb), num_rows, L)

    def stage_link_bytes(self) -> np.ndarray:
        ct, ix = self.st.compiled, self.ix
        s_row = np.array([ix.s_local[int(s)] for s in ct.job_stage[ix.jobs]], dtype=np.int64)
        return self._remaining_link_bytes(s_row, len(ix.stages))

    def job_link_bytes(self) -> np.ndarray:
        n = len(self.ix.jobs)
        return self._remaining_link_bytes(np.arange(n, dtype=np.int64), n)

    def critical_path(self) -> np.ndarray:
        st, ct, jobs = self.st, self.st.compiled, self.ix.jobs
        ph = st.job_phase[jobs]
        it = st.job_iter[jobs]
        iter_s = ct.job_compute[jobs] + ct.job_iter_sync_s[jobs]
        cp = (ct.job_iters[jobs] - it - 1) * iter_s
        computing = ph < 0
        cp[computing] += (np.maximum(st.job_compute_end[jobs[computing]] - st.now, 0.0)
                          + ct.job_iter_sync_s[jobs[computing]])
        compute_only = ct.job_t1[jobs] == ct.job_t0[jobs]
        cp[compute_only] = 0.0
        inflight = np.flatnonzero(ph >= 0)
        if len(inflight):
            # the in-flight coflow counts whole (its uncontended time), not by the bytes
            # left: two equal jobs then keep their order while their flows progress,
            # instead of swapping priority at every event (costly for real TCP)
            t = ct.job_t0[jobs[inflight]] + ph[inflight]
            cp[inflight] += ct.tmpl_sync_s[t] + ct.tmpl_after_s[t]
        return cp
