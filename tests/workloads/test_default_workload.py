"""The default workload (the generator's defaults and experiments/default.toml) has every
app communicating, separates the policies and responds to the arrival rate; the suite's
experiments that relied on the earlier default gpu_mix pin it, so every committed run is
still found done (the same run recorded)."""
import tomllib

import pytest

from emulation.fluid.run import run_fluid
from emulation.topology import TopologyConfig, build_topology
from runner.config import load_experiment, suite_configs
from runner.results_dir import is_done
from tests.conftest import REPO
from workloads import trace as trace_mod
from workloads.__main__ import read_cluster, workload_config_from_toml
from workloads.config import build
from workloads.generator import WorkloadConfig, generate
from emulation import store

DEFAULT = REPO / "experiments" / "default.toml"


def communicates(t) -> bool:
    return all(len(j.hosts) >= 2 and j.coflows for j in t.jobs())


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_generator_default_gives_every_app_traffic(seed):
    assert communicates(generate(build(WorkloadConfig, {"seed": seed}, "workload")))


def avg_sct(tmp_path, t, policy, name):
    data = tomllib.loads(DEFAULT.read_text())
    topo = build_topology(build(TopologyConfig, data["topology"], "topology"), t.hosts)
    tp = tmp_path / f"{name}.json"
    trace_mod.save(t, tp)
    return run_fluid(trace=t, trace_path=tp, topology=topo, policy=policy,
                     outdir=tmp_path / f"{name}-{policy}", lb_avg_sct_s=1.0)["avg_sct_s"]


@pytest.mark.slow
def test_default_toml_separates_policies_and_follows_the_arrival_rate(tmp_path):
    cfg = workload_config_from_toml(DEFAULT)
    cluster = read_cluster(DEFAULT)
    assert cluster is not None and cluster.gpus_per_host >= 1  # a cluster that can exist
    t = generate(cfg, cluster=cluster)
    assert len(t.apps) >= 4 and all(j.gpus >= 4 for j in t.jobs())  # spread: every trial spans servers
    sct = {p: avg_sct(tmp_path, t, p, "d") for p in ("beamer", "sincronia", "fair")}
    vals = sorted(sct.values())
    assert all(b / a > 1.005 for a, b in zip(vals, vals[1:])), sct  # pairwise >= 0.5% apart
    assert sct["fair"] > 1.05 * sct["beamer"], sct
    slower = generate(build(WorkloadConfig, {**tomllib.loads(DEFAULT.read_text())["workload"],
                                             "arrival_rate_per_s": 0.05}, "workload"),
                      cluster=cluster)
    assert abs(avg_sct(tmp_path, slower, "beamer", "s") / sct["beamer"] - 1) > 0.05


@pytest.mark.slow
def test_every_committed_suite_run_is_still_done():
    """results/ holds the runs of the three suites (the default one, the pinned-hosts
    ablation and the fluid model's validation set), every one done under its file's
    current config, and nothing else."""
    suite = (suite_configs("default") + suite_configs("pinned-hosts")
             + suite_configs("validation"))
    specs = [s for p in suite for s in load_experiment(p, full=False)]
    committed = {d.relative_to(REPO / "results").as_posix()
                 for d in store.run_dirs(REPO / "results", marker="run_config.json")}
    assert len(specs) == len(committed)
    not_done = [f"{s.experiment}/{s.name}" for s in specs if not is_done(s, REPO / "results")]
    assert not not_done, not_done[:5]
