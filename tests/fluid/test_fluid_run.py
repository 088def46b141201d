"""``run_fluid``: one run's records and run.json, checked against hand-computed values.

Big switch, links 8 bit/s = 1 byte/s. Stage A: one flow h0->h2 of 4 B; stage B (app
arriving at 1 s): one flow h1->h2 of 2 B. Both cross h2's downlink.
"""
import json
import time

import pandas as pd
import pytest

from emulation.fluid.run import run_fluid
from emulation.topology import big_switch
from tests.helpers import tiny_trace
from workloads import trace as trace_mod


def trace():
    return tiny_trace([
        {"id": "a", "stages": [{"id": "A", "jobs": [{"id": "j", "coflows": [[(0, 2, 4)]]}]}]},
        {"id": "b", "arrival_s": 1.0, "stages": [{"id": "B", "jobs": [
            {"id": "k", "coflows": [[(1, 2, 2)]]}]}]},
    ])


def test_run_fluid_writes_hand_checked_records(tmp_path):
    t = trace()
    tp = tmp_path / "t.json"
    trace_mod.save(t, tp)
    # fair: A alone 0-1 (1 B), then both share 1 B/s: B's 2 B end at 1 + 4 = 5, A's
    # remaining 3 B: 2 B by 5, 1 B alone -> 6. SCT A = 6, B = 5 - 1 = 4, avg 5.
    t0 = time.perf_counter()
    run = run_fluid(trace=t, trace_path=tp, topology=big_switch(4, 8.0), policy="fair",
                    outdir=tmp_path / "out", priority_classes=8, extra={"tag": "x"})
    elapsed_s = time.perf_counter() - t0
    assert run["avg_sct_s"] == pytest.approx(5.0)
    assert run["p95_sct_s"] == pytest.approx(4 + 0.95 * 2)  # linear between 4 and 6
    assert run["avg_cct_s"] == pytest.approx(5.0)
    # lower bound: A alone needs 4 s, B 2 s; on one link with B released at 1 the LP
    # (Queyranne) gives sum p_s E_s >= r(S) p(S) + (p(S)^2 + sum p_s^2) / 2 = 0 + (36 + 20) / 2
    # = 28 with E_A >= 4, E_B >= 3: min (E_A - 0) + (E_B - 1) s.t. 4 E_A + 2 E_B >= 28:
    # E_A = 4 -> E_B = 6 -> 4 + 5 = 9; E_B = 3 -> E_A = 5.5 -> 5.5 + 2 = 7.5; avg 3.75
    assert run["lower_bound_avg_sct_s"] == pytest.approx(3.75)
    assert run["avg_sct_over_lb"] == pytest.approx(5.0 / 3.75)
    assert (run["num_stages"], run["num_coflows"], run["num_flows"]) == (2, 2, 2)
    assert run["policy"] == "fair" and run["num_priority_classes"] == 8 and run["tag"] == "x"
    assert run["release_at_zero"] is False and run["realloc"] == "flow"
    assert run["simulated_s"] == pytest.approx(6.0)
    # decisions: A released at 0, B released at 1, B done at 5 (A alone); none at 6 (no flows)
    assert run["num_decisions"] == 3
    assert 0 <= run["sim_wall_s"] <= run["wall_s"] <= elapsed_s  # durations, nested
    assert run["topology"]["kind"] == "big_switch" and run["topology"]["num_hosts"] == 4
    assert run["topology"]["num_links"] == 8 and "spines" not in run["topology"]
    assert run["topology"]["link_rate_bps"] == 8.0  # the builder's params are kept
    assert json.loads((tmp_path / "out" / "run.json").read_text())["avg_sct_s"] == run["avg_sct_s"]
    st = pd.read_csv(tmp_path / "out" / "stages.csv").set_index("stage_id")
    assert st.loc["A", "sct_s"] == pytest.approx(6.0) and st.loc["B", "sct_s"] == pytest.approx(4.0)
    # a given bound is reused as is; release at zero moves B to 0
    run = run_fluid(trace=t, trace_path=tp, topology=big_switch(4, 8.0), policy="fifo_lm",
                    outdir=tmp_path / "o2", release_at_zero=True, lb_avg_sct_s=2.0,
                    policy_params={"heavy_threshold_bytes": 1e9})
    # FIFO strict priority from 0: A 0-4, B 4-6 -> avg (4 + 6) / 2 = 5
    assert run["avg_sct_s"] == pytest.approx(5.0) and run["lower_bound_avg_sct_s"] == 2.0
    assert run["avg_sct_over_lb"] == pytest.approx(2.5)
    assert run["policy_params"] == {"heavy_threshold_bytes": 1e9}
    assert run["num_priority_classes"] == 8  # the default K
    # a bound of 0 gives no ratio; a bound below 1 s still does
    run = run_fluid(trace=t, trace_path=tp, topology=big_switch(4, 8.0), policy="fair",
                    outdir=tmp_path / "o3", lb_avg_sct_s=0.0)
    assert run["avg_sct_over_lb"] is None
    run = run_fluid(trace=t, trace_path=tp, topology=big_switch(4, 8.0), policy="fair",
                    outdir=tmp_path / "o4", lb_avg_sct_s=0.5)
    assert run["avg_sct_over_lb"] == pytest.approx(10.0)


def test_run_fluid_compute_only_trace_has_no_cct(tmp_path):
    t = tiny_trace([{"id": "a", "stages": [{"id": "S", "jobs": [
        {"id": "j", "iters": 2, "compute_s": 1.5, "coflows": []}]}]}])
    tp = tmp_path / "t.json"
    trace_mod.save(t, tp)
    run = run_fluid(trace=t, trace_path=tp, topology=big_switch(4, 8.0), policy="beamer",
                    outdir=tmp_path / "out")
    assert run["num_coflows"] == 0 and run["avg_cct_s"] is None
    assert run["avg_sct_s"] == pytest.approx(3.0) and run["lower_bound_avg_sct_s"] == pytest.approx(3.0)


def test_run_fluid_allocation_override_is_recorded_and_checked(tmp_path):
    t = trace()
    tp = tmp_path / "t.json"
    trace_mod.save(t, tp)
    # varys forced to strict priority: at 1 s B (2 B left)
    # beats A (3 B left) by bottleneck, runs alone 1-3; A resumes at 3 with 3 B -> 6.
    # SCT A = 6, B = 3 - 1 = 2: avg 4
    run = run_fluid(trace=t, trace_path=tp, topology=big_switch(4, 8.0), policy="varys",
                    outdir=tmp_path / "p", allocation="priority")
    assert run["allocation"] == "priority" and run["avg_sct_s"] == pytest.approx(4.0)
    run = run_fluid(trace=t, trace_path=tp, topology=big_switch(4, 8.0), policy="varys",
                    outdir=tmp_path / "m")
    assert run["allocation"] == "madd"  # the policy's own when not forced
    with pytest.raises(ValueError, match="allocation must be one of"):
        run_fluid(trace=t, trace_path=tp, topology=big_switch(4, 8.0), policy="varys",
                  outdir=tmp_path / "x", allocation="wfq")
