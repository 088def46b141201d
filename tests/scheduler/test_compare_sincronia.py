"""scripts/compare_sincronia.py: parsing Sincronia's offline-simulator log and the
per-coflow comparison, on a three-coflow example worked by hand."""
import subprocess

import pandas as pd
import pytest

from tests.conftest import PYTHON, REPO

LOG = """Coflow ID: 3 Oracle Time: 1.0e+01 Selected Ordering: 1 Scheduled time: 0 Completion Time: 40
Coflow ID: 1 Oracle Time: 2 Selected Ordering: 2 Scheduled time: 5 Completion Time: 1.0e+01
Coflow ID: 2 Oracle Time: 3 Selected Ordering: 3 Scheduled time: 7 Completion Time: 20
Average CCT: 23.333
"""


def _load():
    import importlib.util
    spec = importlib.util.spec_from_file_location("cmp", REPO / "scripts" / "compare_sincronia.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_three_coflows_by_hand(tmp_path):
    mod = _load()
    (tmp_path / "log").write_text(LOG)
    theirs = mod.read_log(tmp_path / "log")
    assert list(theirs["id"]) == [3, 1, 2] and list(theirs["cct_units"]) == [40, 10, 20]
    # 0.5 s per unit: theirs 5, 10, 20 s for c1, c2, c3; ours 5, 11, 20 s
    ours = pd.DataFrame({"app_id": ["c1", "c2", "c3"], "cct_s": [5.0, 11.0, 20.0]})
    r = mod.compare(theirs, ours, 0.5)
    assert r["theirs_mean_s"] == pytest.approx(35 / 3) and r["ours_mean_s"] == pytest.approx(12)
    assert r["max_rel"] == pytest.approx(0.1) and r["sum_abs_diff_s"] == pytest.approx(1.0)
    assert (r["within_1e-06"], r["within_0.05"], r["within_0.2"]) == (2, 2, 3)
    assert r["spearman"] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="coflow ids differ"):
        mod.compare(theirs, ours.iloc[:2], 0.5)


def test_cli_fails_loudly_on_a_log_without_coflow_lines(tmp_path):
    (tmp_path / "log").write_text("Average CCT: 1\n")
    (tmp_path / "run").mkdir()
    pd.DataFrame({"app_id": ["c1"], "cct_s": [1.0]}).to_csv(tmp_path / "run" / "coflows.csv")
    r = subprocess.run([PYTHON, "scripts/compare_sincronia.py", str(tmp_path / "log"),
                        str(tmp_path / "run")], cwd=REPO, capture_output=True, text=True)
    assert r.returncode == 2 and "no 'Coflow ID" in r.stderr
