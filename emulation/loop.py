"""The one event loop of a run, shared by every backend (SimPy's shape: one environment,
one timer heap with deterministic ties, a clock that is simulated or real time).

``Loop`` owns the order of the state transitions of a ``ClusterState``
(``emulation/state.py``): when something changed it has the backend apply the policy's
decision (or only recompute rates under the kept one), lets the backend move its clock to
the next moment something happens, and hands the state what happened there in time order:
flows that finished (timers due strictly before them fire first, each at its own time),
then every timer due by the time reached. A backend supplies only what differs
(``Backend``): how a decision becomes rates, how time moves and completions are observed,
what it tells others about the state's changes.

The clocks: the fluid engine's is simulated (it jumps to the next completion or timer),
the packet-level driver's is real time (``RealTimeClock``: trace seconds since its start),
and the Mininet scheduler process's shadow state follows the times the driver reports.

After a completion the policy is asked again if a coflow completed or ``per_flow`` and
not ``keep_classes``; only the rates are recomputed if ``per_flow`` and ``keep_classes``;
nothing happens otherwise (a coflow-level reallocation). A timer that fires, or the
backend's ``wants_decision`` (a byte wake-up due, a decision requested), asks it again.
"""
from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
import numpy as np

from emulation.state import EPS_T, ClusterState


@dataclass(frozen=True, slots=True)
class Finished:
    """Flows that finished at ``t_s`` (trace seconds): ``rows`` over the active flows at
    the moment they are handed over (a mask, or indices in ascending order) or ``keys``
    (``ClusterState.active_flow_keys``); their last-byte times ``ends_s`` (None: the
    state's clock once moved to ``t_s``, which never goes back) and, if the backend
    measured them, first-byte times ``starts_s``."""

    t_s: float
    ends_s: np.ndarray | None = None
    rows: np.ndarray | None = None
    keys: np.ndarray | None = None
    starts_s: np.ndarray | None = None


@dataclass(frozen=True, slots=True)
class Reached:
    """The backend's clock reached ``t_s``: every timer due by then fires."""

    t_s: float


class Backend:
    """What a backend supplies to the loop (subclasses override ``allocate`` and
    ``events``; the rest have defaults)."""

    def running(self, state: ClusterState) -> bool:
        """Whether the loop goes on: while timers are pending or flows active."""
        return state.busy()

    def allocate(self, state: ClusterState, *, decide: bool) -> None:
        """Apply the policy's decision (``decide``) or recompute the rates under its last
        one."""
        raise NotImplementedError

    def events(self, state: ClusterState) -> Iterable[Finished | Reached]:
        """Move the clock to the next moment something happens; what happened, in time
        order."""
        raise NotImplementedError

    def wants_decision(self, state: ClusterState) -> bool:
        """Whether the policy must be asked although no timer fired (a byte wake-up is
        due, a decision was requested)."""
        return False

    def on_timer(self, state: ClusterState) -> None:
        """Timers fired at ``state.now``."""

    def on_done(self, state: ClusterState, done: Finished) -> None:
        """``done`` was handed to the state."""


class Loop:
    """Run ``state`` to the end with ``backend``; call ``run()`` once."""

    def __init__(self, state: ClusterState, backend: Backend, *, per_flow: bool = True,
                 keep_classes: bool = False):
        self.state = state
        self.backend = backend
        self.per_flow = per_flow
        self.keep_classes = keep_classes
        self.decide = True  # ask the policy at the next allocation
        self.rates_stale = False  # recompute the rates under the kept decision

    def run(self) -> None:
        """Fire the timers due at the start, then allocate, move time, hand over what
        happened, until the backend stops."""
        st, b = self.state, self.backend
        self._fire_until(st.now, strict=False)
        while b.running(st):
            if self.decide:
                b.allocate(st, decide=True)
            elif self.rates_stale:
                b.allocate(st, decide=False)
            self.decide = self.rates_stale = False
            for ev in b.events(st):
                if isinstance(ev, Finished):
                    self._complete(ev)
                else:
                    self._fire_until(ev.t_s, strict=False)
            if b.wants_decision(st):
                self.decide = True

    def _complete(self, done: Finished) -> None:
        st = self.state
        self._fire_until(done.t_s, strict=True)
        rows = done.rows if done.keys is None else np.isin(st.active_flow_keys(), done.keys)
        if rows.dtype == bool and not rows.any():
            return  # flows the state no longer holds (reported twice)
        st.advance_clock(done.t_s)
        ends = np.array([st.now]) if done.ends_s is None else done.ends_s
        if st.complete_flows(rows, ends, done.starts_s) or (
                self.per_flow and not self.keep_classes):
            self.decide = True
        elif self.per_flow:
            self.rates_stale = True
        self.backend.on_done(st, done)

    def _fire_until(self, t_s: float, *, strict: bool) -> None:
        """Fire the timers due by ``t_s`` (before it if ``strict``), each batch at its own
        time (never after the clock has passed it)."""
        st = self.state
        while (st.next_timer_s() < t_s) if strict else (st.next_timer_s() <= t_s + EPS_T):
            st.advance_clock(min(st.next_timer_s(), t_s))
            st.fire_timers()
            self.decide = True
            self.backend.on_timer(st)


class RealTimeClock:
    """Trace seconds since the moment the clock was made (``time.monotonic``)."""

    def __init__(self) -> None:
        self.start_monotonic = time.monotonic()

    def now_s(self) -> float:
        return time.monotonic() - self.start_monotonic

    def wait_s(self, until_s: float, *, at_most_s: float) -> float:
        """Seconds to wait for ``until_s`` (trace seconds; inf: nothing due), at most
        ``at_most_s``."""
        if not np.isfinite(until_s):
            return at_most_s
        return min(at_most_s, max(0.0, until_s - self.now_s()))
