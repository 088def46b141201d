"""The lower bound is <= the best permutation schedule <= ... and <= every policy's result."""
import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from emulation.fluid.simulator import FluidSimulator
from emulation.scheduler import POLICIES, make_policy
from emulation.scheduler.base import Decision, Policy
from emulation.scheduler.lower_bound import lower_bound
from emulation.topology import big_switch, leaf_spine
from tests.helpers import draw_flow, tiny_trace

HOSTS = 4
TOPO = big_switch(HOSTS, 8.0)


class FixedStageOrder(Policy):
    """Test-only policy: stages in a given permutation, jobs in trace order."""

    name = "fixed"

    def __init__(self, rank: dict[str, int]):
        self.rank = rank

    def decide(self, view):
        key = np.array([self.rank[view.stage_ids[s]] for s in view.coflow_stage])
        return Decision(order=np.lexsort((view.coflow_job, key)))


def avg_sct(trace, policy, K=8):
    res = FluidSimulator(trace, TOPO, policy, priority_classes=K, release_at_zero=True).run()
    return float(np.mean([s["sct_s"] for s in res.stages]))


@st.composite
def one_stage_apps(draw):
    apps = []
    for a in range(draw(st.integers(2, 5))):
        jobs = []
        for j in range(draw(st.integers(1, 2))):
            flows = [draw_flow(draw, HOSTS, 40) for _ in range(draw(st.integers(1, 3)))]
            jobs.append({"id": f"a{a}j{j}", "iters": draw(st.integers(1, 3)),
                         "compute_s": draw(st.sampled_from([0.0, 0.5, 2.0])), "coflows": [flows]})
        apps.append({"id": f"a{a}", "stages": [{"id": f"s{a}", "jobs": jobs}]})
    return tiny_trace(apps, hosts=HOSTS)


@pytest.mark.slow
@settings(max_examples=30, deadline=None)
@given(trace=one_stage_apps())
def test_lb_below_best_permutation_and_every_policy(trace):
    lb = lower_bound(trace, TOPO, release_at_zero=True).avg_sct_s
    ids = [s.stage_id for s in trace.stages()]
    best = min(avg_sct(trace, FixedStageOrder({sid: i for i, sid in enumerate(perm)}), K=0)
               for perm in itertools.permutations(ids))
    assert lb <= best * (1 + 1e-9)
    for name in POLICIES:
        assert lb <= avg_sct(trace, make_policy(name)) * (1 + 1e-9), name


def test_lp_tightens_the_per_stage_bound_and_report_distances():
    """Five equal stages on one link: per-stage bound = 10 each; the LP knows they queue."""
    apps = [{"id": f"a{i}", "stages": [{"id": f"s{i}", "jobs": [
        {"id": f"j{i}", "coflows": [[(i % 3, 3, 10)]]}]}]} for i in range(5)]
    trace = tiny_trace(apps, hosts=HOSTS)
    lb = lower_bound(trace, TOPO, release_at_zero=True)
    assert lb.per_stage_s.tolist() == [10.0] * 5
    # serial order is optimal: 10, 20, ..., 50 -> 30; the single-link LP is exact here
    assert abs(lb.avg_sct_s - 30.0) < 1e-6
    best = min(avg_sct(trace, FixedStageOrder({f"s{p}": i for i, p in enumerate(perm)}), K=0)
               for perm in itertools.permutations(range(5)))
    assert abs(best - 30.0) < 1e-9
    print("\npolicy      avg_sct  /best  /LB")
    for name in sorted(POLICIES):
        v = avg_sct(trace, make_policy(name))
        print(f"{name:18s} {v:7.2f} {v / best:5.2f} {v / lb.avg_sct_s:5.2f}")
        assert v >= lb.avg_sct_s - 1e-9


@pytest.mark.slow
def test_policy_distance_to_best_permutation_report(capsys):
    """Prints each policy's mean distance to the best permutation on seeded instances."""
    rng = np.random.default_rng(0)
    ratios = {name: [] for name in POLICIES}
    for _ in range(8):
        apps = []
        for a in range(4):
            jobs = [{"id": f"a{a}j{j}", "iters": int(rng.integers(1, 3)), "compute_s": 0.5,
                     "coflows": [[(int(s), int(d), int(rng.integers(1, 30)))
                                  for s, d in [rng.choice(HOSTS, 2, replace=False)
                                               for _ in range(2)]]]}
                    for j in range(int(rng.integers(1, 3)))]
            apps.append({"id": f"a{a}", "stages": [{"id": f"s{a}", "jobs": jobs}]})
        trace = tiny_trace(apps, hosts=HOSTS)
        best = min(avg_sct(trace, FixedStageOrder({f"s{p}": i for i, p in enumerate(perm)}), K=0)
                   for perm in itertools.permutations(range(4)))
        lb = lower_bound(trace, TOPO, release_at_zero=True).avg_sct_s
        assert lb <= best * (1 + 1e-9)
        for name in POLICIES:
            ratios[name].append(avg_sct(trace, make_policy(name)) / best)
    with capsys.disabled():
        print("\nmean avg-SCT / best-permutation over 8 seeded 4-stage instances:")
        for name, r in sorted(ratios.items()):
            print(f"  {name:18s} {np.mean(r):.3f}")


@st.composite
def hpo_traces(draw):
    """Random HPO-shaped traces: apps arriving over time, each a Hyperband-like chain of
    successive-halving rungs (rung r+1 depends on rung r, fewer jobs with more
    iterations), jobs synchronising by ring all-reduce (one coflow per iteration) or a
    parameter server (push then pull: two coflows per iteration)."""
    hosts = 8
    apps = []
    for a in range(draw(st.integers(1, 3))):
        n_jobs = draw(st.integers(1, 3))
        rungs = draw(st.integers(1, 3))
        stages = []
        for r in range(rungs):
            jobs = []
            for j in range(max(1, n_jobs // (2 ** r))):
                workers = draw(st.lists(st.integers(0, hosts - 1), min_size=2, max_size=3,
                                        unique=True))
                size = draw(st.integers(1, 40))
                if draw(st.booleans()):  # ring
                    coflows = [[(workers[i], workers[(i + 1) % len(workers)], size)
                                for i in range(len(workers))]]
                else:  # parameter server on another host
                    ps = draw(st.integers(0, hosts - 1).filter(lambda h: h not in workers))
                    coflows = [[(w, ps, size) for w in workers], [(ps, w, size) for w in workers]]
                jobs.append({"id": f"a{a}r{r}j{j}", "iters": draw(st.integers(1, 2)) * 2 ** r,
                             "compute_s": draw(st.sampled_from([0.0, 0.5, 2.0])),
                             "coflows": coflows})
            stages.append({"id": f"a{a}r{r}", "deps": [f"a{a}r{r - 1}"] if r else [],
                           "jobs": jobs})
        apps.append({"id": f"a{a}", "arrival_s": draw(st.sampled_from([0.0, 0.0, 3.0, 10.0])),
                     "stages": stages})
    return tiny_trace(apps, hosts=hosts)


LB_TOPOS = {"big_switch": big_switch(8, 8.0),
            "leaf_spine": leaf_spine(2, 4, 2, 8.0, oversubscription=2.0)}


@settings(max_examples=40, deadline=None)
@given(trace=hpo_traces(), topo=st.sampled_from(sorted(LB_TOPOS)), K=st.sampled_from([1, 8]),
       release_at_zero=st.booleans())
@pytest.mark.slow
def test_lb_valid_with_arrivals_chains_multi_coflow_jobs_leaf_spine(trace, topo, K,
                                                                    release_at_zero):
    """LB <= achieved avg SCT for every policy, with releases and dependencies in play."""
    lb = lower_bound(trace, LB_TOPOS[topo], release_at_zero=release_at_zero)
    assert lb.avg_sct_s > 0
    for name in sorted(POLICIES):
        res = FluidSimulator(trace, LB_TOPOS[topo], make_policy(name), priority_classes=K,
                             release_at_zero=release_at_zero).run()
        achieved = float(np.mean([s["sct_s"] for s in res.stages]))
        assert lb.avg_sct_s <= achieved * (1 + 1e-9), (name, lb.avg_sct_s, achieved)
        # every stage meets its own per-stage bound too
        for s, b in zip(res.stages, lb.per_stage_s):
            assert b <= s["sct_s"] * (1 + 1e-9) + 1e-12, (name, s["stage_id"])


def test_per_stage_bound_by_hand():
    """Stage with job J (2 iterations, compute 1 s, ring h0->h1 4 B, h1->h0 4 B) and job
    K (1 iteration, PS: h2->h3 3 B then h3->h2 3 B). Links 1 B/s.
    J: 2 x (1 + 4) = 10 s; K: 3 + 3 = 6 s; loads: h0 up 8 B ... max 8 s. B = 10.
    Released at 5 s (arrival) with a second app's 2 B stage at 0: the free stages'
    LP cannot go below the per-stage bounds."""
    t = tiny_trace([
        {"id": "a", "arrival_s": 5.0, "stages": [{"id": "S", "jobs": [
            {"id": "J", "iters": 2, "compute_s": 1.0, "coflows": [[(0, 1, 4), (1, 0, 4)]]},
            {"id": "K", "coflows": [[(2, 3, 3)], [(3, 2, 3)]]}]}]},
        {"id": "b", "stages": [{"id": "T", "jobs": [{"id": "L", "coflows": [[(0, 1, 2)]]}]}]},
    ])
    lb = lower_bound(t, TOPO)
    assert lb.per_stage_s.tolist() == [10.0, 2.0]
    assert lb.avg_sct_s == pytest.approx(6.0)


def test_per_stage_bound_on_faster_links_by_hand():
    """Links 80 bit/s = 10 B/s. Stage S: job J (2 iterations, compute 1 s, ring h0<->h1
    4 B each way: 0.4 s per sync) -> 2 x 1.4 = 2.8 s; job K (PS push h2->h3 3 B, pull
    h3->h2 3 B: 0.3 + 0.3 s) -> 0.6 s. Stage U: jobs X (h0->h2 40 B) and Y (h0->h3 40 B):
    each alone 4 s, but both cross h0's uplink: 80 B / 10 B/s = 8 s. Stage V: 5 B, 0.5 s."""
    t = tiny_trace([
        {"id": "a", "stages": [{"id": "S", "jobs": [
            {"id": "J", "iters": 2, "compute_s": 1.0, "coflows": [[(0, 1, 4), (1, 0, 4)]]},
            {"id": "K", "coflows": [[(2, 3, 3)], [(3, 2, 3)]]}]}]},
        {"id": "c", "stages": [{"id": "U", "jobs": [
            {"id": "X", "coflows": [[(0, 2, 40)]]}, {"id": "Y", "coflows": [[(0, 3, 40)]]}]}]},
        {"id": "d", "stages": [{"id": "V", "jobs": [{"id": "Z", "coflows": [[(2, 1, 5)]]}]}]},
    ])
    lb = lower_bound(t, big_switch(HOSTS, 80.0))
    assert lb.per_stage_s == pytest.approx([2.8, 8.0, 0.5])  # V: 5 B at 10 B/s


@pytest.mark.parametrize("speed", [1.0, 10.0])
def test_release_dates_in_the_lp_by_hand(speed):
    """One link at 1 B/s: stage A (4 B) released at 0, stage B (2 B) at 1. Queyranne's
    inequality for {A, B}: 4 E_A + 2 E_B >= 0 * 6 + (36 + 16 + 4) / 2 = 28, with
    E_A >= 4, E_B >= 1 + 2. Minimum of (E_A - 0) + (E_B - 1): E_B = 3, E_A = 5.5 -> 7.5,
    avg 3.75. Released together at 0 (E_B >= 2): E_A = 6, E_B = 2 -> avg 4.0, which
    shortest-first achieves (B 2 s, A 6 s). With links ``speed`` times faster and the
    arrival ``speed`` times earlier every time divides by ``speed``."""
    t = tiny_trace([
        {"id": "a", "stages": [{"id": "A", "jobs": [{"id": "j", "coflows": [[(0, 2, 4)]]}]}]},
        {"id": "b", "arrival_s": 1.0 / speed, "stages": [{"id": "B", "jobs": [
            {"id": "k", "coflows": [[(1, 2, 2)]]}]}]},
    ])
    fast = big_switch(HOSTS, 8.0 * speed)
    assert lower_bound(t, fast).avg_sct_s == pytest.approx(3.75 / speed)
    assert lower_bound(t, fast, release_at_zero=True).avg_sct_s == pytest.approx(4.0 / speed)
    if speed != 1.0:
        return
    lp = lower_bound(t, TOPO)
    assert lp.avg_sct_s == pytest.approx(3.75)
    assert (lp.method, lp.lp_stages) == ("lp+per-stage", 2) and lp.lp_cuts >= 1
    assert lower_bound(t, TOPO, release_at_zero=True).avg_sct_s == pytest.approx(4.0)
    per_stage = lower_bound(t, TOPO, use_lp=False)
    assert per_stage.avg_sct_s == pytest.approx(3.0)
    assert (per_stage.method, per_stage.lp_stages, per_stage.lp_rounds, per_stage.lp_cuts) == (
        "per-stage", 0, 0, 0)


def one_link_stages(specs):
    """specs: (stage id, arrival_s, bytes, compute_s, src host); all flows into h2 except
    those from h3 (h3 -> h0, another link)."""
    return tiny_trace([
        {"id": f"app{sid}", "arrival_s": r, "stages": [{"id": sid, "jobs": [
            {"id": f"j{sid}", "compute_s": c,
             "coflows": [[(src, 0 if src == 3 else 2, b)]]}]}]}
        for sid, r, b, c, src in specs], hosts=HOSTS)


def test_lp_prefix_cut_matches_shortest_first():
    """1 B, 1 B and 10 B on one link, all at 0: shortest first ends them at 1, 2, 12:
    avg 5, and the single-machine LP with every prefix inequality is exact. (The
    inequality of the whole set alone would allow 4.7.)"""
    t = one_link_stages([("A", 0.0, 1, 0.0, 0), ("B", 0.0, 1, 0.0, 1), ("C", 0.0, 10, 0.0, 0)])
    assert lower_bound(t, TOPO).avg_sct_s == pytest.approx(5.0)


def test_lp_keeps_the_per_stage_bounds_as_variable_bounds():
    """A: 10 s compute then 1 B; B and C: 4 B each, all on h2's downlink, all at 0.
    E_A >= 11 (critical path), E_B + E_C >= 12 ({B, C}: 4 E_B + 4 E_C >= (64 + 32) / 2):
    23 / 3. Achievable: B 0-4, C 4-8, A's byte 10-11."""
    t = one_link_stages([("A", 0.0, 1, 10.0, 0), ("B", 0.0, 4, 0.0, 1), ("C", 0.0, 4, 0.0, 0)])
    assert lower_bound(t, TOPO).avg_sct_s == pytest.approx(23 / 3)


def test_lp_release_of_a_stage_off_the_link_does_not_relax_the_others():
    """A (4 B, at 2 s) and B (2 B, at 3 s) share h2's downlink; C (1 B, at 0) is on other
    links. {A, B}: 4 E_A + 2 E_B >= 2 * 6 + (36 + 20) / 2 = 40 with E_A >= 6, E_B >= 5:
    E_A = 7.5 -> SCTs 5.5 and 2; C: 1. Avg 8.5 / 3."""
    t = one_link_stages([("C", 0.0, 1, 0.0, 3), ("A", 2.0, 4, 0.0, 0), ("B", 3.0, 2, 0.0, 1)])
    assert lower_bound(t, TOPO).avg_sct_s == pytest.approx(8.5 / 3)


def test_lp_with_disjoint_sub_second_stages_is_the_per_stage_mean():
    t = tiny_trace([
        {"id": "a", "stages": [{"id": "A", "jobs": [{"id": "j", "coflows": [[(0, 1, 4)]]}]}]},
        {"id": "b", "stages": [{"id": "B", "jobs": [{"id": "k", "coflows": [[(2, 3, 2)]]}]}]},
    ])
    # 10 B/s links: 0.4 s and 0.2 s, no shared link
    assert lower_bound(t, big_switch(HOSTS, 80.0)).avg_sct_s == pytest.approx(0.3)


def test_lp_plus_dependent_stages():
    """S0 (4 B) and T (2 B) share h2's downlink at 0: shortest first ends them at 6 and 2
    (the LP gives exactly 8); S1 (3 B on other links) depends on S0 and adds its own
    bound 3. Avg (8 + 3) / 3."""
    t = tiny_trace([
        {"id": "a", "stages": [
            {"id": "S0", "jobs": [{"id": "j0", "coflows": [[(0, 2, 4)]]}]},
            {"id": "S1", "deps": ["S0"], "jobs": [{"id": "j1", "coflows": [[(3, 0, 3)]]}]}]},
        {"id": "b", "stages": [{"id": "T", "jobs": [{"id": "k", "coflows": [[(1, 2, 2)]]}]}]},
    ])
    assert lower_bound(t, TOPO).avg_sct_s == pytest.approx(11 / 3)
