"""The writes a backend makes to ``ClusterState`` go through its methods: the clock only
moves forward, rates come one per active flow, a progress report sets bytes left to size
minus sent (never below zero). Expected values are worked out by hand from a two-flow
trace (big switch, 8 bit/s links = 1 byte/s)."""
import numpy as np
import pytest

from emulation.state import ClusterState
from emulation.topology import big_switch
from tests.helpers import tiny_trace


def state():
    # one job, no compute: its coflow (h0->h1 4 B, h2->h3 6 B) is released at t = 0
    tr = tiny_trace([{"id": "a", "stages": [{"id": "S", "jobs": [
        {"id": "J", "iters": 1, "coflows": [[(0, 1, 4), (2, 3, 6)]]}]}]}])
    st = ClusterState(tr, big_switch(4, 8.0))
    st.fire_timers()
    assert len(st.a_rem) == 2
    return st


def test_clock_moves_forward_only():
    st = state()
    st.advance_clock(1.5)
    assert st.now == 1.5
    st.advance_clock(1.0)  # a late report
    assert st.now == 1.5
    st.advance_clock(2.0)
    assert st.now == 2.0


def test_rates_one_per_active_flow():
    st = state()
    r = np.array([1.0, 0.5])
    st.set_rates(r)
    assert st.a_rate is r  # kept, not copied
    with pytest.raises(ValueError, match="3 rates for 2 active flows"):
        st.set_rates(np.ones(3))


def test_progress_sets_bytes_left():
    st = state()
    sizes = {int(st.tf_size[tf]) for tf in st.a_tf}
    assert sizes == {4, 6}
    row_of = {int(st.tf_size[tf]): i for i, tf in enumerate(st.a_tf)}
    st.record_progress(np.array([row_of[4], row_of[6]]), np.array([1.0, 7.0]))
    assert st.a_rem[row_of[4]] == 3.0  # 4 - 1
    assert st.a_rem[row_of[6]] == 0.0  # more reported than the flow's size: none left
