"""analysis/packet.py on a hand-made results tree (no Mininet needed): capture vs reported
SCT per run, the capture-based Beamer-vs-baseline table, scheduler reaction and isolation
columns; and write_records' extra columns. Expected numbers are worked out by hand."""
import json

import pandas as pd
import pytest

from analysis.load import load_runs
from analysis.packet import (capture_agreement, capture_pairs, isolation, packet_level_table,
                             scheduler_reaction, write_packet_tables)
from emulation.records import write_records


def _run(root, policy, reported, captured, lat_s, share):
    d = root / "tb" / f"policy={policy},seed=1"
    d.mkdir(parents=True)
    ids = [f"s{i}" for i in range(len(reported))]
    pd.DataFrame({"stage_id": ids, "sct_s": reported}).to_csv(d / "stages.csv", index=False)
    pd.DataFrame({"stage_id": ids, "sct_s": captured}).to_csv(d / "stages_capture.csv", index=False)
    run = {"backend": "mininet", "policy": policy, "experiment": "tb", "workload_seed": 1,
           "avg_sct_s": sum(reported) / len(reported),
           "avg_sct_capture_s": sum(captured) / len(captured),
           "class_latency_emulated_s": {"median": lat_s[0], "p95": lat_s[1], "max": lat_s[2],
                                        "coflows": 3},
           "priority_isolation": {"lower_share": share, "lower_share_per_class": share}}
    (d / "run.json").write_text(json.dumps(run))


@pytest.fixture
def tree(tmp_path):
    _run(tmp_path, "beamer", [1.0, 2.0, 3.0], [1.01, 1.98, 3.0], (0.002, 0.009, 0.010), 0.01)
    _run(tmp_path, "fair", [2.0, 2.0], [2.1, 1.9], (0.001, 0.002, 0.003), 0.02)
    return tmp_path


def test_capture_vs_reported_per_run(tree):
    runs = load_runs(tree)
    agree = capture_agreement(capture_pairs(runs)).set_index("policy")
    # beamer: |diffs| 0.01, 0.02, 0 -> median 0.01, max 0.02, max relative 0.01/1 = 0.02/2
    assert agree.loc["beamer", "abs_diff_median_s"] == pytest.approx(0.01)
    assert agree.loc["beamer", "abs_diff_max_s"] == pytest.approx(0.02)
    assert agree.loc["beamer", "rel_diff_max"] == pytest.approx(0.01)
    assert agree.loc["fair", "abs_diff_max_s"] == pytest.approx(0.1)


def test_packet_table_uses_capture_sct(tree):
    t = packet_level_table(load_runs(tree)).set_index("policy")
    # capture avg: beamer 5.99/3, fair 2.0; reported: beamer 2.0, fair 2.0; beamer / fair
    assert t.loc["fair", "avg_sct_capture_ratio_ref_over_policy_mean"] == pytest.approx(
        (5.99 / 3) / 2.0)
    assert t.loc["fair", "avg_sct_ratio_ref_over_policy_mean"] == pytest.approx(1.0)


def test_reaction_and_isolation_columns_and_summary_lines(tree, tmp_path):
    runs = load_runs(tree)
    r = scheduler_reaction(runs).set_index("policy")
    assert r.loc["beamer", "p95_ms"] == pytest.approx(9.0) and r.loc["fair", "max_ms"] == pytest.approx(3.0)
    assert isolation(runs).set_index("policy").loc["fair", "lower_share_per_class"] == 0.02
    tables = tmp_path / "tables"
    tables.mkdir()
    lines = write_packet_tables(runs, tables)
    text = "\n".join(lines)
    assert "from the captures" in text and "| 9.0 |" in text
    assert (tables / "capture_vs_reported.csv").exists()


def test_write_records_extra_columns(tmp_path):
    st = [{"stage_id": "s", "app_id": "a", "weight": 1.0, "num_jobs": 1, "start_s": 0.0,
           "end_s": 1.0, "sct_s": 1.0, "sct_emulated_s": 2.0}]
    flows = {k: [] for k in ["flow_id", "coflow_id", "src", "dst", "size_bytes", "release_s",
                             "start_s", "end_s"]}
    write_records(tmp_path, stages=st, coflows=[], flows=flows, run={},
                  extra_columns={"stages": ["sct_emulated_s"]})
    assert list(pd.read_csv(tmp_path / "stages.csv").columns)[-1] == "sct_emulated_s"
    with pytest.raises(ValueError, match="unknown record file"):
        write_records(tmp_path, stages=st, coflows=[], flows=flows, run={},
                      extra_columns={"stage": ["x"]})


def test_written_tables_name_runs_relative_to_the_results_dir(tree, tmp_path):
    """No table holds the path of the machine the analysis ran on: runs are named relative
    to the results directory (``tb/policy=beamer,seed=1``)."""
    tables = tmp_path / "tables"
    tables.mkdir()
    write_packet_tables(load_runs(tree), tables)
    written = sorted(tables.glob("*.csv"))
    assert {p.name for p in written} >= {"capture_vs_reported.csv", "scheduler_reaction.csv",
                                         "priority_isolation.csv"}
    for p in written:
        assert str(tree) not in p.read_text(), p.name
    react = pd.read_csv(tables / "scheduler_reaction.csv")
    assert "run_dir" not in react and sorted(react["run"]) == ["tb/policy=beamer,seed=1",
                                                               "tb/policy=fair,seed=1"]


def test_the_largest_capture_run_is_chosen_the_same_way_every_time():
    """Most packets; two runs with as many: the one whose reader took longer (0.3 s over
    0.1 s); equal times too: the first run name. Totals: 25 packets in 1.4 s = 17.857/s."""
    from analysis.packet import reader_totals
    reader = pd.DataFrame({"run": ["e/r1", "e/r2", "e/r3"], "packets": [10, 10, 5],
                           "read_wall_s": [0.1, 0.3, 1.0], "run_wall_s": [5.0, 6.0, 7.0]})
    for order in ([0, 1, 2], [2, 1, 0], [1, 0, 2]):
        tot = reader_totals(reader.iloc[order])
        assert tot["largest"]["run"] == "e/r2" and tot["tied"] == ["e/r1"]
    assert tot["packets"] == 25 and tot["read_wall_s"] == pytest.approx(1.4)
    assert tot["packets_per_s"] == pytest.approx(25 / 1.4)
    same = reader.assign(read_wall_s=[0.3, 0.3, 1.0])
    for order in ([0, 1, 2], [1, 0, 2]):
        assert reader_totals(same.iloc[order])["largest"]["run"] == "e/r1"


def _seeded_run(root, policy, seed, sct):
    d = root / "tb" / f"policy={policy},seed={seed}"
    d.mkdir(parents=True)
    pd.DataFrame({"stage_id": ["s0"], "sct_s": [sct]}).to_csv(d / "stages.csv", index=False)
    pd.DataFrame({"stage_id": ["s0"], "sct_s": [sct]}).to_csv(d / "stages_capture.csv",
                                                             index=False)
    (d / "run.json").write_text(json.dumps({
        "backend": "mininet", "policy": policy, "experiment": "tb", "workload_seed": seed,
        "avg_sct_s": sct, "avg_sct_capture_s": sct}))


def test_both_ratio_columns_carry_their_interval(tmp_path):
    """Two seeds: beamer / fair = 2 / 3 and 4 / 4 = 1.0, mean 0.8333, sample sd
    0.235702, standard error 0.166667, t(0.975, 1 df) = 12.7062: half-width 2.1177, in
    the capture column and in the reported one."""
    tree = tmp_path / "res"
    for seed, b, f in ((1, 2.0, 3.0), (2, 4.0, 4.0)):
        _seeded_run(tree, "beamer", seed, b)
        _seeded_run(tree, "fair", seed, f)
    tables = tmp_path / "tables"
    tables.mkdir()
    text = "\n".join(write_packet_tables(load_runs(tree), tables))
    assert "| tb | all | fair | 2 | 3.500 | 3.500 | 0.833 ± 2.118 | 0.833 ± 2.118 |" in text
    assert "per seed (tb)" in text


def test_class_latency_is_not_repeated_when_the_reproduction_shows_it(tree, tmp_path):
    tables = tmp_path / "tables"
    tables.mkdir()
    runs = load_runs(tree)
    text = "\n".join(write_packet_tables(runs, tables, latency_shown=True))
    assert "## Packet level: priority isolation per run" in text
    assert "| tb | policy=beamer,seed=1 | 0.0100 |" in text and "| 9.0 |" not in text
    assert "\"Scheduler reaction per run\" table" in text
    assert (tables / "scheduler_reaction.csv").exists()  # the table itself is still written
