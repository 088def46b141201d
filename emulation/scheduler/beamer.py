"""Beamer: stage-aware coflow ordering (He et al., IEEE TNSM 19(2), 2022), as reconstructed.

The paper's full text is not available to us; this follows ``DESIGN.md`` section 4:

1. For every active stage s, ``R_s[l]`` = bytes all remaining iterations of all its jobs
   still put on link l (in-flight coflow remainder included): ``view.stage_link_bytes``.
2. Order stages with Sincronia's BSSI on ``R_s`` (capacity-normalised) with the stage
   weights: a stage ends only when all its bytes are through, so the stage is the unit
   whose completion counts, as a coflow is in Sincronia.
3. Inside a stage, jobs by longest remaining critical path first (remaining iterations x
   (compute + uncontended sync time)): the stage ends with its slowest job, so the job
   with the most work left must never wait. ``BeamerStageOnly`` (the Grouper-like
   ablation) keeps jobs in FIFO order instead.
4. Coflow order = (stage rank, job rank, release order). Recomputed at every event.
"""
from __future__ import annotations

import numpy as np

from emulation.scheduler.base import Decision, Policy, View
from emulation.scheduler.bssi import bssi_order


class Beamer(Policy):
    """Stage order by BSSI over stage loads, jobs by longest remaining critical path."""

    name = "beamer"
    jobs_by_critical_path = True

    def decide(self, view: View) -> Decision:
        if view.num_coflows == 0:
            return Decision(order=np.zeros(0, dtype=np.int64))
        stage_order = bssi_order(view.stage_link_bytes, view.stage_weight, view.capacity_bps)
        stage_rank = np.empty(len(stage_order), dtype=np.int64)
        stage_rank[stage_order] = np.arange(len(stage_order))
        c_stage_rank = stage_rank[view.coflow_stage]
        if self.jobs_by_critical_path:
            job_key = -view.job_critical_path_s[view.coflow_job]
        else:
            job_key = view.coflow_job.astype(float)  # job index = trace order = FIFO
        order = np.lexsort((view.coflow_seq, job_key, c_stage_rank))
        return Decision(order=order)


class BeamerStageOnly(Beamer):
    """Ablation (Grouper-like): Beamer's stage order, jobs inside a stage in FIFO order."""

    name = "beamer-stage-only"
    jobs_by_critical_path = False
