"""analysis/reproduction.py on a hand-made results tree (no Mininet needed): emulated /
twin ratios with CIs over repetitions, the policy ranking, the >= 10% pair check and the
three targets. Expected numbers are worked out by hand in the comments."""
import json

import pandas as pd
import pytest

from analysis.load import load_runs
from analysis.reproduction import pair_check, ranking, ratio_summary, run_ratios, targets, write_reproduction


def _run(root, policy, rep, emu, twin, p95_s=0.005):
    d = root / "tb" / f"policy={policy},seed=1,rep={rep}"
    (d / "twin").mkdir(parents=True)
    ids = [f"s{i}" for i in range(len(emu))]
    pd.DataFrame({"stage_id": ids, "sct_s": emu}).to_csv(d / "stages.csv", index=False)
    pd.DataFrame({"stage_id": ids, "sct_s": twin}).to_csv(d / "twin" / "stages.csv", index=False)
    run = {"backend": "mininet", "policy": policy, "experiment": "tb", "workload_seed": 1,
           "repetition": rep, "avg_sct_s": sum(emu) / len(emu), "wall_s": 10.0,
           "loadavg_1min_start": 1.5,
           "class_latency_emulated_s": {"median": 0.002, "p95": p95_s, "max": 0.03, "coflows": 4}}
    (d / "run.json").write_text(json.dumps(run))


# Twin (deterministic): beamer stages 1, 2, 3, 4 (avg 2.5); fair 1.5, 3, 3, 4.5 (avg 3.0,
# 20% slower); sincronia 1, 2, 3.2, 4 (avg 2.55, 2% slower: below the 10% threshold).
TWIN = {"beamer": [1.0, 2.0, 3.0, 4.0], "fair": [1.5, 3.0, 3.0, 4.5], "sincronia": [1.0, 2.0, 3.2, 4.0]}


@pytest.fixture
def tree(tmp_path):
    # beamer rep 0: x1.1 on every stage; rep 1: x0.9 on every stage
    _run(tmp_path, "beamer", 0, [1.1, 2.2, 3.3, 4.4], TWIN["beamer"])
    _run(tmp_path, "beamer", 1, [0.9, 1.8, 2.7, 3.6], TWIN["beamer"])
    # fair rep 0: equal to the twin (avg 3.0); rep 1: stage ratios 1, 1, 1, 0.5 (avg 2.4375,
    # still slower than beamer's rep 1 at 2.25: order kept)
    _run(tmp_path, "fair", 0, TWIN["fair"], TWIN["fair"])
    _run(tmp_path, "fair", 1, [1.5, 3.0, 3.0, 2.25], TWIN["fair"], p95_s=0.025)
    # sincronia: faster than beamer in both reps (allowed: the twin gap is only 2%)
    _run(tmp_path, "sincronia", 0, [1.0, 2.0, 3.0, 4.0], TWIN["sincronia"])
    _run(tmp_path, "sincronia", 1, [0.9, 1.8, 2.7, 3.6], TWIN["sincronia"])
    return tmp_path


def test_ratios_per_run_and_ci_over_repetitions(tree):
    per_run = run_ratios(load_runs(tree))
    b = per_run[per_run["policy"] == "beamer"].set_index("repetition")
    assert b.loc[0, "avg_ratio"] == pytest.approx(1.1) and b.loc[1, "avg_ratio"] == pytest.approx(0.9)
    assert b.loc[0, "stage_ratio_median"] == pytest.approx(1.1)
    f1 = per_run[(per_run["policy"] == "fair") & (per_run["repetition"] == 1)].iloc[0]
    # ratios 1, 1, 1, 0.5: median 1.0; p95 1.0; avg 9.75/4 / 3.0 = 0.8125
    assert f1["stage_ratio_median"] == pytest.approx(1.0)
    assert f1["avg_ratio"] == pytest.approx(0.8125)
    s = ratio_summary(per_run).set_index("policy")
    # beamer: mean of 1.1 and 0.9 = 1.0; CI half-width t(0.975, 1) * sd / sqrt(2) with
    # sd = 0.1414: 12.706 * 0.1414 / 1.4142 = 1.2706
    assert s.loc["beamer", "avg_ratio"] == pytest.approx(1.0)
    assert s.loc["beamer", "avg_ratio_ci95"] == pytest.approx(1.2706, rel=1e-3)
    assert s.loc["beamer", "runs"] == 2


def test_ranking_and_pairs(tree):
    per_run = run_ratios(load_runs(tree))
    r = ranking(per_run).iloc[0]
    assert r["fluid_order"] == "beamer < sincronia < fair"
    # emulation means: beamer 2.5, sincronia 2.25, fair (3.0 + 2.4375) / 2 = 2.71875
    assert r["emulation_order"] == "sincronia < beamer < fair" and not r["same"]
    p = pair_check(per_run)
    # twin gaps: fair / beamer 1.2, fair / sincronia 3.0 / 2.55 = 1.176; beamer-sincronia 2%
    assert sorted(zip(p["faster"], p["slower"])) == [("beamer", "fair"), ("sincronia", "fair")]
    bf = p[p["faster"] == "beamer"].iloc[0]
    # rep 0: beamer 2.75 < fair 3.0; rep 1: beamer 2.25 < fair 2.4375: same order twice
    assert bf["same_order"] == 2 and bf["holds"]
    assert bf["emulated_gap_min"] == pytest.approx(2.4375 / 2.25 - 1)


def test_targets_verdicts(tree, tmp_path):
    per_run = run_ratios(load_runs(tree))
    summary = ratio_summary(per_run)
    checks = {c["target"].split(" ")[0]: c for c in targets(per_run, summary, pair_check(per_run))}
    # medians (mean over reps): beamer (1.1 + 0.9) / 2 = 1.0, fair 1.0, sincronia
    # (1.0 + 0.9) / 2 = 0.95 (rep 0 ratios 1, 1, 0.9375, 1; rep 1 all 0.9 but 0.84375): within 15%
    assert checks["median"]["holds"]
    assert checks["same"]["holds"]
    # fair rep 1 has class latency p95 25 ms > 20 ms
    assert not checks["class"]["holds"] and "1 run over" in checks["class"]["measured"]
    tables, figs = tmp_path / "tables", tmp_path / "figs"
    tables.mkdir()
    lines, paths = write_reproduction(load_runs(tree), tables, figs)
    text = "\n".join(lines)
    assert "does not hold" in text and "**holds**" in text
    assert (tables / "reproduction.csv").exists() and any(p.suffix == ".png" for p in paths)


def test_reversed_pair_fails_the_order_target(tmp_path):
    _run(tmp_path, "beamer", 0, [1.0, 2.0, 3.0, 4.0], TWIN["beamer"])
    _run(tmp_path, "fair", 0, [1.0, 2.0, 3.0, 3.9], TWIN["fair"])  # faster than beamer: reversed
    per_run = run_ratios(load_runs(tmp_path))
    p = pair_check(per_run).iloc[0]
    assert p["same_order"] == 0 and not p["holds"]
    checks = targets(per_run, ratio_summary(per_run), pair_check(per_run))
    assert not checks[1]["holds"] and "reversed: tb seed 1 beamer vs fair" in checks[1]["measured"]


def test_twin_stage_pairs_pairs_stages_and_rejects_mismatches(tmp_path):
    from analysis.load import twin_stage_pairs
    _run(tmp_path, "beamer", 0, [2.0, 6.0], [1.0, 3.0])
    d = tmp_path / "tb" / "policy=beamer,seed=1,rep=0"
    m = twin_stage_pairs(d).set_index("stage_id")
    assert m.loc["s1", "sct_mininet_s"] == 6.0 and m.loc["s1", "sct_fluid_s"] == 3.0
    # the twin recorded a stage the emulation did not: loud, not a silent inner join
    pd.DataFrame({"stage_id": ["s0", "s1", "s2"], "sct_s": [1.0, 3.0, 5.0]}).to_csv(
        d / "twin" / "stages.csv", index=False)
    with pytest.raises(ValueError, match="stages differ"):
        twin_stage_pairs(d)
    (d / "twin" / "stages.csv").unlink()
    assert twin_stage_pairs(d) is None


def test_written_tables_hold_no_absolute_paths(tree, tmp_path):
    tables, figs = tmp_path / "tables", tmp_path / "figs"
    tables.mkdir()
    write_reproduction(load_runs(tree), tables, figs)
    for p in list(tables.glob("*.csv")) + list(figs.glob("*.csv")):
        assert str(tree) not in p.read_text(), p.name
    runs = pd.read_csv(tables / "reproduction_runs.csv")
    assert "run_dir" not in runs and "tb/policy=beamer,seed=1,rep=0" in set(runs["run"])


def test_ranking_shows_exact_twin_ties_and_ignores_their_order():
    # twin: a and b coincide exactly (2.0), c slower; emulation b < a < c.  The tie
    # constrains nothing, so the emulation keeps every order the twin gives.
    per_run = pd.DataFrame({
        "experiment": ["e"] * 3, "scenario": ["all"] * 3, "policy": ["a", "b", "c"],
        "avg_sct_twin_s": [2.0, 2.0, 3.0], "avg_sct_emulated_s": [2.2, 2.1, 3.3]})
    r = ranking(per_run).iloc[0]
    assert r["fluid_order"] == "a = b < c"
    assert r["emulation_order"] == "b < a < c" and r["same"]
    # c ahead of a in the emulation reverses an order the twin gives: not the same
    per_run.loc[2, "avg_sct_emulated_s"] = 2.15
    r = ranking(per_run).iloc[0]
    assert r["emulation_order"] == "b < c < a" and not r["same"]
    # a tie in the emulation where the twin orders the pair is not the same order, in
    # either position of the pair
    for slow in ("a", "c"):
        twin = {"a": 2.0, "c": 2.0, slow: 3.0}
        frame = pd.DataFrame({
            "experiment": ["e"] * 2, "scenario": ["all"] * 2, "policy": ["a", "c"],
            "avg_sct_twin_s": [twin["a"], twin["c"]], "avg_sct_emulated_s": [2.5, 2.5]})
        r = ranking(frame).iloc[0]
        assert r["emulation_order"] == "a = c" and not r["same"], slow
