"""run_experiments.py: what is checked while the runs are collected (before any run, in
``--dry-run`` too: topologies against the trace's hosts, labels and run lists; config
values and keys are in ``test_config_checks.py``), and what a run that fails leaves in
the results directory."""
import json
import re
import subprocess

import pytest

from tests.conftest import PYTHON, REPO
from emulation import store

ONE = """
[experiment]
name = "one"
policies = ["fair"]
seeds = [1]
{experiment}

[workload]
num_apps = 2
max_resource = 3
num_hosts = {wl_hosts}
gpu_mix = {{ "2" = 1.0, "4" = 1.0 }}
{workload}

[topology]
{topology}
"""


def write(tmp_path, *, wl_hosts=16, topology="", experiment="", workload="", extra=""):
    p = tmp_path / "one.toml"
    p.write_text(ONE.format(wl_hosts=wl_hosts, topology=topology, experiment=experiment,
                            workload=workload) + extra)
    return p


def runner(*args):
    return subprocess.run([PYTHON, "run_experiments.py", *map(str, args)], cwd=REPO,
                          capture_output=True, text=True)


def executed(args) -> list[str]:
    """Run ``run_experiments.main(args)`` (it must exit 0) and return the names of the runs
    it executed (not the ones it found done or copied)."""
    import run_experiments as rx
    import runner.execute as rexec
    calls = []
    real = rexec.execute
    rexec.execute = lambda spec, *a: calls.append(spec.name) or real(spec, *a)
    try:
        assert rx.main(args) == 0
    finally:
        rexec.execute = real
    return calls


LEAF8 = 'kind = "leaf_spine"\nhosts_per_leaf = 4\nnum_hosts = 8'


# --- a topology short of the workload's hosts ---

@pytest.mark.slow
@pytest.mark.parametrize("dry", [True, False])
def test_topology_short_of_the_workloads_hosts_fails_before_any_run(tmp_path, dry):
    """16 workload hosts h0..h15 on a leaf-spine of topology.num_hosts = 8 with 4 hosts per
    leaf: 2 leaves, hosts h0..h7, so h8..h15 are missing. One error line naming the file
    and both keys, exit 2, nothing written (the dry run did list it as "to run" before)."""
    cfg, out = write(tmp_path, topology=LEAF8), tmp_path / "res"
    r = runner("--config", cfg, "--out", out, *(["--dry-run"] if dry else []))
    assert r.returncode == 2
    assert len(r.stderr.splitlines()) == 1, r.stderr
    [err] = r.stderr.splitlines()
    assert err.startswith(f"error: {cfg}: topology.num_hosts = 8: "), err
    assert "uses hosts h8..h15 (workload.num_hosts = 16)" in err, err
    assert "the leaf_spine with 8 hosts" in err and "leave topology.num_hosts out" in err, err
    assert err.endswith("at least 16"), err
    assert r.stdout == "" and not out.exists()


@pytest.mark.slow
@pytest.mark.parametrize("topology,kind", [(LEAF8, "leaf_spine"), ("num_hosts = 8", "big_switch")])
def test_the_fluid_cli_reports_the_same_mistake_the_same_way(tmp_path, topology, kind):
    """``python -m emulation.fluid`` on the generated 16-host trace with the file's
    topology.num_hosts = 8: the runner's message (every missing host h8..h15, in order),
    with the TOML file that set the key in front and the trace file as the hosts' source;
    exit 2, one error line."""
    cfg = write(tmp_path, topology=topology)
    trace = tmp_path / "t.json"
    assert subprocess.run([PYTHON, "-m", "workloads", "generate", str(cfg), "-o", str(trace)],
                          cwd=REPO, capture_output=True).returncode == 0
    r = subprocess.run([PYTHON, "-m", "emulation.fluid", str(trace), "--config", str(cfg),
                        "--policy", "fair", "-o", str(tmp_path / "f"), "--no-progress"],
                       cwd=REPO, capture_output=True, text=True)
    assert r.returncode == 2
    [err] = [line for line in r.stderr.splitlines() if line.startswith("error:")]
    assert err.startswith(f"error: {cfg}: topology.num_hosts = 8: "), err
    assert f"uses hosts h8..h15 ({trace}: 16 hosts)" in err, err
    assert f"the {kind} with 8 hosts" in err and "leave topology.num_hosts out" in err, err
    assert err.endswith("at least 16"), err


@pytest.mark.parametrize("topo_hosts,missing", [(12, r"h12\.\.h15"), (13, r"h13\.\.h15"),
                                                (16, None)])
def test_a_leaf_spine_holds_the_trace_in_the_hosts_asked_for(tmp_path, topo_hosts, missing):
    """16 workload hosts, 4 per leaf. topology.num_hosts = 12: 3 leaves, h12..h15 missing.
    13: 4 leaves and 16 hosts, but h13..h15 only fill the last leaf up (the note calls
    them idle), so the trace's h13..h15 are missing too. 16: every host is there."""
    from runner.config import load_experiment
    from workloads.config import ConfigError
    cfg = write(tmp_path, topology=f'kind = "leaf_spine"\nhosts_per_leaf = 4\n'
                                   f'num_hosts = {topo_hosts}')
    if missing is None:
        assert len(load_experiment(cfg, full=False)) == 1
    else:
        with pytest.raises(ConfigError, match=rf"uses hosts {missing} \(workload.num_hosts = "
                                              rf"16\) that the leaf_spine with {topo_hosts} hosts"):
            load_experiment(cfg, full=False)


def test_the_error_names_the_sweep_point(tmp_path):
    """A big switch of 8 hosts: the sweep point with 8 workload hosts is fine, the one
    with 12 is not (h8..h11 missing)."""
    from runner.config import load_experiment
    from workloads.config import ConfigError
    cfg = write(tmp_path, wl_hosts=8, topology="num_hosts = 8",
                extra='[sweep]\n"workload.num_hosts" = [8, 12]\n')
    with pytest.raises(ConfigError) as exc:
        load_experiment(cfg, full=False)
    assert str(exc.value).startswith(f"{cfg}: topology.num_hosts = 8: the trace uses hosts "
                                     "h8..h11 (workload.num_hosts = 12) that the big_switch")
    assert str(exc.value).endswith("at the sweep point num_hosts=12")


def test_a_trace_file_short_of_hosts_is_caught_from_its_header(tmp_path):
    """A coflow-benchmark file of 150 ports on topology.num_hosts = 100: h100..h149 missing."""
    from runner.config import load_experiment
    from workloads.config import ConfigError
    cfg = tmp_path / "fb.toml"
    cfg.write_text(f'[experiment]\nname = "fb"\npolicies = ["fair"]\n'
                   f'trace = "{REPO / "data" / "FB2010-1Hr-150-0.txt"}"\n'
                   '[topology]\nnum_hosts = 100\n')
    with pytest.raises(ConfigError, match=r"uses hosts h100\.\.h149 \(experiment.trace .*: "
                                          r"150 hosts\) that the big_switch with 100 hosts"):
        load_experiment(cfg, full=False)


# --- a run that fails inside ---

def _failing(monkeypatch):
    """Make every fluid run write part of its records, then raise."""
    import emulation.fluid.backend as fluid_backend

    def execute(request):
        request.outdir.mkdir(parents=True)
        (request.outdir / "run.json").write_text("{}")
        raise RuntimeError("simulator failed")

    monkeypatch.setattr(fluid_backend, "execute", execute)


def test_a_failing_run_leaves_no_directory_and_reruns(tmp_path, monkeypatch):
    import run_experiments as rx
    from runner.config import load_experiment
    from runner.results_dir import RunStatus, committed_runs, run_status
    cfg, out = write(tmp_path, wl_hosts=8), tmp_path / "res"
    [spec] = load_experiment(cfg, full=False)
    args = ["--config", str(cfg), "--out", str(out), "--jobs", "1", "--no-analysis"]
    with monkeypatch.context() as m:
        _failing(m)
        with pytest.raises(RuntimeError, match="simulator failed"):
            rx.main(args)
    assert sorted(p.name for p in (out / "one").iterdir()) == ["traces"]  # whole files only
    assert not list((out / "one" / "traces").glob(".*"))
    assert run_status(spec, out) == RunStatus("to run", None) and committed_runs(out) == []
    assert rx.main(args) == 0
    assert run_status(spec, out) == RunStatus("done", spec.config_hash)
    assert store.has(out / "one" / spec.name / "stages.csv")


def test_a_failing_replacement_keeps_the_older_run(tmp_path, monkeypatch):
    """--force over a run of another config (K = 8 -> 4) whose new run fails: the K = 8
    run is still there, whole, and still a different run."""
    import run_experiments as rx
    from runner.config import load_experiment
    from runner.results_dir import RunStatus, run_status
    cfg, out = write(tmp_path, wl_hosts=8), tmp_path / "res"
    args = ["--config", str(cfg), "--out", str(out), "--jobs", "1", "--no-analysis"]
    assert rx.main(args) == 0
    [old] = load_experiment(cfg, full=False)
    d = out / "one" / old.name

    def records():
        return (store.read_text(d / "run.json"), store.read_text(d / "run_config.json"),
                store.read_table(d / "stages.csv").to_csv(), sorted(d.iterdir()))
    before = records()
    cfg.write_text(cfg.read_text().replace("seeds = [1]", "seeds = [1]\npriority_classes = 4"))
    [new] = load_experiment(cfg, full=False)
    with monkeypatch.context() as m:
        _failing(m)
        with pytest.raises(RuntimeError):
            rx.main([*args, "--force"])
    assert records() == before
    assert run_status(new, out) == RunStatus("different", old.config_hash)
    assert not [p.name for p in (out / "one").iterdir() if p.name.startswith(".")]


def test_a_run_recorded_under_another_reallocation_mode_is_a_different_run(
        tmp_path, monkeypatch, capsys):
    """Same config hash, but the policy's default_realloc changed since the run (fair made
    a coflow-level priority policy: realloc "policy" resolves to queues, the run recorded
    flow): the run is a different run, the dry run and the refusal say which modes, and
    --force reruns it under the new mode."""

    import run_experiments as rx
    from emulation.scheduler import POLICIES
    from runner.config import load_experiment
    from runner.results_dir import RunStatus, resolved_realloc, run_status
    cfg, out = write(tmp_path, wl_hosts=8), tmp_path / "res"
    args = ["--config", str(cfg), "--out", str(out), "--jobs", "1", "--no-analysis"]
    assert rx.main(args) == 0
    [spec] = load_experiment(cfg, full=False)
    run_json = out / "one" / spec.name / "run.json"
    assert store.read_json(run_json)["realloc"] == "flow"
    assert run_status(spec, out) == RunStatus("done", spec.config_hash)
    with monkeypatch.context() as m:
        m.setitem(POLICIES, "fair", type("Fair", (POLICIES["fair"],), {"default_realloc": "coflow"}))
        assert resolved_realloc(spec) == "queues"
        assert run_status(spec, out) == RunStatus("different", spec.config_hash,
                                                  recorded_realloc="flow")
        capsys.readouterr()
        assert rx.main([*args, "--dry-run"]) == 2
        got = capsys.readouterr()
        assert (f"one/{spec.name}  (different run: recorded under realloc flow, this config's "
                "is realloc queues; --force replaces it)") in got.out
        assert "holds a run recorded under realloc flow, and this config runs fair under " \
               "realloc queues" in got.err
        assert rx.main([*args, "--force"]) == 0
        assert store.read_json(run_json)["realloc"] == "queues"
        assert run_status(spec, out) == RunStatus("done", spec.config_hash)
    # the registry restored
    assert run_status(spec, out) == RunStatus("different", spec.config_hash,
                                              recorded_realloc="queues")


def test_commit_keeps_the_older_run_when_the_rename_fails(tmp_path, monkeypatch):
    import os
    import runner.execute as rexec
    from runner.config import load_experiment
    [spec] = load_experiment(write(tmp_path, wl_hosts=8), full=False)
    final, tmp = tmp_path / "one" / spec.name, tmp_path / "one" / ".tmp-x"
    final.mkdir(parents=True)
    (final / "run_config.json").write_text('{"config_hash": "old"}')
    tmp.mkdir()
    (tmp / "run.json").write_text("{}")
    real = os.replace

    def replace(src, dst):
        if src == tmp:
            raise OSError("disk full")
        return real(src, dst)

    monkeypatch.setattr(rexec.os, "replace", replace)
    with pytest.raises(OSError, match="disk full"):
        rexec._commit_run_dir(spec, tmp, final)
    monkeypatch.undo()
    assert store.read_json(final / "run_config.json") == {"config_hash": "old"}
    assert sorted(p.name for p in final.parent.iterdir()) == [".tmp-x", spec.name]


def test_directories_starting_with_a_dot_are_not_runs(tmp_path):
    from runner.results_dir import committed_runs
    for name in (".tmp-a-1", ".old-a-1", "a"):
        (tmp_path / "e" / name).mkdir(parents=True)
        (tmp_path / "e" / name / "run_config.json").write_text("{}")
    assert committed_runs(tmp_path) == [tmp_path / "e" / "a"]


# --- labels: description and figure ---

@pytest.mark.slow
def test_editing_only_the_description_or_figure_keeps_every_run_done(tmp_path):
    """A tiny experiment (2 sweep points x 2 policies x 1 seed = 4 runs) is run, then its
    [experiment] gets a description and figure = "line" (README step 2). The dry run lists
    all 4 as done; a plain run (no --force) runs nothing, rewrites the labels and the
    config hash in run_config.json and run.json, keeps the records, and the analysis
    reads the new figure kind."""
    import run_experiments as rx
    from analysis.load import load_runs
    from runner.config import load_experiment
    cfg, out = write(tmp_path, wl_hosts=8,
                     extra='[sweep]\n"workload.sync_pattern" = ["ring", "ps"]\n'), tmp_path / "res"
    cfg.write_text(cfg.read_text().replace('policies = ["fair"]', 'policies = ["fair", "beamer"]'))
    args = ["--config", str(cfg), "--out", str(out), "--jobs", "1", "--no-analysis"]
    assert rx.main(args) == 0
    old = {s.name: s for s in load_experiment(cfg, full=False)}
    assert len(old) == 4
    records = _tables(out / "one")
    assert len(records) == 4
    cfg.write_text(cfg.read_text().replace(
        'seeds = [1]', 'seeds = [1]\ndescription = "four runs"\nfigure = "line"'))
    new = {s.name: s for s in load_experiment(cfg, full=False)}
    assert all(new[n].config_hash != old[n].config_hash for n in new)  # the labels are hashed
    assert all(new[n].run_key == old[n].run_key for n in new)          # but not in the key
    r = runner("--config", cfg, "--out", out, "--dry-run")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert [line.split("  (")[0] for line in lines[:-1]] == [f"one/{n}" for n in new]
    for line in lines[:-1]:
        assert "  (done; " in line and "experiment.description, experiment.figure:" in line, line
        assert line.endswith("rewritten by a run)"), line
    last = lines[-1]
    assert last.startswith(f"4 runs into {out}: 4 done") and last.endswith(", 0 to run"), last
    assert "4 of them record another [experiment] description" in last, last
    assert "which a run rewrites" in last, last
    assert all(store.read_json(out / "one" / n / "run_config.json")["config_hash"]
               == old[n].config_hash for n in new)  # the dry run wrote nothing
    assert executed(args) == []
    for n, spec in new.items():
        stored = store.read_json(out / "one" / n / "run_config.json")
        assert stored["config_hash"] == spec.config_hash
        assert stored["experiment_cfg"]["description"] == "four runs"
        assert stored["experiment_cfg"]["figure"] == "line"
        assert store.read_json(out / "one" / n / "run.json")["config_hash"] == spec.config_hash
    assert _tables(out / "one") == records
    assert set(load_runs(out)["figure"]) == {"line"}
    r = runner("--config", cfg, "--out", out, "--dry-run")
    last = r.stdout.splitlines()[-1]
    assert last.startswith(f"4 runs into {out}: 4 done") and last.endswith(", 0 to run"), last
    assert "record another" not in last, last  # the labels rewritten: nothing left to note


@pytest.mark.slow
def test_adding_a_policy_and_a_seed_runs_only_the_new_runs(tmp_path):
    """One run (fair, seed 1), then the file lists beamer and seed 2 too: the dry run
    calls the first run done (its run list rewritten by a run) and the three new ones to
    run; a run without --force runs exactly those three and keeps the first's records,
    writing the new lists into its run_config.json."""
    import run_experiments as rx
    cfg, out = write(tmp_path, wl_hosts=8), tmp_path / "res"
    args = ["--config", str(cfg), "--out", str(out), "--jobs", "1", "--no-analysis"]
    assert rx.main(args) == 0
    first = out / "one" / "policy=fair,seed=1"
    records = _tables(out / "one")[first.name]
    cfg.write_text(cfg.read_text().replace('policies = ["fair"]', 'policies = ["fair", "beamer"]')
                   .replace("seeds = [1]", "seeds = [1, 2]"))
    r = runner("--config", cfg, "--out", out, "--dry-run")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 5, lines
    first_line, *to_run, last = lines
    assert first_line.startswith("one/policy=fair,seed=1  (done; "), first_line
    assert "experiment.policies, experiment.seeds:" in first_line, first_line
    assert first_line.endswith("rewritten by a run)"), first_line
    assert to_run == ["one/policy=beamer,seed=1  (to run)", "one/policy=fair,seed=2  (to run)",
                      "one/policy=beamer,seed=2  (to run)"]
    assert last.startswith(f"4 runs into {out}: 1 done") and last.endswith(", 3 to run"), last
    assert "1 of them records another [experiment]" in last and "which a run rewrites" in last, last
    calls = executed(args)
    assert sorted(calls) == ["policy=beamer,seed=1", "policy=beamer,seed=2", "policy=fair,seed=2"]
    assert _tables(out / "one")[first.name] == records
    stored = store.read_json(first / "run_config.json")
    assert stored["experiment_cfg"]["policies"] == ["fair", "beamer"]
    assert stored["experiment_cfg"]["seeds"] == [1, 2]


def _tables(exp_dir) -> dict:
    """Run name -> its stages and coflows tables as CSV text, loose or packed."""
    return {d.name: tuple(store.read_table(d / f"{k}.csv").to_csv(index=False)
                          for k in ("stages", "coflows"))
            for d in store.run_dirs(exp_dir.parent) if d.parent == exp_dir}


def test_run_key_leaves_out_only_the_labels_and_run_lists(tmp_path):
    """description, figure, seed_sets and the lists of policies, seeds and repetitions do not change
    run_key; name, K, realloc and the run's own seed and policy do; the key read back from
    a run_config.json is the spec's."""
    import dataclasses
    from runner.config import COSMETIC_EXPERIMENT_KEYS, RUN_LIST_EXPERIMENT_KEYS, run_key
    from runner.config import load_experiment
    [spec] = load_experiment(write(tmp_path, wl_hosts=8), full=False)
    assert COSMETIC_EXPERIMENT_KEYS == ("description", "figure", "seed_sets")
    assert RUN_LIST_EXPERIMENT_KEYS == ("policies", "seeds", "repetitions")

    def with_exp(**kw):
        return dataclasses.replace(spec, experiment_cfg={**spec.experiment_cfg, **kw})

    assert with_exp(description="x", figure="line",
                    seed_sets={"evaluation": [1]}).run_key == spec.run_key
    assert with_exp(policies=["fair", "beamer"], seeds=[1, 2], repetitions=3).run_key == spec.run_key
    for kw in ({"name": "two"}, {"priority_classes": 4}, {"realloc": "flow"}):
        assert with_exp(**kw).run_key != spec.run_key, kw
    assert dataclasses.replace(spec, seed=2).run_key != spec.run_key
    assert dataclasses.replace(spec, policy="beamer").run_key != spec.run_key
    stored = json.loads(json.dumps({**spec.config, "config_hash": spec.config_hash}))
    assert run_key(stored) == spec.run_key


# --- hosts no flow can use: a larger num_hosts, a leaf-spine's filled last leaf ---

@pytest.mark.slow
def test_hosts_a_leaf_spine_adds_are_named_in_a_note(tmp_path):
    """16 hosts, 5 per leaf: ceil(16 / 5) = 4 leaves l0..l3, 20 hosts; h16..h19 fill l3
    up (beside h15) and carry no traffic. One note on stderr, in the dry run too; the run
    goes ahead and the note is not a results note (no NOTES.md)."""
    cfg, out = write(tmp_path, topology='kind = "leaf_spine"\nhosts_per_leaf = 5'), tmp_path / "res"
    r = runner("--config", cfg, "--out", out, "--dry-run")
    assert r.returncode == 0 and len(r.stderr.splitlines()) == 1, r.stderr
    [note] = r.stderr.splitlines()
    assert note.startswith(f"note: {cfg}: topology.hosts_per_leaf = 5 does not divide "), note
    assert "the 16 hosts (workload.num_hosts = 16)" in note, note
    assert "the leaf_spine has 4 leaves, 20 hosts" in note, note
    assert "the 4 added hosts h16..h19 on leaf l3 carry no traffic" in note, note
    assert "uplinks are sized for 5 hosts" in note, note
    r = runner("--config", cfg, "--out", out, "--jobs", "1", "--no-analysis")
    assert r.returncode == 0, r.stderr
    assert note in r.stderr.splitlines() and not (out / "NOTES.md").exists()
    assert store.has(out / "one" / "policy=fair,seed=1" / "stages.csv")


@pytest.mark.parametrize("topology,sweep,expected", [
    ('kind = "leaf_spine"\nhosts_per_leaf = 4', "", []),  # 16 = 4 x 4
    ('kind = "leaf_spine"\nhosts_per_leaf = 5\nnum_hosts = 18', "",
     ["topology.num_hosts = 18 is more than the trace's host count (workload.num_hosts = "
      "16): the 2 hosts h16..h17, not in the trace, carry no traffic; "
      "topology.hosts_per_leaf = 5 does not divide the 18 "
      "hosts (topology.num_hosts = 18): the leaf_spine has 4 leaves, 20 hosts; "
      "the 2 added hosts h18..h19 on leaf l3"]),
    ("num_hosts = 20", "", ["topology.num_hosts = 20 is more than the trace's host count "
                            "(workload.num_hosts = 16): the 4 hosts h16..h19, not in the "
                            "trace, carry no traffic"]),
    ("num_hosts = 17", "", ["topology.num_hosts = 17 is more than the trace's host count "
                            "(workload.num_hosts = 16): the host h16, not in the trace, "
                            "carries no traffic"]),
    ("num_hosts = 16", "", []),
    ('kind = "leaf_spine"\nhosts_per_leaf = 5', '"workload.num_hosts" = [16, 20]',
     ["the 16 hosts (workload.num_hosts = 16): the leaf_spine has 4 leaves, 20 hosts; "
      "the 4 added hosts h16..h19 on leaf l3"]),                      # 20 = 4 x 5: no note
    ('kind = "leaf_spine"\nhosts_per_leaf = 3', "",
     ["the 16 hosts (workload.num_hosts = 16): the leaf_spine has 6 leaves, 18 hosts; "
      "the 2 added hosts h16..h17 on leaf l5"]),
])
def test_which_topologies_have_hosts_without_traffic(tmp_path, topology, sweep, expected):
    from runner.config import expand_experiment
    cfg = write(tmp_path, topology=topology, extra=f"[sweep]\n{sweep}\n" if sweep else "")
    _, notes = expand_experiment(cfg, full=False)
    assert len(notes) == len(expected)
    for note, part in zip(notes, expected):
        assert part in note, note
    if sweep:
        assert notes[0].endswith("at the sweep point num_hosts=16")


def test_the_runner_readies_the_kernels_once_before_its_runs_and_not_without_runs(
        tmp_path, monkeypatch):
    """The runner compiles a missing or stale kernel cache itself, with the notice the
    single-run command line gives (``ensure_kernels``), once and before the first run
    starts; a dry run and a run with nothing left to do do not."""
    import emulation.fluid.run as fluid_run
    import runner.execute as rexec
    import run_experiments as rx
    events = []
    monkeypatch.setattr(fluid_run, "ensure_kernels",
                        lambda stream=None, **kw: events.append("kernels"))
    real = rexec.execute
    monkeypatch.setattr(rexec, "execute",
                        lambda spec, *a: events.append(spec.name) or real(spec, *a))
    cfg, out = write(tmp_path, wl_hosts=8), tmp_path / "res"
    args = ["--config", str(cfg), "--out", str(out), "--jobs", "1", "--no-analysis"]
    assert rx.main([*args, "--dry-run"]) == 0 and events == []
    assert rx.main(args) == 0
    assert events == ["kernels", "policy=fair,seed=1"]
    assert rx.main(args) == 0 and events == ["kernels", "policy=fair,seed=1"]  # all done


def test_a_leaf_spine_of_one_leaf_says_its_spines_carry_nothing():
    """16 hosts on leaves of 16 (or 32): one leaf, so no flow crosses a spine and a sweep
    of oversubscription or spines changes nothing: the note says so. Two leaves: no such
    words."""
    from emulation.topology import TopologyConfig
    from schema.point import check_topology_hosts
    hosts = tuple(f"h{i}" for i in range(16))
    one = check_topology_hosts(TopologyConfig(kind="leaf_spine", hosts_per_leaf=16), hosts,
                               hosts_key="workload.num_hosts = 16")
    assert one.startswith("the leaf_spine has one leaf (topology.hosts_per_leaf = 16 "), one
    assert "holds all 16 hosts" in one and "no flow crosses a spine" in one, one
    assert one.endswith("topology.oversubscription and topology.num_spines change nothing"), one
    padded = check_topology_hosts(TopologyConfig(kind="leaf_spine", hosts_per_leaf=32), hosts,
                                  hosts_key="workload.num_hosts = 16")
    assert "the leaf_spine has 1 leaf, 32 hosts" in padded and padded.endswith("change nothing")
    two = check_topology_hosts(TopologyConfig(kind="leaf_spine", hosts_per_leaf=8), hosts,
                               hosts_key="workload.num_hosts = 16")
    assert two is None


def test_the_suites_of_results():
    """The default suite holds only runs on a cluster with GPUs (or FB2010), the
    pinned-hosts ablation and the validation set the rest; in results/ each suite finds
    its runs done and names the others' committed runs, and --suite with --config is one
    line and exit 2."""
    from runner.config import SUITES, suite_configs
    default = [p.name for p in suite_configs()]
    packet = ("fb.toml", "testbed_gpus.toml", "validation_gpus.toml")
    assert set(packet) <= set(default)
    assert all(n.startswith("gpus_") for n in default if n not in packet)
    for suite in ("pinned-hosts", "validation"):
        assert {p.parent for p in suite_configs(suite)} == {SUITES[suite]}
    for suite in SUITES:
        r = runner("--dry-run", "--suite", suite)
        assert r.returncode == 0, r.stderr
        for other in set(SUITES) - {suite}:
            assert f"of the {other} suite (--suite {other})" in r.stdout
        assert re.search(r"^(\d+) runs into results: \1 done", r.stdout, re.M), r.stdout[-300:]
    r = runner("--dry-run", "--suite", "pinned-hosts", "--config", "experiments/fb.toml")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "not both" in r.stderr
