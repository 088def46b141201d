"""``run_experiments.py --verify``: recomputed committed runs pass; a tampered committed
value (run summary or one stage's SCT) fails with exit 1 and names the run."""
import json

import pytest

from emulation import store
from run_experiments import main
from tests.conftest import REPO

RUN = ("pattern", "sync_pattern=ps,policy=fair,seed=1")


@pytest.fixture
def results(tmp_path):
    src = REPO / "results" / RUN[0] / RUN[1]
    if not store.has(src / "run_config.json"):
        pytest.fail(f"reference run {src} is not committed")
    dst = tmp_path / "results" / RUN[0] / RUN[1]
    dst.parent.mkdir(parents=True)
    store.unpack(src, to=dst)  # a loose copy, whichever form the committed run is in
    return tmp_path / "results", dst


def _verify(root, capsys):
    code = main(["--verify", "--out", str(root), "--jobs", "1"])
    return code, capsys.readouterr().out


def test_untouched_committed_run_passes(results, capsys):
    root, _ = results
    code, out = _verify(root, capsys)
    assert code == 0, out
    assert "1 identical, 0 differ" in out


def test_tampered_summary_fails(results, capsys):
    root, run = results
    rec = json.loads((run / "run.json").read_text())
    rec["avg_sct_s"] *= 1 + 1e-12  # the last digits only: fluid runs must match exactly
    (run / "run.json").write_text(json.dumps(rec))
    code, out = _verify(root, capsys)
    assert code == 1
    assert f"MISMATCH {RUN[0]}/{RUN[1]}" in out and "avg_sct_s" in out


def test_tampered_stage_sct_fails(results, capsys):
    root, run = results
    lines = (run / "stages.csv").read_text().splitlines()
    head, row = lines[0].split(","), lines[1].split(",")
    i = head.index("sct_s")
    row[i] = repr(float(row[i]) + 1e-6)
    lines[1] = ",".join(row)
    (run / "stages.csv").write_text("\n".join(lines) + "\n")
    code, out = _verify(root, capsys)
    assert code == 1 and "1 stage SCTs differ" in out


def test_empty_results_dir_is_an_error(tmp_path, capsys):
    assert main(["--verify", "--out", str(tmp_path)]) == 2


def test_table_columns_fit_the_longest_experiment_name():
    """'cong-concurrency' is 16 characters, longer than the header's 'experiment' (10):
    the first column is 16 wide in every line, and the counts line up under their heads."""
    from runner.verify import verify_table
    rows = {"pattern": [1, 1, 0, 0], "cong-concurrency": [2, 1, 1, 0],
            "testbed-ring": [0, 0, 0, 3]}
    lines = verify_table(rows, packet_only={"testbed-ring"})
    assert lines == [
        "experiment        runs recomputed  pass  FAIL  not recomputed  verdict",
        "cong-concurrency     2          2     1     1               0  FAIL",
        "pattern              1          1     1     0               0  pass",
        "testbed-ring         3          0     0     0               3  - (packet-level)",
    ]
    # each head's last character sits above its counts' last digit
    for head in ("runs", "recomputed", "pass", "FAIL", "not recomputed"):
        end = lines[0].index(head) + len(head) - 1
        assert all(line[end].isdigit() and line[end + 1] == " " for line in lines[1:]), head


def test_verify_checks_the_directory_the_same_command_writes(tmp_path, capsys, monkeypatch):
    """--config without --out: the config's own runs/<stem>/ (an error naming it while it
    does not exist), not the committed results/."""
    import run_experiments as rx
    monkeypatch.setattr(rx, "RUNS_DIR", tmp_path / "runs")
    cfg = tmp_path / "mine.toml"
    cfg.write_text("[experiment]\nname = 'mine'\n")
    assert rx.main(["--verify", "--config", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert "--verify:" in err and "mine is not a results directory" in err
