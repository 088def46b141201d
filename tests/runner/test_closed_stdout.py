"""The command lines on a standard output nobody reads (``... | head``): each exits with
status 141 (128 + SIGPIPE) and prints no traceback; a broken pipe that is not standard
output stays an error (``workloads/cli.py``)."""
import os
import subprocess

import pytest

from tests.conftest import PYTHON, REPO
from tests.helpers import tiny_trace
from workloads import trace as trace_mod
from workloads.cli import CLOSED_STDOUT_STATUS, run_cli

TINY = """
[experiment]
name = "tiny"
policies = ["fair", "fifo_lm"]
seeds = [1, 2]

[workload]
num_apps = 2
max_resource = 3
num_hosts = 8
"""


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("closed")
    (d / "tiny.toml").write_text(TINY)
    t = tiny_trace([{"id": "a", "stages": [{"id": "s", "jobs": [
        {"id": "j", "compute_s": 0.5, "coflows": [[(0, 1, 1000)]]}]}]}])
    trace_mod.save(t, d / "t.json")
    return d


def on_closed_stdout(*args):
    """Run ``PYTHON *args`` with standard output a pipe whose reading end is already
    closed (what ``| head`` leaves once it has its lines), deterministically."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run([PYTHON, *map(str, args)], cwd=REPO, stdout=write_end,
                              stderr=subprocess.PIPE, text=True)
    finally:
        os.close(write_end)


def test_dry_run_on_a_closed_stdout_exits_quietly(files, tmp_path):
    r = on_closed_stdout("run_experiments.py", "--config", files / "tiny.toml", "--out",
                         tmp_path / "res", "--dry-run")
    assert (r.returncode, r.stderr) == (CLOSED_STDOUT_STATUS, "")
    assert CLOSED_STDOUT_STATUS == 141


def test_workloads_summary_on_a_closed_stdout_exits_quietly(files):
    r = on_closed_stdout("-m", "workloads", "summary", files / "t.json")
    assert (r.returncode, r.stderr) == (CLOSED_STDOUT_STATUS, "")


def test_fluid_run_on_a_closed_stdout_exits_quietly(files, tmp_path):
    r = on_closed_stdout("-m", "emulation.fluid", files / "t.json", "--policy", "fair",
                         "-o", tmp_path / "out", "--no-progress")
    assert r.returncode == CLOSED_STDOUT_STATUS
    # the kernels' first-run notice may be there; nothing else
    assert "Traceback" not in r.stderr and "BrokenPipe" not in r.stderr, r.stderr


@pytest.mark.slow
def test_analysis_on_a_closed_stdout_exits_quietly(tmp_path):
    from tests.analysis.test_report import write_tree
    write_tree(tmp_path / "res")
    r = on_closed_stdout("-m", "analysis", tmp_path / "res")
    assert r.returncode == CLOSED_STDOUT_STATUS
    # its progress lines (stderr) and nothing else: no error, no traceback
    assert all(ln.startswith("analysis: ") for ln in r.stderr.splitlines()), r.stderr
    assert (tmp_path / "res" / "summary.md").exists()  # the work is done, only the line is lost


@pytest.mark.parametrize("path", ["analysis/__main__.py", "emulation/mininet/__main__.py"])
def test_command_line_ends_through_run_cli(monkeypatch, path):
    """Run as ``python -m``, the module hands its ``main`` to ``run_cli``. The Mininet
    command line prints only after a run (root and a network), so this is how it is
    checked: its ``__main__`` path, executed with ``run_cli`` replaced, calls it with its own
    ``main`` (which is not called)."""
    import runpy

    import workloads.cli
    handed = []
    monkeypatch.setattr(workloads.cli, "run_cli", lambda main, **kw: handed.append(main))
    monkeypatch.setattr(workloads.cli, "interrupts_end_quietly", lambda *a: None)
    runpy.run_path(str(REPO / path), run_name="__main__")
    assert len(handed) == 1 and handed[0].__name__ == "main"
    assert handed[0].__code__.co_filename == str(REPO / path)


def test_usage_errors_keep_their_status_and_message(files):
    r = on_closed_stdout("run_experiments.py", "--jobs", "0")
    assert r.returncode == 2 and r.stderr.splitlines()[-1].endswith(
        "error: --jobs must be >= 1")


def test_a_broken_pipe_elsewhere_is_still_an_error(capsys):
    """Standard output is fine (pytest's capture): a BrokenPipeError from elsewhere (a
    socket, a worker's pipe) propagates."""
    def main():
        raise BrokenPipeError("a worker's pipe")
    with pytest.raises(BrokenPipeError, match="a worker's pipe"):
        run_cli(main)
    with pytest.raises(SystemExit) as exc:
        run_cli(lambda: 3)
    assert exc.value.code == 3


def test_an_interrupted_command_line_says_one_line_and_exits_130():
    """Ctrl-C (KeyboardInterrupt) inside ``main``: the command's own message on stderr,
    no traceback, status 130 (128 + SIGINT), standard output flushed first."""
    import sys
    code = ("import sys\nfrom workloads.cli import run_cli\n"
            "def main():\n    print('partial')\n    raise KeyboardInterrupt\n"
            "run_cli(main, interrupted='interrupted: nothing lost')\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert (r.returncode, r.stdout, r.stderr) == (130, "partial\n", "\ninterrupted: nothing lost\n")


def test_an_interrupt_inside_a_compiled_kernel_counts_as_one():
    """numba reports a KeyboardInterrupt raised inside a compiled call as a SystemError
    caused by it: the same one line and status 130; any other SystemError stays an error."""
    import sys
    code = ("import sys\nfrom workloads.cli import run_cli\n"
            "def main():\n    try:\n        raise KeyboardInterrupt\n"
            "    except KeyboardInterrupt as e:\n        raise SystemError('kernel') from e\n"
            "run_cli(main, interrupted='interrupted')\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert (r.returncode, r.stderr) == (130, "\ninterrupted\n")
    plain = code.replace("raise KeyboardInterrupt", "raise SystemError('kernel')")
    r = subprocess.run([sys.executable, "-c", plain], cwd=REPO, capture_output=True, text=True)
    assert r.returncode == 1 and "SystemError: kernel" in r.stderr


ENTRY_POINTS = ["run_experiments.py", "analysis/__main__.py", "emulation/fluid/__main__.py",
                "emulation/mininet/__main__.py", "workloads/__main__.py"]


def test_an_interrupt_while_importing_ends_the_same_way():
    """Before ``run_cli`` runs (the command line still importing numpy, pandas,
    matplotlib), ``interrupts_end_quietly`` gives the same one line and status 130."""
    import sys
    code = ("from workloads.cli import interrupts_end_quietly\n"
            "interrupts_end_quietly('interrupted: while importing')\n"
            "print('imported', flush=True)\nraise KeyboardInterrupt\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert (r.returncode, r.stdout, r.stderr) == (130, "imported\n",
                                                  "\ninterrupted: while importing\n")
    r = subprocess.run([sys.executable, "-c", code.replace("KeyboardInterrupt", "ValueError")],
                       cwd=REPO, capture_output=True, text=True)
    assert r.returncode == 1 and "ValueError" in r.stderr  # other errors as before


@pytest.mark.parametrize("path", ENTRY_POINTS)
def test_every_command_line_ends_interrupts_quietly_before_its_heavy_imports(path):
    """Each command line calls ``interrupts_end_quietly`` before its first import of the
    project's other modules (only the standard library and workloads.cli come first)."""
    lines = (REPO / path).read_text().splitlines()
    call = next(i for i, ln in enumerate(lines) if "interrupts_end_quietly(" in ln
                and not ln.startswith("from"))
    first = next(i for i, ln in enumerate(lines) if ln.startswith("from ")
                 and not ln.startswith(("from __future__", "from pathlib", "from workloads.cli")))
    assert call < first, (path, call, first)
