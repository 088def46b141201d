"""Paired packet-level statistics: ratios per repetition, t and bootstrap intervals (by
hand)."""
import numpy as np
import pandas as pd

from analysis.paired import bootstrap_ci95, paired_ratios, paired_section, t_ci95

MEAN = "avg_sct_ratio_ref_over_policy_mean"  # beamer / the policy, < 1: beamer faster
TWIN = "twin_avg_sct_ratio_ref_over_policy"


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
    assert abs(s[MEAN] - 0.8) < 1e-12 and abs(s[TWIN] - 0.8) < 1e-12
    assert 0.7 <= s["ci95_low"] < 0.8 < s["ci95_high"] <= 0.9
    # t: sd of (0.8, 0.9, 0.7, 0.8) = 0.081650, t(0.975, 3 df) = 3.1824, half-width
    # 3.1824 x 0.081650 / 2 = 0.12992
    assert abs(s["t95_low"] - 0.67008) < 2e-4 and abs(s["t95_high"] - 0.92992) < 2e-4
    assert abs(pr.loc["fair", MEAN] - 0.5) < 1e-12  # every repetition 0.5
    assert pr.loc["fair", "avg_sct_ratio_ref_over_policy_per_repetition"] == \
        "0.5000 0.5000 0.5000 0.5000"
    assert pr.loc["fair", "ci95_low"] == pr.loc["fair", "ci95_high"] == 0.5
    lines, figs = paired_section(d, tmp_path, tmp_path, "beamer")
    text = "\n".join(lines)
    assert "the t-interval excludes 1: **yes**" in text and "twin's ratio: **yes**" in text
    assert (tmp_path / "paired_ratios.csv").exists() and any(p.suffix == ".png" for p in figs)
    drawn = pd.read_csv(tmp_path / "paired_ratios.csv").set_index("policy")
    assert drawn.loc["fair", MEAN] == 0.5 and drawn.loc["fair", TWIN] == 0.5  # 1 / 2


def test_no_interval_below_three_repetitions(tmp_path):
    d = per_run([(8.0, 10.0, 16.0), (9.0, 10.0, 18.0)])
    pr = paired_ratios(d, "beamer")
    assert pr["ci95_low"].isna().all() and pr["t95_low"].isna().all()
    lines, _ = paired_section(d, tmp_path, tmp_path, "beamer")
    assert "excludes 1" not in "\n".join(lines)  # no verdict without an interval


def seeds_runs(per_seed):
    """Runs of beamer and sincronia: per seed (emulated by repetition, twin), each policy."""
    rows = []
    for seed, runs in per_seed.items():
        for pol, (emu, twin) in runs.items():
            for rep, v in enumerate(emu):
                rows.append({"experiment": "tb", "scenario": "all", "workload_seed": seed,
                             "repetition": rep, "policy": pol, "avg_sct_emulated_s": v,
                             "avg_sct_twin_s": twin})
    return pd.DataFrame(rows)


def test_comparison_over_seeds_by_hand(tmp_path):
    """Three seeds. Seed 1: emulated ratios 8/10 and 9/10 by repetition, mean 0.85; twin
    4/5 = 0.8; difference +0.05. Seed 2: 9/10 = 0.9, twin 0.9 / 1.0 = 0.9; 0. Seed 3:
    11/10 = 1.1 (the emulation reverses the pair), twin 0.95; +0.15. Means: emulated
    (0.85 + 0.9 + 1.1) / 3 = 0.95, twin (0.8 + 0.9 + 0.95) / 3 = 0.88333, difference
    0.06667; sd of (0.05, 0, 0.15) = 0.076376, t(0.975, 2 df) = 4.3027, half-width
    4.3027 x 0.076376 / sqrt(3) = 0.18973; 2 of 3 seeds in the twin's order. With two seeds
    there is no comparison over seeds."""
    from analysis.paired import seed_ratios, seeds_section
    d = seeds_runs({1: {"beamer": ([8.0, 9.0], 4.0), "sincronia": ([10.0, 10.0], 5.0)},
                    2: {"beamer": ([9.0], 0.9), "sincronia": ([10.0], 1.0)},
                    3: {"beamer": ([11.0], 0.95), "sincronia": ([10.0], 1.0)}})
    [r] = seed_ratios(d, "beamer").to_dict("records")
    assert r["policy"] == "sincronia" and r["seeds"] == 3
    assert abs(r["emulated_avg_sct_ratio_ref_over_policy_mean"] - 0.95) < 1e-12
    assert abs(r["twin_avg_sct_ratio_ref_over_policy_mean"] - 0.883333) < 1e-6
    assert abs(r["difference_mean"] - 0.066667) < 1e-6
    assert abs(r["difference_t95_low"] - (0.066667 - 0.18973)) < 2e-4
    assert abs(r["difference_t95_high"] - (0.066667 + 0.18973)) < 2e-4
    assert r["seeds_in_twin_order"] == 2
    assert r["per_seed"] == "1:0.8500/0.8000 2:0.9000/0.9000 3:1.1000/0.9500"
    lines = seeds_section(d, tmp_path, "beamer")
    assert lines[-1] == "| tb | all | sincronia | 3 | 0.950 | 0.883 | +0.067 [-0.123, +0.256] | 2/3 |"
    assert (tmp_path / "paired_seeds.csv").exists()
    assert seeds_section(d[d["workload_seed"] != 3], tmp_path, "beamer") == []
