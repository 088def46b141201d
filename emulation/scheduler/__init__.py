"""Scheduling policies behind one interface, their registry, and the lower bound.

``POLICIES`` maps the command-line name to the class; ``make_policy(name, **params)``
builds a fresh instance per run (policies may keep per-run state, never global state).
"""
from __future__ import annotations

from emulation.scheduler.base import (DEFAULT_PRIORITY_CLASSES, Decision, Policy, View,
                                      classes_from_order)
from emulation.scheduler.beamer import Beamer, BeamerCoflow, BeamerSBSSI, BeamerStageOnly
from emulation.scheduler.fair import Fair
from emulation.scheduler.fifo_lm import FifoLM
from emulation.scheduler.sincronia import Sincronia
from emulation.scheduler.varys import Varys, VarysQueues

POLICIES: dict[str, type[Policy]] = {
    cls.name: cls for cls in (Beamer, BeamerCoflow, BeamerSBSSI, BeamerStageOnly, Sincronia, FifoLM,
                              Fair, Varys, VarysQueues)
}


def make_policy(name: str, **params) -> Policy:
    """A new policy instance; ValueError naming the known policies for a bad name."""
    try:
        cls = POLICIES[name]
    except KeyError:
        raise ValueError(f"unknown policy {name!r}; known: {', '.join(POLICIES)}") from None
    return cls(**params)


__all__ = ["POLICIES", "make_policy", "Policy", "View", "Decision", "classes_from_order",
           "DEFAULT_PRIORITY_CLASSES"]
