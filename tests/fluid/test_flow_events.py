"""The compiled loop for events that only complete flows (``event_kernels.flow_events``)
used for policies that declare ``same_decision_at_flow_completions`` (fair sharing): exact
times by hand, and records bit-identical to asking the policy at every event."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from emulation.fluid.simulator import FluidSimulator
from emulation.scheduler import POLICIES, make_policy
from emulation.topology import big_switch, leaf_spine
from tests.helpers import (assert_same_records, one_stage_traces,
                           small_hyperband_trace, tiny_trace)

HOSTS = 4


def _run(trace, topo, reuse, policy="fair", **kw):
    sim = FluidSimulator(trace, topo, make_policy(policy), realloc="flow",
                         reuse_decisions=reuse, **kw)
    return sim, sim.run()


_assert_same = assert_same_records


def test_three_flows_on_one_uplink_by_hand():
    # h0 sends 1, 2, 3 B to h1, h2, h3 over its 1 B/s uplink: 1/3 B/s each until 3 s
    # (1 B done), then 1/2 B/s each: 1 B left of the 2 B flow ends at 5, the 3 B flow has
    # 1 B left and runs alone to 6. The first two ends only complete flows.
    t = tiny_trace([{"id": "A", "stages": [{"id": "A", "jobs": [
        {"id": "A", "coflows": [[(0, 1, 1), (0, 2, 2), (0, 3, 3)]]}]}]}])
    sim, res = _run(t, big_switch(HOSTS, 8.0), reuse=True)
    assert sorted(res.flows["end_s"]) == pytest.approx([3.0, 5.0, 6.0], abs=1e-9)
    assert res.stages[0]["sct_s"] == pytest.approx(6.0, abs=1e-9)
    # allocations: at release, after the 3 s and the 5 s completions (both compiled);
    # none after 6 s (no flow left)
    assert (sim.num_decisions, sim.num_reused_decisions) == (3, 2)
    ref, res_ref = _run(t, big_switch(HOSTS, 8.0), reuse=False)
    assert (ref.num_decisions, ref.num_reused_decisions) == (3, 0)
    _assert_same(res, res_ref)


def test_a_compute_timer_between_flow_completions_hands_back():
    # job B's compute (1.5 s) ends while A's flows are moving: B's release at 1.5 must
    # take effect then (A's 3 flows on h0's uplink: 1/3 each until 1.5, then B's flow
    # from h0 joins: 1/4 each)
    t = tiny_trace([{"id": "A", "stages": [{"id": "A", "jobs": [
        {"id": "A", "coflows": [[(0, 1, 1), (0, 2, 2), (0, 3, 3)]]},
        {"id": "B", "compute_s": 1.5, "coflows": [[(0, 1, 1)]]}]}]}])
    sim, res = _run(t, big_switch(HOSTS, 8.0), reuse=True)
    f = dict(zip(res.flows["flow_id"], res.flows["end_s"]))
    # by 1.5 s each A flow has 0.5 B; 4 flows at 1/4: A's 1 B flow and B's 1 B flow
    # (0.5 B left, 1 B left): A0 ends at 1.5 + 0.5 * 4 = 3.5; then 3 flows at 1/3: A1
    # (2 - 0.5 - 0.5 = 1 B left), A2 (2 B left), B (1 - 0.5 = 0.5 B left): B ends at
    # 3.5 + 1.5 = 5; then A1 (0.5 left), A2 (1.5 left) at 1/2: A1 at 6, A2 alone at 7
    want = {"A/i0/c0/f0": 3.5, "B/i0/c0/f0": 5.0, "A/i0/c0/f1": 6.0, "A/i0/c0/f2": 7.0}
    assert {k: pytest.approx(v, abs=1e-9) for k, v in want.items()} == f
    _, res_ref = _run(t, big_switch(HOSTS, 8.0), reuse=False)
    _assert_same(res, res_ref)


def test_only_policies_that_declare_it_skip_decisions():
    declared = {n for n, cls in POLICIES.items() if cls.same_decision_at_flow_completions}
    # the others read bytes sent or remaining; sincronia, beamer-coflow (which only changes
    # its weights) and beamer (which caches its order by coflow set) reorder only when
    # the set of active coflows changes
    assert declared == {"fair", "sincronia", "beamer", "beamer-coflow"}
    t = tiny_trace([{"id": "A", "stages": [{"id": "A", "jobs": [
        {"id": "A", "coflows": [[(0, 1, 1), (0, 2, 2), (0, 3, 3)]]}]}]}])
    sim, _ = _run(t, big_switch(HOSTS, 8.0), reuse=True, policy="beamer-sbssi")
    assert sim.num_reused_decisions == 0 and sim.num_decisions == 3
    sim, _ = _run(t, big_switch(HOSTS, 8.0), reuse=True, check_invariants=True)
    assert sim.num_reused_decisions == 0 and sim.invariant_checks == 3


def test_generated_hpo_trace_identical_with_and_without_reuse():
    trace = small_hyperband_trace(5)
    topo = leaf_spine(4, 4, 2, 10e9, oversubscription=2.0)
    sim, res = _run(trace, topo, reuse=True)
    ref, res_ref = _run(trace, topo, reuse=False)
    assert sim.num_reused_decisions > 0.5 * sim.num_decisions
    assert sim.num_decisions == ref.num_decisions
    _assert_same(res, res_ref)


def traces():
    return one_stage_traces(hosts=HOSTS, max_apps=3, max_flows=5)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trace=traces(), topo=st.sampled_from(["big_switch", "leaf_spine"]))
def test_random_traces_identical_with_and_without_reuse(trace, topo):
    net = (big_switch(HOSTS, 8.0) if topo == "big_switch"
           else leaf_spine(2, 2, 2, 8.0, oversubscription=2.0))
    _, res = _run(trace, net, reuse=True)
    _, res_ref = _run(trace, net, reuse=False)
    _assert_same(res, res_ref)


def _paths(topo):
    """path_links (padded with the dummy link) of every host pair, and the capacities."""
    hosts = sorted({l.src for l in topo.links} & {f"h{i}" for i in range(64)})
    paths = [topo.path_indices(s, d) for s in hosts for d in hosts if s != d]
    L = len(topo.links)
    P = max(len(p) for p in paths)
    pl = np.full((len(paths), P), L, dtype=np.int64)
    for i, p in enumerate(paths):
        pl[i, :len(p)] = p
    return pl, L + 1


@pytest.mark.parametrize("topo", ["big_switch", "leaf_spine"])
def test_refill_from_the_first_changed_round_equals_a_full_fill(topo):
    """Chains of flow removals: the recorded fill refilled from round r0
    (``_refill_from``) gives bit for bit the rates of a fresh ``_fill``."""
    from emulation.allocation_kernels import _fill, _tolerance
    from emulation.fluid.refill_kernels import _refill_from, _rounds
    from emulation.allocation import link_index
    rng = np.random.default_rng(7)
    net = (big_switch(5, 8.0) if topo == "big_switch"
           else leaf_spine(2, 2, 3, 8.0, oversubscription=2.0))
    pl, nl = _paths(net)
    npaths = len(pl)
    ptr, owners = link_index(pl, nl)
    checked = 0
    for _ in range(150):
        cap = np.concatenate([rng.choice([1.0, 2.0, 3.0, 7.0], nl - 1), [np.inf]])
        tol = _tolerance(cap)
        w = rng.integers(0, 3, npaths).astype(np.int64)
        counts = lambda w: np.bincount(pl[np.repeat(np.arange(npaths), w)].ravel(),
                                       minlength=nl).astype(np.int64)
        cnt = counts(w)
        cnt[-1] = 0
        live = np.zeros(nl, dtype=np.int64)
        nlive = int((cnt > 0).sum())
        live[:nlive] = np.flatnonzero(cnt > 0)
        c = cap.copy()
        fr = np.full(npaths, -1, dtype=np.int64)
        forder = np.empty(npaths, dtype=np.int64)
        rec = [np.zeros(nl + 2, dtype=np.int64), np.empty(nl + 2), np.empty(nl + 2),
               np.zeros(nl + 2, dtype=np.int64)]  # rstart, m_of, lev, loff
        bufs = (np.empty(2, dtype=np.int64), np.empty(2), np.empty(2, dtype=np.int64))
        out = np.empty(npaths)
        _, nfro, *bufs = _rounds(0, nlive, live, 0.0, pl, ptr, owners, c, cnt, w, out, tol,
                                   fr, forder, 0, *rec, *bufs)
        want = np.empty(npaths)  # the recording fill is _fill's loop, op for op
        _fill(pl, ptr, owners, cap.copy(), w, counts(w), want, tol)
        assert np.array_equal(out[w > 0], want[w > 0])
        drop = np.zeros(nl, dtype=np.int64)
        while (w > 0).sum() > 1:
            gone = rng.choice(np.flatnonzero(w > 0), size=rng.integers(1, 3), replace=False)
            r0 = int(fr[gone].min())
            changed = np.unique(pl[gone].ravel())
            changed = changed[changed != nl - 1]
            for p in gone:
                w[p] -= 1
                np.add.at(drop, pl[p][pl[p] != nl - 1], 1)
            _, nfro, *bufs = _refill_from(r0, drop, changed, len(changed), cap, tol, pl,
                                            ptr, owners, c, cnt, w, out, live, fr, forder,
                                            nfro, *rec, *bufs)
            assert not drop.any()  # scratch restored
            want = np.empty(npaths)
            _fill(pl, ptr, owners, cap.copy(), w, counts(w), want, tol)
            assert np.array_equal(out[w > 0], want[w > 0])
            checked += 1
    assert checked > 300


def test_reuse_is_off_for_hooked_reallocate_and_for_overridden_decide():
    """A subclass that hooks ``_reallocate`` sees every allocation; a policy subclass
    that overrides ``decide`` does not inherit the promise of its parent."""
    from emulation.scheduler.fair import Fair

    t = tiny_trace([{"id": "A", "stages": [{"id": "A", "jobs": [
        {"id": "A", "coflows": [[(0, 1, 1), (0, 2, 2), (0, 3, 3)]]}]}]}])

    class Hooked(FluidSimulator):
        def __init__(self, *a, **kw):
            super().__init__(*a, **kw)
            self.seen = []

        def _reallocate(self, **kw):
            super()._reallocate(**kw)
            self.seen.append(self.state.now)

    sim = Hooked(t, big_switch(HOSTS, 8.0), make_policy("fair"), realloc="flow")
    sim.run()
    # the timers due at the start fire first: the release at 0, then the completions at 3
    # and 5 s
    assert sim.seen == pytest.approx([0.0, 3.0, 5.0]) and sim.num_reused_decisions == 0

    class Reads(Fair):
        def decide(self, view):
            return super().decide(view)

    sim = FluidSimulator(t, big_switch(HOSTS, 8.0), Reads(), realloc="flow")
    sim.run()
    assert sim.num_reused_decisions == 0 and sim.num_decisions == 3

    class Renamed(Fair):  # same decide: the promise holds
        name = "fair2"

    sim = FluidSimulator(t, big_switch(HOSTS, 8.0), Renamed(), realloc="flow")
    sim.run()
    assert sim.num_reused_decisions == 2
