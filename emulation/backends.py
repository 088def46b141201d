"""The backends' registry, as policies have theirs (``BACKENDS``).

A backend is a package with a ``backend`` module (``emulation/fluid/backend.py``,
``emulation/mininet/backend.py``) that defines ``execute(request) -> run.json dict``
(one run into ``request.outdir``), ``unavailable() -> str | None`` (why it cannot run
on this machine, e.g. it needs root) and ``refusal(topology) -> str | None`` (why it
cannot build a topology faithfully). ``BackendInfo`` says what the rest of the artifact
needs to know of it: whether a run recomputes to identical records (``exact``: checked
by ``--verify``, shared between experiments, one repetition), whether it sends real
packets (``packet_level``: captures, fluid twins, the packet sections of the report),
whether its runs take the machine one at a time (``one_at_a_time``: an emulated
network), its limits. The module is imported when a run or a check needs it, so a fluid
run never loads Mininet. Adding a backend is a package and one entry here; the runner,
the config schema and the analysis ask the registry and never compare a backend's name.
"""
from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any


@dataclass(frozen=True)
class RunRequest:
    """One run as the runner hands it to a backend: the policy, the run's recorded
    ``[experiment]`` table (``experiment``) and ``[topology]`` table, the trace file and
    its lower bound's file ("" if the run bounds its own placement), the directory to
    write, and the fields the runner adds to run.json (``extra``)."""

    policy: str
    experiment: Mapping[str, Any]
    topology: Mapping[str, Any]
    trace_path: str
    lb_path: str
    outdir: Path
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class BackendInfo:
    """A registered backend (see the module docstring)."""

    name: str
    label: str  # how the summary names its runs
    module: str
    exact: bool
    packet_level: bool
    one_at_a_time: bool
    max_priority_classes: int | None  # None: no limit
    own_realloc_only: bool  # runs each policy at its own reallocation events only

    def _impl(self):
        return importlib.import_module(self.module)

    def execute(self, request: RunRequest) -> dict[str, Any]:
        """Run ``request`` into ``request.outdir``; its run.json."""
        return self._impl().execute(request)

    def unavailable(self) -> str | None:
        """Why this backend cannot run here (one line), or None."""
        return self._impl().unavailable()

    def refusal(self, topology) -> str | None:
        """Why this backend cannot build ``topology`` (a ``TopologyConfig``) faithfully,
        or None."""
        return self._impl().refusal(topology)


FLUID = BackendInfo(name="fluid", label="fluid", module="emulation.fluid.backend",
                    exact=True, packet_level=False, one_at_a_time=False,
                    max_priority_classes=None, own_realloc_only=False)
MININET = BackendInfo(name="mininet", label="packet level", module="emulation.mininet.backend",
                      exact=False, packet_level=True, one_at_a_time=True,
                      max_priority_classes=8, own_realloc_only=True)
# name -> backend (read-only)
BACKENDS: Mapping[str, BackendInfo] = MappingProxyType({b.name: b for b in (FLUID, MININET)})
DEFAULT_BACKEND = FLUID.name
EXACT = frozenset(b.name for b in BACKENDS.values() if b.exact)
PACKET_LEVEL = frozenset(b.name for b in BACKENDS.values() if b.packet_level)


def backend(name: str) -> BackendInfo:
    """The registered backend ``name``; ValueError naming the known ones."""
    try:
        return BACKENDS[name]
    except KeyError:
        raise ValueError(f"unknown backend {name!r}; known: {', '.join(BACKENDS)}") from None
