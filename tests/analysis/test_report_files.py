"""What the analysis writes into a results directory's figures/ and tables/: it owns the
two folders (a file it no longer writes is removed, nothing when it fails), it records
each file it writes (``recording_files``), and the committed summary describes every
table in one line."""
import re

import pytest

from analysis.policies import DEFAULT_REFERENCE as REFERENCE
from analysis.report import make_report
from tests.analysis.test_report import write_runs, write_tree


@pytest.mark.slow
def test_figures_and_tables_no_longer_written_are_removed(tmp_path):
    """``--cdf all`` draws zother's CDF; a later default run (CDFs of the first experiment,
    sweep, only) removes zother's three files and a table no section writes, and keeps
    everything that is not an analysis file of figures/ or tables/."""
    for x in (1, 2, 10):
        write_runs(tmp_path, "sweep", {"workload.x": x}, {REFERENCE: ([2.0],), "fair": ([4.0],)})
    write_runs(tmp_path, "zother", {}, {REFERENCE: ([2.0],), "fair": ([4.0],)})
    make_report(tmp_path, cdf=["all"])
    figs, tables = tmp_path / "figures", tmp_path / "tables"
    assert (figs / "zother_sct_cdf.png").exists()
    mine = [figs / "notes.txt", figs / "sub" / "old.png", tables / "mine.txt",
            tmp_path / "top.csv", tmp_path / "NOTES.md"]
    for p in mine:
        p.parent.mkdir(exist_ok=True)
        p.write_text("mine\n")
    (tables / "avg_jct.csv").write_text("stale\n")  # an older analysis's table
    make_report(tmp_path)
    stems = ["sweep_normalised_avg_sct", "zother_normalised_avg_sct", "sweep_sct_cdf_x-1",
             "sweep_sct_cdf_x-2", "sweep_sct_cdf_x-10", "ratio_to_lower_bound"]
    assert sorted(p.name for p in figs.iterdir() if p.is_file()) == sorted(
        ["notes.txt"] + [f"{s}.{ext}" for s in stems for ext in ("png", "pdf", "csv")])
    assert sorted(p.name for p in tables.iterdir()) == [
        "mine.txt", "normalised_avg_sct.csv", "runs.csv", "sct_stats.csv", "trial_times.csv"]
    assert all(p.read_text() == "mine\n" for p in mine)
    assert "The analysis owns `figures/` and `tables/`" in (tmp_path / "summary.md").read_text()


@pytest.mark.slow
def test_a_line_figure_no_longer_asked_for_is_removed(tmp_path):
    for x in (1, 2):
        write_runs(tmp_path, "sweep", {"workload.x": x}, {REFERENCE: ([2.0],), "fair": ([4.0],)},
                   figure="line")
    make_report(tmp_path)
    line = sorted(p.name for p in (tmp_path / "figures").glob("sweep_avg_sct_vs_x.*"))
    assert line == ["sweep_avg_sct_vs_x.csv", "sweep_avg_sct_vs_x.pdf", "sweep_avg_sct_vs_x.png"]
    for cfg in tmp_path.glob("sweep/*/run_config.json"):  # figure = "line" removed
        cfg.unlink()
    make_report(tmp_path)
    assert not list((tmp_path / "figures").glob("sweep_avg_sct_vs_x.*"))
    assert (tmp_path / "figures" / "sweep_normalised_avg_sct.png").exists()


@pytest.mark.slow
def test_nothing_is_removed_when_the_analysis_fails(tmp_path):
    write_tree(tmp_path)
    make_report(tmp_path, cdf=["exp"])
    stale = tmp_path / "figures" / "gone_sct_cdf.png"
    stale.write_bytes(b"x")
    with pytest.raises(ValueError, match="--reference varys"):
        make_report(tmp_path, reference="varys")
    assert stale.exists()


def test_every_table_is_described_in_one_line():
    """The committed summary: one line per table of results/tables (what a row is), none
    left undescribed, and headroom.csv named by its path."""
    from analysis.tables_doc import TABLE_DOC
    from tests.conftest import REPO
    text = (REPO / "results" / "summary.md").read_text()
    section = text[text.index("\n## Tables\n"):text.index("\n## Figures\n")]
    names = sorted(p.name for p in (REPO / "results" / "tables").glob("*.csv"))
    assert len(names) == 32 and set(names) <= set(TABLE_DOC)
    described = re.findall(r"^- `([^`]+)`: one row per ", section, re.M)
    assert sorted(described) == names
    assert "no description" not in section
    assert "`results/headroom.csv` (`scripts/headroom.py`): one row per" in section
    assert "## Headroom on small instances (`scripts/headroom.py`, `results/headroom.csv`" in text


def test_recording_files_collects_what_its_block_writes_and_nothing_else(tmp_path):
    """Nested blocks both collect a file written in the inner one; a file written outside
    any block, or in another thread while a block is open, is collected by none."""
    import threading

    from analysis.load import note_written, recording_files
    note_written(tmp_path / "before.png")
    with recording_files() as outer:
        note_written(tmp_path / "a.png")
        with recording_files() as inner:
            note_written(tmp_path / "b.csv")
            t = threading.Thread(target=note_written, args=(tmp_path / "thread.png",))
            t.start()
            t.join()
        note_written(tmp_path / "c.pdf")
    note_written(tmp_path / "after.png")
    assert outer == [tmp_path / "a.png", tmp_path / "b.csv", tmp_path / "c.pdf"]
    assert inner == [tmp_path / "b.csv"]
