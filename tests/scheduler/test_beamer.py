"""``beamer-coflow`` (critical-job-weighted coflow BSSI, the order ``beamer`` gives chained
stages): hand cases derived on paper, and properties.

All hand cases run on a big switch at 8 bit/s = 1 byte/s per link, so bytes are seconds.
"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from emulation.fluid.simulator import FluidSimulator
from emulation.scheduler import make_policy
from emulation.scheduler.base import Decision
from emulation.scheduler.beamer import Beamer, BeamerCoflow
from emulation.scheduler.bssi import bssi_order
from emulation.state import ClusterState
from emulation.topology import big_switch
from tests.helpers import draw_flow, tiny_trace

RATE = 8.0


def run(trace, policy, hosts=4, **params):
    sim = FluidSimulator(trace, big_switch(hosts, RATE), make_policy(policy, **params),
                         check_invariants=True)
    return {s["stage_id"]: s["sct_s"] for s in sim.run().stages}


def one_job_stage(app, size, weight=1.0, src=0, dst=3):
    return {"id": app, "stages": [{"id": f"s{app}", "weight": weight, "jobs": [
        {"id": f"{app}j", "coflows": [[(src, dst, size)]]}]}]}


def test_two_stages_released_together_smaller_first():
    # X (4 bytes) and Y (2 bytes) on h3's downlink, both critical, weight 1: Smith's rule
    # serves Y first: Y ends 2, X ends 6 (avg 4; X first would give 4 and 6 -> avg 5)
    t = tiny_trace([one_job_stage("X", 4, src=0), one_job_stage("Y", 2, src=1)])
    assert run(t, "beamer-coflow") == {"sX": 6.0, "sY": 2.0}


def test_stage_weight_is_honoured():
    # weight 3 on X: w/p = 3/4 = 0.75 > 1/2 -> X first: X ends 4, Y ends 6
    t = tiny_trace([one_job_stage("X", 4, weight=3.0, src=0), one_job_stage("Y", 2, src=1)])
    assert run(t, "beamer-coflow") == {"sX": 4.0, "sY": 6.0}


def slack_case():
    # stage A: A1 (10 bytes, critical) and A2 (1 byte, 9 s of slack); stage B: one 3-byte job
    return tiny_trace([
        {"id": "A", "stages": [{"id": "sA", "jobs": [
            {"id": "A1", "coflows": [[(0, 3, 10)]]}, {"id": "A2", "coflows": [[(1, 3, 1)]]}]}]},
        {"id": "B", "stages": [{"id": "sB", "jobs": [{"id": "B1", "coflows": [[(2, 3, 3)]]}]}]},
    ])


def test_non_critical_job_yields_to_another_stages_critical_job():
    # weights A1 1, A2 0.1, B1 1 on one link: ratios A1 0.1, A2 0.1, B1 1/3. Last: the tie
    # A1/A2 goes to the later, A2; scaling leaves A1 1 - 0.1*10 = 0, B1 1 - 0.1*3 = 0.7;
    # then A1 (0 < 0.7/3) is last of the two: order B1, A1, A2 -> B at 3, A1 13, A2 14.
    assert run(slack_case(), "beamer-coflow") == {"sA": 14.0, "sB": 3.0}
    # unweighted (slack_weight 1) it is Sincronia's coflow order: A2 (ratio 1) first, B1
    # (1/3), A1 (1/10): A2 at 1, B at 4, A1 at 14
    assert run(slack_case(), "beamer-coflow", slack_weight=1.0) == {"sA": 14.0, "sB": 4.0}
    assert run(slack_case(), "sincronia") == {"sA": 14.0, "sB": 4.0}


def test_critical_tolerance_treats_near_equal_jobs_as_critical():
    # A1 200 bytes, A2 198, B1 199, one link. Tolerance 0.02: A2 is critical (198 >= 196),
    # all weights 1, Smith's rule: A2, B1, A1 -> B ends 397, A 597.
    t = tiny_trace([
        {"id": "A", "stages": [{"id": "sA", "jobs": [
            {"id": "A1", "coflows": [[(0, 3, 200)]]}, {"id": "A2", "coflows": [[(1, 3, 198)]]}]}]},
        {"id": "B", "stages": [{"id": "sB", "jobs": [{"id": "B1", "coflows": [[(2, 3, 199)]]}]}]},
    ])
    assert run(t, "beamer-coflow") == {"sA": 597.0, "sB": 397.0}
    # tolerance 0: A2 has slack, weight 0.1: ratios A1 0.005, A2 0.000505, B1 0.005025 ->
    # A2 last; scaling by 0.000505: A1 0.899/200 = 0.004495 < B1 0.8995/199 = 0.00452 ->
    # A1 last of the two: B1, A1, A2 -> B ends 199, A 597
    assert run(t, "beamer-coflow", critical_tolerance=0.0) == {"sA": 597.0, "sB": 199.0}


@pytest.mark.parametrize("kw", [{"slack_weight": 0.0}, {"slack_weight": 1.5},
                                {"critical_tolerance": -0.1}, {"critical_tolerance": 1.0}])
def test_bad_parameters_are_rejected(kw):
    with pytest.raises(ValueError):
        Beamer(**kw)
    with pytest.raises(ValueError):
        BeamerCoflow(**kw)


def test_unknown_parameter_is_rejected():
    with pytest.raises(TypeError):
        make_policy("beamer", slack=0.5)


@st.composite
def multi_job_trace(draw):
    apps = []
    for a in range(draw(st.integers(1, 3))):
        stages, prev = [], None
        for s in range(draw(st.integers(1, 2))):
            jobs = []
            for j in range(draw(st.integers(1, 3))):
                coflows = [[draw_flow(draw, 4, 30) for _ in range(draw(st.integers(1, 2)))]
                           for _ in range(draw(st.integers(1, 2)))]
                jobs.append({"id": f"a{a}s{s}j{j}", "iters": draw(st.integers(1, 3)),
                             "compute_s": draw(st.sampled_from([0.0, 0.5])), "coflows": coflows})
            sid = f"a{a}s{s}"
            stages.append({"id": sid, "deps": [prev] if prev else [], "jobs": jobs,
                           "weight": draw(st.sampled_from([1.0, 2.0]))})
            prev = sid
        apps.append({"id": f"a{a}", "arrival_s": draw(st.sampled_from([0.0, 1.0, 3.0])),
                     "stages": stages})
    return tiny_trace(apps)


def expected_order(v):
    """Weighted BSSI over the view's coflows, weights computed here from the job table."""
    w = np.empty(v.num_coflows)
    for c in range(v.num_coflows):
        s, j = v.coflow_stage[c], v.coflow_job[c]
        longest = max(v.job_critical_path_s[k] for k in range(len(v.job_ids))
                      if v.job_stage[k] == s)
        crit = v.job_critical_path_s[j] >= 0.98 * longest
        w[c] = v.stage_weight[s] * (1.0 if crit else 0.1)
    seq = np.argsort(v.coflow_seq, kind="stable")
    return seq[bssi_order(v.coflow_link_bytes[seq], w[seq], v.capacity_bps)]


@settings(max_examples=40, deadline=None)
@given(trace=multi_job_trace())
def test_order_is_weighted_bssi_recomputed_when_the_coflow_set_changes(trace):
    """At every decision the order is a permutation; when the set of active coflows changed
    it is BSSI over the coflows' remaining bytes with weight stage weight x (1 or 0.1),
    computed here independently of Beamer.weights; otherwise the previous order (by coflow
    id) is kept, as in online Sincronia."""
    checked = []

    class Spy(BeamerCoflow):
        def decide(self, view):
            prev_ids, prev_order = self._ids, list(self._order_ids)
            got = super().decide(view).order
            assert sorted(got.tolist()) == list(range(view.num_coflows))
            if view.coflow_ids != prev_ids:
                assert got.tolist() == expected_order(view).tolist()
            else:
                assert [view.coflow_ids[i] for i in got] == prev_order
            checked.append(view.coflow_ids != prev_ids)
            return Decision(order=got)

    FluidSimulator(trace, big_switch(4, RATE), Spy()).run()
    assert any(checked)
