"""Per-flow max-min fair sharing: no priorities, every flow in one class (TCP's ideal)."""
from __future__ import annotations

import numpy as np

from emulation.scheduler.base import Decision, Policy, View


class Fair(Policy):
    """All coflows in class 0; rates max-min fair among all flows."""

    name = "fair"
    default_realloc = "flow"  # TCP-like sharing re-balances at every flow completion
    same_decision_at_flow_completions = True  # one class, whatever has been sent

    def decide(self, view: View) -> Decision:
        order = np.argsort(view.coflow_seq, kind="stable")
        return Decision(order=order, classes=np.zeros(view.num_coflows, dtype=np.int64))
