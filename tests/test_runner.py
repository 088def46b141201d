"""run_experiments.py: dry run, resume, interruption, bad configs, Dask equals the local pool."""
import json
import signal
import subprocess
import time

import pandas as pd
import pytest

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
    return sorted(p.parent.name for p in (out / "tiny").glob("*/run.json"))


def test_dry_run_lists_exactly_the_runs(tmp_path):
    r = runner("--config", write_cfg(tmp_path), "--dry-run")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().split("\n")
    runs = lines[:-1]
    assert lines[-1] == "12 runs"  # 2 patterns x 2 seeds x 3 policies
    assert len(set(runs)) == 12
    assert "tiny/sync_pattern=ps,policy=fair,seed=2" in runs


def test_default_suite_dry_run_is_valid():
    r = runner("--dry-run")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().endswith("runs")


def test_rerun_skips_done_runs_and_analysis_reads_files(tmp_path):
    cfg, out = write_cfg(tmp_path), tmp_path / "res"
    r = runner("--config", cfg, "--out", out, "--jobs", "2")
    assert r.returncode == 0, r.stderr
    assert len(run_dirs(out)) == 12
    assert (out / "summary.md").exists()
    assert (out / "figures" / "tiny_normalised_avg_sct.png").stat().st_size > 10_000
    stamp = {d: (out / "tiny" / d / "run.json").stat().st_mtime_ns for d in run_dirs(out)}
    r = runner("--config", cfg, "--out", out, "--jobs", "2")
    assert "12 already done, 0 to run" in r.stdout
    assert stamp == {d: (out / "tiny" / d / "run.json").stat().st_mtime_ns for d in run_dirs(out)}
    # analysis alone regenerates the summary and byte-identical figures from files
    figs = {p.name: p.read_bytes() for p in (out / "figures").iterdir()}
    (out / "summary.md").unlink()
    r = subprocess.run([PYTHON, "-m", "analysis", str(out)], cwd=REPO, capture_output=True, text=True)
    assert r.returncode == 0 and (out / "summary.md").exists()
    assert figs == {p.name: p.read_bytes() for p in (out / "figures").iterdir()}
    text = (out / "summary.md").read_text()
    runs = pd.read_csv(out / "tables" / "runs.csv")
    b = runs[(runs.policy == "beamer") & (runs.scenario == "sync_pattern=ps")]["avg_sct_s"].mean()
    assert f"| tiny | sync_pattern=ps | 2 | {b:.2f} |" in text


def test_killed_midway_then_rerun_completes_the_rest(tmp_path):
    cfg, out = write_cfg(tmp_path, extra="iterations_per_unit = 30"), tmp_path / "res"
    p = subprocess.Popen([PYTHON, "run_experiments.py", "--config", str(cfg), "--out", str(out),
                          "--jobs", "1", "--no-analysis"], cwd=REPO, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    deadline = time.time() + 120
    while time.time() < deadline and len(run_dirs(out)) < 2:
        time.sleep(0.05)
    p.send_signal(signal.SIGKILL)
    p.wait()
    done_before = len(run_dirs(out))
    assert 2 <= done_before < 12, "the kill should land midway"
    r = runner("--config", cfg, "--out", out, "--jobs", "1", "--no-analysis")
    assert r.returncode == 0, r.stderr
    assert f"{done_before} already done, {12 - done_before} to run" in r.stdout
    assert len(run_dirs(out)) == 12
    for d in run_dirs(out):
        assert (out / "tiny" / d / "stages.csv").exists()


@pytest.mark.parametrize("extra,needle", [
    ("bogus_key = 1", "workload.bogus_key"),
    ("eta = 1", "workload.eta"),
])
def test_bad_config_fails_before_any_run(tmp_path, extra, needle):
    out = tmp_path / "res"
    r = runner("--config", write_cfg(tmp_path, extra=extra), "--out", out)
    assert r.returncode == 2
    assert needle in r.stderr and "Traceback" not in r.stderr
    assert not out.exists() or not list(out.glob("*/*/run.json"))


def test_bad_policy_name_fails(tmp_path):
    p = tmp_path / "x.toml"
    p.write_text('[experiment]\nname = "x"\npolicies = ["beamr"]\n')
    r = runner("--config", p, "--dry-run")
    assert r.returncode == 2 and "beamr" in r.stderr


def _records(out):
    recs = {}
    for d in run_dirs(out):
        base = out / "tiny" / d
        run = json.loads((base / "run.json").read_text())
        for k in ("wall_s", "sim_wall_s", "trace_path"):
            run.pop(k, None)
        recs[d] = (run, (base / "stages.csv").read_text(), (base / "coflows.csv").read_text(),
                   (base / "flows.csv").read_text())
    return recs


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


def test_dask_local_starts_its_own_cluster(tmp_path):
    pytest.importorskip("distributed")
    out = tmp_path / "out"
    r = runner("--config", write_cfg(tmp_path), "--out", out, "--dask", "local", "--jobs", "2",
               "--no-analysis")
    assert r.returncode == 0, r.stderr
    assert len(run_dirs(out)) == 12


def test_realloc_policy_resolves_per_run(tmp_path):
    """realloc = "policy" runs each policy in its published mode, recorded in run.json."""
    from emulation.scheduler import POLICIES
    cfg = write_cfg(tmp_path)
    cfg.write_text(cfg.read_text().replace("[experiment]\n", '[experiment]\nrealloc = "policy"\n', 1))
    out = tmp_path / "out"
    r = runner("--config", cfg, "--out", out, "--jobs", "1", "--no-analysis")
    assert r.returncode == 0, r.stderr
    runs = [json.loads(p.read_text()) for p in (out / "tiny").glob("*/run.json")]
    assert len(runs) == 12
    for run in runs:
        assert run["realloc"] == POLICIES[run["policy"]].default_realloc
        assert run["realloc_is_policy_default"] is True
