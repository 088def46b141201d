"""Paired packet-level statistics: ratios per repetition, t and bootstrap intervals (by
hand)."""
import numpy as np
import pandas as pd

from analysis.paired import bootstrap_ci95, paired_ratios, paired_section, t_ci95


def test_bootstrap_interval_of_three_values():
    # 27 equally likely resamples of [1, 2, 3]; mean 1 (all ones) and mean 3 (all threes)
    # each have probability 1/27 = 3.7% > 2.5%, so the 2.5% and 97.5% quantiles of the
    # bootstrap distribution are 1 and 3
    assert bootstrap_ci95(np.array([1.0, 2.0, 3.0])) == (1.0, 3.0)
    assert bootstrap_ci95(np.array([2.0, 2.0, 2.0])) == (2.0, 2.0)
    lo, hi = bootstrap_ci95(np.array([5.0]))
    assert np.isnan(lo) and np.isnan(hi)


def test_t_interval_of_three_values():
    # [1, 2, 3]: mean 2, sample sd 1, standard error 1 / sqrt(3); t(0.975, 2 df) = 4.3027
    # (Student's table), so the half-width is 4.3027 / sqrt(3) = 2.4841
    lo, hi = t_ci95(np.array([1.0, 2.0, 3.0]))
    assert abs(lo - (2 - 2.4841)) < 1e-3 and abs(hi - (2 + 2.4841)) < 1e-3
    # [0.938, 0.896, 0.919]: mean 0.91767, sd 0.021031, half-width 4.3027 x 0.021031 /
    # sqrt(3) = 0.052245: wider than the bootstrap's range [0.896, 0.938]
    lo, hi = t_ci95(np.array([0.938, 0.896, 0.919]))
    assert abs(lo - 0.86542) < 2e-4 and abs(hi - 0.96991) < 2e-4
    assert t_ci95(np.array([2.0, 2.0])) == (2.0, 2.0)
    assert all(np.isnan(v) for v in t_ci95(np.array([5.0])))


def per_run(reps):
    rows = []
    for rep, (b, s, f) in enumerate(reps):
        for pol, v, twin in (("beamer", b, 1.0), ("sincronia", s, 1.25), ("fair", f, 2.0)):
            rows.append({"experiment": "tb", "scenario": "all", "workload_seed": 7,
                         "repetition": rep, "policy": pol, "avg_sct_emulated_s": v,
                         "avg_sct_twin_s": twin})
    return pd.DataFrame(rows)


def test_ratios_are_paired_by_repetition(tmp_path):
    # beamer / sincronia per repetition: 0.8, 0.9, 0.7, 0.8 -> mean 0.8; twin 1 / 1.25 = 0.8
    d = per_run([(8.0, 10.0, 16.0), (9.0, 10.0, 18.0), (7.0, 10.0, 14.0), (8.0, 10.0, 16.0)])
    pr = paired_ratios(d, "beamer").set_index("policy")
    s = pr.loc["sincronia"]
    assert s["repetitions"] == 4
    assert abs(s["ratio_mean"] - 0.8) < 1e-12 and abs(s["twin_ratio"] - 0.8) < 1e-12
    assert 0.7 <= s["ci95_low"] < 0.8 < s["ci95_high"] <= 0.9
    # t: sd of (0.8, 0.9, 0.7, 0.8) = 0.081650, t(0.975, 3 df) = 3.1824, half-width
    # 3.1824 x 0.081650 / 2 = 0.12992
    assert abs(s["t95_low"] - 0.67008) < 2e-4 and abs(s["t95_high"] - 0.92992) < 2e-4
    assert abs(pr.loc["fair", "ratio_mean"] - 0.5) < 1e-12  # every repetition 0.5
    assert pr.loc["fair", "ci95_low"] == pr.loc["fair", "ci95_high"] == 0.5
    lines, figs = paired_section(d, tmp_path, tmp_path, "beamer")
    text = "\n".join(lines)
    assert "the t-interval excludes 1: **yes**" in text and "twin's ratio: **yes**" in text
    assert (tmp_path / "paired_ratios.csv").exists() and any(p.suffix == ".png" for p in figs)


def test_no_interval_below_three_repetitions(tmp_path):
    d = per_run([(8.0, 10.0, 16.0), (9.0, 10.0, 18.0)])
    pr = paired_ratios(d, "beamer")
    assert pr["ci95_low"].isna().all() and pr["t95_low"].isna().all()
    lines, _ = paired_section(d, tmp_path, tmp_path, "beamer")
    assert "excludes 1" not in "\n".join(lines)  # no verdict without an interval
