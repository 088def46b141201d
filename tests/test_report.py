"""The summary's numbers and signs, from a results tree written by hand.

Reduction = 1 - (Beamer avg SCT / baseline avg SCT) per seed (same trace), mean over
seeds; positive = Beamer faster. The expected cells are computed below by hand.
"""
import json

import pandas as pd
import pytest

from analysis.metrics import REFERENCE, mean_ci95, normalised
from analysis.report import make_report

# policy -> avg SCT per seed (1, 2); every stage of a run has that SCT. The reference
# policy (Beamer) is whatever analysis.metrics.REFERENCE names.
AVG = {REFERENCE: (8.0, 6.0), "sincronia": (10.0, 10.0), "fair": (4.0, 12.0)}


def write_tree(root):
    for pol, per_seed in AVG.items():
        for seed, avg in zip((1, 2), per_seed):
            d = root / "exp" / f"x=1,policy={pol},seed={seed}"
            d.mkdir(parents=True)
            run = {"experiment": "exp", "policy": pol, "params": {"workload.x": 1},
                   "workload_seed": seed, "seed": seed, "backend": "fluid",
                   "avg_sct_s": avg, "p95_sct_s": avg, "avg_cct_s": avg / 2,
                   "lower_bound_avg_sct_s": 4.0, "avg_sct_over_lb": avg / 4.0, "wall_s": 0.1}
            (d / "run.json").write_text(json.dumps(run))
            pd.DataFrame({"stage_id": ["s0", "s1"], "app_id": ["a", "a"], "weight": [1.0, 1.0],
                          "num_jobs": [1, 1], "start_s": [0.0, 1.0],
                          "end_s": [avg, 1.0 + avg], "sct_s": [avg, avg]}).to_csv(
                d / "stages.csv", index=False)
            pd.DataFrame({"coflow_id": ["c0", "c1"], "stage_id": ["s0", "s1"],
                          "job_id": ["j0", "j1"], "end_s": [avg, 1.0 + avg]}).to_csv(
                d / "coflows.csv", index=False)


def test_summary_reduction_sign_and_values(tmp_path):
    write_tree(tmp_path)
    text = make_report(tmp_path).read_text()
    # sincronia: 1 - 8/10 = +20%, 1 - 6/10 = +40% -> +30.0% (Beamer faster)
    # fair: 1 - 8/4 = -100%, 1 - 6/12 = +50% -> -25.0% (Beamer slower on average)
    # beamer avg SCT: (8 + 6) / 2 = 7.00; 2 seeds
    assert "| exp | x=1 | 2 | 7.00 | +30.0% | -25.0% |" in text
    assert f"| {REFERENCE} avg SCT (s) | vs sincronia | vs fair |" in text
    # distance from the LB, columns beamer, sincronia, fair: mean of avg / 4 over seeds:
    # (8 + 6) / 8 = 1.75, 10 / 4 = 2.5, (4 + 12) / 8 = 2.0
    assert "| exp | 1.750 | 2.500 | 2.000 |" in text


def test_normalised_ratios_per_seed_with_ci():
    rows = [{"experiment": "e", "scenario": "s", "policy": p, "workload_seed": s, "avg_sct_s": v}
            for p, vals in AVG.items() for s, v in zip((1, 2), vals)]
    norm = normalised(pd.DataFrame(rows)).set_index("policy")
    # ratio = policy / beamer per seed: sincronia 10/8, 10/6; fair 4/8, 12/6
    assert norm.loc["sincronia", "ratio_mean"] == pytest.approx((10 / 8 + 10 / 6) / 2)
    assert norm.loc["fair", "ratio_mean"] == pytest.approx((0.5 + 2.0) / 2)
    assert norm.loc[REFERENCE, "ratio_mean"] == 1.0 and norm.loc[REFERENCE, "ratio_ci95"] == 0.0
    assert norm.loc["fair", "avg_sct_s_mean"] == 8.0 and norm.loc["fair", "seeds"] == 2
    # 95% t-interval half-width of (0.5, 2.0): t_{0.975,1} = 12.706 x sd 1.0607 / sqrt 2
    assert norm.loc["fair", "ratio_ci95"] == pytest.approx(12.7062 * 1.06066 / 2 ** 0.5, rel=1e-4)


def test_mean_ci95_by_hand():
    m, h = mean_ci95([1.0, 2.0, 3.0])
    # sd = 1, t_{0.975,2} = 4.3027 -> 4.3027 / sqrt(3)
    assert m == 2.0 and h == pytest.approx(4.302653 / 3 ** 0.5, rel=1e-6)
    assert mean_ci95([5.0]) == (5.0, 0.0)


def test_normalised_reduction_is_the_mean_of_per_seed_reductions():
    rows = [{"experiment": "e", "scenario": "s", "policy": p, "workload_seed": s, "avg_sct_s": v}
            for p, vals in AVG.items() for s, v in zip((1, 2), vals)]
    norm = normalised(pd.DataFrame(rows)).set_index("policy")
    assert norm.loc["sincronia", "reduction_mean"] == pytest.approx(0.3)
    assert norm.loc["fair", "reduction_mean"] == pytest.approx(-0.25)
    assert norm.loc[REFERENCE, "reduction_mean"] == 0.0


def test_sct_table_by_hand():
    from analysis.metrics import sct_table
    stages = pd.DataFrame({"experiment": "e", "scenario": "s", "policy": "p",
                           "sct_s": [1.0, 2.0, 3.0, 4.0]})
    row = sct_table(stages).iloc[0]
    # linear interpolation between order statistics: rank q * (n - 1)
    assert row["avg_sct_s"] == 2.5 and row["p50_sct_s"] == 2.5
    assert row["p95_sct_s"] == pytest.approx(3.85) and row["p99_sct_s"] == pytest.approx(3.97)
    assert row["stages"] == 4
