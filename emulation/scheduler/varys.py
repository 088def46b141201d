"""Varys (Chowdhury et al., SIGCOMM'14): Smallest-Effective-Bottleneck-First + MADD.

Order: ascending effective bottleneck ``Gamma_c = max_l remaining_c[l] / capacity_l``
(the time the coflow needs alone), recomputed at every event on remaining bytes; ties
(within 1e-9 of the largest Gamma) by arrival. Rates (fluid backend, ``allocation =
"madd"``): Minimum-Allocation-for-Desired-Duration gives coflow c, in order, rate
``remaining_f / Gamma'_c`` on each flow f, with ``Gamma'_c`` its bottleneck time on the
capacity the earlier coflows left, so all its flows finish together; the leftover
capacity is then shared max-min among all flows (work conservation, as Varys
backfills). The packet backend enforces the order only. ``varys-queues``
(``VarysQueues``) is the same policy under the rate rule of the priority policies.
"""
from __future__ import annotations

import numpy as np

from emulation.scheduler.base import Decision, Policy, View
from emulation.view_kernels import max_scaled_rows


class Varys(Policy):
    """SEBF order; MADD rates in the fluid backend."""

    name = "varys"
    allocation = "madd"
    default_realloc = "coflow"  # Varys recomputes at coflow arrival and completion

    def decide(self, view: View) -> Decision:
        if view.num_coflows == 0:
            return Decision(order=np.zeros(0, dtype=np.int64))
        # (remaining bytes x 8 / capacity) maxed over links, compiled (no C x L temporaries)
        gamma = max_scaled_rows(view.coflow_link_bytes, 8.0,
                                np.ascontiguousarray(view.capacity_bps, dtype=float))
        # equal bottlenecks up to float noise (summation order) tie, broken by arrival
        key = np.round(gamma / max(float(gamma.max()), 1e-300), 9)
        return Decision(order=np.lexsort((view.coflow_seq, key)))


class VarysQueues(Varys):
    """Varys under the priority policies' rate rule (an ablation): SEBF ranks decided at
    coflow-level events as Varys does, MADD rerun on the remaining bytes at every flow
    completion (``realloc = "queues"``), so that a finished flow's share is re-shared at
    once, as the priority policies' strict-priority classes re-share it."""

    name = "varys-queues"
    default_realloc = "queues"
