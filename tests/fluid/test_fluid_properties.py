"""Property tests of the fluid simulator on random small traces, every policy.

At every allocation the simulator's invariant check (``check_invariants=True``) asserts
that no link is above capacity and that every active flow crosses a saturated link
(work conservation); these tests add delivery, ordering and determinism checks.
"""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from emulation.fluid.simulator import FluidSimulator
from emulation.ids import parse_flow_id
from emulation.scheduler import POLICIES, make_policy
from emulation.topology import big_switch, leaf_spine
from tests.helpers import draw_flow, tiny_trace

HOSTS = 4


@st.composite
def traces(draw):
    apps = []
    for a in range(draw(st.integers(1, 3))):
        stages = []
        for s in range(draw(st.integers(1, 2))):
            jobs = []
            for j in range(draw(st.integers(1, 2))):
                coflows = []
                for _ in range(draw(st.integers(1, 2))):
                    coflows.append([draw_flow(draw, HOSTS, 50)
                                    for _ in range(draw(st.integers(1, 3)))])
                jobs.append({"id": f"a{a}s{s}j{j}", "iters": draw(st.integers(1, 2)),
                             "compute_s": draw(st.sampled_from([0.0, 0.5, 1.0])),
                             "coflows": coflows})
            stages.append({"id": f"a{a}s{s}", "deps": [f"a{a}s{s - 1}"] if s else [],
                           "jobs": jobs})
        apps.append({"id": f"a{a}", "arrival_s": draw(st.sampled_from([0.0, 1.0, 2.5])),
                     "stages": stages})
    return tiny_trace(apps, hosts=HOSTS)


TOPOS = {"big_switch": big_switch(HOSTS, 8.0),
         "leaf_spine": leaf_spine(2, 2, 2, 8.0, oversubscription=2.0)}


def simulate(trace, policy, topo, K):
    sim = FluidSimulator(trace, TOPOS[topo], make_policy(policy), priority_classes=K,
                         check_invariants=True)
    return sim, sim.run()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trace=traces(), policy=st.sampled_from(sorted(POLICIES)),
       topo=st.sampled_from(sorted(TOPOS)), K=st.sampled_from([0, 1, 2, 8]))
def test_delivery_capacity_work_conservation_determinism(trace, policy, topo, K):
    sim, res = simulate(trace, policy, topo, K)
    summ = trace.summary()
    f = res.flows
    # every byte delivered exactly once
    assert len(f["flow_id"]) == summ["flows"] == len(set(f["flow_id"]))
    assert int(np.sum(f["size_bytes"])) == summ["total_bytes"]
    assert (np.asarray(f["release_s"]) <= np.asarray(f["start_s"]) + 1e-12).all()
    assert (np.asarray(f["start_s"]) <= np.asarray(f["end_s"]) + 1e-12).all()
    # the invariant check ran at every allocation with flows
    assert getattr(sim, "invariant_checks", 0) >= 1
    # stages: all complete, none before its start, dependencies respected
    ends = {s["stage_id"]: s["end_s"] for s in res.stages}
    for s, st_ in zip(trace.stages(), res.stages):
        assert st_["end_s"] >= st_["start_s"] >= 0
        for d in s.depends_on:
            assert st_["start_s"] >= ends[d] - 1e-12
    # a coflow ends when its last flow ends
    last = {}
    for cid, e in zip(f["coflow_id"], f["end_s"]):
        last[cid] = max(last.get(cid, 0.0), e)
    for c in res.coflows:
        assert abs(c["end_s"] - last[c["coflow_id"]]) < 1e-9
    # same input -> identical records
    _, again = simulate(trace, policy, topo, K)
    assert again.stages == res.stages and again.coflows == res.coflows
    for k in f:
        assert list(again.flows[k]) == list(f[k])


@settings(max_examples=15, deadline=None)
@given(trace=traces(), policy=st.sampled_from(sorted(POLICIES)))
def test_coflow_realloc_mode_delivers_everything_within_capacity(trace, policy):
    sim = FluidSimulator(trace, TOPOS["big_switch"], make_policy(policy), realloc="coflow")
    res = sim.run()
    assert int(np.sum(res.flows["size_bytes"])) == trace.summary()["total_bytes"]
    assert all(np.isfinite(s["sct_s"]) for s in res.stages)


class RateLog(FluidSimulator):
    """Records every allocation (time, flow keys, rates) to integrate rate x time. Every
    allocation goes through ``_reallocate`` (no compiled reuse of decisions, whose records
    ``tests/fluid/test_flow_events.py`` compares with this path)."""

    def __init__(self, *a, **kw):
        super().__init__(*a, reuse_decisions=False, **kw)
        self.allocations = []

    def _reallocate(self, **kw):
        super()._reallocate(**kw)
        st_ = self.state
        keys = (st_.a_cf << 32) | st_.a_tf
        self.allocations.append((st_.now, keys.copy(), np.array(st_.a_rate, dtype=float)))


def delivered_bytes(sim, res):
    """Bytes each finished flow carried: its rate integrated over time, from every
    allocation until the next one or until the flow's recorded end."""
    cid_of = {c: i for i, c in enumerate(sim.state.c_ids)}
    f = res.flows
    t0 = sim.state.t_f0[np.array(sim.state.c_tmpl)]
    end = {}
    for fid, cid, e in zip(f["flow_id"], f["coflow_id"], f["end_s"]):
        c = cid_of[cid]
        tf = int(t0[c]) + parse_flow_id(fid)[1]
        end[(c << 32) | tf] = e
    got = dict.fromkeys(end, 0.0)
    times = [a[0] for a in sim.allocations] + [np.inf]
    for (t, keys, rate), t_next in zip(sim.allocations, times[1:]):
        for k, r in zip(keys.tolist(), rate.tolist()):
            got[k] += r * max(0.0, min(t_next, end[k]) - t)
    return end, got


@settings(max_examples=30, deadline=None)
@given(trace=traces(), policy=st.sampled_from(sorted(POLICIES)),
       topo=st.sampled_from(sorted(TOPOS)), K=st.sampled_from([1, 8]),
       realloc=st.sampled_from(["flow", "coflow", "queues"]))
def test_bytes_delivered_measured_from_rates_equal_the_flow_sizes(trace, policy, topo, K,
                                                                 realloc):
    """Rate x time, integrated over the allocations the engine made, equals each flow's
    size (the trace's), and the total equals the trace's total bytes."""
    sim = RateLog(trace, TOPOS[topo], make_policy(policy), priority_classes=K, realloc=realloc)
    res = sim.run()
    end, got = delivered_bytes(sim, res)
    sizes = {}
    for fid, cid, size in zip(res.flows["flow_id"], res.flows["coflow_id"],
                              res.flows["size_bytes"]):
        sizes[(fid, cid)] = size
    want = {}
    cid_of = {c: i for i, c in enumerate(sim.state.c_ids)}
    t0 = sim.state.t_f0[np.array(sim.state.c_tmpl)]
    for (fid, cid), size in sizes.items():
        c = cid_of[cid]
        want[(c << 32) | (int(t0[c]) + parse_flow_id(fid)[1])] = float(size)
    assert want.keys() == got.keys()
    for k in want:
        assert abs(got[k] - want[k]) <= 1e-6 * want[k] + 1e-6, (k, got[k], want[k])
    assert sum(got.values()) == pytest.approx(trace.summary()["total_bytes"], rel=1e-9)
