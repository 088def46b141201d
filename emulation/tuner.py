"""The tuners' decisions made during a run: ASHA's rule for the segments of a trace whose
trials a cluster places (``Stage.asha``).

``AshaRule`` owns, per tuning job and rung, the results recorded so far and judges each
new one as it arrives, with the rule of Ray Tune's ``ASHAScheduler`` (asynchronous
successive halving, Li et al., MLSys 2020, in its stopping form): a trial whose result at
rung k is below the ``1 - 1/eta`` quantile of the rung-k results recorded before it stops;
otherwise it goes on to rung k + 1 at once; the first result of a rung always goes on.
Scores are the trace's (lower is better; the rule compares rewards = -score). Which
results have arrived when, and so which trials go on, follows the run.
``ClusterState`` (``emulation/state.py``) calls ``judge`` when an ASHA segment ends;
``docs/design-notes.md``, "A cluster with GPUs", says why this form.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Decision:
    """One judged result: the trial, its rung, when, its score and whether it goes on."""

    app_id: str
    trial_id: str
    rung: int
    time_s: float
    score: float
    goes_on: bool


class AshaRule:
    """ASHA's rung results per tuning job, and the decisions made from them."""

    def __init__(self) -> None:
        self.recorded: dict[tuple[str, int], list[float]] = {}
        self.decisions: list[Decision] = []

    def judge(self, *, app_id: str, trial_id: str, rung: int, score: float, eta: int,
              now_s: float) -> bool:
        """Record the trial's result at ``rung``; True if it goes on to the next rung."""
        rewards = self.recorded.setdefault((app_id, rung), [])
        reward = -float(score)
        goes_on = not rewards or reward >= float(np.nanpercentile(rewards, (1 - 1 / eta) * 100))
        rewards.append(reward)
        self.decisions.append(Decision(app_id, trial_id, rung, now_s, float(score), goes_on))
        return goes_on
