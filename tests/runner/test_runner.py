"""run_experiments.py: dry run, resume, interruption, bad configs, Dask equals the local pool,
where results go (results/ only for the default suite), --force, no absolute paths."""
import os
import signal
import subprocess

import pandas as pd
import pytest

from emulation import store
from tests.conftest import PYTHON, REPO

TINY = """
[experiment]
name = "tiny"
policies = ["beamer", "sincronia", "fair"]
seeds = [1, 2]

[workload]
num_apps = 3
max_resource = 3
num_hosts = 8
gpu_mix = {{ "2" = 1.0, "4" = 1.0 }}
{extra}

[sweep]
"workload.sync_pattern" = ["ring", "ps"]
"""


def write_cfg(tmp_path, extra=""):
    p = tmp_path / "tiny.toml"
    p.write_text(TINY.format(extra=extra))
    return p


def runner(*args, **kw):
    return subprocess.run([PYTHON, "run_experiments.py", *map(str, args)], cwd=REPO,
                          capture_output=True, text=True, **kw)


def run_dirs(out):
    """Finished runs of the experiment, loose or packed (``emulation.store``)."""
    return sorted(d.name for d in store.run_dirs(out) if d.parent.name == "tiny")


@pytest.mark.slow
def test_dry_run_lists_exactly_the_runs(tmp_path):
    out = tmp_path / "res"
    r = runner("--config", write_cfg(tmp_path), "--dry-run", "--out", out)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().split("\n")
    runs = [line.split("  (")[0] for line in lines[:-1]]
    # 2 patterns x 2 seeds x 3 policies
    assert lines[-1].startswith(f"12 runs into {out}: 0 done") and lines[-1].endswith(
        ", 12 to run"), lines[-1]
    assert len(set(runs)) == 12
    assert "tiny/sync_pattern=ps,policy=fair,seed=2  (to run)" in lines
    assert not out.exists()  # a dry run writes nothing


@pytest.mark.slow
def test_one_config_flag_takes_several_files_as_a_shell_glob_gives_them(tmp_path):
    """``--config a.toml b.toml`` (what ``--config experiments/pinned_hosts/cong_*.toml`` expands to)
    is both files, as ``--config a.toml --config b.toml`` is."""
    a = write_cfg(tmp_path)
    b = tmp_path / "other.toml"
    b.write_text(TINY.format(extra="").replace('name = "tiny"', 'name = "other"'))
    out = tmp_path / "res"
    one = runner("--config", a, b, "--dry-run", "--out", out)
    two = runner("--config", a, "--config", b, "--dry-run", "--out", out)
    assert one.returncode == 0, one.stderr
    assert one.stdout == two.stdout
    assert one.stdout.strip().split("\n")[-1].startswith(f"24 runs into {out}:")


@pytest.mark.slow
def test_default_suite_dry_run_finds_every_committed_run_done():
    """The default suite goes into results/ and every run there is done (the same run recorded):
    a rerun regenerates the analysis only."""
    r = runner("--dry-run")
    assert r.returncode == 0, r.stderr
    last = r.stdout.strip().splitlines()[-1]
    n = int(last.split()[0])
    assert last.startswith(f"{n} runs into results: {n} done") and last.endswith(", 0 to run"), last
    assert n >= 600


@pytest.mark.slow
def test_rerun_skips_done_runs_and_analysis_reads_files(tmp_path):
    cfg, out = write_cfg(tmp_path), tmp_path / "res"
    r = runner("--config", cfg, "--out", out, "--jobs", "2")
    assert r.returncode == 0, r.stderr
    assert len(run_dirs(out)) == 12
    assert (out / "summary.md").exists()
    assert (out / "figures" / "tiny_normalised_avg_sct.png").stat().st_size > 10_000
    stamp = {p.name: p.stat().st_mtime_ns for p in (out / "tiny").glob("*.parquet")}
    assert set(stamp) >= {"runs.parquet", "stages.parquet", "coflows.parquet"}
    r = runner("--config", cfg, "--out", out, "--jobs", "2")
    assert "12 already done, 0 to run" in r.stdout
    assert stamp == {p.name: p.stat().st_mtime_ns for p in (out / "tiny").glob("*.parquet")}
    # analysis alone regenerates the summary and byte-identical figures from files
    figs = {p.name: p.read_bytes() for p in (out / "figures").iterdir()}
    (out / "summary.md").unlink()
    r = subprocess.run([PYTHON, "-m", "analysis", str(out)], cwd=REPO, capture_output=True, text=True)
    assert r.returncode == 0 and (out / "summary.md").exists()
    assert figs == {p.name: p.read_bytes() for p in (out / "figures").iterdir()}
    # the figures' data beside them (one CSV per figure)
    assert {p.stem for p in (out / "figures").glob("*.png")} == {
        p.stem for p in (out / "figures").glob("*.csv")}
    text = (out / "summary.md").read_text()
    runs = pd.read_csv(out / "tables" / "runs.csv")
    b = runs[(runs.policy == "beamer") & (runs.scenario == "sync_pattern=ps")]["avg_sct_s"].mean()
    assert f"| tiny | sync_pattern=ps | 2 | {b:.2f} |" in text


KILL_AT_RUN = """
import os, signal, sys
import run_experiments as r
import emulation.fluid.backend as fluid_backend
from emulation import store

calls = [0]
real = fluid_backend.execute


def fluid(request):
    calls[0] += 1
    run = real(request)
    if calls[0] == int(os.environ["KILL_AT_RUN"]):
        # the run's records are in its temporary directory, not yet renamed: die here
        os.kill(os.getpid(), signal.SIGKILL)
    return run


fluid_backend.execute = fluid
sys.exit(r.main(sys.argv[1:]))
"""


@pytest.mark.slow
def test_killed_midway_then_rerun_completes_the_rest(tmp_path):
    """The runner is SIGKILLed at a fixed point (inside the 4th run, after its records
    were written to the temporary directory, before the rename): no timing window. The
    3 finished runs are kept, the leftover temporary directory is ignored, and a rerun
    does exactly the 9 others."""
    cfg, out = write_cfg(tmp_path), tmp_path / "res"
    r = subprocess.run([PYTHON, "-c", KILL_AT_RUN, "--config", str(cfg), "--out", str(out),
                        "--jobs", "1", "--no-analysis"], cwd=REPO, capture_output=True,
                       text=True, env={**os.environ, "KILL_AT_RUN": "4", "PYTHONPATH": str(REPO)})
    assert r.returncode == -signal.SIGKILL, r.stderr
    assert len(run_dirs(out)) == 3
    leftovers = list((out / "tiny").glob(".tmp-*"))
    assert len(leftovers) == 1 and store.has(leftovers[0] / "run.json")
    r = runner("--config", cfg, "--out", out, "--jobs", "1")
    assert r.returncode == 0, r.stderr
    assert "3 already done, 9 to run" in r.stdout
    assert len(run_dirs(out)) == 12
    for d in run_dirs(out):
        assert store.has(out / "tiny" / d / "stages.csv")
    # the analysis read the 12 finished runs only, not the leftover
    assert "12 runs; tables" in (out / "summary.md").read_text()
    assert len(pd.read_csv(out / "tables" / "runs.csv")) == 12


def test_changed_config_needs_force_to_replace_the_run(tmp_path, capsys):
    """Same run name, different config (K): the hash differs; without --force the runner
    stops before any run with one line naming the directory and --force, and keeps the
    old records; with --force the run is redone."""
    import run_experiments as rx
    from runner.config import load_experiment
    from runner.results_dir import RunStatus, is_done, run_status
    cfg = tmp_path / "one.toml"
    base = ('[experiment]\nname = "one"\npolicies = ["fair"]\nseeds = [1]\n'
            'priority_classes = {k}\n[workload]\nnum_apps = 2\nmax_resource = 3\n'
            'num_hosts = 8\n')
    out = tmp_path / "res"
    cfg.write_text(base.format(k=8))
    [spec8] = load_experiment(cfg, full=False)
    assert rx.main(["--config", str(cfg), "--out", str(out), "--jobs", "1", "--no-analysis"]) == 0
    rc = out / "one" / spec8.name / "run_config.json"
    assert store.read_json(rc)["config_hash"] == spec8.config_hash
    assert is_done(spec8, out)
    cfg.write_text(base.format(k=4))
    [spec4] = load_experiment(cfg, full=False)
    assert spec4.name == spec8.name and spec4.config_hash != spec8.config_hash
    assert not is_done(spec4, out)
    capsys.readouterr()
    assert rx.main(["--config", str(cfg), "--out", str(out), "--jobs", "1", "--no-analysis"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(out / "one" / spec8.name) in err and "--force" in err
    assert f"config hash {spec8.config_hash}" in err
    assert store.read_json(rc)["config_hash"] == spec8.config_hash  # untouched
    # the dry run says what the run does: the same error, the same exit status
    assert rx.main(["--config", str(cfg), "--out", str(out), "--dry-run"]) == 2
    dry = capsys.readouterr()
    assert ("(different run, changed: experiment.priority_classes 8 -> 4; --force "
            "replaces it)") in dry.out
    last = dry.out.splitlines()[-1]
    assert last.startswith(f"1 run into {out}: 0 done") and ", 0 to run, " in last, last
    assert "1 directory holds a different run" in last, last
    assert last.endswith("a run stops before any of them (error below)"), last
    assert dry.err.strip() == err
    assert rx.main(["--config", str(cfg), "--out", str(out), "--dry-run", "--force"]) == 0
    assert ("(different run, changed: experiment.priority_classes 8 -> 4; replaced "
            "(--force))") in capsys.readouterr().out
    assert rx.main(["--config", str(cfg), "--out", str(out), "--jobs", "1", "--no-analysis",
                    "--force"]) == 0
    assert store.read_json(rc)["config_hash"] == spec4.config_hash
    assert store.read_json(out / "one" / spec4.name / "run.json")[
        "num_priority_classes"] == 4
    assert is_done(spec4, out) and not is_done(spec8, out)
    # a corrupt run_config.json counts as not done, and as a different run
    rc.write_text("{not json")
    assert not is_done(spec4, out)
    assert run_status(spec4, out) == RunStatus("different", None)


def test_dry_run_into_results_refuses_as_the_run_does(tmp_path, monkeypatch, capsys):
    """``--config FILE --out results`` without --force: the run stops before any run with
    one error line and exit 2, and so does its --dry-run (after listing the runs); nothing
    is written. The reference directory is a temporary one here."""
    import run_experiments as rx
    ref = tmp_path / "results"
    monkeypatch.setattr(rx, "REFERENCE_DIR", ref)
    monkeypatch.chdir(REPO)  # paths inside the working directory are shown relative to it
    cfg = write_cfg(tmp_path)
    assert rx.main(["--config", str(cfg), "--out", str(ref), "--dry-run"]) == 2
    dry = capsys.readouterr()
    assert len(dry.err.splitlines()) == 1, dry.err
    [err] = dry.err.splitlines()
    assert err.startswith(f"error: {ref} holds the committed reference results"), err
    assert "runs/tiny (the default) or to --out DIR" in err, err
    assert err.endswith("pass --force to write them into it"), err
    # 2 patterns x 2 seeds x 3 policies, none run yet
    last = dry.out.splitlines()[-1]
    assert last.startswith(f"12 runs into {ref}: 0 done") and ", 12 to run;" in last, last
    assert last.endswith("a run stops before any of them (error below)"), last
    assert rx.main(["--config", str(cfg), "--out", str(ref), "--no-analysis"]) == 2
    assert capsys.readouterr().err.splitlines() == [err]
    assert not ref.exists()


def test_runs_of_no_config_are_noted_in_the_dry_run_too(tmp_path, capsys):
    """Two policies run, then one is removed from the TOML: its run directory is not a
    run of the config (noted, kept), and the other stays done (the policy list is not
    part of what makes a run). The dry run and the run print the same note line and
    run nothing."""
    import run_experiments as rx
    cfg, out = tmp_path / "two.toml", tmp_path / "res"
    text = ('[experiment]\nname = "two"\npolicies = [{policies}]\nseeds = [1]\n'
            '[workload]\nnum_apps = 2\nmax_resource = 3\nnum_hosts = 8\n')
    cfg.write_text(text.format(policies='"fair", "fifo_lm"'))
    assert rx.main(["--config", str(cfg), "--out", str(out), "--jobs", "1", "--no-analysis"]) == 0
    cfg.write_text(text.format(policies='"fair"'))
    capsys.readouterr()
    note = (f"note: 1 run directories under {out} are not runs of these configs (e.g. "
            "two/policy=fifo_lm,seed=1); they are kept and the analysis reads them too")
    assert rx.main(["--config", str(cfg), "--out", str(out), "--dry-run"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert note in lines
    assert lines[-1].startswith(f"1 run into {out}: 1 done (the same run recorded; 1 of them")
    assert lines[-1].endswith("), 0 to run")
    assert rx.main(["--config", str(cfg), "--out", str(out), "--jobs", "1", "--no-analysis"]) == 0
    assert note in capsys.readouterr().out.splitlines()
    assert store.has(out / "two" / "policy=fifo_lm,seed=1" / "run_config.json")


@pytest.mark.parametrize("extra,needle", [
    ("bogus_key = 1", "unknown key 'workload.bogus_key' (known: "),
    ("eta = 1", "workload.eta"),
])
@pytest.mark.slow
def test_bad_config_fails_before_any_run(tmp_path, extra, needle):
    out = tmp_path / "res"
    cfg = write_cfg(tmp_path, extra=extra)
    r = runner("--config", cfg, "--out", out)
    assert r.returncode == 2
    assert r.stderr.startswith(f"error: {cfg}: {needle}"), r.stderr  # the path as given
    assert "'tiny.toml" not in r.stderr and "Traceback" not in r.stderr
    assert not out.exists() or not store.run_dirs(out)


def test_bad_experiment_key_names_the_file_outside_the_quotes(tmp_path):
    p = tmp_path / "mine.toml"
    p.write_text('[experiment]\nname = "m"\nfoo = 1\n')
    r = runner("--config", p, "--dry-run")
    assert r.returncode == 2
    assert r.stderr.startswith(f"error: {p}: unknown key 'experiment.foo' (known: "), r.stderr


@pytest.mark.slow
def test_bad_policy_name_fails(tmp_path):
    p = tmp_path / "x.toml"
    p.write_text('[experiment]\nname = "x"\npolicies = ["beamr"]\n')
    r = runner("--config", p, "--dry-run")
    assert r.returncode == 2 and "beamr" in r.stderr


def _records(out):
    recs = {}
    for d in run_dirs(out):
        base = out / "tiny" / d
        run = store.read_json(base / "run.json")
        for k in ("wall_s", "sim_wall_s", "trace_path"):
            run.pop(k, None)
        recs[d] = (run, store.read_table(base / "stages.csv").to_csv(),
                   store.read_table(base / "coflows.csv").to_csv(), (base / "flows.csv").read_text())
    return recs


@pytest.mark.slow
def test_dask_local_cluster_gives_the_same_records_as_the_local_pool(tmp_path):
    distributed = pytest.importorskip("distributed")
    cfg = write_cfg(tmp_path)
    local, remote = tmp_path / "local", tmp_path / "dask"
    assert runner("--config", cfg, "--out", local, "--jobs", "2", "--no-analysis").returncode == 0
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        r = runner("--config", cfg, "--out", remote, "--dask", cluster.scheduler_address,
                   "--no-analysis")
        assert r.returncode == 0, r.stderr
    a, b = _records(local), _records(remote)
    assert a.keys() == b.keys() and len(a) == 12
    for k in a:
        assert a[k] == b[k], k


@pytest.mark.slow
def test_dask_local_starts_its_own_cluster(tmp_path):
    pytest.importorskip("distributed")
    out = tmp_path / "out"
    r = runner("--config", write_cfg(tmp_path), "--out", out, "--dask", "local", "--jobs", "2",
               "--no-analysis")
    assert r.returncode == 0, r.stderr
    assert len(run_dirs(out)) == 12


@pytest.mark.slow
@pytest.mark.parametrize("line", ["", 'realloc = "policy"\n'])
def test_realloc_policy_resolves_per_run(tmp_path, line):
    """realloc = "policy", written or left out, runs each policy as the packet backend
    enforces it (a priority policy published at coflow events under queues, Varys under
    its published coflow, fair per flow), recorded in run.json."""
    cfg = write_cfg(tmp_path)
    cfg.write_text(cfg.read_text().replace("[experiment]\n", "[experiment]\n" + line, 1))
    assert "realloc" not in cfg.read_text() or line
    out = tmp_path / "out"
    r = runner("--config", cfg, "--out", out, "--jobs", "1", "--no-analysis")
    assert r.returncode == 0, r.stderr
    runs = [store.read_json(d / "run.json") for d in store.run_dirs(out)]
    assert len(runs) == 12
    want = {"beamer": "queues", "sincronia": "queues", "fifo_lm": "queues", "fair": "flow",
            "varys": "coflow", "beamer-sbssi": "queues"}
    for run in runs:
        assert run["realloc"] == want[run["policy"]], run["policy"]
        assert run["realloc_is_policy_default"] is True


def test_identical_fluid_runs_of_two_experiments_share_one_run(tmp_path):
    """Two experiments that differ only in name and description: the second's run is not
    re-run and holds no records of its own; its run.json names the first's in
    same_run_as, the analysis reads the first's records for it under its own experiment,
    --verify checks the link, and removing the first makes the second to run again."""
    import run_experiments as rx
    import runner.execute as rexec
    from runner.config import collect_specs
    body = """
[workload]
num_apps = 1
max_resource = 1
num_hosts = 4
gpu_mix = { "2" = 1.0 }
[experiment]
policies = ["sincronia"]
seeds = [1]
"""
    (tmp_path / "a.toml").write_text(body.replace("[experiment]", '[experiment]\nname = "a"'))
    (tmp_path / "b.toml").write_text(body.replace("[experiment]", '[experiment]\nname = "b"\ndescription = "other"'))
    out = tmp_path / "out"
    calls = []
    real = rexec.execute

    def counting(spec, *a):
        calls.append(spec.experiment)
        return real(spec, *a)

    rexec.execute, saved = counting, rexec.execute
    try:
        assert rx.main(["--config", str(tmp_path / "a.toml"), "--config", str(tmp_path / "b.toml"),
                        "--out", str(out), "--jobs", "1", "--no-analysis"]) == 0
    finally:
        rexec.execute = saved
    assert calls == ["a"]
    ra = store.read_json(out / "a" / "policy=sincronia,seed=1" / "run.json")
    rb = store.read_json(out / "b" / "policy=sincronia,seed=1" / "run.json")
    assert rb["experiment"] == "b" and rb["same_run_as"] == "a/policy=sincronia,seed=1"
    assert rb["avg_sct_s"] == ra["avg_sct_s"]
    b_dir = out / "b" / "policy=sincronia,seed=1"
    assert not store.has(b_dir / "stages.csv") and not store.has(b_dir / "coflows.csv")
    cfg_b = store.read_json(b_dir / "run_config.json")
    assert cfg_b["experiment"] == "b"
    from analysis.load import load_runs, load_stages
    runs = load_runs(out)
    stages = load_stages(runs)
    a_sct = stages.loc[stages["experiment"] == "a", "sct_s"].tolist()
    assert a_sct and stages.loc[stages["experiment"] == "b", "sct_s"].tolist() == a_sct
    from runner.verify import verify
    assert verify(out, sample=0, jobs=1) == 0
    # a rerun finds both done
    from runner.results_dir import is_done
    specs = collect_specs([tmp_path / "a.toml", tmp_path / "b.toml"], full=False,
                          backend="fluid")[0]
    assert all(is_done(s, out) for s in specs)
    import shutil
    shutil.rmtree(out / "a")
    assert [s.experiment for s in specs if not is_done(s, out)] == ["a", "b"]
    assert verify(out, sample=0, jobs=1) == 1  # b's shared records are gone


# --- where results go: results/ is the reference; every other run has its own directory ---

@pytest.mark.slow
def test_config_runs_go_to_their_own_directory_and_never_touch_results(tmp_path):
    """In a copy of the repository: ``--config tiny.toml`` writes runs/tiny/ (records,
    summary, tables, figures) and says so; the committed results/ is unchanged, and asking
    for results/ explicitly is refused with a pointer to --force."""
    from tests.scheduler.test_user_policy import repo_copy, tree_digest
    repo = repo_copy(tmp_path / "repo")
    cfg = write_cfg(tmp_path)
    before = tree_digest(repo / "results")
    r = subprocess.run([PYTHON, "run_experiments.py", "--config", str(cfg), "--jobs", "2"],
                       cwd=repo, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert tree_digest(repo / "results") == before
    out = repo / "runs" / "tiny"
    assert len(run_dirs(out)) == 12 and (out / "summary.md").exists()
    assert "12 runs into runs/tiny: 0 already done, 12 to run" in r.stdout
    assert "results: runs/tiny (summary: runs/tiny/summary.md" in r.stdout
    # progress, as log lines: the runs', then the analysis's steps
    lines = r.stderr.splitlines()
    assert [ln for ln in lines if not ln.startswith("analysis: ")][-1].startswith(
        "runs: 12/12 runs, ")
    assert lines[-1] == "analysis: summary"
    from tests.analysis.test_report import HISTORY
    assert not HISTORY.search(r.stdout + r.stderr)  # measurements, not the project's history
    # the summary of runs/tiny is about runs/tiny only
    assert "| pattern |" not in (out / "summary.md").read_text()
    r = subprocess.run([PYTHON, "run_experiments.py", "--config", str(cfg), "--out", "results"],
                       cwd=repo, capture_output=True, text=True)
    assert r.returncode == 2 and "--force" in r.stderr and "runs/tiny" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert tree_digest(repo / "results") == before


def test_default_output_directories():
    import run_experiments as rx
    assert rx.default_out(None, full=False) == REPO / "results"
    assert rx.default_out(None, full=True) == REPO / "runs" / "full"
    assert rx.default_out([REPO / "x" / "mine.toml"], full=False) == REPO / "runs" / "mine"
    assert rx.default_out([REPO / "a.toml", REPO / "b.toml"], full=True) == REPO / "runs" / "a+b-full"
    gitignore = (REPO / ".gitignore").read_text().splitlines()
    assert "/runs/" in gitignore
    # --help says where results go and how the reference results/ is regenerated
    help_text = " ".join(runner("--help").stdout.split())
    for needle in ("results/ holds the committed reference results", "runs/<config stem>/",
                   "runs need --force", "--reference POLICY", "recompute the reference itself"):
        assert needle in help_text, needle


@pytest.mark.slow
def test_records_and_tables_hold_no_absolute_paths(tmp_path):
    """Every CSV and JSON the runner and the analysis write (records, run_config.json,
    traces' bounds, tables, figure data) is free of the machine's paths; run.json's
    trace_path is relative to the results directory and names the trace file."""
    cfg, out = write_cfg(tmp_path), tmp_path / "res"
    r = runner("--config", cfg, "--out", out, "--jobs", "2")
    assert r.returncode == 0, r.stderr
    files = [p for p in out.rglob("*") if p.suffix in (".csv", ".json", ".md")
             and "traces" not in p.parts[-2:-1]]
    assert len(files) > 15
    packed = [p for p in out.rglob("*.parquet")]  # the runs' records (emulation.store)
    assert len(packed) >= 3
    for p in files + packed + list(out.glob("*/traces/lb-*.json")):
        text = p.read_bytes()
        assert str(tmp_path).encode() not in text and str(REPO).encode() not in text, p
    texts = [store.read_text(out / "tiny" / d / f) for d in run_dirs(out)
             for f in ("run.json", "run_config.json")]
    assert len(texts) == 24 and not any(str(tmp_path) in t or str(REPO) in t for t in texts)
    for d in run_dirs(out):
        tp = store.read_json(out / "tiny" / d / "run.json")["trace_path"]
        assert not os.path.isabs(tp) and (out / tp).is_file(), tp


@pytest.mark.slow
def test_reference_flag_of_the_runner(tmp_path):
    cfg, out = write_cfg(tmp_path), tmp_path / "res"
    r = runner("--config", cfg, "--out", out, "--jobs", "2", "--reference", "varys")
    assert r.returncode == 2 and not out.exists()  # no directory yet: only the runs named
    # in registry order, as the summary lists them
    assert "--reference varys: not a policy of these runs (beamer, sincronia, fair)" in r.stderr
    r = runner("--config", cfg, "--out", out, "--jobs", "2", "--reference", "fair")
    assert r.returncode == 0, r.stderr
    text = (out / "summary.md").read_text()
    assert "`fair` (set with `--reference`)" in text and "## fair's average SCT relative" in text
    # the check against Sincronia and Varys: fair vs sincronia (varys did not run); with
    # sincronia as the reference nothing is left to check, and the summary says why
    assert "## fair vs sincronia across the fluid experiments" in text
    from analysis.report import make_report
    text = make_report(out, reference="sincronia").read_text()
    assert "## sincronia vs" not in text and (
        "(No check of sincronia against varys across the fluid experiments: the records "
        "have no fluid runs of varys; the check compares the reference with each of "
        "sincronia and varys that is not the reference.)") in text


@pytest.mark.slow
def test_reference_may_name_a_policy_recorded_in_the_directory(tmp_path):
    """The analysis reads every run of the directory, so --reference may name a policy
    that only earlier runs there used; one that no run used is refused before any run."""
    cfg, out = write_cfg(tmp_path), tmp_path / "res"
    assert runner("--config", cfg, "--out", out, "--jobs", "2", "--no-analysis").returncode == 0
    cfg.write_text(cfg.read_text().replace('["beamer", "sincronia", "fair"]', '["beamer"]'))
    r = runner("--config", cfg, "--out", out, "--jobs", "2", "--reference", "nope")
    assert r.returncode == 2, r.stderr
    assert (f"--reference nope: not a policy of these runs or of {out} (beamer, sincronia, "
            "fair)") in r.stderr
    assert not (out / "summary.md").exists()
    r = runner("--config", cfg, "--out", out, "--jobs", "2", "--reference", "sincronia")
    assert r.returncode == 0, r.stderr
    assert "`sincronia` (set with `--reference`)" in (out / "summary.md").read_text()


@pytest.mark.parametrize("flags, says", [
    (["--no-analysis", "--cdf", "tiny"], "--cdf shapes the analysis, which --no-analysis skips"),
    (["--no-analysis", "--reference", "fair", "--cdf", "all"],
     "--reference and --cdf shape the analysis, which --no-analysis skips"),
    (["--verify", "--reference", "fair"],
     "--reference shapes the analysis, which --verify does not make"),
])
def test_analysis_options_without_an_analysis_are_refused(tmp_path, flags, says):
    cfg, out = write_cfg(tmp_path), tmp_path / "res"
    r = runner("--config", cfg, "--out", out, *flags)
    assert r.returncode == 2 and says in r.stderr, r.stderr
    assert not out.exists()


@pytest.mark.slow
def test_runs_not_in_the_config_are_named_in_a_note(tmp_path):
    cfg, out = write_cfg(tmp_path), tmp_path / "res"
    assert runner("--config", cfg, "--out", out, "--jobs", "2", "--no-analysis").returncode == 0
    cfg.write_text(cfg.read_text().replace('"ring", "ps"', '"ring"'))
    r = runner("--config", cfg, "--out", out, "--jobs", "2", "--no-analysis")
    assert r.returncode == 0, r.stderr
    assert "note: 6 run directories under" in r.stdout and "the analysis reads them too" in r.stdout
    assert "results: " in r.stdout and "analysis skipped" in r.stdout
    # the summary names them too; a run whose configs name every run drops the note
    assert runner("--config", cfg, "--out", out, "--jobs", "2").returncode == 0
    notes = (out / "summary.md").read_text().split("## Notes", 1)[1]
    assert ("- 6 run directories of this directory are not runs of the configs last run into "
            "it (e.g. `tiny/sync_pattern=ps,policy=beamer,seed=1`): kept, and analysed with "
            "the rest") in notes
    cfg.write_text(cfg.read_text().replace('"workload.sync_pattern" = ["ring"]',
                                           '"workload.sync_pattern" = ["ring", "ps"]'))
    assert runner("--config", cfg, "--out", out, "--jobs", "2").returncode == 0
    assert "not runs of the configs" not in (out / "summary.md").read_text()
    assert not (out / "NOTES.md").exists()


@pytest.mark.slow
def test_cdf_flag_of_the_runner(tmp_path):
    cfg, out = write_cfg(tmp_path), tmp_path / "res"
    r = runner("--config", cfg, "--out", out, "--jobs", "2", "--cdf", "tiny", "nosuch")
    assert r.returncode == 2 and "--cdf nosuch" in r.stderr and "tiny" in r.stderr
    assert not out.exists()
    r = runner("--config", cfg, "--out", out, "--jobs", "2", "--cdf", "tiny")
    assert r.returncode == 0, r.stderr
    first = (out / "summary.md").read_text().splitlines()[2]
    assert "`python -m analysis" in first and "--cdf tiny`" in first
    assert list((out / "figures").glob("tiny_sct_cdf*.png"))


def test_reference_runs_are_not_written_from_uncommitted_code(tmp_path, monkeypatch, capsys):
    """Runs to write into results/ while the code has uncommitted changes: one error line,
    exit 2, nothing written; a clean tree, or another directory, runs (checked by the
    refusal's absence, with no run to make). The reference directory is a temporary one."""
    import run_experiments as rx
    from emulation import records
    ref = tmp_path / "results"
    monkeypatch.setattr(rx, "REFERENCE_DIR", ref)
    cfg = write_cfg(tmp_path)
    args = ["--config", str(cfg), "--out", str(ref), "--force", "--no-analysis"]
    monkeypatch.setattr(records, "git_sha", lambda repo=None: "abc123-dirty")
    assert rx.main(args) == 2
    [err] = capsys.readouterr().err.splitlines()
    assert "uncommitted changes" in err and "--out DIR" in err, err
    assert not ref.exists()
    assert rx._dirty_reference(ref.resolve(), writes=False) is None  # nothing to write
    assert rx._dirty_reference(tmp_path / "elsewhere", writes=True) is None
    monkeypatch.setattr(records, "git_sha", lambda repo=None: "abc123")
    assert rx._dirty_reference(ref.resolve(), writes=True) is None
