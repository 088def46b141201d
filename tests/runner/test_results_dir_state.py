"""run_experiments.py and a results directory it has written before: what the runner says
about a run whose config changed, and what it does with what a killed runner left."""
import json
import shutil
import subprocess

import pytest

from emulation import store
from tests.helpers import child_pids
from tests.runner.test_runner_checks import executed, runner, write


@pytest.mark.slow
def test_a_different_run_says_what_changed(tmp_path):
    """One run with 2 apps of max_resource 3, then the file asks for 3 apps of max_resource
    9 and a new description: the dry run and the refusal name the two workload keys with
    their recorded and new values, not the description (a label)."""
    cfg, out = write(tmp_path, wl_hosts=8), tmp_path / "res"
    assert runner("--config", cfg, "--out", out, "--jobs", "1", "--no-analysis").returncode == 0
    cfg.write_text(cfg.read_text().replace("num_apps = 2", "num_apps = 3")
                   .replace("max_resource = 3", "max_resource = 9")
                   .replace("seeds = [1]", 'seeds = [1]\ndescription = "bigger"'))
    changed = "workload.max_resource 3 -> 9, workload.num_apps 2 -> 3"
    r = runner("--config", cfg, "--out", out, "--dry-run")
    assert r.returncode == 2
    line = r.stdout.splitlines()[0]
    assert line.startswith("one/policy=fair,seed=1  (different run"), line
    assert f"changed: {changed};" in line and "--force" in line, line
    assert "description" not in line, line  # a label, not a change of the run
    r = runner("--config", cfg, "--out", out, "--no-analysis")
    assert r.returncode == 2
    assert r.stderr.startswith(f"error: {out}/one/policy=fair,seed=1 holds a different run "
                               f"(changed: {changed}; config hash ")


def test_config_changes_lists_leaves_and_counts_the_rest(tmp_path):
    """Hand-made configs: a nested value changed, a key added, a key removed and a label
    changed; with limit 2 the first two in key order are shown and the third counted."""
    from runner.config import load_experiment
    from runner.results_dir import config_changes
    [spec] = load_experiment(write(tmp_path, wl_hosts=8), full=False)
    stored = json.loads(json.dumps(spec.config))
    stored["topology"]["link_rate_bps"] = 1.0
    stored["workload"]["num_apps"] = 5
    stored["workload"]["old_key"] = [1, 2]
    stored["experiment_cfg"]["description"] = "another label"
    stored["experiment_cfg"]["seeds"] = [7]
    stored["config_hash"] = "0" * 16
    d = tmp_path / "res" / spec.experiment / spec.name
    d.mkdir(parents=True)
    (d / "run_config.json").write_text(json.dumps(stored))
    new_rate = json.dumps(spec.topology["link_rate_bps"])
    assert config_changes(spec, tmp_path / "res") == (
        f"topology.link_rate_bps 1.0 -> {new_rate}, workload.num_apps 5 -> 2, "
        "workload.old_key [1, 2] -> (none)")
    assert config_changes(spec, tmp_path / "res", limit=2) == (
        f"topology.link_rate_bps 1.0 -> {new_rate}, workload.num_apps 5 -> 2, 1 more")
    (d / "run_config.json").write_text("{not json")
    assert config_changes(spec, tmp_path / "res") == ""


def _records(run) -> tuple:
    """A run's records, loose or packed: run.json, run_config.json, stages and coflows."""
    return (store.read_text(run / "run.json"), store.read_text(run / "run_config.json"),
            store.read_table(run / "stages.csv").to_csv(),
            store.read_table(run / "coflows.csv").to_csv())


def _loose(exp_dir) -> None:
    """Leave an experiment's runs loose, as a runner writes them before it packs them."""
    for run in store.packed_runs(exp_dir):
        store.unpack(exp_dir / run)
    for p in [*exp_dir.glob(f"*{store.SUFFIX}"), exp_dir / store.INDEX_FILE]:
        p.unlink()


def _listing(exp_dir) -> list[str]:
    """An experiment directory's entries but its packed records (emulation.store)."""
    return sorted(p.name for p in exp_dir.iterdir()
                  if p.suffix != store.SUFFIX and p.name != store.INDEX_FILE)


def _dead_pid() -> int:
    """The process id of a child that has exited (not running any more)."""
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def test_what_a_killed_runner_left_is_removed_or_put_back(tmp_path):
    """A run, then what a runner killed mid-write leaves: a temporary run directory
    without run_config.json (an unfinished run), a temporary trace file, and the run itself
    renamed aside by a replacement killed between its two renames. The dry run notes the
    three, lists the run as done (what the run will find once it is put back) and changes
    nothing; a run puts the renamed run back in place (done, records unchanged, nothing
    executed) and removes the other two, but not the temporary directory of a process
    that still runs (this one)."""
    import os

    import run_experiments as rx
    cfg, out = write(tmp_path, wl_hosts=8), tmp_path / "res"
    args = ["--config", str(cfg), "--out", str(out), "--jobs", "1", "--no-analysis"]
    assert rx.main(args) == 0
    _loose(out / "one")
    run = out / "one" / "policy=fair,seed=1"
    records = _records(run)
    dead = _dead_pid()
    (out / "one" / f".tmp-policy=fair,seed=2-{dead}").mkdir()
    (out / "one" / f".tmp-policy=fair,seed=2-{dead}" / "flows.csv").write_text("x\n")
    (out / "one" / "traces" / f".abc.json.{dead}.tmp").write_text("{")
    live = out / "one" / f".tmp-policy=fair,seed=3-{os.getpid()}"
    live.mkdir()
    os.replace(run, out / "one" / f".old-policy=fair,seed=1-{dead}")
    r = runner("--config", cfg, "--out", out, "--dry-run")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 3, lines
    note, listed, last = lines
    assert note.startswith(f"note: 3 files or directories left by interrupted runs under "
                           f"{out} "), note
    assert f"one/.old-policy=fair,seed=1-{dead}" in note, note
    assert "1 whole run put back in place, the rest removed" in note, note
    assert listed == "one/policy=fair,seed=1  (done)"
    assert last.startswith(f"1 run into {out}: 1 done") and last.endswith(", 0 to run"), last
    assert not run.exists()
    assert executed(args) == []
    assert _records(run) == records
    assert _listing(out / "one") == [live.name, "policy=fair,seed=1", "traces"]
    assert not list((out / "one" / "traces").glob(".*"))


@pytest.mark.slow
def test_a_replacement_killed_between_its_renames_keeps_the_new_run(tmp_path):
    """--force replaces a run of 2 apps by one of 3; the runner is killed after renaming
    the old run aside and before renaming the new one (whole, with its run_config.json)
    into place. The next run puts the new run in place (done, nothing executed) and
    removes the old one."""
    import os

    import run_experiments as rx
    cfg, out = write(tmp_path, wl_hosts=8), tmp_path / "res"
    args = ["--config", str(cfg), "--out", str(out), "--jobs", "1", "--no-analysis"]
    assert rx.main(args) == 0
    run = out / "one" / "policy=fair,seed=1"
    shutil.copytree(out, tmp_path / "res2")  # where the replacement is made
    cfg.write_text(cfg.read_text().replace("num_apps = 2", "num_apps = 3"))
    assert rx.main([*args[:3], str(tmp_path / "res2"), *args[4:], "--force"]) == 0
    made = store.unpack(tmp_path / "res2" / "one" / run.name)  # the new run, loose
    new = _records(made)
    assert new != _records(run)
    dead = _dead_pid()
    os.replace(store.unpack(run), out / "one" / f".old-policy=fair,seed=1-{dead}")
    os.replace(made, out / "one" / f".tmp-policy=fair,seed=1-{dead}")
    r = runner("--config", cfg, "--out", out, "--dry-run")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[1] == "one/policy=fair,seed=1  (done)"
    assert executed(args) == []
    assert _records(run) == new
    assert _listing(out / "one") == ["policy=fair,seed=1", "traces"]


@pytest.mark.slow
def test_a_put_back_run_of_another_config_refuses_in_the_dry_run_too(tmp_path):
    """The config changed (2 -> 3 apps) and the old run sits renamed aside by a killed
    replacement: the dry run and the run both name the different run (put back first) and
    exit 2."""
    import os
    cfg, out = write(tmp_path, wl_hosts=8), tmp_path / "res"
    assert runner("--config", cfg, "--out", out, "--jobs", "1", "--no-analysis").returncode == 0
    os.replace(out / "one" / "policy=fair,seed=1",
               out / "one" / f".old-policy=fair,seed=1-{_dead_pid()}")
    cfg.write_text(cfg.read_text().replace("num_apps = 2", "num_apps = 3"))
    dry = runner("--config", cfg, "--out", out, "--dry-run")
    assert dry.returncode == 2
    line = dry.stdout.splitlines()[1]
    assert line.startswith("one/policy=fair,seed=1  (different run"), line
    assert "changed: workload.num_apps 2 -> 3;" in line and "--force" in line, line
    real = runner("--config", cfg, "--out", out, "--no-analysis")
    assert real.returncode == 2 and real.stderr == dry.stderr


def test_a_changed_tenant_is_named_by_its_index():
    """Lists of tables (tenants) are compared item by item; other lists whole."""
    from runner.results_dir import _flat
    assert _flat({"w": {"tenants": [{"eta": 3}, {"eta": 4, "a": None}]}, "seeds": [1, 2],
                  "empty": []}) == {"w.tenants[0].eta": 3, "w.tenants[1].eta": 4,
                                    "w.tenants[1].a": None, "seeds": [1, 2], "empty": []}


def _alive(pid: int) -> bool:
    from emulation.lifetime import process_start_ticks
    return process_start_ticks(pid) is not None


@pytest.mark.slow
def test_workers_die_with_a_runner_killed_outright_and_a_rerun_completes(tmp_path):
    """A runner with two worker processes is SIGKILLed while its runs are being written: its
    workers exit too (they do not finish the runs queued for them and wait forever), and
    the next run clears what they left and makes every run, as one uninterrupted run
    would."""
    import os
    import signal
    import time
    from tests.conftest import PYTHON, REPO
    cfg = tmp_path / "kill.toml"
    cfg.write_text('[experiment]\nname = "kill"\npolicies = ["fair", "sincronia", "beamer"]\n'
                   'seeds = [1, 2, 3]\n\n[workload]\nalgorithm = "hyperband"\nnum_apps = 40\n'
                   'num_hosts = 32\n')
    out = tmp_path / "res"
    workers: list[int] = []
    proc = subprocess.Popen([PYTHON, "run_experiments.py", "--config", str(cfg), "--out",
                             str(out), "--jobs", "2", "--no-analysis"], cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        def writing() -> bool:  # a run being written or the first one made
            return bool(list(out.glob("kill/.tmp-*")) or list(out.glob("kill/policy=*")))
        deadline = time.time() + 120
        while not writing() and time.time() < deadline:
            time.sleep(0.005)
        workers = child_pids(proc.pid)
        assert writing() and len(workers) == 2, "no run written in 120 s"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        deadline = time.time() + 30
        while any(map(_alive, workers)) and time.time() < deadline:
            time.sleep(0.1)
        assert not any(map(_alive, workers)), "workers outlived the runner"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for w in workers:  # the runner's own workers, should they have outlived it
            if _alive(w):
                os.kill(w, signal.SIGKILL)
    made = len([d for d in store.run_dirs(out) if d.parent.name == "kill"])
    assert made < 9  # the kill interrupted the runs
    r = runner("--config", cfg, "--out", out, "--jobs", "2", "--no-analysis")
    assert r.returncode == 0, r.stderr
    assert [d.name for d in store.run_dirs(out)] == sorted(
        [f"policy={p},seed={s}" for p in ("fair", "sincronia", "beamer") for s in (1, 2, 3)])
    # all packed (a run's directory keeps only its flows.csv), nothing left aside
    assert not [d for d in (out / "kill").iterdir() if d.name.startswith(".") or store.is_loose(d)]
    r = runner("--config", cfg, "--out", out, "--dry-run")
    last = r.stdout.splitlines()[-1]
    assert last.startswith(f"9 runs into {out}: 9 done") and last.endswith(", 0 to run"), last


def test_a_zombie_process_id_is_not_a_running_writer():
    """A child that has exited but is not reaped yet (a zombie) cannot be writing: what it
    left is cleared; a live process (this one) is running."""
    import os
    from runner.results_dir import _pid_running
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    try:
        os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)  # exited, not reaped
        assert os.path.exists(f"/proc/{pid}")  # not reaped: still a process id
        assert not _pid_running(pid)
        assert _pid_running(os.getpid())
    finally:
        os.waitpid(pid, 0)
    assert not _pid_running(pid)


@pytest.mark.slow
def test_reference_may_name_the_policy_of_a_run_that_is_put_back(tmp_path):
    """The only `fair` run sits renamed aside by a killed replacement and the config now
    asks for Sincronia: the run puts the `fair` run back before the analysis reads the
    directory, so --reference fair is accepted (checked in a dry run, which changes
    nothing); a policy no run has is refused, naming both in registry order. --cdf takes
    that run's experiment, and its error lists the configs' experiments first."""
    import os
    cfg, out = write(tmp_path, wl_hosts=8), tmp_path / "res"
    assert runner("--config", cfg, "--out", out, "--jobs", "1", "--no-analysis").returncode == 0
    _loose(out / "one")
    aside = out / "one" / f".old-policy=fair,seed=1-{_dead_pid()}"
    os.replace(out / "one" / "policy=fair,seed=1", aside)
    cfg.write_text(cfg.read_text().replace('policies = ["fair"]', 'policies = ["sincronia"]'))
    r = runner("--config", cfg, "--out", out, "--dry-run", "--reference", "fair")
    assert r.returncode == 0, r.stderr
    assert "one/policy=fair,seed=1" not in r.stdout  # not a run of the config
    assert aside.is_dir()
    r = runner("--config", cfg, "--out", out, "--dry-run", "--reference", "varys")
    assert r.returncode == 2
    assert (f"--reference varys: not a policy of these runs or of {out} (sincronia, fair)"
            in r.stderr)
    # the put-back run's experiment for --cdf, from a config of another experiment
    other = tmp_path / "other.toml"
    other.write_text(cfg.read_text().replace('name = "one"', 'name = "zother"'))
    r = runner("--config", other, "--out", out, "--dry-run", "--cdf", "one")
    assert r.returncode == 0, r.stderr
    r = runner("--config", other, "--out", out, "--dry-run", "--cdf", "nope")
    assert r.returncode == 2
    assert (f"--cdf nope: not an experiment of these runs or of {out} (zother, one)"
            in r.stderr), r.stderr


INTERRUPT_AT_RUN = """
import os, signal, sys, time
# a terminal's foreground command: Ctrl-C is delivered even where the test runner itself
# was started with SIGINT ignored (a shell's background job)
signal.signal(signal.SIGINT, signal.default_int_handler)
import run_experiments as r
import emulation.fluid.backend as fluid_backend
from workloads.cli import run_cli

real = fluid_backend.execute


def fluid(request):
    run = real(request)
    if request.extra["run_name"] == os.environ["INTERRUPT_AT"]:
        os.killpg(os.getpgrp(), signal.SIGINT)  # Ctrl-C in a terminal: the whole group
        time.sleep(60)  # a long run the runner must stop, not wait for
    return run


fluid_backend.execute = fluid
run_cli(lambda: r.main(sys.argv[1:]), interrupted=r.INTERRUPTED)
"""


@pytest.mark.slow
def test_ctrl_c_stops_the_runner_and_its_workers_with_one_line(tmp_path):
    """Ctrl-C (SIGINT to the runner's process group) while a worker is inside a run: the
    runner stops its workers (no queued run starts, the one in progress is not waited
    for), prints its one-line message without a traceback and exits 130; no process of
    the group is left; the next run completes the rest."""
    import os
    import signal
    import time

    import run_experiments as rx
    from tests.conftest import PYTHON, REPO
    cfg = tmp_path / "int.toml"
    cfg.write_text('[experiment]\nname = "int"\npolicies = ["fair", "sincronia", "beamer"]\n'
                   'seeds = [1, 2, 3]\n\n[workload]\nnum_apps = 2\nmax_resource = 3\n'
                   'num_hosts = 8\n')
    out = tmp_path / "res"
    t0 = time.time()
    proc = subprocess.Popen([PYTHON, "-c", INTERRUPT_AT_RUN, "--config", str(cfg), "--out",
                             str(out), "--jobs", "2", "--no-analysis"], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True,
                            env={**os.environ, "INTERRUPT_AT": "policy=sincronia,seed=2",
                                 "PYTHONPATH": str(REPO)})
    try:
        _, err = proc.communicate(timeout=50)
    finally:
        if proc.poll() is None:  # only this test's own group
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert time.time() - t0 < 45, "the runner waited for the interrupted run"
    assert proc.returncode == 130, err
    assert "Traceback" not in err, err
    assert err.strip().splitlines()[-1] == rx.INTERRUPTED
    deadline, left = time.time() + 10, True
    while left and time.time() < deadline:
        try:
            os.killpg(proc.pid, 0)  # any process of the runner's group still there?
            time.sleep(0.1)
        except ProcessLookupError:
            left = False
    assert not left, "a worker outlived the interrupted runner"
    done = [d.name for d in (out / "int").iterdir() if d.name.startswith("policy=")]
    assert "policy=sincronia,seed=2" not in done and len(done) < 9
    r = runner("--config", cfg, "--out", out, "--jobs", "2", "--no-analysis")
    assert r.returncode == 0, r.stderr
    assert f"{len(done)} already done, {9 - len(done)} to run" in r.stdout
