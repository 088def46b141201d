"""Beamer: stage-aware coflow ordering for HPO traffic (He et al., IEEE TNSM 19(2), 2022),
as this project reconstructs it, plus the two ablations the README compares it with.

``beamer`` (the project's best stage-aware ordering; derivation, every variant tried and
their numbers: ``docs/beamer.md``): online Sincronia, i.e. Bottleneck-Select-Scale-Iterate
over the individual active coflows (remaining bytes per link, capacity-normalised),
recomputed when a coflow arrives or completes, with **weights from the stage**: a stage ends with its slowest job, so a
coflow of a job on its stage's critical path (remaining critical path within
``critical_tolerance`` of the stage's longest) has the stage's weight, and a coflow of a
job with slack has ``slack_weight`` x the stage's weight: delaying it does not delay its
stage, so it yields to other stages' critical work. ``critical_tolerance`` and
``slack_weight`` were chosen on training seeds only (``docs/beamer.md``).

``beamer-sbssi`` (DESIGN.md section 4's reconstruction, kept as an ablation):
1. For every active stage s, ``R_s[l]`` = bytes all remaining iterations of all its jobs
   still put on link l (in-flight coflow remainder included): ``view.stage_link_bytes``.
2. Order stages with BSSI on ``R_s`` (capacity-normalised) with the stage weights.
3. Inside a stage, jobs by longest remaining critical path first.
4. Coflow order = (stage rank, job rank, release order). Recomputed at every event.
``beamer-stage-only`` (Grouper-like ablation): the same stage order, jobs in FIFO order.

Why the stage-level orders lose under congestion: in SHA and Hyperband each tuning job is
a chain of stages, so finishing a rung early only releases the next rung of the same job
(its SCTs add up to the job's completion time); ranking whole stages by their remaining
bytes rushes short early rungs and starves long final ones (``docs/beamer.md``).
"""
from __future__ import annotations

import numpy as np

from emulation.scheduler.base import Decision, Policy, View
from emulation.scheduler.bssi import bssi_order
from emulation.scheduler.sincronia import Sincronia


class Beamer(Sincronia):
    """Online coflow BSSI; weight = stage weight, x ``slack_weight`` off the critical path."""

    name = "beamer"

    def __init__(self, *, slack_weight: float = 0.1, critical_tolerance: float = 0.02):
        super().__init__()
        if not 0.0 < slack_weight <= 1.0:
            raise ValueError(f"slack_weight must be in (0, 1], got {slack_weight}")
        if not 0.0 <= critical_tolerance < 1.0:
            raise ValueError(f"critical_tolerance must be in [0, 1), got {critical_tolerance}")
        self.slack_weight = slack_weight
        self.critical_tolerance = critical_tolerance

    def weights(self, view: View) -> np.ndarray:
        """Per active coflow: its stage's weight, x ``slack_weight`` if its job has slack."""
        cp = view.job_critical_path_s
        stage_cp = np.zeros(len(view.stage_ids))
        if len(cp):
            np.maximum.at(stage_cp, view.job_stage, cp)
        job_cp = cp[view.coflow_job]
        critical = job_cp >= stage_cp[view.coflow_stage] * (1.0 - self.critical_tolerance)
        return view.stage_weight[view.coflow_stage] * np.where(critical, 1.0, self.slack_weight)


class BeamerSBSSI(Policy):
    """DESIGN.md's reconstruction: stage order by BSSI over stage loads, jobs by longest
    remaining critical path."""

    name = "beamer-sbssi"
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


class BeamerStageOnly(BeamerSBSSI):
    """Ablation (Grouper-like): the reconstruction's stage order, jobs in FIFO order."""

    name = "beamer-stage-only"
    jobs_by_critical_path = False
