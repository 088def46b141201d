"""Sincronia (Agarwal et al., SIGCOMM'18), online: BSSI over the individual active coflows.

Each active coflow's remaining bytes per link (capacity-normalised) go through
Bottleneck-Select-Scale-Iterate with unit weights. As in the paper's online setting the
order is recomputed when a coflow arrives or completes (the set of active coflows
changes); between such events the previous order is kept. Subclasses give the coflows
weights (``weights``); Sincronia's are all 1.
"""
from __future__ import annotations

import numpy as np

from emulation.scheduler.base import Decision, Policy, View
from emulation.scheduler.bssi import bssi_order


class Sincronia(Policy):
    """Online BSSI over coflows; reorders only when the active coflow set changes."""

    name = "sincronia"
    default_realloc = "coflow"  # the order is recomputed at coflow arrival / departure
    # the order depends only on the set of active coflows (kept between its changes), so
    # under realloc="flow" the engine need not ask again at flow completions
    same_decision_at_flow_completions = True

    def __init__(self) -> None:
        self._ids: tuple[str, ...] | None = None
        self._order_ids: list[str] = []

    def weights(self, view: View) -> np.ndarray:
        """BSSI weight of each active coflow (indexed like the view)."""
        return np.ones(view.num_coflows)

    def decide(self, view: View) -> Decision:
        if view.coflow_ids != self._ids:
            seq_order = np.argsort(view.coflow_seq, kind="stable")  # ties: later arrival last
            loads = view.coflow_link_bytes[seq_order]
            w = self.weights(view)[seq_order]
            order = seq_order[bssi_order(loads, w, view.capacity_bps)]
            self._ids = view.coflow_ids
            self._order_ids = [view.coflow_ids[i] for i in order]
            return Decision(order=order)
        pos = {cid: i for i, cid in enumerate(view.coflow_ids)}
        return Decision(order=np.array([pos[c] for c in self._order_ids], dtype=np.int64))
