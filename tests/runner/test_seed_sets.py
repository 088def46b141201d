"""Named seed sets: ``[experiment] seed_sets`` is checked, labels each run (``load_runs``'
``seed_set``), and the regime family, the congestion family and the verdict table report
each set apart (values derived on paper)."""
import json

import pandas as pd
import pytest

from analysis.criteria import congestion_section
from analysis.load import load_runs, seed_set_groups, seed_set_of
from analysis.regimes import regime_section
from analysis.verdict import verdict_table
from schema.experiment import ExperimentSection
from workloads.config import ConfigError, build


def test_a_seed_in_two_sets_is_refused():
    with pytest.raises(ConfigError, match=r"experiment\.seed_sets: seed 12 is in two sets"):
        build(ExperimentSection, {"name": "x", "seeds": [11, 12],
                                  "seed_sets": {"validation": [11, 12], "evaluation": [12]}},
              "experiment")
    ok = build(ExperimentSection, {"name": "x", "seeds": [11, 21],
                                   "seed_sets": {"validation": [11], "evaluation": [21]}},
               "experiment")
    assert ok.seed_sets == {"validation": (11,), "evaluation": (21,)}


def test_seed_set_of_a_seed():
    cfg = {"seed_sets": {"validation": [11, 12], "evaluation": [21]}}
    assert [seed_set_of(cfg, s) for s in (11, 21, 5)] == ["validation", "evaluation", ""]
    assert seed_set_of({}, 11) == "" and seed_set_of({"seed_sets": None}, 11) == ""


def _run_dir(root, exp, policy, seed, scts):
    d = root / exp / f"policy={policy},seed={seed}"
    d.mkdir(parents=True)
    pd.DataFrame({"stage_id": [f"a{i}/s" for i in range(len(scts))],
                  "app_id": [f"a{i}" for i in range(len(scts))], "weight": 1.0, "num_jobs": 1,
                  "start_s": 0.0, "end_s": scts, "sct_s": scts}).to_csv(d / "stages.csv",
                                                                      index=False)
    (d / "run.json").write_text(json.dumps({
        "experiment": exp, "policy": policy, "workload_seed": seed, "seed": seed,
        "backend": "fluid", "avg_sct_s": sum(scts) / len(scts), "avg_sct_over_lb": 1.0,
        "num_priority_classes": 8, "params": {}}))
    (d / "run_config.json").write_text(json.dumps({"experiment_cfg": {
        "seed_sets": {"validation": [1], "evaluation": [2]}}}))


@pytest.fixture
def tree(tmp_path):
    # seed 1 (validation): beamer (1, 3) avg 2, sincronia (2, 6) avg 4 -> 0.5
    # seed 2 (evaluation): beamer (3, 3) avg 3, sincronia (2, 4) avg 3 -> 1.0
    for exp in ("regime-random", "cong-x"):
        for seed, b, s in ((1, [1.0, 3.0], [2.0, 6.0]), (2, [3.0, 3.0], [2.0, 4.0])):
            _run_dir(tmp_path / "res", exp, "beamer", seed, b)
            _run_dir(tmp_path / "res", exp, "sincronia", seed, s)
    return tmp_path / "res"


@pytest.mark.slow
def test_each_family_reports_each_seed_set_apart(tree, tmp_path):
    from analysis.load import load_stages
    runs = load_runs(tree)
    assert dict(zip(runs["workload_seed"], runs["seed_set"])) == {1: "validation",
                                                                  2: "evaluation"}
    stages = load_stages(runs)
    assert [name for name, _ in seed_set_groups(stages)] == ["validation", "evaluation"]
    tables, figs = tmp_path / "tables", tmp_path / "figs"
    tables.mkdir()
    figs.mkdir()
    lines, _ = regime_section(runs, stages, tables, figs, "beamer")
    text = "\n".join(lines)
    assert text.index("### Validation seeds 1") < text.index("### Evaluation seeds 2")
    reg = pd.read_csv(tables / "regimes.csv").set_index("seed_set")
    col = "avg_sct_ratio_ref_over_policy_mean"
    assert reg.loc["validation", col] == pytest.approx(0.5)
    assert reg.loc["evaluation", col] == pytest.approx(1.0)
    cong = "\n".join(congestion_section(runs, stages, tables, "beamer"))
    assert "beamer / sincronia 0.500" in cong and "beamer / sincronia 1.000" in cong
    v = verdict_table(runs, stages).set_index(["seed_set", "family", "design", "baseline"])
    assert v.loc[("validation", "random", "beamer", "sincronia"), "ratio_mean"] == pytest.approx(0.5)
    assert v.loc[("evaluation", "congestion", "beamer", "sincronia"), "ratio_mean"] == \
        pytest.approx(1.0)


def test_a_shared_scenario_counts_once_in_the_family_mean(tmp_path):
    """cong-a: beamer / sincronia 0.5; cong-b shares cong-a's runs (same_run_as, no records
    of its own); cong-c: 3 / 3 = 1.0. Counted once: (0.5 + 1.0) / 2 = 0.75 (twice would give
    0.667); the summary names cong-a and cong-b as one configuration."""
    from analysis.criteria import shared_scenario_lines
    from analysis.load import load_stages
    res = tmp_path / "res"
    for exp, b, s in (("cong-a", [1.0, 3.0], [2.0, 6.0]), ("cong-c", [3.0, 3.0], [2.0, 4.0])):
        _run_dir(res, exp, "beamer", 1, b)
        _run_dir(res, exp, "sincronia", 1, s)
    for policy in ("beamer", "sincronia"):
        src = res / "cong-a" / f"policy={policy},seed=1"
        d = res / "cong-b" / src.name
        d.mkdir(parents=True)
        run = json.loads((src / "run.json").read_text())
        (d / "run.json").write_text(json.dumps({**run, "experiment": "cong-b",
                                                "same_run_as": f"cong-a/{src.name}"}))
        (d / "run_config.json").write_text((src / "run_config.json").read_text())
    runs = load_runs(res)
    stages = load_stages(runs)
    (tmp_path / "t").mkdir()
    text = "\n".join(congestion_section(runs, stages, tmp_path / "t", "beamer"))
    assert "Mean over the family's 2 distinct scenarios" in text
    assert "beamer / sincronia 0.750" in text
    assert "| cong-b | all | 1 | 0.500 | - | 1.00 | cong-a all |" in text
    assert "- cong-a all = cong-b all" in shared_scenario_lines(runs)


def test_host_load_by_hand():
    """Host A: jobs over [0, 2] and [1, 3]: 2 at once in [1, 2]; busy 3 s carrying
    1 + 2 + 1 = 4 process-seconds: 4/3. Host B: [0, 1] then [1, 2], touching, never 2 at
    once: 1. Peak 2; mean over the busy hosts (4/3 + 1) / 2 = 7/6."""
    from analysis.host_load import host_load
    iv = pd.DataFrame({"host": ["A", "A", "B", "B"], "start_s": [0.0, 1.0, 0.0, 1.0],
                       "end_s": [2.0, 3.0, 1.0, 2.0]})
    peak, mean = host_load(iv)
    assert peak == 2 and mean == pytest.approx(7 / 6)
