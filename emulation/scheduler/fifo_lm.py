"""FIFO with limited multiplexing (Baraat, Dogar et al., SIGCOMM'14).

Coflows are served in arrival order. When the head coflow has sent more than the heavy
threshold it is deemed heavy and its successor is admitted to share the top class
(multiplexing heavy coflows so small ones are not stuck behind them); the rule repeats
along the queue. Everything else keeps FIFO classes behind that group.

``heavy_threshold_bytes``: the default (``None``) is the 90th percentile of the coflow
sizes of the trace, computed in ``prepare``; a public two-class scheduler by Baraat's
authors separates FIFO tasks from shared heavy ones at the 90th percentile. The policy
asks to be woken when the last member of the top group crosses the threshold.
"""
from __future__ import annotations

import numpy as np

from emulation.scheduler.base import Decision, Policy, View


class FifoLM(Policy):
    """FIFO; a coflow that has sent more than the threshold admits its successor to class 0."""

    name = "fifo_lm"
    # Baraat changes priorities at task (coflow) events and at the heavy threshold, which
    # the policy requests as a wake-up
    default_realloc = "coflow"

    def __init__(self, heavy_threshold_bytes: float | None = None, percentile: float = 90.0):
        self.heavy_threshold_bytes = heavy_threshold_bytes
        self.percentile = percentile

    def prepare(self, *, coflow_sizes_bytes: np.ndarray) -> None:
        if self.heavy_threshold_bytes is None:
            sizes = np.asarray(coflow_sizes_bytes, dtype=float)
            self.heavy_threshold_bytes = float(np.percentile(sizes, self.percentile)) if len(sizes) else 0.0

    def decide(self, view: View) -> Decision:
        n = view.num_coflows
        order = np.argsort(view.coflow_seq, kind="stable")
        if n == 0:
            return Decision(order=order)
        thr = self.heavy_threshold_bytes if self.heavy_threshold_bytes is not None else np.inf
        sent = view.coflow_sent_bytes[order]
        group = 1
        while group < n and sent[group - 1] > thr:
            group += 1
        ranks = np.empty(n, dtype=np.int64)
        ranks[:group] = 0
        ranks[group:] = np.arange(1, n - group + 1)
        classes = np.empty(n, dtype=np.int64)
        classes[order] = ranks
        wake = ((int(order[group - 1]), thr),) if np.isfinite(thr) and sent[group - 1] <= thr else ()
        return Decision(order=order, classes=classes, wake_on_sent=wake)
