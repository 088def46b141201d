"""The README's headline numbers are the records' numbers: every cell of its result tables
is recomputed here from the committed run records (results/*/*/run.json, stages.csv) with
the analysis functions, not copied from summary.md."""
from pathlib import Path

import pytest

from analysis.load import load_runs, load_stages
from analysis.metrics import normalised, policy_ratios, run_metrics

REPO = Path(__file__).resolve().parents[1]


def markdown_table(text: str, heading: str) -> list[dict[str, str]]:
    """Rows of the first markdown table after ``heading`` as dicts keyed by the header."""
    lines = text[text.index(heading):].splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("|"))
    header = [c.strip() for c in lines[start].strip("|").split("|")]
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append(dict(zip(header, (c.strip() for c in line.strip("|").split("|")))))
    return rows


@pytest.fixture(scope="module")
def records():
    runs = load_runs(REPO / "results")
    return runs, load_stages(runs)


def test_headline_table_matches_the_records(records):
    runs, _ = records
    norm = normalised(runs).set_index(["experiment", "scenario", "policy"])
    rows = markdown_table((REPO / "README.md").read_text(), "## Headline results")
    assert len(rows) >= 10
    for r in rows:
        key = (r["experiment"], r["scenario"])
        assert float(r["beamer avg SCT (s)"]) == pytest.approx(
            norm.loc[key + ("beamer",), "avg_sct_s_mean"], abs=0.0051), key
        for col, cell in r.items():
            if col.startswith("vs ") and cell != "-":
                want = 100 * norm.loc[key + (col[3:],), "reduction_mean"]
                assert float(cell.rstrip("%")) == pytest.approx(want, abs=0.051), (key, col)


def test_congestion_table_matches_the_records(records):
    runs, stages = records
    cong = stages[stages["experiment"].str.startswith("cong-")]
    ratio = policy_ratios(run_metrics(cong), policy="beamer",
                          baselines=["sincronia", "varys", "fair", "fifo_lm", "beamer-sbssi",
                                     "beamer-stage-only"])
    ratio = ratio.set_index(["experiment", "scenario"])
    rows = markdown_table((REPO / "README.md").read_text(), "### Congestion family")
    assert len(rows) == len(ratio)
    for r in rows:
        key = (r["experiment"], r["scenario"])
        for col, cell in r.items():
            if col.startswith("/ "):
                assert float(cell) == pytest.approx(ratio.loc[key, col[2:]], abs=0.00051), (key, col)
