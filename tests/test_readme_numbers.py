"""The README's headline numbers are the records' numbers: every cell of its result tables
(by tuner regime, congestion family) is recomputed from the committed run records
(results/*/*/stages.csv) with the analysis functions, not copied from summary.md."""
from pathlib import Path

import pytest

from analysis.load import load_runs, load_stages
from analysis.metrics import policy_ratios, run_metrics
from analysis.regimes import per_run_ratios, regime_table

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


def test_regime_table_matches_the_records(records):
    _, stages = records
    reg = stages[stages["experiment"].str.startswith("regime-")]
    table = regime_table(per_run_ratios(reg, "beamer")).set_index(["regime", "policy"])
    rows = markdown_table((REPO / "README.md").read_text(), "## Results by tuner regime")
    assert {r["regime"] for r in rows} == {"random", "asha", "sha", "hyperband", "mix"}
    for r in rows:
        reg_name = r["regime"]
        assert int(r["runs"]) == table.loc[(reg_name, "sincronia"), "runs"]
        for col, cell in r.items():
            if col.startswith("/ "):
                assert float(cell) == pytest.approx(
                    table.loc[(reg_name, col[2:]), "avg_ratio_mean"], abs=0.00051), (reg_name, col)
        assert float(r["p99 / fair"]) == pytest.approx(
            table.loc[(reg_name, "fair"), "p99_ratio_mean"], abs=0.0051)
        assert float(r["tuning job / sincronia"]) == pytest.approx(
            table.loc[(reg_name, "sincronia"), "job_ratio_mean"], abs=0.00051)


def test_congestion_table_matches_the_records(records):
    runs, stages = records
    cong = stages[stages["experiment"].str.startswith("cong-")]
    per_run = run_metrics(cong)
    ratio = policy_ratios(per_run, policy="beamer",
                          baselines=["sincronia", "beamer-coflow", "varys", "fair", "fifo_lm",
                                     "beamer-sbssi", "beamer-stage-only"])
    ratio = ratio.set_index(["experiment", "scenario"])
    p99 = policy_ratios(per_run, policy="beamer", baselines=["fair"], metric="p99_sct_s") \
        .set_index(["experiment", "scenario"])
    rows = markdown_table((REPO / "README.md").read_text(), "### Congestion family")
    assert len(rows) == len(ratio)
    for r in rows:
        key = (r["experiment"], r["scenario"])
        for col, cell in r.items():
            if col.startswith("/ "):
                assert float(cell) == pytest.approx(ratio.loc[key, col[2:]], abs=0.00051), (key, col)
        assert float(r["p99 / fair"]) == pytest.approx(p99.loc[key, "fair"], abs=0.0051), key


def test_capture_reader_numbers_match_the_records(records):
    """The README's capture-reader numbers (totals and the largest run, chosen as the
    analysis chooses it: most packets, a tie to the longer read) are the committed
    records', and the summary's line says the same."""
    import re

    from analysis.packet import capture_reader, reader_totals
    runs, _ = records
    tot = reader_totals(capture_reader(runs))
    big = tot["largest"]
    text = " ".join((REPO / "README.md").read_text().split())
    m = re.search(r"the committed testbed runs: ([\d,]+) packets in ([\d.]+) s, ([\d,]+) "
                  r"packets/s; the largest run's ([\d,]+) packets in ([\d.]+) s of its (\d+) s",
                  text)
    assert m, "the README's capture-reader sentence"
    assert int(m[1].replace(",", "")) == tot["packets"]
    assert m[2] == f"{tot['read_wall_s']:.2f}"
    assert m[3] == f"{tot['packets_per_s']:,.0f}"
    assert int(m[4].replace(",", "")) == big["packets"]
    assert (m[5], m[6]) == (f"{big['read_wall_s']:.2f}", f"{big['run_wall_s']:.0f}")
    exp, name = big["run"].split("/")
    policy = dict(kv.split("=") for kv in name.split(","))["policy"]
    assert re.search(rf"the largest run being the one with the most packets[^;]*: `{exp}` "
                     rf"`{policy}`[ ;]", text), "the README names the largest run"
    summary = (REPO / "results" / "summary.md").read_text()
    assert (f"`{big['run']}`: {int(big['packets']):,} packets in {big['read_wall_s']:.2f} s "
            f"of its {big['run_wall_s']:.0f} s wall time") in summary
