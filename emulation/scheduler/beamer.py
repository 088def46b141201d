"""Beamer: stage-aware coflow ordering for HPO traffic (He et al., IEEE TNSM 19(2), 2022),
as this project builds it, plus the ablations the suite compares it with.

``beamer`` (the project's stage-aware ordering; derivation, every variant tried and their
numbers: ``docs/beamer.md``) treats a stage by what follows it in the tuner's plan
(``view.stage_followed``):

1. *Chained* stages (a rung of SHA / Hyperband: the plan starts the next rung of the same
   tuning job when it ends) are ordered at coflow level, as ``beamer-coflow``: online
   Sincronia (Bottleneck-Select-Scale-Iterate over the individual active coflows, remaining
   bytes per link, capacity-normalised) whose weights come from the stage: a coflow of a
   job on its stage's critical path (remaining critical path within ``critical_tolerance``
   of the stage's longest) has the stage's weight, one of a job with slack
   ``slack_weight`` x it, so slack work yields to other stages' critical work.
2. *Free* stages (nothing certainly follows them: a random / grid search job, an ASHA
   segment, a final rung) take work out of the system when they end, so they are ranked
   whole, shortest remaining work first: BSSI over the free stages' remaining loads as
   the coflows in flight show them (per link, each in-flight coflow's remaining bytes x
   its job's remaining iterations, summed over the stage), jobs by longest remaining
   critical path inside a stage, then release order.
3. One order: the coflow-level order of step 1 over all active coflows decides which
   positions go to coflows of free stages; those positions are refilled with the free
   stages' coflows in the order of step 2. Chained and free work interleave on the
   coflow-level scale; among free stages the ranking by remaining work holds.

The order is recomputed when the set of active coflows changes (Sincronia's online rule)
and kept between such events.

Ablations (``docs/design.md`` section 5.3): ``beamer-coflow`` (step 1 alone for every
stage); ``beamer-sbssi`` (the reconstruction of the original design: every stage ranked
whole by BSSI over its full remaining load, every remaining iteration of every job,
``view.stage_link_bytes``; jobs by critical path; coflow order = (stage rank, job rank,
release order), recomputed at every event); ``beamer-stage-only`` (Grouper-like: the same
stage order, jobs in FIFO order).
"""
from __future__ import annotations

import numpy as np

from emulation.scheduler.base import Decision, Policy, View
from emulation.scheduler.bssi import bssi_order
from emulation.scheduler.sincronia import Sincronia
from emulation.view_kernels import grouped_weighted_rows


def _check_params(slack_weight: float, critical_tolerance: float) -> None:
    if not 0.0 < slack_weight <= 1.0:
        raise ValueError(f"slack_weight must be in (0, 1], got {slack_weight}")
    if not 0.0 <= critical_tolerance < 1.0:
        raise ValueError(f"critical_tolerance must be in [0, 1), got {critical_tolerance}")


def stage_ranked(view: View, stages: np.ndarray, loads: np.ndarray, *,
                 jobs_by_critical_path: bool = True) -> np.ndarray:
    """The coflows of ``stages`` (bool per active stage), first to last: BSSI over those
    stages' ``loads`` (stages x links, bytes), then job rank (longest remaining critical
    path first, or trace order), then release order."""
    sel = np.flatnonzero(stages)
    so = sel[bssi_order(loads[sel], view.stage_weight[sel], view.capacity_bps)]
    rank = np.full(len(view.stage_ids), len(view.stage_ids), dtype=np.int64)
    rank[so] = np.arange(len(so))
    cidx = np.flatnonzero(stages[view.coflow_stage])
    if jobs_by_critical_path:
        job_key = -view.job_critical_path_s[view.coflow_job[cidx]]
    else:
        job_key = view.coflow_job[cidx].astype(float)  # job index = trace order = FIFO
    return cidx[np.lexsort((view.coflow_seq[cidx], job_key, rank[view.coflow_stage[cidx]]))]


def in_flight_stage_loads(view: View) -> np.ndarray:
    """(stages x links) remaining work of each stage as its in-flight coflows show it:
    each coflow's remaining bytes per link x its job's remaining iterations, summed."""
    n = np.maximum(view.job_remaining_iterations[view.coflow_job], 1).astype(float)
    return grouped_weighted_rows(view.coflow_stage, view.coflow_link_bytes, n,
                                 len(view.stage_ids))


class BeamerCoflow(Sincronia):
    """Online coflow BSSI; weight = stage weight, x ``slack_weight`` off the critical path."""

    name = "beamer-coflow"

    def __init__(self, *, slack_weight: float = 0.1, critical_tolerance: float = 0.02):
        super().__init__()
        _check_params(slack_weight, critical_tolerance)
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


class Beamer(Policy):
    """Chained stages at coflow level, free stages ranked whole, in one order."""

    name = "beamer"
    default_realloc = "coflow"  # a centralised scheduler deciding at coflow and stage events
    # the order is recomputed only when the active coflow set changes
    same_decision_at_flow_completions = True

    def __init__(self, *, slack_weight: float = 0.1, critical_tolerance: float = 0.02):
        _check_params(slack_weight, critical_tolerance)
        self.slack_weight = slack_weight
        self.critical_tolerance = critical_tolerance
        self._coflow = BeamerCoflow(slack_weight=slack_weight,
                                    critical_tolerance=critical_tolerance)
        self._ids: tuple[str, ...] | None = None
        self._order_ids: list[str] = []

    def decide(self, view: View) -> Decision:
        if view.num_coflows == 0:
            return Decision(order=np.zeros(0, dtype=np.int64))
        if view.coflow_ids == self._ids:
            pos = {cid: i for i, cid in enumerate(view.coflow_ids)}
            return Decision(order=np.array([pos[c] for c in self._order_ids], dtype=np.int64))
        order = self._coflow.decide(view).order.copy()
        free = ~view.stage_followed
        positions = free[view.coflow_stage][order]
        if positions.any():
            order[positions] = stage_ranked(view, free, in_flight_stage_loads(view))
        self._ids = view.coflow_ids
        self._order_ids = [view.coflow_ids[i] for i in order]
        return Decision(order=order)


class BeamerSBSSI(Policy):
    """The design's reconstruction: stage order by BSSI over stage loads, jobs by longest
    remaining critical path."""

    name = "beamer-sbssi"
    default_realloc = "coflow"  # a centralised scheduler deciding at coflow and stage events
    jobs_by_critical_path = True

    def decide(self, view: View) -> Decision:
        if view.num_coflows == 0:
            return Decision(order=np.zeros(0, dtype=np.int64))
        every = np.ones(len(view.stage_ids), dtype=bool)
        return Decision(order=stage_ranked(view, every, view.stage_link_bytes,
                                           jobs_by_critical_path=self.jobs_by_critical_path))


class BeamerStageOnly(BeamerSBSSI):
    """Ablation (Grouper-like): the reconstruction's stage order, jobs in FIFO order."""

    name = "beamer-stage-only"
    jobs_by_critical_path = False
