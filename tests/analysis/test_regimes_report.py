"""The tuner-regime section of the analysis: per-run ratios and criteria, on records built
by hand (values derived on paper)."""
import pandas as pd
import pytest

from analysis.regimes import criteria_lines, per_run_ratios, regime_section, regime_table


def stage_rows(exp, seed, policy, scts):
    """One app per stage, each starting at 0: SCT = end = app completion."""
    return [{"experiment": exp, "scenario": "x=1", "policy": policy, "workload_seed": seed,
             "stage_id": f"a{i}/s", "app_id": f"a{i}", "sct_s": v, "start_s": 0.0, "end_s": v}
            for i, v in enumerate(scts)]


def records():
    rows = []
    # seed 1: beamer avg 2 (1, 3), sincronia avg 4 (2, 6), fair avg 5 (5, 5) -> 0.5, 0.4
    # seed 2: beamer avg 3 (3, 3), sincronia avg 3 (2, 4), fair avg 6 (6, 6) -> 1.0, 0.5
    for seed, b, s, f in [(1, [1, 3], [2, 6], [5, 5]), (2, [3, 3], [2, 4], [6, 6])]:
        rows += stage_rows("regime-random", seed, "beamer", b)
        rows += stage_rows("regime-random", seed, "sincronia", s)
        rows += stage_rows("regime-random", seed, "fair", f)
    return pd.DataFrame(rows)


def test_per_run_ratios_by_hand():
    r = per_run_ratios(records(), "beamer").set_index(["policy", "workload_seed"])
    assert r.loc[("sincronia", 1), "avg"] == pytest.approx(0.5)
    assert r.loc[("sincronia", 2), "avg"] == pytest.approx(1.0)
    assert r.loc[("fair", 1), "avg"] == pytest.approx(0.4)
    # tuning-job completion = the app's end - start = its stage's SCT here: same ratios
    assert r.loc[("sincronia", 1), "job"] == pytest.approx(0.5)
    t = regime_table(per_run_ratios(records(), "beamer"), "beamer").set_index("policy")
    # beamer / sincronia: (0.5 + 1.0) / 2; beamer / fair: (0.4 + 0.5) / 2
    assert t.loc["sincronia", "avg_sct_ratio_ref_over_policy_mean"] == pytest.approx(0.75)
    assert t.loc["sincronia", "runs"] == 2 and t.loc["sincronia", "reference"] == "beamer"
    assert t.loc["fair", "avg_sct_ratio_ref_over_policy_mean"] == pytest.approx(0.45)


def test_criteria_verdicts():
    ratios = per_run_ratios(records(), "beamer")
    table = regime_table(ratios)
    scen = ratios.groupby(["experiment", "scenario", "policy"])[["avg", "p99", "job"]].mean() \
        .reset_index()
    text = " ".join(criteria_lines(table, scen))
    assert "random <= 0.85 x sincronia: met (0.750)" in text
    # the scenario's mean is 0.75: not more than 1% above Sincronia
    assert "no scenario more than 1% above sincronia: met" in text
    worse = records()
    worse.loc[(worse["policy"] == "beamer") & (worse["workload_seed"] == 2), "sct_s"] = 9.0
    worse["end_s"] = worse["sct_s"]
    ratios = per_run_ratios(worse, "beamer")  # seed 2: 9 / 3 = 3.0 -> mean 1.75
    table = regime_table(ratios)
    scen = ratios.groupby(["experiment", "scenario", "policy"])[["avg", "p99", "job"]].mean() \
        .reset_index()
    text = " ".join(criteria_lines(table, scen))
    assert "random <= 0.85 x sincronia: not met (1.750)" in text
    assert "no scenario more than 1% above sincronia: not met (worst 1.750" in text


def test_section_writes_its_tables_and_figure(tmp_path):
    st = records()
    runs = st[["experiment", "scenario", "policy", "workload_seed"]].drop_duplicates() \
        .assign(avg_sct_over_lb=1.5)
    lines, figs = regime_section(runs, st, tmp_path, tmp_path, "beamer")
    assert (tmp_path / "regimes.csv").exists() and (tmp_path / "regime_scenarios.csv").exists()
    assert any(p.suffix == ".png" for p in figs)
    row = next(l for l in lines if l.startswith("| random |"))
    assert "0.750" in row and "1.50" in row  # / sincronia and beamer / LB
    data = pd.read_csv(tmp_path / "regime_ratios.csv").set_index("policy")
    assert set(data.index) == {"sincronia", "fair"}
    # beamer faster than both: the figure's numbers are beamer / policy, under 1
    assert data.loc["fair", "avg_sct_ratio_ref_over_policy_mean"] == pytest.approx(0.45)
    assert data.loc["sincronia", "avg_sct_ratio_ref_over_policy_mean"] == pytest.approx(0.75)
    # the per-scenario table: seed 1 0.5, seed 2 1.0 -> 0.75 for sincronia
    scen = pd.read_csv(tmp_path / "regime_scenarios.csv").set_index("policy")
    assert scen.loc["sincronia", "avg_sct_ratio_ref_over_policy"] == pytest.approx(0.75)
    assert (scen["reference"] == "beamer").all()
