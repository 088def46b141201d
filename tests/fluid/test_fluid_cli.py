"""The fluid command line: --config (an experiment TOML) with hand-checked times,
options given overriding the file, strict keys, the output-directory guard, progress
that leaves the records alone, and the first-run compilation notice."""
import io
import json
import os
import subprocess

import pytest

from emulation.fluid import __main__ as cli
from emulation.fluid import run as run_mod
from schema.cli import read_config
from tests.conftest import PYTHON, REPO
from tests.helpers import tiny_trace
from workloads import trace as trace_mod

# one job: 0.5 s of compute, then one flow h0 -> h1 of 125,000,000 B = 1e9 bit. SCT =
# 0.5 + 1e9 / rate: 0.6 s at 10 Gbit/s (a JSON trace's default), 1.5 s at 1 Gbit/s,
# 0.75 s at 4 Gbit/s
BITS = 1e9


@pytest.fixture(scope="module")
def trace_file(tmp_path_factory):
    t = tiny_trace([{"id": "a", "stages": [{"id": "s", "jobs": [
        {"id": "j", "compute_s": 0.5, "coflows": [[(0, 1, int(BITS / 8))]]}]}]}])
    p = tmp_path_factory.mktemp("t") / "t.json"
    trace_mod.save(t, p)
    return p


def fluid(trace_file, out, *flags, policy="fair"):
    return subprocess.run([PYTHON, "-m", "emulation.fluid", str(trace_file), "--policy", policy,
                           "-o", str(out), *flags], cwd=REPO, capture_output=True, text=True)


def run_json(out):
    return json.loads((out / "run.json").read_text())


def toml(tmp_path, text, name="mine.toml"):
    p = tmp_path / name
    p.write_text(text)
    return p


@pytest.mark.slow
def test_config_link_rate_is_simulated(trace_file, tmp_path):
    r = fluid(trace_file, tmp_path / "ten", "--no-progress")
    assert r.returncode == 0, r.stderr
    assert run_json(tmp_path / "ten")["avg_sct_s"] == pytest.approx(0.5 + BITS / 10e9)
    cfg = toml(tmp_path, "[topology]\nlink_rate_bps = 1e9\n")
    r = fluid(trace_file, tmp_path / "one", "--config", str(cfg))
    assert r.returncode == 0, r.stderr
    run = run_json(tmp_path / "one")
    assert run["avg_sct_s"] == pytest.approx(0.5 + BITS / 1e9)  # the network part x 10
    assert run["topology"]["link_rate_bps"] == 1e9 and run["config_file"] == str(cfg)
    assert "links 1 Gbit/s" in r.stdout
    # an option given on the command line beats the file
    r = fluid(trace_file, tmp_path / "four", "--config", str(cfg), "--link-rate-bps", "4e9")
    assert r.returncode == 0, r.stderr
    assert run_json(tmp_path / "four")["avg_sct_s"] == pytest.approx(0.5 + BITS / 4e9)


@pytest.mark.slow
def test_config_experiment_keys_apply_and_flags_override(trace_file, tmp_path):
    cfg = toml(tmp_path, """
[experiment]
name = "mine"
priority_classes = 2
release_at_zero = true
realloc = "coflow"
policies = ["beamer", "fair"]
seeds = [4]

[workload]
num_apps = 2

[topology]
kind = "leaf_spine"
hosts_per_leaf = 2
num_spines = 1
link_rate_bps = 1e9

[sweep]
"workload.num_apps" = [2, 3]
""")
    r = fluid(trace_file, tmp_path / "a", "--config", str(cfg))
    assert r.returncode == 0, r.stderr
    run = run_json(tmp_path / "a")
    assert run["num_priority_classes"] == 2 and run["release_at_zero"] is True
    assert run["realloc"] == "coflow" and run["realloc_source"] == f"{cfg} [experiment] realloc"
    assert run["topology"]["kind"] == "leaf_spine" and run["topology"]["hosts_per_leaf"] == 2
    assert run["topology"]["num_spines"] == 1
    assert "realloc: coflow (from " in r.stdout
    notes = [ln for ln in r.stderr.splitlines() if ln.startswith("note:")]
    assert len(notes) == 1, r.stderr
    for name in ("[workload]", "[sweep]", "experiment.policies", "experiment.seeds"):
        assert name in notes[0]
    r = fluid(trace_file, tmp_path / "b", "--config", str(cfg), "--priority-classes", "4",
              "--no-release-at-zero", "--realloc", "flow", "--topology", "big_switch")
    assert r.returncode == 0, r.stderr
    run = run_json(tmp_path / "b")
    assert run["num_priority_classes"] == 4 and run["release_at_zero"] is False
    assert run["realloc"] == "flow" and run["realloc_source"] == "--realloc"
    assert run["topology"]["kind"] == "big_switch" and run["topology"]["link_rate_bps"] == 1e9


def test_every_suite_toml_is_accepted_by_config(trace_file):
    """Each experiment file of both suites validates as a --config (schemas shared with
    the runner)."""
    for p in sorted((REPO / "experiments").rglob("*.toml")):
        topo, exp, _ = read_config(p, applied=cli.APPLIED_EXPERIMENT_KEYS, run_kind="fluid")
        assert set(exp) <= set(cli.APPLIED_EXPERIMENT_KEYS), p.name


@pytest.mark.parametrize("text,needle", [
    ("[topology]\nlink_rate = 1e9\n", "mine.toml: unknown key 'topology.link_rate' (known: "),
    ("[topologyy]\nlink_rate_bps = 1e9\n", "unknown key 'topologyy' (known tables: "),
    ("[experiment]\npriority_class = 2\n", "experiment.priority_class"),
    ("[experiment]\nrealloc = \"sometimes\"\n", "experiment.realloc: must be one of"),
    ("[topology]\nlink_rate_bps = -1.0\n", "topology.link_rate_bps: must be > 0"),
    # [workload] is not used by a run on a given trace, but its keys are still checked
    ("[workload]\nnum_app = 3\n", "mine.toml: unknown key 'workload.num_app' (known: "),
    ("[workload]\nnum_apps = \"eight\"\n", "workload.num_apps"),
])
@pytest.mark.slow
def test_config_bad_key_exits_2_with_one_line(trace_file, tmp_path, text, needle):
    cfg = toml(tmp_path, text)
    r = fluid(trace_file, tmp_path / "o", "--config", str(cfg))
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0] and "Traceback" not in r.stderr, r.stderr
    assert not (tmp_path / "o").exists()


@pytest.mark.slow
def test_coflow_benchmark_default_rate_and_config(tmp_path):
    txt = tmp_path / "b.txt"  # 2 ports, one coflow: mapper port 0, reducer port 1, 1 MB
    txt.write_text("2 1\n1 0 1 0 1 1:1\n")
    r = fluid(txt, tmp_path / "o", policy="varys")
    assert r.returncode == 0, r.stderr
    assert run_json(tmp_path / "o")["topology"]["link_rate_bps"] == 1e9
    cfg = toml(tmp_path, "[topology]\nkind = \"leaf_spine\"\n")
    r = fluid(txt, tmp_path / "p", "--config", str(cfg), policy="varys")
    assert r.returncode == 2 and "only topology big_switch" in r.stderr


@pytest.mark.parametrize("text", [
    '{"apps": [{"app_id": "a0"}]}',   # valid JSON, not a trace
    '{"apps": [',                     # not JSON
])
@pytest.mark.slow
def test_bad_trace_error_names_the_file(tmp_path, text):
    bad = tmp_path / "mine.json"
    bad.write_text(text)
    r = fluid(bad, tmp_path / "o")
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert lines and lines[-1].startswith(f"error: {bad}: "), r.stderr
    assert lines[-1].count(str(bad)) == 1 and "Traceback" not in r.stderr, r.stderr


# ---------------------------------------------------------------- -o guard

@pytest.mark.slow
def test_output_directory_holding_a_run_is_refused_unless_force(trace_file, tmp_path):
    out = tmp_path / "o"
    assert fluid(trace_file, out, policy="fair").returncode == 0
    before = (out / "run.json").read_text()
    r = fluid(trace_file, out, policy="beamer")
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and str(out) in lines[0] and "--force" in lines[0], r.stderr
    assert (out / "run.json").read_text() == before  # untouched
    r = fluid(trace_file, out, "--force", policy="beamer")
    assert r.returncode == 0, r.stderr
    assert run_json(out)["policy"] == "beamer"


@pytest.mark.slow
def test_output_directory_without_records_is_fine(trace_file, tmp_path):
    (tmp_path / "empty").mkdir()
    assert fluid(trace_file, tmp_path / "empty").returncode == 0
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "README.txt").write_text("mine")
    assert fluid(trace_file, tmp_path / "notes").returncode == 0
    assert (tmp_path / "notes" / "README.txt").read_text() == "mine"
    (tmp_path / "file").write_text("x")
    r = fluid(trace_file, tmp_path / "file")
    assert r.returncode == 2 and "not a directory" in r.stderr


@pytest.mark.slow
def test_mininet_cli_has_the_same_guard(trace_file, tmp_path):
    """Checked before it needs root, so this runs anywhere."""
    out = tmp_path / "o"
    out.mkdir()
    (out / "run.json").write_text("{}")
    r = subprocess.run([PYTHON, "-m", "emulation.mininet", str(trace_file), "--policy", "fair",
                        "-o", str(out)], cwd=REPO, capture_output=True, text=True)
    assert r.returncode == 2
    assert str(out) in r.stderr and "--force" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert (out / "run.json").read_text() == "{}"


# ---------------------------------------------------------------- progress, compilation

class FakeTTY(io.StringIO):
    def isatty(self):
        return True


@pytest.mark.slow
@pytest.mark.parametrize("tty", [False, True])
def test_progress_shows_and_leaves_the_records_alone(tmp_path, tty):
    from emulation.topology import big_switch
    from tests.helpers import small_hyperband_trace
    t = small_hyperband_trace(3)
    tp = tmp_path / "t.json"
    trace_mod.save(t, tp)
    kw = dict(trace=t, trace_path=tp, topology=big_switch(16, 10e9), policy="sincronia",
              lb_avg_sct_s=1.0)
    plain = run_mod.run_fluid(outdir=tmp_path / "plain", **kw)
    stream = FakeTTY() if tty else io.StringIO()
    with run_mod.Progress(stream, delay_s=0.0, log_every_s=0.0, redraw_s=0.0) as progress:
        shown = run_mod.run_fluid(outdir=tmp_path / "shown", progress=progress, **kw)
    text = stream.getvalue()
    assert "simulat" in text and "coflow" in text, text[:500]
    if not tty:
        assert all(ln.startswith("progress: ") for ln in text.splitlines())
    for f in ("stages.csv", "coflows.csv", "flows.csv"):
        assert (tmp_path / "plain" / f).read_bytes() == (tmp_path / "shown" / f).read_bytes()
    for k in ("avg_sct_s", "p95_sct_s", "num_decisions", "simulated_s"):
        assert plain[k] == shown[k]


def test_first_run_says_it_compiles_once(trace_file, tmp_path, monkeypatch, capsys):
    from emulation import kernels
    calls = []
    monkeypatch.setattr(run_mod, "kernels_need_compiling", lambda: not calls)
    monkeypatch.setattr(kernels, "warm_up", lambda **kw: calls.append(1))
    assert cli.main([str(trace_file), "--policy", "fair", "-o", str(tmp_path / "a")]) == 0
    err = capsys.readouterr().err
    # compiled before the note's "done"; run_fluid loads the kernels again (a no-op then)
    assert err.count(run_mod.COMPILE_NOTE) == 1 and len(calls) == 2
    assert cli.main([str(trace_file), "--policy", "fair", "-o", str(tmp_path / "b")]) == 0
    assert run_mod.COMPILE_NOTE not in capsys.readouterr().err  # cached now: silent


@pytest.mark.slow
def test_nothing_compiles_or_loads_while_simulating(trace_file, tmp_path):
    """A process's first run loads every kernel before ``FluidSimulator.run`` starts its
    clock: no kernel gains a compiled or loaded specialisation inside it (``sim_wall_s``
    is simulation alone)."""
    code = (
        "import sys\n"
        "from emulation.fluid import __main__ as cli\n"
        "from emulation.fluid.run import _dispatchers\n"
        "from emulation.fluid.simulator import FluidSimulator\n"
        "def counts():\n"
        "    return {d.py_func.__qualname__: len(d.signatures) for d in _dispatchers()}\n"
        "seen = []\n"
        "inner = FluidSimulator.run\n"
        "def run(self):\n"
        "    before = counts(); res = inner(self); seen.append((before, counts()))\n"
        "    return res\n"
        "FluidSimulator.run = run\n"
        "assert sum(counts().values()) == 0\n"
        "assert cli.main(sys.argv[1:]) == 0\n"
        "(before, after), = seen\n"
        "assert sum(before.values()) > 0 and before == after, (before, after)\n"
        "print('ok')\n")
    for policy in ("varys", "beamer"):
        r = subprocess.run([PYTHON, "-c", code, str(trace_file), "--policy", policy,
                            "--no-progress", "-o", str(tmp_path / policy)],
                           cwd=REPO, capture_output=True, text=True)
        assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stdout + r.stderr


@pytest.mark.slow
def test_lower_bound_kept_between_runs(trace_file, tmp_path):
    """The second run reads the bound the first stored; --no-lb-cache computes it."""
    cache = tmp_path / "cache"
    outs = []
    for name in ("first", "second"):
        r = fluid(trace_file, tmp_path / name, "--no-progress", "--lb-cache-dir", str(cache))
        assert r.returncode == 0, r.stderr
        outs.append(r.stdout)
    first, second = run_json(tmp_path / "first"), run_json(tmp_path / "second")
    assert "(computed, stored in the cache)" in outs[0] and "(read from the cache)" in outs[1]
    assert (first["lower_bound_cache"]["hit"], second["lower_bound_cache"]["hit"]) == (False, True)
    assert first["lower_bound_avg_sct_s"] == second["lower_bound_avg_sct_s"] > 0
    assert len(list(cache.glob("*.json"))) == 1
    r = fluid(trace_file, tmp_path / "none", "--no-progress", "--no-lb-cache")
    assert r.returncode == 0, r.stderr
    none = run_json(tmp_path / "none")
    assert "lower_bound_cache" not in none
    assert none["lower_bound_avg_sct_s"] == first["lower_bound_avg_sct_s"]


@pytest.mark.slow
def test_no_flows_csv_leaves_the_other_records_alone(trace_file, tmp_path):
    r = fluid(trace_file, tmp_path / "with", "--no-progress")
    assert r.returncode == 0, r.stderr
    r = fluid(trace_file, tmp_path / "without", "--no-progress", "--no-flows-csv")
    assert r.returncode == 0, r.stderr
    assert not (tmp_path / "without" / "flows.csv").exists()
    assert (tmp_path / "with" / "flows.csv").exists()
    for f in ("stages.csv", "coflows.csv"):
        assert (tmp_path / "with" / f).read_bytes() == (tmp_path / "without" / f).read_bytes()
    assert (run_json(tmp_path / "with")["flows_csv"], run_json(tmp_path / "without")["flows_csv"]) \
        == (True, False)
    # a directory holding a run without flows.csv is still a run: refused without --force
    r = fluid(trace_file, tmp_path / "without", "--no-progress")
    assert r.returncode == 2 and "already holds a run" in r.stderr


@pytest.mark.slow
def test_cache_detection_reads_numbas_index(tmp_path):
    """An empty cache directory means compiling; the warmed-up cache does not."""
    code = "from emulation.fluid.run import kernels_need_compiling as k; print(k())"
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    r = subprocess.run([PYTHON, "-c", code], cwd=REPO, capture_output=True, text=True, env=env)
    assert r.stdout.strip() == "True", r.stderr
    from emulation import kernels
    kernels.warm_up()
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    r = subprocess.run([PYTHON, "-c", code], cwd=REPO, capture_output=True, text=True, env=env)
    assert r.stdout.strip() == "False", r.stderr


@pytest.mark.slow
def test_setup_compiles_the_kernels_idempotently():
    """scripts/setup.sh ends with the kernels' warm-up; run again it says nothing."""
    lines = [ln for ln in (REPO / "scripts" / "setup.sh").read_text().splitlines()
             if "ensure_kernels" in ln and not ln.lstrip().startswith("#")]
    assert len(lines) == 1
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    subprocess.run(["bash", "-c", lines[0]], cwd=REPO, check=True, env=env)  # warm (maybe compiles)
    r = subprocess.run(["bash", "-c", lines[0]], cwd=REPO, capture_output=True, text=True, env=env)
    assert r.returncode == 0 and r.stdout == "" and r.stderr == "", r.stdout + r.stderr


def test_help_explains_options_defaults_and_units():
    r = subprocess.run([PYTHON, "-m", "emulation.fluid", "--help"], cwd=REPO, capture_output=True,
                       text=True)
    text = " ".join(r.stdout.split())
    for needle in ("bits per second", "--config FILE", "--force", "(default 8)",
                   "0 = unlimited", "default big_switch", "(default 4)", "(default 2)",
                   "1 = non-blocking", "10e9 for JSON traces", "seconds"):
        assert needle in text, needle


def test_stale_kernel_caches_are_emptied_when_any_kernel_module_changes(tmp_path, monkeypatch):
    """numba checks only a kernel's own file; the stamp of all kernel sources beside each
    cache catches a change in another module. Driven on a tiny cached kernel of its own
    (so the project's caches are not touched) with the fingerprint patched."""
    import importlib
    import sys
    from pathlib import Path
    from emulation import kernels
    (tmp_path / "tiny_kernel_mod.py").write_text(
        "from numba import njit\n\n@njit(cache=True)\ndef twice(x):\n    return 2 * x\n")
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module("tiny_kernel_mod")
    try:
        assert mod.twice(3) == 6  # compiled and cached
        index = mod.twice._cache._cache_file
        stamp = Path(mod.twice._cache._cache_path) / run_mod.KERNEL_SOURCES_STAMP
        monkeypatch.setattr(run_mod, "_dispatchers", lambda: [mod.twice])
        sources = ["a"]
        monkeypatch.setattr(kernels, "source_sha256", lambda: sources[0])
        assert index._load_index()  # the kernel is in the cache
        # no stamp yet: the cache's origin is unknown, so it is emptied and stamped
        assert run_mod.drop_stale_kernel_caches() is True
        assert not index._load_index() and stamp.read_text().strip() == "a"
        assert mod.twice.py_func(3) == 6
        mod.twice.recompile()  # refill the cache (what the next warm-up does)
        mod.twice._cache.save_overload(mod.twice.signatures[0], mod.twice.overloads[mod.twice.signatures[0]])
        assert index._load_index()
        # same sources: nothing happens
        assert run_mod.drop_stale_kernel_caches() is False and index._load_index()
        # another kernel module changed: emptied again, stamp rewritten
        sources[0] = "b"
        assert run_mod.drop_stale_kernel_caches() is True
        assert not index._load_index() and stamp.read_text().strip() == "b"
    finally:
        sys.modules.pop("tiny_kernel_mod", None)


@pytest.mark.slow
def test_leaf_spine_idle_hosts_are_named(trace_file, tmp_path):
    # 4 hosts, 3 per leaf: 2 leaves, 6 hosts; h4 and h5 on leaf l1 carry nothing
    r = fluid(trace_file, tmp_path / "a", "--topology", "leaf_spine", "--hosts-per-leaf", "3")
    assert r.returncode == 0, r.stderr
    note = [l for l in r.stderr.splitlines() if l.startswith("note: topology.hosts_per_leaf")]
    assert len(note) == 1 and "h4..h5 on leaf l1" in note[0] and "6 hosts" in note[0]
    # 2 per leaf divides 4: no note
    r = fluid(trace_file, tmp_path / "b", "--topology", "leaf_spine", "--hosts-per-leaf", "2")
    assert r.returncode == 0 and "hosts_per_leaf" not in r.stderr and "note:" not in r.stderr


@pytest.mark.slow
def test_hosts_beyond_the_traces_are_named(trace_file, tmp_path):
    # the trace's 4 hosts on a big switch of 6 (a config's [topology] num_hosts): h4, h5 idle
    cfg = tmp_path / "six.toml"
    cfg.write_text("[topology]\nnum_hosts = 6\n")
    r = fluid(trace_file, tmp_path / "a", "--config", str(cfg))
    assert r.returncode == 0, r.stderr
    assert (f"note: {cfg}: topology.num_hosts = 6 is more than the trace's host count "
            f"({trace_file}: 4 hosts): the 2 hosts h4..h5, not in the trace, carry no "
            "traffic") in r.stderr.splitlines()


@pytest.mark.slow
def test_both_command_lines_default_to_the_same_leaf_spine():
    """The packet-level and the fluid command line build the same topology from the same
    flags: their leaf-spine defaults are the [topology] table's (4 hosts per leaf, 2
    spines, non-blocking)."""
    import re
    found = {}
    for mod in ("emulation.fluid", "emulation.mininet"):
        out = subprocess.run([PYTHON, "-m", mod, "--help"], cwd=REPO, capture_output=True,
                             text=True, env={**os.environ, "COLUMNS": "200"}).stdout
        found[mod] = {opt: re.search(rf"{opt} \S+ .*?\(default ([^)]+)\)", out).group(1)
                      for opt in ("--hosts-per-leaf", "--spines", "--oversubscription")}
    assert found["emulation.fluid"] == found["emulation.mininet"] == {
        "--hosts-per-leaf": "4", "--spines": "2", "--oversubscription": "1"}
