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


PKT = """
[experiment]
name = "pkt"
backend = "mininet"
policies = ["beamer", "fair"]
seeds = [5]
repetitions = {reps}

[workload]
num_apps = 1
num_hosts = 4
gpu_mix = {{ "2" = 1.0 }}

[full]
"experiment.repetitions" = 3
"""


def test_packet_level_repetitions_name_and_hash_each_run(tmp_path):
    """2 policies x 1 seed x N repetitions, each with its own name (rep=N) and config hash;
    [full] raises the count to 3."""
    from run_experiments import load_experiment
    p = tmp_path / "pkt.toml"
    p.write_text(PKT.format(reps=2))
    specs = load_experiment(p, full=False)
    assert sorted(s.name for s in specs) == ["policy=beamer,seed=5,rep=0", "policy=beamer,seed=5,rep=1",
                                              "policy=fair,seed=5,rep=0", "policy=fair,seed=5,rep=1"]
    assert len({s.config_hash for s in specs}) == 4
    assert [s.repetition for s in specs if s.policy == "fair"] == [0, 1]
    assert len(load_experiment(p, full=True)) == 6


def test_repetitions_rejected_for_the_deterministic_fluid_backend(tmp_path):
    from run_experiments import load_experiment
    from workloads.config import ConfigError
    p = tmp_path / "pkt.toml"
    p.write_text(PKT.format(reps=2).replace('backend = "mininet"', 'backend = "fluid"'))
    with pytest.raises(ConfigError, match="repetitions"):
        load_experiment(p, full=False)
    p.write_text(PKT.format(reps=0))
    with pytest.raises(ConfigError, match="repetitions: must be >= 1"):
        load_experiment(p, full=False)
