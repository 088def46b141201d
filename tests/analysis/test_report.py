"""The summary's numbers and their direction, from a results tree written by hand.

Every table and figure states Beamer (the reference) over the other policy: Beamer avg
SCT / baseline avg SCT per seed (same trace), mean over seeds; < 1 = Beamer faster. The
expected cells are computed below by hand.
"""
import json
import math
import re
import shutil

import pandas as pd
import pytest

from analysis.metrics import mean_ci95, reference_ratios
from analysis.policies import DEFAULT_REFERENCE as REFERENCE
from analysis.report import make_report

# policy -> avg SCT per seed (1, 2); every stage of a run has that SCT. The reference
# policy (Beamer) is the default reference of analysis.policies.
AVG = {REFERENCE: (8.0, 6.0), "sincronia": (10.0, 10.0), "fair": (4.0, 12.0)}
MEAN = "avg_sct_ratio_ref_over_policy_mean"
CI = "avg_sct_ratio_ref_over_policy_ci95"


def write_tree(root, avg=None, exp="exp"):
    for pol, per_seed in (avg or AVG).items():
        for seed, avg in zip((1, 2), per_seed):
            d = root / exp / f"x=1,policy={pol},seed={seed}"
            d.mkdir(parents=True)
            run = {"experiment": exp, "policy": pol, "params": {"workload.x": 1},
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


@pytest.mark.slow
def test_summary_ratio_direction_and_values(tmp_path):
    write_tree(tmp_path)
    text = make_report(tmp_path).read_text()
    # sincronia: 8/10 = 0.8, 6/10 = 0.6 -> 0.700 (Beamer faster)
    # fair: 8/4 = 2.0, 6/12 = 0.5 -> 1.250 (Beamer slower on average)
    # beamer avg SCT: (8 + 6) / 2 = 7.00; 2 seeds
    # 95% t-intervals over 2 seeds: t(0.975, 1 df) = 12.7062 (Student's table); sincronia sd
    # of (0.8, 0.6) = 0.14142, half-width 12.7062 x 0.14142 / sqrt(2) = 1.2706;
    # fair sd of (2.0, 0.5) = 1.06066, half-width 12.7062 x 0.75 = 9.5297
    assert "| exp | x=1 | 2 | 7.00 | 0.700 ± 1.271 | 1.250 ± 9.530 |" in text
    assert f"## {REFERENCE}'s average SCT relative to each other policy" in text
    assert (f"Each cell: {REFERENCE}'s avg SCT / that policy's (< 1: {REFERENCE} faster"
            in text)
    assert "`± x`: the half-width of that mean's 95% t-interval" in text
    assert (f"| {REFERENCE} avg SCT, mean of runs (s) | {REFERENCE} / sincronia | "
            f"{REFERENCE} / fair |") in text
    # distance from the LB, columns beamer, sincronia, fair: mean of avg / 4 over seeds:
    # (8 + 6) / 8 = 1.75, 10 / 4 = 2.5, (4 + 12) / 8 = 2.0
    assert "| exp | 1.750 | 2.500 | 2.000 |" in text


@pytest.mark.slow
def test_beamer_twice_as_fast_reads_half_in_every_table_and_figure(tmp_path, monkeypatch):
    """Beamer's runs take half fair's (4 vs 8 s, 6 vs 12 s): per seed 4/8 = 6/12 = 0.5, so
    every table and figure says 0.5 for fair (beamer / fair), not 2, with the direction
    stated, the interval 0 wide (two equal ratios), and the bars on a log axis."""
    from analysis import plots
    axes = {}
    save = plots._save
    monkeypatch.setattr(plots, "_save", lambda fig, out, stem, data: axes.setdefault(
        stem, fig.axes[0]) and save(fig, out, stem, data))
    write_tree(tmp_path, {REFERENCE: (4.0, 6.0), "fair": (8.0, 12.0)})
    text = make_report(tmp_path).read_text()
    rows = _table_rows(text, f"## {REFERENCE}'s average SCT relative")
    assert rows[0][-1] == f"{REFERENCE} / fair"
    assert rows[2] == ["exp", "x=1", "2", "5.00", "0.500 ± 0.000"]  # (4 + 6) / 2 = 5.00
    assert f"(< 1: {REFERENCE} faster" in text[text.index("## " + REFERENCE):]
    for csv in (tmp_path / "figures" / "exp_normalised_avg_sct.csv",
                tmp_path / "tables" / "normalised_avg_sct.csv"):
        df = pd.read_csv(csv).set_index("policy")
        assert df.loc["fair", MEAN] == pytest.approx(0.5), csv.name
        assert df.loc["fair", "reference"] == REFERENCE, csv.name
    ax = axes["exp_normalised_avg_sct"]
    assert ax.get_yscale() == "log" and f"(< 1: {REFERENCE} faster" in ax.get_ylabel()
    (fair,) = [c for c in ax.containers if c.get_label() == "fair"]
    assert (fair[0].get_y(), fair[0].get_y() + fair[0].get_height()) == pytest.approx((0.5, 1.0))


def test_reference_ratios_per_seed_with_ci():
    rows = [{"experiment": "e", "scenario": "s", "policy": p, "workload_seed": s, "avg_sct_s": v}
            for p, vals in AVG.items() for s, v in zip((1, 2), vals)]
    norm = reference_ratios(pd.DataFrame(rows)).set_index("policy")
    # ratio = beamer / policy per seed: sincronia 8/10, 6/10; fair 8/4, 6/12
    assert norm.loc["sincronia", MEAN] == pytest.approx((0.8 + 0.6) / 2)
    assert norm.loc["fair", MEAN] == pytest.approx((2.0 + 0.5) / 2)
    assert norm.loc[REFERENCE, MEAN] == 1.0 and norm.loc[REFERENCE, CI] == 0.0
    assert (norm["reference"] == REFERENCE).all()
    assert norm.loc["fair", "avg_sct_s_mean"] == 8.0 and norm.loc["fair", "seeds"] == 2
    # 95% t-interval half-width of (2.0, 0.5): t_{0.975,1} = 12.706 x sd 1.0607 / sqrt 2
    assert norm.loc["fair", CI] == pytest.approx(12.7062 * 1.06066 / 2 ** 0.5, rel=1e-4)


def test_mean_ci95_by_hand():
    m, h = mean_ci95([1.0, 2.0, 3.0])
    # sd = 1, t_{0.975,2} = 4.3027 -> 4.3027 / sqrt(3)
    assert m == 2.0 and h == pytest.approx(4.302653 / 3 ** 0.5, rel=1e-6)
    # one value has no interval (NaN, drawn and printed as none), not a zero-width one
    m, h = mean_ci95([5.0])
    assert m == 5.0 and math.isnan(h)


def test_sct_table_by_hand():
    from analysis.metrics import sct_table
    stages = pd.DataFrame({"experiment": "e", "scenario": "s", "policy": "p",
                           "sct_s": [1.0, 2.0, 3.0, 4.0]})
    row = sct_table(stages).iloc[0]
    # linear interpolation between order statistics: rank q * (n - 1)
    assert row["pooled_avg_sct_s"] == 2.5 and row["pooled_p50_sct_s"] == 2.5
    assert row["pooled_p95_sct_s"] == pytest.approx(3.85)
    assert row["pooled_p99_sct_s"] == pytest.approx(3.97)
    assert row["stages"] == 4


# --- which policies are reported, and against which reference ---------------------------

def _table_rows(text: str, heading: str) -> list[list[str]]:
    block = text[text.index(heading):].splitlines()
    start = next(i for i, l in enumerate(block) if l.startswith("|"))
    rows = []
    for line in block[start:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip("|").split("|")])
    return rows


@pytest.mark.slow
def test_without_beamer_the_reference_is_the_first_policy_in_registry_order(tmp_path):
    """No beamer in the records: the headline table is not empty; its reference is
    sincronia (registry order: sincronia before fair), and the summary says so."""
    write_tree(tmp_path, {"fair": (4.0, 12.0), "sincronia": (10.0, 10.0)})
    text = make_report(tmp_path).read_text()
    assert "Reference policy of every ratio (`sincronia` / other, < 1: `sincronia` faster): `sincronia`" in text
    rows = _table_rows(text, "## sincronia's average SCT relative")
    # sincronia / fair: 10/4 = 2.5, 10/12 = 0.83333 -> 1.667; 95% t-interval: sd of (2.5,
    # 0.83333) = 1.17851, t(0.975, 1 df) = 12.7062, half-width 12.7062 x 1.17851 / sqrt(2)
    # = 10.5885
    assert rows[0] == ["experiment", "scenario", "runs", "sincronia avg SCT, mean of runs (s)",
                       "sincronia / fair"]
    assert rows[2] == ["exp", "x=1", "2", "10.00", "1.667 ± 10.589"]
    fig = pd.read_csv(tmp_path / "figures" / "exp_normalised_avg_sct.csv")
    assert fig[MEAN].notna().all() and set(fig["policy"]) == {"sincronia", "fair"}
    assert (fig["reference"] == "sincronia").all()


@pytest.mark.slow
def test_reference_is_a_setting(tmp_path):
    write_tree(tmp_path)
    text = make_report(tmp_path, reference="fair").read_text()
    assert "`fair` (set with `--reference`)" in text
    rows = _table_rows(text, "## fair's average SCT relative")
    assert rows[0][3:] == ["fair avg SCT, mean of runs (s)", f"fair / {REFERENCE}",
                           "fair / sincronia"]
    norm = pd.read_csv(tmp_path / "tables" / "normalised_avg_sct.csv")
    assert (norm[norm["policy"] == "fair"][MEAN] == 1.0).all()
    # fair / beamer: 4/8 = 0.5, 12/6 = 2.0 -> 1.25
    assert norm.set_index("policy").loc[REFERENCE, MEAN] == pytest.approx(1.25)
    with pytest.raises(ValueError, match="--reference varys: no runs"):
        make_report(tmp_path, reference="varys")


@pytest.mark.slow
def test_python_m_analysis_reference_flag(tmp_path):
    import subprocess
    from tests.conftest import PYTHON, REPO
    write_tree(tmp_path)
    r = subprocess.run([PYTHON, "-m", "analysis", str(tmp_path), "--reference", "sincronia"],
                       cwd=REPO, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "## sincronia's average SCT relative" in (tmp_path / "summary.md").read_text()
    r = subprocess.run([PYTHON, "-m", "analysis", str(tmp_path), "--reference", "nope"],
                       cwd=REPO, capture_output=True, text=True)
    assert r.returncode == 2 and "--reference nope" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.slow
def test_policy_missing_from_one_experiment_gives_dashes_not_nan(tmp_path):
    """A second experiment without fair: '-' cells, never 'nan', in every summary table."""
    write_tree(tmp_path)
    write_tree(tmp_path, {REFERENCE: (8.0, 6.0), "sincronia": (10.0, 10.0)}, exp="other")
    text = make_report(tmp_path).read_text()
    assert "nan" not in text.lower()
    assert "| other | x=1 | 2 | 7.00 | 0.700 ± 1.271 | - |" in text  # as in the test above
    assert "| other | 1.750 | 2.500 | - |" in text


@pytest.mark.slow
def test_unknown_policy_names_are_reported_after_the_registry_ones(tmp_path):
    """Records of a policy the registry does not know (removed, renamed) still appear,
    after the registry's policies, alphabetically."""
    write_tree(tmp_path, {**AVG, "zz-old": (9.0, 9.0), "aa-old": (9.0, 9.0)})
    text = make_report(tmp_path).read_text()
    assert (f"| experiment | scenario | runs | {REFERENCE} avg SCT, mean of runs (s) | "
            f"{REFERENCE} / sincronia | {REFERENCE} / fair | {REFERENCE} / aa-old | "
            f"{REFERENCE} / zz-old |") in text
    for name in ("normalised_avg_sct", "ratio_to_lower_bound", "exp_sct_cdf"):
        df = pd.read_csv(tmp_path / ("tables" if name == "normalised_avg_sct" else "figures") / f"{name}.csv")
        assert list(dict.fromkeys(df["policy"])) == [REFERENCE, "sincronia", "fair", "aa-old",
                                                     "zz-old"], name


@pytest.mark.slow
def test_colours_are_the_same_per_policy_in_every_figure(tmp_path):
    write_tree(tmp_path)
    make_report(tmp_path)
    colour = {}
    for f in (tmp_path / "figures").glob("*.csv"):
        df = pd.read_csv(f)
        if "colour" not in df:
            continue
        for pol, c in df[["policy", "colour"]].drop_duplicates().itertuples(index=False):
            assert colour.setdefault(pol, c) == c, (f.name, pol)
    assert len(set(colour.values())) == len(colour) == 3


@pytest.mark.slow
def test_single_run_bars_have_no_error_bar(tmp_path):
    """One seed: the figure data hold no interval (none is drawn) and the title says so."""
    for pol, avg in AVG.items():
        d = tmp_path / "one" / f"policy={pol},seed=1"
        d.mkdir(parents=True)
        (d / "run.json").write_text(json.dumps({
            "experiment": "one", "policy": pol, "params": {}, "workload_seed": 1, "seed": 1,
            "backend": "fluid", "avg_sct_s": avg[0], "avg_sct_over_lb": avg[0] / 4.0}))
        pd.DataFrame({"stage_id": ["s0"], "app_id": ["a"], "start_s": [0.0], "end_s": [avg[0]],
                      "sct_s": [avg[0]]}).to_csv(d / "stages.csv", index=False)
        pd.DataFrame({"coflow_id": ["c0"], "stage_id": ["s0"], "job_id": ["j0"],
                      "end_s": [avg[0]]}).to_csv(d / "coflows.csv", index=False)
    make_report(tmp_path)
    fig = pd.read_csv(tmp_path / "figures" / "one_normalised_avg_sct.csv")
    assert fig[CI].isna().all() and (fig["runs"] == 1).all()
    rows = [ln for ln in (tmp_path / "summary.md").read_text().splitlines()
            if ln.startswith("| one |")]
    assert rows and not any("±" in ln for ln in rows)


@pytest.mark.slow
def test_tables_hold_no_absolute_paths(tmp_path):
    """Every CSV the analysis writes is the same wherever it runs: no absolute path (the
    results directory's location) in any cell."""
    write_tree(tmp_path)
    make_report(tmp_path)
    for f in list((tmp_path / "tables").glob("*.csv")) + list((tmp_path / "figures").glob("*.csv")):
        text = f.read_text()
        assert str(tmp_path) not in text, f.name
        assert not re.search(r"(^|,)\"?/", text, re.M), f.name


def test_write_table_rejects_absolute_paths(tmp_path):
    from analysis.load import write_table
    df = pd.DataFrame({"run": ["exp/a"], "run_dir": [str(tmp_path / "exp" / "a")]})
    write_table(df, tmp_path / "ok.csv")
    assert (tmp_path / "ok.csv").read_text() == "run\nexp/a\n"
    with pytest.raises(ValueError, match="absolute path"):
        write_table(pd.DataFrame({"where": ["/abs/path"]}), tmp_path / "bad.csv")


HISTORY = re.compile(r"\bissue|issue's|\btargets?\b|\bhere\b|slower day|work log|session",
                     re.I)


@pytest.mark.slow
def test_summary_states_measurements_not_history(tmp_path):
    """The generated summary (a hand-made tree and the committed reference one) names
    criteria and measurements, not the project's history."""
    from tests.conftest import REPO
    write_tree(tmp_path)
    for text in (make_report(tmp_path).read_text(), (REPO / "results" / "summary.md").read_text()):
        assert not HISTORY.search(text), HISTORY.search(text).group(0)


# --- what the tables and figures are, named in the summary -----------------------------

def write_runs(root, exp, params: dict, stages_by_policy: dict, seeds=(1,), figure=None,
               backend="fluid"):
    """Runs of one scenario (``params``: dotted key -> value); ``stages_by_policy``: policy
    -> per seed a list of stage SCTs (each stage starts at 0, one job with one coflow)."""
    from workloads.config import value_label
    name = ",".join(f"{k.split('.')[-1]}={value_label(v)}" for k, v in params.items())
    for pol, per_seed in stages_by_policy.items():
        for seed, scts in zip(seeds, per_seed):
            d = root / exp / f"{name + ',' if name else ''}policy={pol},seed={seed}"
            d.mkdir(parents=True)
            avg = sum(scts) / len(scts)
            (d / "run.json").write_text(json.dumps({
                "experiment": exp, "policy": pol, "params": params, "workload_seed": seed,
                "seed": seed, "backend": backend, "avg_sct_s": avg, "p95_sct_s": max(scts),
                "avg_cct_s": avg, "lower_bound_avg_sct_s": 1.0, "avg_sct_over_lb": avg,
                "num_priority_classes": 8}))
            if figure:
                (d / "run_config.json").write_text(json.dumps({"experiment_cfg": {"figure": figure}}))
            n = len(scts)
            pd.DataFrame({"stage_id": [f"s{i}" for i in range(n)], "app_id": [f"a{i}" for i in range(n)],
                          "start_s": [0.0] * n, "end_s": scts, "sct_s": scts}).to_csv(
                d / "stages.csv", index=False)
            pd.DataFrame({"coflow_id": [f"c{i}" for i in range(n)], "stage_id": [f"s{i}" for i in range(n)],
                          "job_id": [f"j{i}" for i in range(n)], "end_s": scts}).to_csv(
                d / "coflows.csv", index=False)


@pytest.mark.slow
def test_the_two_averages_of_sct_are_named_apart(tmp_path):
    # beamer: seed 1 stages 2 and 4 (avg 3), seed 2 one stage of 10 (avg 10)
    # mean of the runs' avg SCTs: (3 + 10) / 2 = 6.5; pooled over the 3 stages: 16 / 3
    write_runs(tmp_path, "exp", {"workload.x": 1},
               {REFERENCE: ([2.0, 4.0], [10.0]), "sincronia": ([4.0, 4.0], [10.0])}, seeds=(1, 2))
    text = make_report(tmp_path).read_text()
    assert f"| {REFERENCE} avg SCT, mean of runs (s) |" in text
    assert "| exp | x=1 | 2 | 6.50 |" in text
    sct = pd.read_csv(tmp_path / "tables" / "sct_stats.csv").set_index("policy")
    assert sct.loc[REFERENCE, "pooled_avg_sct_s"] == pytest.approx(16 / 3)
    assert "avg_sct_s" not in sct.columns and sct.loc[REFERENCE, "stages"] == 3
    norm = pd.read_csv(tmp_path / "tables" / "normalised_avg_sct.csv").set_index("policy")
    assert norm.loc[REFERENCE, "avg_sct_s_mean"] == pytest.approx(6.5)
    tables = text[text.index("## Tables"):text.index("## Figures")]
    assert "`sct_stats.csv`" in tables and "`pooled_avg_sct_s`" in tables
    assert "`avg_sct_s_mean` = the mean of the runs' avg SCTs" in tables


def test_trial_times_by_hand(tmp_path):
    """A job is one trial's work inside one stage: from its stage's start to its last
    coflow's end. Stage s0 starts at 1; job j0's coflows end at 3 and 5 (4 s), job j1's
    at 2 (1 s): mean 2.5 over 2 jobs."""
    d = tmp_path / "exp" / "policy=beamer,seed=1"
    d.mkdir(parents=True)
    (d / "run.json").write_text(json.dumps({"experiment": "exp", "policy": "beamer", "params": {},
                                            "workload_seed": 1, "avg_sct_s": 4.0,
                                            "avg_sct_over_lb": 1.0}))
    pd.DataFrame({"stage_id": ["s0"], "app_id": ["a"], "start_s": [1.0], "end_s": [5.0],
                  "sct_s": [4.0]}).to_csv(d / "stages.csv", index=False)
    pd.DataFrame({"coflow_id": ["c0", "c1", "c2"], "stage_id": ["s0"] * 3,
                  "job_id": ["j0", "j0", "j1"], "end_s": [3.0, 5.0, 2.0]}).to_csv(
        d / "coflows.csv", index=False)
    text = make_report(tmp_path).read_text()
    t = pd.read_csv(tmp_path / "tables" / "trial_times.csv")
    assert t.loc[0, "avg_trial_time_s"] == pytest.approx(2.5) and t.loc[0, "trials"] == 2
    assert not (tmp_path / "tables" / "avg_jct.csv").exists()
    assert "- `trial_times.csv`: " in text and "one trial's work inside one stage" in text


@pytest.mark.slow
def test_the_footer_names_every_table_written(tmp_path):
    write_tree(tmp_path)
    text = make_report(tmp_path).read_text()
    written = sorted(p.name for p in (tmp_path / "tables").glob("*.csv"))
    # 3 policies x 2 seeds = 6 runs
    assert text.rstrip().endswith(f"6 runs; tables in `tables/`: {', '.join(written)}.")
    assert "named above" not in text


@pytest.mark.slow
def test_scenarios_are_in_numeric_order(tmp_path):
    """1e+10 < 2.5e+10 < 1e+11 (as text 1e+11 would come second) in every table and in the
    congestion section of the summary."""
    for rate in (1e10, 1e11, 2.5e10):
        write_runs(tmp_path, "cong-ratio", {"topology.link_rate_bps": rate},
                   {REFERENCE: ([2.0],), "sincronia": ([3.0],), "fair": ([4.0],)})
    text = make_report(tmp_path).read_text()
    want = ["link_rate_bps=1e+10", "link_rate_bps=2.5e+10", "link_rate_bps=1e+11"]
    for name in ("runs", "normalised_avg_sct", "sct_stats", "congestion", "congestion_ratios",
                 "trial_times"):
        df = pd.read_csv(tmp_path / "tables" / f"{name}.csv")
        assert list(dict.fromkeys(df["scenario"])) == want, name
    cong = text[text.index("congestion family (`cong-*`"):]
    rows = [line.split(" | ")[1] for line in cong.splitlines() if line.startswith("| cong-ratio")]
    assert rows == want


@pytest.mark.slow
def test_runs_that_disagree_on_the_figure_get_bars_and_say_so(tmp_path, capsys):
    """A sweep (figure = "line") beside the runs made before it was added (figure "bars",
    no swept value): bars, and the note says the runs disagree and what to do, without
    guessing which side is the config's."""
    for x in (1, 2):
        write_runs(tmp_path, "two", {"workload.x": x},
                   {REFERENCE: ([2.0],), "sincronia": ([3.0],)}, figure="line")
    write_runs(tmp_path, "two", {}, {REFERENCE: ([2.0],), "sincronia": ([3.0],)}, figure="bars")
    text = make_report(tmp_path).read_text()
    assert ('two: drawn as bars (its runs disagree: 4 record figure = "line", 2 "bars"; runs '
            "the config no longer makes (the runner's note names them) are kept in this "
            "results directory: remove them for the figure the config asks for).") in text
    assert "note: two: drawn as bars (its runs disagree" in capsys.readouterr().err
    assert not list((tmp_path / "figures").glob("two_avg_sct_vs_*"))


@pytest.mark.slow
def test_runs_that_disagree_the_other_way_get_the_same_neutral_note(tmp_path, capsys):
    """The config went from figure = "line" to "bars" and dropped a sweep point: the
    current runs say "bars", the dropped point's old ones "line". Bars, and the note does
    not claim that "line" is set."""
    for x in (1, 2):
        write_runs(tmp_path, "two", {"workload.x": x},
                   {REFERENCE: ([2.0],), "sincronia": ([3.0],)}, figure="bars")
    write_runs(tmp_path, "two", {"workload.x": 3}, {REFERENCE: ([2.0],), "sincronia": ([3.0],)},
               figure="line")
    text = make_report(tmp_path).read_text()
    assert 'two: drawn as bars (its runs disagree: 2 record figure = "line", 4 "bars"' in text
    assert '`figure = "line"` is set' not in text
    assert not list((tmp_path / "figures").glob("two_avg_sct_vs_*"))


@pytest.mark.slow
def test_a_line_figure_that_cannot_be_drawn_says_so(tmp_path, capsys, monkeypatch):
    from analysis import plots
    titles = {}
    save = plots._save
    monkeypatch.setattr(plots, "_save", lambda fig, out, stem, data: titles.setdefault(
        stem, fig.axes[0].get_title()) and save(fig, out, stem, data))
    for x, pat in ((1, "ring"), (2, "ring"), (1, "ps"), (2, "ps")):
        write_runs(tmp_path, "two", {"workload.x": x, "workload.sync_pattern": pat},
                   {REFERENCE: ([2.0],), "sincronia": ([3.0],)}, figure="line")
    text = make_report(tmp_path).read_text()
    why = "2 swept keys: workload.x, workload.sync_pattern"
    assert f'two: `figure = "line"` is set, but the figure is bars ({why};' in text
    assert f"note: two: `figure = \"line\"` is set" in capsys.readouterr().err
    assert f'figure = "line" is set: drawn as bars ({why})' in titles["two_normalised_avg_sct"]
    assert not list((tmp_path / "figures").glob("two_avg_sct_vs_*"))


@pytest.mark.slow
def test_bars_of_a_packet_level_experiment_say_so(tmp_path, monkeypatch):
    from analysis import plots
    titles = {}
    save = plots._save
    monkeypatch.setattr(plots, "_save", lambda fig, out, stem, data: titles.setdefault(
        stem, fig.axes[0].get_title()) and save(fig, out, stem, data))
    write_runs(tmp_path, "emu", {}, {REFERENCE: ([2.0],), "sincronia": ([3.0],)},
               backend="mininet")
    write_runs(tmp_path, "sim", {}, {REFERENCE: ([2.0],), "sincronia": ([3.0],)})
    make_report(tmp_path)
    assert titles["emu_normalised_avg_sct"].startswith("emu (packet level): ")
    assert titles["sim_normalised_avg_sct"].startswith("sim: ")


@pytest.mark.slow
def test_sct_cdfs_one_per_scenario_named_in_the_summary(tmp_path):
    for x in (10, 2, 1):
        write_runs(tmp_path, "sweep", {"workload.x": x}, {REFERENCE: ([2.0, 3.0],), "fair": ([4.0, 1.0],)})
    write_runs(tmp_path, "zother", {}, {REFERENCE: ([2.0],), "fair": ([4.0],)})
    text = make_report(tmp_path).read_text()
    figs = tmp_path / "figures"
    cdfs = sorted(p.stem for p in figs.glob("*_sct_cdf*.csv"))
    assert cdfs == ["sweep_sct_cdf_x-1", "sweep_sct_cdf_x-10", "sweep_sct_cdf_x-2"]
    assert set(pd.read_csv(figs / "sweep_sct_cdf_x-10.csv")["scenario"]) == {"x=10"}
    assert ("SCT CDFs (`*_sct_cdf*`, one figure per scenario) of `sweep` (every scenario: "
            "x=1, x=2, x=10). Those of another experiment: `python -m analysis DIR --cdf "
            "EXPERIMENT` (`--cdf all`: every experiment).") in text
    # another experiment's CDF on request; a single scenario keeps the plain name
    text = make_report(tmp_path, cdf=["zother"]).read_text()
    assert (figs / "zother_sct_cdf.csv").exists() and "of `zother` (all)." in text
    with pytest.raises(ValueError, match="--cdf nope: no runs of that experiment"):
        make_report(tmp_path, cdf=["nope"])


def test_scenario_order_by_hand():
    from analysis.load import scenario_order
    # every value of link_rate_bps a number: numeric order
    assert scenario_order(["r=1e+11", "r=2.5e+10", "r=1e+10", "r=1e+11"]) == [
        "r=1e+10", "r=2.5e+10", "r=1e+11"]
    # a key with a value that is not a number: text order for that key
    assert scenario_order(["g=8", "g=1+2+4+8", "g=2+4+8"]) == ["g=1+2+4+8", "g=2+4+8", "g=8"]
    # two keys: the first decides, the second breaks ties; 100 after 20 (as text: before)
    assert scenario_order(["a=100,p=ring", "a=20,p=ring", "a=100,p=ps", "a=20,p=ps"]) == [
        "a=20,p=ps", "a=20,p=ring", "a=100,p=ps", "a=100,p=ring"]


@pytest.mark.slow
def test_the_header_is_the_command_with_its_flags(tmp_path):
    """The summary's first line regenerates it: the flags given are in it (a later run
    without them is back at the defaults), and the hint for other CDFs keeps them."""
    write_runs(tmp_path, "sweep", {"workload.x": 1}, {REFERENCE: ([2.0],), "sincronia": ([4.0],)})
    write_runs(tmp_path, "zother", {}, {REFERENCE: ([2.0],), "sincronia": ([4.0],)})
    text = make_report(tmp_path, reference="sincronia", cdf=["sweep"]).read_text()
    assert text.splitlines()[2].startswith(
        "Generated by `python -m analysis DIR --reference sincronia --cdf sweep` from the run "
        "records only (DIR: this results directory)")
    assert "`sincronia` (set with `--reference`)" in text
    assert ("Those of another experiment: `python -m analysis DIR --reference sincronia --cdf "
            "EXPERIMENT`") in text
    text = make_report(tmp_path).read_text()
    assert text.splitlines()[2].startswith("Generated by `python -m analysis DIR` from")
    assert f"< 1: `{REFERENCE}` faster): `{REFERENCE}` (the default" in text


def test_counts_agree_with_their_noun(tmp_path):
    """One fluid scenario: "1 scenario" (beamer / sincronia = 2 / 3 = 0.667), "1 run"."""
    write_runs(tmp_path, "exp", {"workload.x": 1}, {REFERENCE: ([2.0],), "sincronia": ([3.0],)})
    text = make_report(tmp_path).read_text()
    assert f"\n1 scenario. worst {REFERENCE} / sincronia: 0.667 (exp, x=1)." in text
    assert "\n2 runs; tables in `tables/`" in text
    from analysis.text import count
    assert (count(1, "run"), count(1223, "run"), count(0, "pair")) == ("1 run", "1,223 runs",
                                                                      "0 pairs")


def test_the_unit_of_the_ratios_is_named_per_experiment():
    from analysis.report import ratio_unit_note
    norm = pd.DataFrame({"experiment": ["a", "a", "b", "tb", "tb"],
                         "unit": ["seeds", "seeds", "seeds", "repetitions", "repetitions"]})
    assert ratio_unit_note(norm) == ("per repetition of one seed in tb; per seed in every other "
                                     "experiment")
    assert ratio_unit_note(norm[norm["experiment"] != "tb"]) == "per seed in every experiment"


def test_summary_names_each_policys_reallocation_mode():
    """One mode per policy, or each mode with its count when a policy ran under several;
    packet-level runs (no fluid mode) are left out."""
    import pandas as pd

    from analysis.report import realloc_lines
    runs = pd.DataFrame({"policy": ["beamer", "beamer", "fair", "lifo", "lifo", "varys"],
                         "backend": ["fluid", "mininet", "fluid", "fluid", "fluid", "fluid"],
                         "realloc": ["queues", None, "flow", "flow", "queues", "coflow"]})
    [blank, line] = realloc_lines(runs, ["beamer", "fair", "lifo", "varys"])
    assert blank == ""
    assert line.endswith("`beamer` queues; `fair` flow; `lifo` flow (1 run), queues (1 run); "
                         "`varys` coflow.")
    assert realloc_lines(runs.drop(columns="realloc"), ["beamer"]) == []


@pytest.mark.slow
def test_runs_made_before_an_experiment_got_its_sweep_are_their_own_scenario(tmp_path):
    """`exp` has runs at x=1 and one older run without swept parameters; `other` has no
    sweep at all. The older run of `exp` is the scenario "no sweep" (not "all", which reads
    as the whole experiment pooled) and keeps its own row in the summary; `other` stays
    "all"."""
    from analysis.load import load_runs
    write_tree(tmp_path)
    write_tree(tmp_path, exp="other")
    for d in (tmp_path / "other").iterdir():
        run = json.loads((d / "run.json").read_text())
        run["params"] = {}
        (d / "run.json").write_text(json.dumps(run))
    old = tmp_path / "exp" / "policy=beamer,seed=1"
    shutil.copytree(tmp_path / "exp" / "x=1,policy=beamer,seed=1", old)
    run = json.loads((old / "run.json").read_text())
    run["params"] = {}
    (old / "run.json").write_text(json.dumps(run))
    runs = load_runs(tmp_path).set_index("run")["scenario"]
    assert runs["exp/policy=beamer,seed=1"] == "no sweep"
    assert runs["exp/x=1,policy=beamer,seed=1"] == "x=1"
    assert set(runs[runs.index.str.startswith("other/")]) == {"all"}
    text = make_report(tmp_path).read_text()
    assert "| exp | no sweep | 1 | 8.00 | - | - |" in text
    assert "| other | all | 2 |" in text
    assert text.index("| exp | no sweep |") < text.index("| exp | x=1 |")
    # first in the order of scenarios whatever the swept key's name
    from analysis.load import scenario_order
    assert scenario_order(["x=2", "no sweep", "x=1"]) == ["no sweep", "x=1", "x=2"]
    assert scenario_order(["a=2", "no sweep", "a=1"]) == ["no sweep", "a=1", "a=2"]
    # a line figure falls back to bars, and says that these runs are why
    from analysis.report import line_fallback
    er = load_runs(tmp_path)
    er = er[er["experiment"] == "exp"].assign(figure="line")
    why = line_fallback(er)
    assert why.startswith("1 run without the sweep") and '(scenario "no sweep"' in why, why
    assert why.endswith("remove them for the line figure"), why
