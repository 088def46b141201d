"""Hand-checked fluid runs with exact expected times and event logs.

Links are 8 bit/s = 1 byte/s, so a flow of B bytes alone takes B seconds.
"""
import numpy as np
import pytest

from emulation.fluid.simulator import FluidSimulator
from emulation.scheduler import POLICIES, make_policy
from emulation.scheduler.bssi import bssi_order
from emulation.topology import big_switch, leaf_spine
from tests.helpers import tiny_trace

RATE = 8.0  # bit/s -> 1 byte/s


def run(trace, policy, hosts=4, **kw):
    sim = FluidSimulator(trace, big_switch(hosts, RATE), make_policy(policy, **kw.pop("params", {})),
                         record_events=True, check_invariants=True, **kw)
    return sim.run()


def sct(res):
    return {s["stage_id"]: s["sct_s"] for s in res.stages}


@pytest.mark.parametrize("policy", sorted(POLICIES))
def test_one_flow_alone_exact_event_log(policy):
    t = tiny_trace([{"id": "a", "stages": [{"id": "s", "jobs": [
        {"id": "j", "iters": 2, "compute_s": 0.5, "coflows": [[(0, 1, 1)]]}]}]}])
    res = run(t, policy)
    assert res.events == [
        (0.0, "stage_start", "s"),
        (0.5, "coflow_release", "j/i0/c0"),
        (1.5, "coflow_end", "j/i0/c0"),
        (2.0, "coflow_release", "j/i1/c0"),
        (3.0, "coflow_end", "j/i1/c0"),
        (3.0, "stage_end", "s"),
    ]
    assert sct(res) == {"s": 3.0}


def test_flow_records_are_columns_with_ids_built_on_demand():
    t = tiny_trace([{"id": "a", "stages": [{"id": "s", "jobs": [
        {"id": "j", "coflows": [[(0, 1, 4), (2, 3, 8)]]}]}]}])
    flows = FluidSimulator(t, big_switch(4, 8.0), make_policy("fair")).run().flows
    assert flows.num_rows == 2 and list(flows) == list(flows.ORDER)
    df = flows.to_frame()
    assert df["flow_id"].tolist() == ["j/i0/c0/f0", "j/i0/c0/f1"]
    assert df["src"].tolist() == ["h0", "h2"] and df["end_s"].tolist() == [4.0, 8.0]
    with pytest.raises(KeyError):
        flows["nope"]


def test_two_flows_share_a_link_fairly():
    t = tiny_trace([{"id": "a", "stages": [{"id": "s", "jobs": [
        {"id": "j1", "coflows": [[(0, 2, 4)]]}, {"id": "j2", "coflows": [[(1, 2, 4)]]}]}]}])
    res = run(t, "fair")
    assert list(res.flows["end_s"]) == [8.0, 8.0]
    # unequal sizes: the smaller finishes at 2*2, then the other has the link alone
    t = tiny_trace([{"id": "a", "stages": [{"id": "s", "jobs": [
        {"id": "j1", "coflows": [[(0, 2, 2)]]}, {"id": "j2", "coflows": [[(1, 2, 6)]]}]}]}])
    res = run(t, "fair")
    assert list(res.flows["end_s"]) == [4.0, 8.0]


def test_strict_priority():
    t = tiny_trace([{"id": "a", "stages": [{"id": "s", "jobs": [
        {"id": "j1", "coflows": [[(0, 2, 4)]]}, {"id": "j2", "coflows": [[(1, 2, 4)]]}]}]}])
    res = run(t, "fifo_lm", params={"heavy_threshold_bytes": 1e18})
    assert list(res.flows["end_s"]) == [4.0, 8.0]
    # one class only: priority collapses to fair sharing
    res = run(t, "fifo_lm", params={"heavy_threshold_bytes": 1e18}, priority_classes=1)
    assert list(res.flows["end_s"]) == [8.0, 8.0]


def test_priority_is_work_conserving_on_disjoint_links():
    # j1 (h0->h2) has priority; j2 (h1->h3) shares no link with it and runs at full rate
    t = tiny_trace([{"id": "a", "stages": [{"id": "s", "jobs": [
        {"id": "j1", "coflows": [[(0, 2, 4)]]}, {"id": "j2", "coflows": [[(1, 3, 4)]]}]}]}])
    res = run(t, "fifo_lm", params={"heavy_threshold_bytes": 1e18})
    assert list(res.flows["end_s"]) == [4.0, 4.0]


def test_fifo_lm_admits_successor_after_threshold():
    # head sends 2 bytes alone, then (heavy) shares the link with its successor
    t = tiny_trace([{"id": "a", "stages": [{"id": "s", "jobs": [
        {"id": "j1", "coflows": [[(0, 2, 4)]]}, {"id": "j2", "coflows": [[(1, 2, 4)]]}]}]}])
    res = run(t, "fifo_lm", params={"heavy_threshold_bytes": 2.0})
    # head: 3 bytes alone by t=3 (threshold + the 1-byte margin), then 1 byte at 1/2 -> 5
    # successor: 1 byte by t=5, then 3 bytes alone -> 8
    assert list(res.flows["end_s"]) == pytest.approx([5.0, 8.0])


def test_beamer_stage_order_beats_sincronia_coflow_order():
    """Stage A = job A1 (10 bytes) + job A2 (1 byte); stage B = one job of 5 bytes.

    All three coflows cross h3's downlink (1 byte/s). Sincronia orders coflows
    (smallest bottleneck first: A2, B, A1): A2 ends at 1, B at 6, A1 at 16 -> stage A 16,
    stage B 6, avg 11. Serving A2 early helps nobody: stage A ends with A1 anyway.
    The reconstruction (beamer-sbssi) orders stages by their total remaining load
    (B: 5 < A: 11), then A's jobs by longest remaining critical path (A1 before A2).
    Beamer weighs A2 (slack 9 s in its stage) by 0.1: BSSI on the one link puts last the
    smallest weight/bytes, A1 1/10 = A2 0.1/1 (tie: the later, A2, last); after scaling
    (A1: 1 - 0.1 x 10 = 0, B: 1 - 0.1 x 5 = 0.5) A1 has the smaller ratio and goes last
    of the two left: order B, A1, A2. Both: B ends at 5, A1 at 15, A2 at 16 -> avg (16 + 5) / 2 = 10.5.
    """
    t = tiny_trace([
        {"id": "A", "stages": [{"id": "sA", "jobs": [
            {"id": "A1", "coflows": [[(0, 3, 10)]]}, {"id": "A2", "coflows": [[(1, 3, 1)]]}]}]},
        {"id": "B", "stages": [{"id": "sB", "jobs": [{"id": "B1", "coflows": [[(2, 3, 5)]]}]}]},
    ])
    assert sct(run(t, "sincronia")) == {"sA": 16.0, "sB": 6.0}
    for policy in ("beamer", "beamer-sbssi"):
        b = run(t, policy)
        assert sct(b) == {"sA": 16.0, "sB": 5.0}, policy
        ends = dict(zip(b.flows["coflow_id"], b.flows["end_s"]))
        assert ends == {"A1/i0/c0": 15.0, "A2/i0/c0": 16.0, "B1/i0/c0": 5.0}, policy


def test_varys_madd_finishes_a_coflows_flows_together():
    # h0->h2 (4 bytes) and h0->h3 (2 bytes) share h0's uplink: 6 bytes, both end at 6
    t = tiny_trace([{"id": "a", "stages": [{"id": "s", "jobs": [
        {"id": "j", "coflows": [[(0, 2, 4), (0, 3, 2)]]}]}]}])
    res = run(t, "varys")
    assert list(res.flows["end_s"]) == pytest.approx([6.0, 6.0])


def test_bssi_single_link_is_smallest_first_and_weighted():
    loads = np.array([[10.0], [1.0], [5.0]])
    assert bssi_order(loads, np.ones(3)).tolist() == [1, 2, 0]
    # weight 20 on the big one makes it first (Smith's rule: w/p = 2 > 1 > 0.2)
    assert bssi_order(loads, np.array([20.0, 1.0, 1.0])).tolist() == [0, 1, 2]


def test_bssi_bottleneck_selection_two_links():
    # link 0: a=3, b=1; link 1: c=5. Most loaded link is 1 -> c last; then link 0 -> a last.
    loads = np.array([[3.0, 0.0], [1.0, 0.0], [0.0, 5.0]])
    assert bssi_order(loads, np.ones(3)).tolist() == [1, 0, 2]


def test_bssi_float_noise_is_a_tie_broken_by_arrival():
    # equal loads up to the last bit (another summation order): the later item goes last,
    # whichever of the two came out a hair larger
    x = 0.1 + 0.2  # 0.30000000000000004
    for a, b in ((x, 0.3), (0.3, x)):
        assert bssi_order(np.array([[a], [b]]), np.ones(2)).tolist() == [0, 1]
    # a real difference still counts
    assert bssi_order(np.array([[0.3], [0.2999]]), np.ones(2)).tolist() == [1, 0]


def test_dependent_stage_starts_after_predecessor_and_arrival():
    t = tiny_trace([{"id": "a", "arrival_s": 2.0, "stages": [
        {"id": "s0", "jobs": [{"id": "j0", "coflows": [[(0, 1, 3)]]}]},
        {"id": "s1", "deps": ["s0"], "jobs": [{"id": "j1", "compute_s": 1.0, "coflows": [[(1, 0, 2)]]}]},
    ]}])
    res = run(t, "beamer")
    st = {s["stage_id"]: (s["start_s"], s["end_s"]) for s in res.stages}
    assert st == {"s0": (2.0, 5.0), "s1": (5.0, 8.0)}
    # release-at-zero moves the whole app to t=0
    res = run(t, "beamer", release_at_zero=True)
    assert {s["stage_id"]: s["start_s"] for s in res.stages} == {"s0": 0.0, "s1": 3.0}


def test_flow_vs_coflow_reallocation():
    """One coflow, flows h0->h2 (2 B) and h1->h2 (6 B) share h2's downlink (1 B/s) at 0.5
    each. The 2 B flow ends at 4. Per-flow reallocation hands its share to the other flow
    at once: 4 B left at 1 B/s -> 8. Coflow-level reallocation (Varys/coflowsim) leaves
    the share idle until the coflow ends: 4 B at 0.5 B/s -> 12."""
    t = tiny_trace([{"id": "a", "stages": [{"id": "s", "jobs": [
        {"id": "j", "coflows": [[(0, 2, 2), (1, 2, 6)]]}]}]}])
    assert list(run(t, "fair").flows["end_s"]) == pytest.approx([4.0, 8.0])
    assert list(run(t, "fair", realloc="coflow").flows["end_s"]) == pytest.approx([4.0, 12.0])
    with pytest.raises(ValueError):
        run(t, "fair", realloc="sometimes")


def test_fifo_lm_wake_up_time_on_a_faster_link_with_an_intervening_event():
    """Links 2 B/s. A (h0->h2, 10 B) then B (h1->h2, 10 B) at 0; C (h3->h1, 2 B) arrives
    at 1 on other links and ends at 2. Threshold 4 B: the policy asks to be woken when
    A has sent 4 + 1 B; the decisions at 1 and 2 (A sent 2, then 4) recompute that time:
    2.5 s. Then A and B share h2: A's last 5 B at 1 B/s end at 7.5; B has 5 B left then,
    alone at 2 B/s: 10."""
    t = tiny_trace([
        {"id": "a", "stages": [{"id": "s", "jobs": [
            {"id": "A", "coflows": [[(0, 2, 10)]]}, {"id": "B", "coflows": [[(1, 2, 10)]]}]}]},
        {"id": "c", "arrival_s": 1.0, "stages": [{"id": "t", "jobs": [
            {"id": "C", "coflows": [[(3, 1, 2)]]}]}]},
    ])
    sim = FluidSimulator(t, big_switch(4, 16.0), make_policy("fifo_lm", heavy_threshold_bytes=4.0),
                         check_invariants=True)
    res = sim.run()
    ends = dict(zip(res.flows["coflow_id"], res.flows["end_s"]))
    assert ends == pytest.approx({"A/i0/c0": 7.5, "B/i0/c0": 10.0, "C/i0/c0": 2.0})


def test_invariant_check_flags_overload_idle_capacity_and_stale_counts():
    """Two flows into h2 on 1000 B/s links (h2's downlink shared)."""
    t = tiny_trace([{"id": "a", "stages": [{"id": "s", "jobs": [
        {"id": "j", "coflows": [[(0, 2, 5000), (1, 2, 5000)]]}]}]}])
    sim = FluidSimulator(t, big_switch(4, 8000.0), make_policy("fair"))
    sim.state.fire_timers()
    assert len(sim.state.a_rem) == 2
    sim._check(np.array([500.0, 500.0]))  # exactly full: fine
    sim._check(np.array([1000.0, 0.0]))   # one flow takes the link: still work-conserving
    assert sim.invariant_checks == 2
    with pytest.raises(AssertionError, match="over capacity"):
        sim._check(np.array([1000.0, 500.0]))
    with pytest.raises(AssertionError, match="over capacity"):
        sim._check(np.array([500.2, 500.0]))  # 0.2 B/s over, beyond the 1e-7 tolerance
    with pytest.raises(AssertionError, match="work-conserving"):
        sim._check(np.array([400.0, 400.0]))
    # leaf-spine: a same-rack flow (2 links, padded to 4) left idle is caught too
    t2 = tiny_trace([{"id": "a", "stages": [{"id": "s", "jobs": [
        {"id": "j", "coflows": [[(0, 1, 5000), (2, 0, 5000)]]}]}]}])
    sim2 = FluidSimulator(t2, leaf_spine(2, 2, 2, 8000.0), make_policy("fair"))
    sim2.state.fire_timers()
    with pytest.raises(AssertionError, match="work-conserving"):
        sim2._check(np.array([0.0, 1000.0]))
    sim2._check(np.array([1000.0, 1000.0]))
    sim.state.path_flows[sim.state.a_pid[0]] += 1
    with pytest.raises(AssertionError, match="stale"):
        sim._check(np.array([500.0, 500.0]))
    assert sim.invariant_checks == 2
