"""The scheduler View's fields on multi-iteration, multi-coflow jobs, at several instants.

``ClusterState`` is driven by hand (advance the clock, fire timers, record progress as the
Mininet scheduler process does on ``progress``, complete flows). Expected values are
worked out below from the documented definitions (emulation/scheduler/base.py), never
from the code's own output. Links are 8 bit/s = 1 byte/s, so bytes = seconds alone.

Trace (big switch, hosts h0..h3; one app, two stages, plus a second app):

- stage S (app a): job J1: 3 iterations, compute 1 s, per iteration coflow c0 =
  h0->h1 4 B, then coflow c1 = {h0->h2 2 B, h1->h2 2 B}; job J2: 2 iterations,
  compute 0.5 s, coflow c0 = h3->h1 6 B.
- stage T (app b): job K: 1 iteration, no compute, coflow h2->h3 5 B.

Uncontended sync time per iteration: J1 = 4 (c0: 4 B on h0 up) + 4 (c1: 4 B on h2
down) = 8 s, so one iteration = 9 s; J2 = 6 s (+0.5 compute = 6.5 s); K = 5 s.
"""
import numpy as np
import pytest

from emulation.state import ClusterState
from emulation.topology import big_switch
from tests.helpers import tiny_trace

TOPO = big_switch(4, 8.0)


def up(h):
    return TOPO.link_index(f"h{h}", "s0")


def down(h):
    return TOPO.link_index("s0", f"h{h}")


def vec(**byte_on):
    """Per-link byte vector from keyword args like up0=4, down1=2."""
    v = np.zeros(len(TOPO.links))
    for k, b in byte_on.items():
        v[up(int(k[2:])) if k.startswith("up") else down(int(k[4:]))] += b
    return v


J1_ITER = vec(up0=4 + 2, down1=4, up1=2, down2=4)     # c0 + c1
J1_C1 = vec(up0=2, up1=2, down2=4)
J2_ITER = vec(up3=6, down1=6)
K_ALL = vec(up2=5, down3=5)


def trace():
    return tiny_trace([
        {"id": "a", "stages": [{"id": "S", "jobs": [
            {"id": "J1", "iters": 3, "compute_s": 1.0,
             "coflows": [[(0, 1, 4)], [(0, 2, 2), (1, 2, 2)]]},
            {"id": "J2", "iters": 2, "compute_s": 0.5, "coflows": [[(3, 1, 6)]]}]}]},
        {"id": "b", "stages": [{"id": "T", "jobs": [
            {"id": "K", "iters": 1, "coflows": [[(2, 3, 5)]]}]}]},
    ])


def at(state, t):
    state.advance_clock(t)
    state.fire_timers()
    view, cids = state.view()
    return view, cids


def by_id(ids, arr):
    return {i: arr[k] for k, i in enumerate(ids)}


def flow_index(state, coflow_id, src, dst):
    """Row of the active flow of ``coflow_id`` from h``src`` to h``dst``."""
    cid = state.c_ids.index(coflow_id)
    for i in range(len(state.a_tf)):
        tf = state.a_tf[i]
        if state.a_cf[i] == cid and state.tf_src[tf] == f"h{src}" and state.tf_dst[tf] == f"h{dst}":
            return i
    raise KeyError((coflow_id, src, dst))


def complete(state, t, *rows):
    state.advance_clock(t)
    idx = np.array(sorted(rows), dtype=np.int64)
    state.complete_flows(idx, np.full(len(idx), t))
    state.fire_timers()


def test_view_fields_over_a_multi_iteration_multi_coflow_run():
    st = ClusterState(trace(), TOPO)
    _check_view_at_release(st)
    _check_view_with_progress(st)
    _check_view_after_completions(st)


def _check_view_at_release(st: ClusterState) -> None:
    """t = 0 and 0.5: stage and job fields as the first coflows are released."""
    # t = 0: both stages started, J1 and J2 computing, K's coflow released at once
    v, _ = at(st, 0.0)
    assert set(v.stage_ids) == {"S", "T"} and set(v.job_ids) == {"J1", "J2", "K"}
    assert v.coflow_ids == ("K/i0/c0",)
    slb = by_id(v.stage_ids, v.stage_link_bytes)
    np.testing.assert_allclose(slb["S"], 3 * J1_ITER + 2 * J2_ITER)
    np.testing.assert_allclose(slb["T"], K_ALL)
    assert by_id(v.job_ids, v.job_remaining_iterations) == {"J1": 3, "J2": 2, "K": 1}
    cp = by_id(v.job_ids, v.job_critical_path_s)
    assert cp == pytest.approx({"J1": 27.0, "J2": 13.0, "K": 5.0})
    # job -> stage mapping of the view's own indices
    assert {v.job_ids[j]: v.stage_ids[s] for j, s in enumerate(v.job_stage)} == {
        "J1": "S", "J2": "S", "K": "T"}

    # t = 0.5: J2 released its first coflow; J1 has 0.5 s of compute left
    v, _ = at(st, 0.5)
    assert set(v.coflow_ids) == {"K/i0/c0", "J2/i0/c0"}
    cp = by_id(v.job_ids, v.job_critical_path_s)
    # J1: 2 full iterations (18) + 0.5 s compute left + this iteration's sync (8)
    # J2: 1 full iteration after this one (6.5) + the in-flight coflow counted whole (6)
    assert cp["J1"] == pytest.approx(26.5) and cp["J2"] == pytest.approx(12.5)


def _check_view_with_progress(st: ClusterState) -> None:
    """t = 2: coflow fields once flows have sent part of their bytes."""
    # t = 2: J1's c0 released at 1; progress: J1 c0 sent 1 of 4, J2 sent 2 of 6, K sent 4 of 5
    v, _ = at(st, 1.0)
    st.advance_clock(2.0)
    st.record_progress(np.array([flow_index(st, "J1/i0/c0", 0, 1), flow_index(st, "J2/i0/c0", 3, 1),
                                 flow_index(st, "K/i0/c0", 2, 3)]), np.array([1.0, 2.0, 4.0]))
    v, _ = st.view()
    assert set(v.coflow_ids) == {"K/i0/c0", "J2/i0/c0", "J1/i0/c0"}
    clb = by_id(v.coflow_ids, v.coflow_link_bytes)
    np.testing.assert_allclose(clb["J1/i0/c0"], vec(up0=3, down1=3))
    np.testing.assert_allclose(clb["J2/i0/c0"], vec(up3=4, down1=4))
    np.testing.assert_allclose(clb["K/i0/c0"], vec(up2=1, down3=1))
    assert by_id(v.coflow_ids, v.coflow_sent_bytes) == pytest.approx(
        {"J1/i0/c0": 1.0, "J2/i0/c0": 2.0, "K/i0/c0": 4.0})
    assert by_id(v.coflow_ids, v.coflow_size_bytes) == pytest.approx(
        {"J1/i0/c0": 4.0, "J2/i0/c0": 6.0, "K/i0/c0": 5.0})
    assert by_id(v.coflow_ids, v.coflow_release_s) == pytest.approx(
        {"J1/i0/c0": 1.0, "J2/i0/c0": 0.5, "K/i0/c0": 0.0})
    slb = by_id(v.stage_ids, v.stage_link_bytes)
    # S: J1 = in-flight c0 remainder + c1 of this iteration + 2 full iterations;
    #    J2 = in-flight remainder + 1 full iteration
    np.testing.assert_allclose(
        slb["S"], vec(up0=3, down1=3) + J1_C1 + 2 * J1_ITER + vec(up3=4, down1=4) + J2_ITER)
    np.testing.assert_allclose(slb["T"], vec(up2=1, down3=1))
    assert by_id(v.job_ids, v.job_remaining_iterations) == {"J1": 3, "J2": 2, "K": 1}
    cp = by_id(v.job_ids, v.job_critical_path_s)
    # J1 in c0: 2 full iterations + c0 whole (4) + c1 after it (4)
    assert cp["J1"] == pytest.approx(26.0) and cp["J2"] == pytest.approx(12.5)
    # coflow -> stage/job indices point at the right rows
    cs = {v.coflow_ids[c]: v.stage_ids[s] for c, s in enumerate(v.coflow_stage)}
    cj = {v.coflow_ids[c]: v.job_ids[j] for c, j in enumerate(v.coflow_job)}
    assert cs == {"J1/i0/c0": "S", "J2/i0/c0": "S", "K/i0/c0": "T"}
    assert cj == {"J1/i0/c0": "J1", "J2/i0/c0": "J2", "K/i0/c0": "K"}


def _check_view_after_completions(st: ClusterState) -> None:
    """t = 3 to 8: the fields as coflows, a stage and an iteration complete."""
    # t = 3: J1's c0 done -> c1 released (two flows); K done -> stage T done
    complete(st, 3.0, flow_index(st, "J1/i0/c0", 0, 1), flow_index(st, "K/i0/c0", 2, 3))
    v, _ = st.view()
    assert v.stage_ids == ("S",) and set(v.job_ids) == {"J1", "J2"}
    assert set(v.coflow_ids) == {"J2/i0/c0", "J1/i0/c1"}
    slb = by_id(v.stage_ids, v.stage_link_bytes)
    np.testing.assert_allclose(slb["S"], J1_C1 + 2 * J1_ITER + vec(up3=4, down1=4) + J2_ITER)
    cp = by_id(v.job_ids, v.job_critical_path_s)
    assert cp["J1"] == pytest.approx(2 * 9 + 4)

    # t = 7: J1's c1 done -> iteration 1 computing until 8; J2 still in flight
    complete(st, 7.0, flow_index(st, "J1/i0/c1", 0, 2), flow_index(st, "J1/i0/c1", 1, 2))
    v, _ = st.view()
    assert v.coflow_ids == ("J2/i0/c0",)
    assert by_id(v.job_ids, v.job_remaining_iterations) == {"J1": 2, "J2": 2}
    cp = by_id(v.job_ids, v.job_critical_path_s)
    assert cp["J1"] == pytest.approx(9 + 1 + 8)
    slb = by_id(v.stage_ids, v.stage_link_bytes)
    np.testing.assert_allclose(slb["S"], 2 * J1_ITER + vec(up3=4, down1=4) + J2_ITER)

    # t = 7.5: J1 still computing (0.5 s left): only the compute remainder shrinks
    v, _ = at(st, 7.5)
    assert by_id(v.job_ids, v.job_critical_path_s)["J1"] == pytest.approx(9 + 0.5 + 8)

    # t = 8: J2's first coflow done -> J2 iteration 1 computing; J1 released i1/c0
    complete(st, 8.0, flow_index(st, "J2/i0/c0", 3, 1))
    v, _ = st.view()
    assert set(v.coflow_ids) == {"J1/i1/c0"}
    assert by_id(v.job_ids, v.job_remaining_iterations) == {"J1": 2, "J2": 1}
    cp = by_id(v.job_ids, v.job_critical_path_s)
    assert cp == pytest.approx({"J1": 9 + 8, "J2": 0.5 + 6})
    slb = by_id(v.stage_ids, v.stage_link_bytes)
    np.testing.assert_allclose(slb["S"], 2 * J1_ITER + J2_ITER)


def test_view_weights_and_start_times_follow_the_stage_rows():
    t = tiny_trace([
        {"id": "a", "arrival_s": 0.0, "stages": [{"id": "S", "weight": 3.0, "jobs": [
            {"id": "J", "coflows": [[(0, 1, 4)]]}]}]},
        {"id": "b", "arrival_s": 2.0, "stages": [{"id": "T", "weight": 0.5, "jobs": [
            {"id": "K", "coflows": [[(2, 3, 4)]]}]}]},
    ])
    st = ClusterState(t, TOPO)
    at(st, 0.0)
    v, _ = at(st, 2.0)
    assert by_id(v.stage_ids, v.stage_weight) == {"S": 3.0, "T": 0.5}
    assert by_id(v.stage_ids, v.stage_start_s) == {"S": 0.0, "T": 2.0}
    assert by_id(v.coflow_ids, v.coflow_release_s) == {"J/i0/c0": 0.0, "K/i0/c0": 2.0}
    # coflow_seq is the global release order
    seq = by_id(v.coflow_ids, v.coflow_seq)
    assert seq["J/i0/c0"] < seq["K/i0/c0"]


def test_view_is_read_only_and_rejects_unknown_fields():
    st = ClusterState(trace(), TOPO)
    v, _ = at(st, 0.0)
    with pytest.raises(ValueError):
        v.stage_link_bytes[0, 0] = 1.0
    with pytest.raises(AttributeError):
        v.no_such_field


def test_stage_bytes_of_a_job_in_its_third_coflow_after_a_multi_coflow_job():
    """Stage with job P (c0 h0->h1 1 B, c1 h1->h0 1 B) and job Q (c0 h2->h3 2 B, c1 h3->h2
    2 B, c2 h2->h1 2 B), one iteration each. Q finishes c0 and c1 while P's c0 is still
    in flight: P owes c0's byte and all of c1; Q owes c2 only."""
    t = tiny_trace([{"id": "a", "stages": [{"id": "S", "jobs": [
        {"id": "P", "coflows": [[(0, 1, 1)], [(1, 0, 1)]]},
        {"id": "Q", "coflows": [[(2, 3, 2)], [(3, 2, 2)], [(2, 1, 2)]]}]}]}])
    st = ClusterState(t, TOPO)
    at(st, 0.0)
    complete(st, 2.0, flow_index(st, "Q/i0/c0", 2, 3))
    complete(st, 4.0, flow_index(st, "Q/i0/c1", 3, 2))
    v, _ = st.view()
    assert set(v.coflow_ids) == {"P/i0/c0", "Q/i0/c2"}
    np.testing.assert_allclose(v.stage_link_bytes[0], vec(up0=1, down1=1, up1=1, down0=1)
                               + vec(up2=2, down1=2))
    # critical paths: P in c0: c0 (1) + c1 (1) = 2 s; Q in c2: 2 s
    assert by_id(v.job_ids, v.job_critical_path_s) == pytest.approx({"P": 2.0, "Q": 2.0})
