"""The admission rule as a run chooses it: the ``[cluster] admission`` key (three rules,
anything else refused in one line), how a trace carries it (one written before the key was
read as strict FIFO), what a run records, a run's identity (a key at its default leaves the
hash as it was), and first-fit's promise over a whole run: while a trial waits, it does not
fit the free GPUs."""
import json

import numpy as np
import pytest

from emulation import store
from emulation.admission_rules import ADMISSION_RULES
from emulation.fluid.run import run_fluid
from emulation.topology import big_switch
from runner.config import config_hash, identity
from workloads import trace as trace_mod
from workloads.cluster import ADMISSIONS, ClusterConfig
from workloads.config import ConfigError, build
from workloads.trace import App, Job, Stage, Trace


def test_the_cluster_table_takes_the_three_rules_and_refuses_any_other():
    assert set(ADMISSIONS) == set(ADMISSION_RULES)
    assert ClusterConfig().admission == "first_fit"
    for name in ADMISSIONS:
        assert build(ClusterConfig, {"admission": name}, "cluster").admission == name
    with pytest.raises(ConfigError, match="cluster.admission") as err:
        build(ClusterConfig, {"admission": "strict"}, "cluster")
    assert "first_fit" in str(err.value) and "\n" not in str(err.value)


@pytest.mark.slow
def test_a_bad_admission_in_an_experiment_file_is_one_line_and_exit_2(tmp_path):
    from tests.runner.test_runner_checks import runner, write
    cfg = write(tmp_path, wl_hosts=8, extra='\n[cluster]\nadmission = "sjf"\n')
    r = runner("--config", cfg, "--dry-run")
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1 and "cluster.admission" in r.stderr, r.stderr


def _jobs(gpus: list[int], compute_s: list[float]) -> tuple[Job, ...]:
    return tuple(Job(job_id=f"a0/s/t{i}", trial_id=f"a0/t{i}", model="m", pattern="ring",
                     hosts=(), iterations=1, compute_s=c, coflows=(), gpus=g,
                     model_size_bytes=0, ps_servers=0)
                 for i, (g, c) in enumerate(zip(gpus, compute_s)))


def _trace(cluster: dict, gpus: list[int], compute_s: list[float]) -> Trace:
    stage = Stage("a0/s", "a0", 1.0, (), _jobs(gpus, compute_s))
    return Trace(seed=3, endpoints="hosts", hosts=("h0", "h1"),
                 apps=(App("a0", 0.0, "random", (stage,)),), cluster=cluster)


def test_a_trace_without_an_admission_rule_reads_as_strict_fifo(tmp_path):
    old = {"gpus_per_host": 4, "placement": "pack", "max_concurrent_trials": 0}
    p = tmp_path / "t.json"
    trace_mod.save(_trace(old, [8, 2], [1.0, 1.0]), p)
    assert "admission" not in json.loads(p.read_text())["cluster"]
    assert trace_mod.load(p).cluster["admission"] == "fifo"
    trace_mod.save(_trace({**old, "admission": "backfill"}, [8, 2], [1.0, 1.0]), p)
    assert trace_mod.load(p).cluster["admission"] == "backfill"


@pytest.mark.parametrize("admission,want_start_s", [
    # 2 hosts x 4 GPUs, all trials queued at t = 0: t0 takes 6 GPUs for 10 s; t1 (8 GPUs)
    # cannot fit until t0 ends; t2 (2 GPUs, 5 s) fits the 2 left. Strict FIFO: t2 waits
    # behind t1, which starts at 10 and ends at 20, so t2 starts at 20. First fit: t2
    # starts at 0 beside t0, and t1 still starts at 10 (t2 is done by 5).
    ("fifo", [0.0, 10.0, 20.0]),
    ("first_fit", [0.0, 10.0, 0.0]),
])
def test_a_run_starts_its_trials_by_its_rule_and_records_it(tmp_path, admission, want_start_s):
    cluster = {"gpus_per_host": 4, "placement": "pack", "max_concurrent_trials": 0,
               "admission": admission}
    t = _trace(cluster, [6, 8, 2], [10.0, 10.0, 5.0])
    trace_mod.save(t, tmp_path / "t.json")
    run = run_fluid(trace=t, trace_path=tmp_path / "t.json", topology=big_switch(2, 1e9),
                    policy="fair", outdir=tmp_path / "o", write_flows=False)
    assert run["cluster"]["admission"] == admission
    trials = store.read_table(tmp_path / "o" / "trials.csv").set_index("job_id")
    assert trials.loc[[f"a0/s/t{i}" for i in range(3)], "start_s"].tolist() == want_start_s


def test_a_key_at_its_default_leaves_a_runs_identity_as_it_was():
    base = {"experiment": "e", "backend": "fluid", "policy": "fair", "seed": 1, "params": {},
            "experiment_cfg": {"name": "e", "trace": ""}, "workload": {"num_apps": 3},
            "topology": {}, "trace_sha256": "",
            "cluster": {"gpus_per_host": 4, "placement": "spread"}}
    with_default = {**base, "cluster": {**base["cluster"], "admission": "first_fit",
                                        "max_concurrent_trials": 0}}
    assert config_hash(with_default) == config_hash(base)
    assert identity(with_default)["cluster"] == {"gpus_per_host": 4, "placement": "spread"}
    fifo = {**base, "cluster": {**base["cluster"], "admission": "fifo"}}
    assert config_hash(fifo) != config_hash(base)


def _free_gpus_at(trials, t: float, capacity: int) -> int:
    """Free GPUs just after every start and end at or before ``t``."""
    held = trials[(trials["start_s"] <= t) & (trials["end_s"] > t)]["gpus"].sum()
    return capacity - int(held)


@pytest.mark.parametrize("placement", ["pack", "spread", "random"])
def test_under_first_fit_a_waiting_trial_never_fits_the_free_gpus(tmp_path, placement):
    """Many trials of mixed sizes on 4 hosts x 4 GPUs: at every start or end while a trial
    waits (from its queueing to its start), the GPUs free then are fewer than it needs
    (under every placement a trial fits exactly when enough GPUs are free in all)."""
    rng = np.random.default_rng(7)
    gpus = rng.choice([1, 2, 4, 8, 12], size=40).tolist()
    compute = rng.uniform(1.0, 20.0, size=40).round(3).tolist()
    cluster = {"gpus_per_host": 4, "placement": placement, "max_concurrent_trials": 0,
               "admission": "first_fit"}
    stage = Stage("a0/s", "a0", 1.0, (), _jobs(gpus, compute))
    t = Trace(seed=3, endpoints="hosts", hosts=tuple(f"h{i}" for i in range(4)),
              apps=(App("a0", 0.0, "random", (stage,)),), cluster=cluster)
    trace_mod.save(t, tmp_path / "t.json")
    run_fluid(trace=t, trace_path=tmp_path / "t.json", topology=big_switch(4, 1e9),
              policy="fair", outdir=tmp_path / "o", write_flows=False)
    trials = store.read_table(tmp_path / "o" / "trials.csv")
    events = np.unique(np.concatenate([trials["start_s"], trials["end_s"]]))
    waited = 0
    for row in trials.itertuples():
        for e in events[(events >= row.queued_s) & (events < row.start_s)]:
            assert _free_gpus_at(trials, e, 16) < row.gpus, (row.job_id, e)
            waited += 1
    assert waited > 20  # the check saw trials waiting
