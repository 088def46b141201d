"""run_metrics and policy_ratios (the congestion family's tables) on hand-made stage rows."""
import pandas as pd
import pytest

from analysis.metrics import policy_ratios, run_metrics


def stages_frame():
    # one experiment/scenario, two seeds, policies A and B; app x has two chained stages,
    # app y one stage. SCTs and ends chosen by hand.
    rows = []
    def add(pol, seed, sid, app, start, end):
        rows.append({"experiment": "cong-x", "scenario": "all", "policy": pol,
                     "workload_seed": seed, "stage_id": sid, "app_id": app,
                     "start_s": start, "end_s": end, "sct_s": end - start})
    add("A", 1, "x0", "x", 0.0, 2.0); add("A", 1, "x1", "x", 2.0, 5.0); add("A", 1, "y0", "y", 1.0, 2.0)
    add("B", 1, "x0", "x", 0.0, 4.0); add("B", 1, "x1", "x", 4.0, 6.0); add("B", 1, "y0", "y", 1.0, 4.0)
    add("A", 2, "x0", "x", 0.0, 1.0); add("A", 2, "x1", "x", 1.0, 2.0); add("A", 2, "y0", "y", 0.0, 4.0)
    add("B", 2, "x0", "x", 0.0, 2.0); add("B", 2, "x1", "x", 2.0, 4.0); add("B", 2, "y0", "y", 0.0, 2.0)
    return pd.DataFrame(rows)


def test_run_metrics_by_hand():
    m = run_metrics(stages_frame()).set_index(["policy", "workload_seed"])
    # A seed 1: SCTs 2, 3, 1 -> avg 2, max 3; apps: x 0..5 = 5, y 1..2 = 1 -> avg app 3
    assert m.loc[("A", 1), "avg_sct_s"] == pytest.approx(2.0)
    assert m.loc[("A", 1), "max_sct_s"] == pytest.approx(3.0)
    assert m.loc[("A", 1), "avg_app_completion_s"] == pytest.approx(3.0)
    # p99 of (1, 2, 3) by linear interpolation: 2 + 0.98 * (3 - 2) = 2.98
    assert m.loc[("A", 1), "p99_sct_s"] == pytest.approx(2.98)
    # B seed 1: SCTs 4, 2, 3 -> avg 3; apps x 6, y 3 -> 4.5
    assert m.loc[("B", 1), "avg_sct_s"] == pytest.approx(3.0)
    assert m.loc[("B", 1), "avg_app_completion_s"] == pytest.approx(4.5)


def test_policy_ratios_are_means_of_per_seed_ratios():
    r = policy_ratios(run_metrics(stages_frame()), policy="A", baselines=["B"]).iloc[0]
    # seed 1: A 2 / B 3; seed 2: A (1+1+4)/3 = 2 / B (2+2+2)/3 = 2 -> mean (2/3 + 1) / 2
    assert r["B"] == pytest.approx((2 / 3 + 1.0) / 2)
    assert r["seeds"] == 2
    # ratio of means would be 4 / 5 = 0.8: a different number, so the test tells them apart
    assert r["B"] != pytest.approx(0.8)
