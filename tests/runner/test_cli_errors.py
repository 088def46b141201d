"""Every command line on bad input, as an artifact evaluator meets it: a trace file a config
names validated before any run (``--dry-run`` too), an output path that is a file refused,
usage errors in one line ``<prog>: error: ...`` (exit 2, no usage block), negative float
literals taken as values, ``--help`` with its options first and a short epilog, and the
analysis's progress on stderr."""
import copy
import io
import json
import os
import subprocess

import pytest

from tests.conftest import FB_TRACE, PYTHON, REPO

GOOD_TRACE = {
    "format": "beamer-trace", "version": 1, "endpoints": "hosts", "hosts": ["h0", "h1"],
    "apps": [{"app_id": "a0", "arrival_s": 0.0, "algorithm": "random", "stages": [
        {"stage_id": "a0/s0", "weight": 1.0, "depends_on": [], "jobs": [
            {"job_id": "a0/s0/t0", "trial_id": "a0/t0", "model": "vgg16", "pattern": "ring",
             "hosts": ["h0", "h1"], "iterations": 2, "compute_s": 0.1,
             "coflows": [{"flows": [{"src": "h0", "dst": "h1", "size_bytes": 1000000}]}]}]}]}]}


def _flow(t):
    return t["apps"][0]["stages"][0]["jobs"][0]["coflows"][0]["flows"][0]


def _negative_size(t):
    _flow(t)["size_bytes"] = -5


def _unknown_key(t):
    t["apps"][0]["stages"][0]["jobs"][0]["compute_seconds"] = 1.0


def _unknown_host(t):
    _flow(t)["dst"] = "h9"


def _no_format(t):
    del t["format"]


# how a trace is broken -> a phrase of the trace loader's message
BAD_TRACES = {"negative size_bytes": (_negative_size, "'size_bytes' must be > 0, got -5"),
              "unknown key": (_unknown_key, "unknown key 'apps[0].stages[0].jobs[0].compute_seconds'"),
              "unknown host": (_unknown_host, "'dst' is unknown host 'h9'"),
              "no format key": (_no_format, "'format' must be 'beamer-trace', got None")}


def run(*args, **kw):
    """A command line (``run_experiments.py`` or ``-m module``) in the repository."""
    return subprocess.run([PYTHON, *map(str, args)], cwd=REPO, capture_output=True,
                          text=True, **kw)


def one_error_line(r, *phrases, prefix="error: "):
    """Exit status 2, exactly one line on stderr, starting with ``prefix`` and holding every
    phrase, no traceback and no usage block."""
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith(prefix), lines[0]
    assert "Traceback" not in r.stderr and "usage:" not in r.stderr
    for p in phrases:
        assert p in lines[0], (p, lines[0])
    return lines[0]


def experiment_with_trace(tmp_path, trace: dict | None = None, trace_ref: str = "w2.json"):
    if trace is not None:
        (tmp_path / trace_ref).write_text(json.dumps(trace))
    cfg = tmp_path / "exp.toml"
    cfg.write_text(f'[experiment]\nname = "w2"\npolicies = ["fair"]\nseeds = [1]\n'
                   f'trace = "{trace_ref}"\n')
    return cfg


# --- 1. every file a config names is validated before any run, --dry-run included ---

@pytest.mark.slow
@pytest.mark.parametrize("dry", [True, False], ids=["dry-run", "run"])
@pytest.mark.parametrize("broken", list(BAD_TRACES))
def test_a_bad_trace_file_fails_before_any_run(tmp_path, broken, dry):
    """A trace file the config names that the loader rejects: one line naming the config,
    the TOML key and the trace's problem, exit 2, nothing written (before, the dry run
    said "1 to run" and the run ended in a TraceError traceback after writing traces/)."""
    breaks, phrase = BAD_TRACES[broken]
    trace = copy.deepcopy(GOOD_TRACE)
    breaks(trace)
    cfg, out = experiment_with_trace(tmp_path, trace), tmp_path / "out"
    r = run("run_experiments.py", "--config", cfg, "--out", out, *(["--dry-run"] if dry else []))
    one_error_line(r, f"error: {cfg}: experiment.trace = \"w2.json\": {tmp_path / 'w2.json'}: ",
                   phrase)
    assert r.stdout == "" and not out.exists()


@pytest.mark.slow
def test_a_good_trace_file_and_the_coflow_benchmark_trace_still_run(tmp_path):
    (tmp_path / "a").mkdir()
    good = experiment_with_trace(tmp_path / "a", GOOD_TRACE)
    r = run("run_experiments.py", "--config", good, "--out", tmp_path / "o1", "--dry-run")
    assert r.returncode == 0 and r.stdout.endswith("1 to run\n"), r.stdout + r.stderr
    (tmp_path / "b").mkdir()
    fb = experiment_with_trace(tmp_path / "b", trace_ref=str(FB_TRACE))
    r = run("run_experiments.py", "--config", fb, "--out", tmp_path / "o2", "--dry-run")
    assert r.returncode == 0 and r.stdout.endswith("1 to run\n"), r.stdout + r.stderr


def test_a_trace_file_is_validated_once_per_expansion(tmp_path, monkeypatch):
    """Validation loads the whole file (FB2010: 706,397 flows): once per file, not once per
    sweep point."""
    from runner.config import load_experiment
    from workloads import coflow_benchmark
    calls = []
    real = coflow_benchmark.load_any
    monkeypatch.setattr(coflow_benchmark, "load_any", lambda p: calls.append(p) or real(p))
    cfg = experiment_with_trace(tmp_path, trace_ref=str(FB_TRACE))
    cfg.write_text(cfg.read_text() + '[sweep]\n"experiment.priority_classes" = [1, 2, 4]\n')
    assert len(load_experiment(cfg, full=False)) == 3
    assert len(calls) == 1


# --- 2. an output path that is a file ---

@pytest.fixture
def a_file(tmp_path):
    p = tmp_path / "notes.txt"
    p.write_text("not a directory\n")
    return p


@pytest.mark.slow
@pytest.mark.parametrize("dry", [True, False], ids=["dry-run", "run"])
@pytest.mark.parametrize("under", [False, True], ids=["the file", "under the file"])
def test_run_experiments_refuses_an_out_that_is_a_file(tmp_path, a_file, dry, under):
    cfg = experiment_with_trace(tmp_path, GOOD_TRACE)
    out = a_file / "res" if under else a_file
    r = run("run_experiments.py", "--config", cfg, "--out", out, *(["--dry-run"] if dry else []))
    one_error_line(r, f"error: --out {out}: ", "not a directory")
    assert r.stdout == "" and a_file.read_text() == "not a directory\n"


def test_the_fluid_cli_refuses_an_output_under_a_file(tmp_path, a_file):
    (tmp_path / "t.json").write_text(json.dumps(GOOD_TRACE))
    r = run("-m", "emulation.fluid", tmp_path / "t.json", "--policy", "beamer",
            "-o", a_file / "out")
    one_error_line(r, f"error: -o {a_file / 'out'}: {a_file} is a file, not a directory")


@pytest.mark.slow
def test_the_mininet_cli_refuses_an_output_under_a_file_before_anything(tmp_path, a_file):
    """Checked first: before root, the kernels, the trace (missing here) or a network."""
    r = run("-m", "emulation.mininet", tmp_path / "missing.json", "--policy", "beamer",
            "-o", a_file / "out")
    one_error_line(r, f"error: -o {a_file / 'out'}: {a_file} is a file, not a directory")


@pytest.mark.parametrize("where,says", [("under", "is a file, not a directory"),
                                        ("dir", "is a directory")])
def test_generate_refuses_an_output_it_cannot_write(tmp_path, a_file, where, says):
    out = a_file / "t.json" if where == "under" else tmp_path
    r = run("-m", "workloads", "generate", REPO / "experiments" / "default.toml", "-o", out)
    one_error_line(r, f"error: -o {out}: ", says)


@pytest.mark.slow
def test_the_analysis_refuses_a_file(a_file):
    one_error_line(run("-m", "analysis", a_file), f"error: {a_file}: not a directory")


# --- 3. argparse's errors in one line ---

USAGE_ERRORS = {
    "runner bad choice": (["run_experiments.py", "--backend", "flud"], "run_experiments.py"),
    "runner bad value": (["run_experiments.py", "--jobs", "0"], "run_experiments.py"),
    "fluid bad choice": (["-m", "emulation.fluid", "t.json", "--policy", "beamr", "-o", "d"],
                         "python -m emulation.fluid"),
    "fluid negative K": (["-m", "emulation.fluid", "t.json", "--policy", "beamer",
                          "--priority-classes", "-3", "-o", "d"], "python -m emulation.fluid"),
    "fluid missing": (["-m", "emulation.fluid", "t.json"], "python -m emulation.fluid"),
    "mininet bad choice": (["-m", "emulation.mininet", "t.json", "--policy", "beamr", "-o",
                            "d"], "python -m emulation.mininet"),
    "analysis missing": (["-m", "analysis"], "python -m analysis"),
    "workloads bad command": (["-m", "workloads", "summry", "x"], "python -m workloads"),
    "workloads generate missing": (["-m", "workloads", "generate"],
                                   "python -m workloads generate"),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", list(USAGE_ERRORS))
def test_usage_errors_are_one_line(case):
    argv, prog = USAGE_ERRORS[case]
    one_error_line(run(*argv), prefix=f"{prog}: error: ")


SCRIPTS = ["scripts/compare_sincronia.py", "scripts/headroom.py", "research/twin_noise.py",
           "research/twin_delay.py", "research/seed_rule.py", "research/run_variants.py",
           "benchmarks/capture_reader.py", "benchmarks/cli_steps.py",
           "benchmarks/fair_refill.py", "benchmarks/fluid_speed.py", "benchmarks/preemption.py",
           "benchmarks/priority_kernel.py"]


@pytest.mark.slow
@pytest.mark.parametrize("script", SCRIPTS)
def test_the_scripts_usage_errors_are_one_line(script):
    name = script.rsplit("/", 1)[1]
    one_error_line(run(script, "--no-such-option"), prefix=f"{name}: error: ")


# --- 4. negative numbers are values ---

@pytest.mark.parametrize("text", ["-1e9", "-2.5E-3", "-.5", "-3", "-1.", "-1e+2"])
def test_any_float_literal_after_an_option_is_its_value(text):
    from workloads.cli import ArgumentParser
    ap = ArgumentParser(prog="p")
    ap.add_argument("--rate", type=float)
    assert ap.parse_args(["--rate", text]).rate == float(text)


@pytest.mark.slow
def test_a_negative_link_rate_reaches_the_value_check(tmp_path):
    (tmp_path / "t.json").write_text(json.dumps(GOOD_TRACE))
    r = run("-m", "emulation.fluid", tmp_path / "t.json", "--policy", "beamer",
            "--link-rate-bps", "-1e9", "-o", tmp_path / "out")
    one_error_line(r, "error: --link-rate-bps: must be > 0")
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_a_negative_rate_scale_reaches_the_value_check(tmp_path):
    r = run("-m", "emulation.mininet", tmp_path / "t.json", "--policy", "beamer",
            "--rate-scale", "-1e-3", "-o", tmp_path / "out")
    one_error_line(r, "error: --rate-scale: must be > 0")


# --- 5. --help: usage and options first, then examples and a short epilog ---

HELPS = [["run_experiments.py"], ["-m", "emulation.fluid"], ["-m", "emulation.mininet"],
         ["-m", "analysis"], ["-m", "workloads"]]


@pytest.mark.slow
@pytest.mark.parametrize("argv", HELPS, ids=[a[-1] for a in HELPS])
def test_help_shows_options_first_then_examples_and_the_readme(argv):
    r = run(*argv, "--help", env={**os.environ, "COLUMNS": "80"})
    assert r.returncode == 0
    lines = r.stdout.splitlines()
    assert len(lines) <= 70, len(lines)
    options = lines.index("options:")
    assert options <= 20, r.stdout  # after the usage and a short description
    examples = lines.index("examples:")
    assert examples > options
    assert "README.md" in " ".join(lines[examples:])
    assert all(len(ln) <= 80 for ln in lines[examples:]), r.stdout


@pytest.mark.slow
def test_the_fluid_help_keeps_each_policys_mode():
    from emulation.scheduler import POLICIES
    text = " ".join(run("-m", "emulation.fluid", "--help").stdout.split())
    for name, cls in POLICIES.items():
        assert f"{name}={cls.default_realloc} -> {cls.realloc_mode()}" in text


# --- 6. the analysis's progress ---

@pytest.fixture(scope="module")
def analysed(tmp_path_factory):
    """A tiny suite run with its analysis: (the runner's result, its results directory)."""
    tmp = tmp_path_factory.mktemp("analysed")
    cfg = tmp / "tiny.toml"
    cfg.write_text('[experiment]\nname = "tiny"\npolicies = ["beamer", "fair"]\nseeds = [1]\n'
                   '[workload]\nnum_apps = 2\nmax_resource = 3\nnum_hosts = 8\n'
                   'gpu_mix = { "2" = 1.0, "4" = 1.0 }\n')
    r = run("run_experiments.py", "--config", cfg, "--out", tmp / "res", "--jobs", "1")
    assert r.returncode == 0, r.stderr
    return r, tmp / "res"


def _progress(stderr: str) -> list[str]:
    return [ln for ln in stderr.splitlines() if ln.startswith("analysis: ")]


@pytest.mark.slow
def test_run_experiments_shows_the_analysis_steps(analysed):
    r, out = analysed
    steps = _progress(r.stderr)
    assert steps[:4] == ["analysis: reading the runs' stages (0 of 2)",
                         "analysis: reading the runs' stages (2 of 2)",
                         "analysis: reading the runs' coflows (0 of 2)",
                         "analysis: reading the runs' coflows (2 of 2)"], steps
    assert {"analysis: tables", "analysis: figures (0 of 1)", "analysis: figures (1 of 1)",
            "analysis: summary"} <= set(steps), steps
    assert r.stdout.splitlines()[-1].startswith(f"results: {out} (summary: ")


@pytest.mark.slow
def test_the_analysis_shows_its_steps_on_stderr(analysed):
    _, out = analysed
    r = run("-m", "analysis", out)
    assert r.returncode == 0, r.stderr
    assert r.stdout == f"{out / 'summary.md'}\n"  # what scripts read, unchanged
    steps = _progress(r.stderr)
    assert steps[0] == "analysis: reading the runs' stages (0 of 2)", steps
    assert steps[-1] == "analysis: summary"
    assert "analysis: figures (1 of 1)" in steps


def test_counted_steps_log_a_line_at_most_every_interval():
    from runner.progress import StepProgress
    buf = io.StringIO()
    step = StepProgress("analysis", stream=buf, log_every_s=3600.0)
    step("tables")
    for k in range(6):
        step("figures", k, 5)
    step("summary")
    step.close()
    assert buf.getvalue().splitlines() == ["analysis: tables", "analysis: figures (0 of 5)",
                                           "analysis: figures (5 of 5)", "analysis: summary"]
