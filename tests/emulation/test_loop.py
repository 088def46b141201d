"""The one event loop (``emulation/loop.py``) with a scripted backend: the order in which
it hands the state what happened, and when it asks for a decision or only for rates.
Expected values derived by hand from the trace below."""
import numpy as np
import pytest

from emulation.loop import Backend, Finished, Loop, Reached
from emulation.state import ClusterState
from emulation.topology import big_switch
from tests.helpers import tiny_trace

# one app at t = 0, one stage, two jobs: j1 computes 1 s then sends one flow h0 -> h1;
# j2 computes 2 s then sends two flows h0 -> h2, h0 -> h3. Coflow ids in release order:
# j1's is 0, j2's is 1; trace flows (tf) in trace order: j1's 0, j2's 1 and 2; a flow's
# key is cid << 32 | tf.
TRACE = tiny_trace([{"id": "a", "stages": [{"id": "s", "jobs": [
    {"id": "j1", "compute_s": 1.0, "coflows": [[(0, 1, 10)]]},
    {"id": "j2", "compute_s": 2.0, "coflows": [[(0, 2, 10), (0, 3, 10)]]}]}]}])
J1_FLOW, J2_FIRST, J2_SECOND = 0, (1 << 32) | 1, (1 << 32) | 2


class Scripted(Backend):
    """Hands the loop one scripted batch of events per call and logs what the loop asks."""

    def __init__(self, batches, wants=()):
        self.batches, self.wants = list(batches), list(wants)
        self.allocations, self.timers, self.done = [], [], []

    def allocate(self, state, *, decide):
        self.allocations.append((decide, state.now))

    def events(self, state):
        return self.batches.pop(0)

    def wants_decision(self, state):
        return self.wants.pop(0) if self.wants else False

    def on_timer(self, state):
        self.timers.append(state.now)

    def on_done(self, state, done):
        self.done.append((state.now, [int(k) for k in done.keys]))


def run(backend, **kw):
    st = ClusterState(TRACE, big_switch(4, 8.0))
    Loop(st, backend, **kw).run()
    return st, backend


def test_timers_before_a_completion_fire_first_each_at_its_own_time():
    """The stage starts at 0; the clock reaching 1.5 s fires j1's compute end at 1.0 s (not
    1.5); a completion reported at 2.5 s fires j2's compute end at 2.0 s first. Rates alone
    after j2's first flow (classes kept), nothing after its last: the run is over."""
    st, b = run(Scripted([[Reached(1.5)],
                          [Finished(2.5, keys=np.array([J1_FLOW]))],
                          [Finished(3.0, keys=np.array([J2_FIRST]))],
                          [Finished(4.0, keys=np.array([J2_SECOND]))]]),
                per_flow=True, keep_classes=True)
    assert b.timers == [0.0, 1.0, 2.0]
    assert b.allocations == [(True, 0.0), (True, 1.0), (True, 2.5), (False, 3.0)]
    assert b.done == [(2.5, [J1_FLOW]), (3.0, [J2_FIRST]), (4.0, [J2_SECOND])]
    rec = st.records()
    ends = dict(zip(rec.flows["flow_id"], rec.flows["end_s"]))
    assert sorted(ends.values()) == [2.5, 3.0, 4.0]
    assert rec.stages[0]["end_s"] == pytest.approx(4.0) and not st.busy()


def test_a_per_flow_decision_and_a_coflow_level_one():
    """Without kept classes every completion asks the policy; at coflow level (not
    per_flow) a flow that leaves its coflow unfinished changes nothing."""
    script = [[Reached(2.0)], [Finished(2.5, keys=np.array([J1_FLOW]))],
              [Finished(3.0, keys=np.array([J2_FIRST]))],
              [Finished(4.0, keys=np.array([J2_SECOND]))]]
    _, b = run(Scripted([list(x) for x in script]), per_flow=True, keep_classes=False)
    assert b.allocations == [(True, 0.0), (True, 2.0), (True, 2.5), (True, 3.0)]
    _, b = run(Scripted([list(x) for x in script]), per_flow=False)
    assert b.allocations == [(True, 0.0), (True, 2.0), (True, 2.5)]


def test_the_backend_asks_for_a_decision_and_a_flow_reported_twice_is_ignored():
    """``wants_decision`` (a byte wake-up) asks the policy with no event; a completion of a
    flow the state no longer holds changes nothing."""
    _, b = run(Scripted([[Reached(2.0)], [], [Finished(2.5, keys=np.array([J1_FLOW]))],
                         [Finished(2.6, keys=np.array([J1_FLOW]))],
                         [Finished(3.0, keys=np.array([J2_FIRST, J2_SECOND]))]],
                        wants=[False, True, False, False]), per_flow=False)
    assert b.allocations == [(True, 0.0), (True, 2.0), (True, 2.0), (True, 2.5)]
    assert [t for t, _ in b.done] == [2.5, 3.0]
