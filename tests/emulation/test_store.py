"""The record format (emulation/store.py): loose runs packed into an experiment's columnar
files read back exactly as they were written, whichever way a reader asks; a repack
replaces a run, an unpacked run is loose again, an interrupted pack loses nothing."""
import json
import os

import numpy as np
import pandas as pd
import pytest

from emulation import store

STAGES_A = pd.DataFrame({
    "stage_id": ["s0", "s1"], "app_id": ["a0", "a0"], "weight": [1, 3],
    "start_s": [0.0, 0.1 + 0.2], "sct_s": [5e-324, 1e300],
    "size_bytes": [2**53 + 1, 7],  # an integer a float64 cannot hold exactly
})
STAGES_B = pd.DataFrame({  # no size_bytes, a bool and a text column with a gap
    "stage_id": ["s0"], "app_id": ["a1"], "weight": [2], "start_s": [1.5],
    "sct_s": [np.nan], "done": [True], "note": [np.nan],
})
TRIALS_B = pd.DataFrame({"job_id": ["j0", "j1"], "hosts": ["0:8;1:8", "2:4"],
                         "gpus": [16, 4]})


def _write_run(exp, name, *, stages, trials=None, twin=None, extra=None):
    d = exp / name
    d.mkdir(parents=True)
    stages.to_csv(d / "stages.csv", index=False)
    pd.DataFrame(columns=["coflow_id", "cct_s"]).to_csv(d / "coflows.csv", index=False)
    if trials is not None:
        trials.to_csv(d / "trials.csv", index=False)
    (d / "run.json").write_text(json.dumps({"policy": name.split(",")[0], "avg_sct_s": 1.25,
                                            "cluster": {"gpus_per_host": 8}}, indent=2))
    for part, df in (twin or {}).items():
        (d / part).mkdir()
        df.to_csv(d / part / "stages.csv", index=False)
        (d / part / "run.json").write_text('{"policy": "twin"}\n')
    for rel, data in (extra or {}).items():
        (d / rel).parent.mkdir(parents=True, exist_ok=True)
        (d / rel).write_bytes(data)
    (d / "run_config.json").write_text('{"config_hash": "abc"}\n')  # written last
    return d


@pytest.fixture
def exp(tmp_path):
    e = tmp_path / "res" / "exp"
    _write_run(e, "beamer,seed=1", stages=STAGES_A,
               twin={"twin": STAGES_A.iloc[:1]},
               extra={"scheduler.log": b"decide 1\n", "agents/h0.out": b"",
                      "flows.csv": b"flow_id\nf0\n", "s0.pcap": b"\xd4\xc3\xb2\xa1\xff"})
    _write_run(e, "fair,seed=1", stages=STAGES_B, trials=TRIALS_B)
    return e


def _files(run_dir):
    return {p.relative_to(run_dir).as_posix(): p.read_bytes()
            for p in sorted(run_dir.rglob("*")) if p.is_file()}


def test_every_record_reads_back_exactly_after_packing(exp):
    before = {d.name: _files(d) for d in exp.iterdir()}
    assert store.pack(exp) == 2
    assert sorted(p.name for p in exp.glob("*.parquet")) == [
        "coflows.parquet", "files.parquet", "runs.parquet", "stages.parquet", "trials.parquet"]
    for run, files in before.items():
        d = exp / run
        for rel, data in files.items():
            if rel.endswith(".csv") and rel != "flows.csv":
                want = pd.read_csv(pd.io.common.BytesIO(data))
                pd.testing.assert_frame_equal(store.read_table(d / rel), want, check_exact=True)
                assert store.has(d / rel)
            elif rel in ("flows.csv", "s0.pcap"):  # kept loose, untouched
                assert (d / rel).read_bytes() == data
            else:
                assert store.read_text(d / rel) == data.decode()
    a = store.read_table(exp / "beamer,seed=1" / "stages.csv")
    assert a["size_bytes"].tolist() == [2**53 + 1, 7] and a["size_bytes"].dtype == np.int64
    assert a["start_s"].tolist() == [0.0, 0.30000000000000004]
    assert a["sct_s"].tolist() == [5e-324, 1e300]
    b = store.read_table(exp / "fair,seed=1" / "stages.csv")
    assert list(b.columns) == list(STAGES_B.columns)  # not a's size_bytes
    assert b["done"].tolist() == [True] and b["done"].dtype == bool
    assert store.read_json(exp / "fair,seed=1" / "run.json")["cluster"] == {"gpus_per_host": 8}


def test_the_runs_are_listed_and_told_apart_once_packed(exp):
    store.pack(exp)
    results = exp.parent
    assert store.run_dirs(results) == [exp / "beamer,seed=1", exp / "fair,seed=1"]
    assert store.run_dirs(results, marker="run_config.json") == store.run_dirs(results)
    assert not store.is_loose(exp / "beamer,seed=1") and store.is_run(exp / "beamer,seed=1")
    assert store.is_run(exp / "beamer,seed=1" / "twin")
    assert not store.has(exp / "fair,seed=1" / "twin" / "stages.csv")
    assert not store.has(exp / "fair,seed=1" / "apps.csv")
    assert not store.is_run(exp / "varys,seed=1")
    with pytest.raises(FileNotFoundError):
        store.read_table(exp / "fair,seed=1" / "apps.csv")
    with pytest.raises(FileNotFoundError):
        store.read_json(exp / "varys,seed=1" / "run.json")
    assert store.occupied(exp / "beamer,seed=1") and not store.occupied(exp / "varys,seed=1")
    index = pd.read_csv(exp / store.INDEX_FILE)
    assert index["run"].tolist() == ["beamer,seed=1", "fair,seed=1"]
    assert index["policy"].tolist() == ["beamer", "fair"]
    runs = pd.read_parquet(exp / store.RUNS_FILE)  # run.json's scalars, for pandas users
    own = runs[runs["part"] == ""]
    assert own["avg_sct_s"].tolist() == [1.25, 1.25] and "cluster" not in runs


def test_a_repacked_run_replaces_the_packed_one_and_keeps_the_others(exp):
    store.pack(exp)
    d = store.unpack(exp / "fair,seed=1")
    assert store.is_loose(d)
    pd.testing.assert_frame_equal(store.read_csv(d / "trials.csv"), TRIALS_B)
    changed = STAGES_B.assign(weight=[9])
    changed.to_csv(d / "stages.csv", index=False)
    assert store.read_table(d / "stages.csv")["weight"].tolist() == [9]  # loose goes first
    assert store.pack(exp) == 1
    assert not store.is_loose(d)
    assert store.read_table(d / "stages.csv")["weight"].tolist() == [9]
    pd.testing.assert_frame_equal(store.read_table(exp / "beamer,seed=1" / "stages.csv"),
                                  STAGES_A, check_exact=True)
    assert store.read_text(exp / "beamer,seed=1" / "scheduler.log") == "decide 1\n"


def test_a_pack_cut_short_before_the_loose_runs_are_removed_loses_nothing(exp, monkeypatch):
    import runner.results_dir as rd

    def killed(run_dir):
        os.replace(run_dir, run_dir.with_name(f"{store.PACKED_PREFIX}{run_dir.name}-999999"))
        raise KeyboardInterrupt
    monkeypatch.setattr(store, "_remove_packed", killed)
    with pytest.raises(KeyboardInterrupt):
        store.pack(exp)
    monkeypatch.undo()
    # one run aside (being removed), the other still loose: both read, from the pack or loose
    assert store.run_dirs(exp.parent) == [exp / "beamer,seed=1", exp / "fair,seed=1"]
    pd.testing.assert_frame_equal(store.read_table(exp / "beamer,seed=1" / "stages.csv"),
                                  STAGES_A, check_exact=True)
    left = rd.interrupted_leftovers(exp.parent)
    assert [p.name for p in left] == [f"{store.PACKED_PREFIX}beamer,seed=1-999999"]
    assert rd.put_back_plan(left) == {}  # packed already: removed, never put back
    assert store.pack(exp) == 1  # the other run
    assert not store.loose_runs(exp)
    pd.testing.assert_frame_equal(store.read_table(exp / "fair,seed=1" / "trials.csv"),
                                  TRIALS_B, check_exact=True)


def test_a_packed_run_copied_out_is_loose_and_the_pack_keeps_it(exp, tmp_path):
    store.pack(exp)
    copy = store.unpack(exp / "beamer,seed=1", to=tmp_path / "copy")
    assert store.is_loose(copy) and not store.is_loose(exp / "beamer,seed=1")
    pd.testing.assert_frame_equal(store.read_csv(copy / "stages.csv"), STAGES_A, check_exact=True)
    pd.testing.assert_frame_equal(store.read_csv(copy / "twin" / "stages.csv"), STAGES_A.iloc[:1])
    assert (copy / "scheduler.log").read_text() == "decide 1\n"
    assert (copy / "run_config.json").read_text() == '{"config_hash": "abc"}\n'
    assert not (copy / "s0.pcap").exists()  # kept loose in the run's own directory only
    assert store.read_table(exp / "beamer,seed=1" / "stages.csv").equals(STAGES_A)


def test_a_packed_runs_texts_are_rewritten_in_place_with_its_index(exp):
    store.pack(exp)

    def fn(run, part, run_json, run_config):
        if run == "fair,seed=1" and part == "":
            return run_json.replace('"fair"', '"varys"'), '{"config_hash": "new"}\n'
        return None
    assert store.rewrite_runs(exp, fn) == 1
    d = exp / "fair,seed=1"
    assert store.read_json(d / "run.json")["policy"] == "varys"
    assert store.read_text(d / "run_config.json") == '{"config_hash": "new"}\n'
    assert pd.read_csv(exp / store.INDEX_FILE)["policy"].tolist() == ["beamer", "varys"]
    pd.testing.assert_frame_equal(store.read_table(d / "trials.csv"), TRIALS_B, check_exact=True)
    assert store.rewrite_runs(exp, lambda *a: None) == 0


def test_a_table_reads_only_the_columns_asked_for_loose_or_packed(exp):
    d = exp / "fair,seed=1"
    want = TRIALS_B[["gpus", "job_id"]]
    pd.testing.assert_frame_equal(store.read_table(d / "trials.csv", columns=["gpus", "job_id"]),
                                  want)
    store.pack(exp)
    pd.testing.assert_frame_equal(store.read_table(d / "trials.csv", columns=["gpus", "job_id"]),
                                  want)
    with pytest.raises(KeyError):
        store.read_table(d / "trials.csv", columns=["size_bytes"])
