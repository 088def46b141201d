"""A cluster with GPUs: placements, the admission queue, the traffic of a placed trial,
what a policy is told of a trial before it is placed (its nominal hosts, FIFO-LM's
threshold) and the capacity the records keep, each against values derived by hand."""
from __future__ import annotations

import dataclasses
import json

import numpy as np
import pandas as pd
import pytest

from emulation.admission import Admission
from emulation.fluid.run import run_fluid
from emulation.topology import TopologyConfig, build_topology
from workloads import trace as trace_mod
from workloads.cluster import ClusterConfig, place, placed_coflows
from workloads.config import ConfigError
from workloads.generator import WorkloadConfig, generate
from workloads.trace import App, Flow, Job, Stage, Trace, TraceError
from emulation import store


def _rng():
    return np.random.default_rng(0)


# ------------------------------------------------------------------ placement

@pytest.mark.parametrize("free,gpus,want", [
    ([8, 8, 8, 8], 16, [(0, 8), (1, 8)]),    # two whole servers
    ([3, 8, 5, 2], 4, [(2, 4)]),              # best fit: the 5-GPU host, not the 8
    ([3, 6, 5, 2], 10, [(1, 6), (2, 4)]),     # no host holds 10: the 6, then best fit for 4
    ([2, 2, 2, 2], 6, [(0, 2), (1, 2), (2, 2)]),
    ([1, 1, 1], 4, None),                     # 3 free GPUs: waits
])
def test_pack_takes_the_fewest_hosts_best_fit(free, gpus, want):
    assert place(np.array(free), gpus=gpus, placement="pack", rng=_rng()) == want


def test_spread_puts_one_worker_per_host_while_hosts_last():
    got = place(np.array([8, 8, 8, 8]), gpus=2, placement="spread", rng=_rng())
    assert len(got) == 2 and all(g == 1 for _, g in got)
    got = place(np.array([8, 8, 8, 8]), gpus=6, placement="spread", rng=_rng())
    assert sorted(g for _, g in got) == [1, 1, 2, 2]  # dealt round robin over all four
    got = place(np.array([0, 8, 0, 8]), gpus=3, placement="spread", rng=_rng())
    assert [h for h, _ in got] == [1, 3] and sorted(g for _, g in got) == [1, 2]
    assert place(np.array([1, 0, 1]), gpus=3, placement="spread", rng=_rng()) is None


def test_random_takes_free_gpus_only():
    free = np.array([3, 0, 5, 1])
    for seed in range(20):
        got = place(free, gpus=6, placement="random", rng=np.random.default_rng(seed))
        assert sum(g for _, g in got) == 6
        assert all(g <= free[h] for h, g in got)
    assert place(free, gpus=10, placement="random", rng=_rng()) is None


# ------------------------------------------------------------------ traffic of a placed trial

def test_one_host_puts_nothing_on_the_network():
    assert placed_coflows("ring", hosts=["h0"], model_size_bytes=10**9, ps_servers=0) == []
    assert placed_coflows("ps", hosts=["h3"], model_size_bytes=10**9, ps_servers=2) == []


def test_ring_across_hosts_moves_2_h_minus_1_over_h_model_per_host():
    (c,) = placed_coflows("ring", hosts=["a", "b", "c"], model_size_bytes=300, ps_servers=0)
    assert set(c.flows) == {Flow("a", "b", 400), Flow("b", "c", 400), Flow("c", "a", 400)}


def test_ps_shards_sit_on_the_trials_own_hosts():
    push, pull = placed_coflows("ps", hosts=["a", "b", "c"], model_size_bytes=100, ps_servers=2)  # shards on a and b
    assert set(push.flows) == {Flow("a", "b", 50), Flow("b", "a", 50),
                               Flow("c", "a", 50), Flow("c", "b", 50)}
    assert set(pull.flows) == {Flow(f.dst, f.src, 50) for f in push.flows}


# ------------------------------------------------------------------ admission queue

def _admission(gpus, apps, cap=0, per_host=4, hosts=2):
    return Admission(ClusterConfig(gpus_per_host=per_host, max_concurrent_trials=cap),
                     num_hosts=hosts, job_gpus=np.array(gpus), job_app=apps, seed=1)


def test_fifo_holds_back_every_trial_behind_one_that_does_not_fit():
    adm = _admission([8, 6, 2], ["a", "b", "c"])
    for j in range(3):
        adm.enqueue(j)
    (j0, p0), = adm.admit()
    assert j0 == 0 and p0.hosts == (0, 1) and p0.gpus == (4, 4)
    assert adm.admit() == []             # job 1 (6 GPUs) waits; job 2 (2) waits behind it
    adm.release(0)
    started = adm.admit()                # 6 = 4 + 2; then 2 fits the 2 left
    assert [(j, p.hosts, p.gpus) for j, p in started] == [(1, (0, 1), (4, 2)),
                                                          (2, (1,), (2,))]
    assert adm.free.tolist() == [0, 0]


def test_a_tuning_job_at_its_cap_waits_without_holding_back_others():
    adm = _admission([2, 2, 2], ["a", "a", "b"], cap=1)
    for j in range(3):
        adm.enqueue(j)
    assert [j for j, _ in adm.admit()] == [0, 2]  # job 1 is a's second trial
    adm.release(0)
    assert [j for j, _ in adm.admit()] == [1]


def test_an_unlimited_cluster_admits_every_trial_at_once():
    # gpus_per_host = 0: every host has as many free GPUs as the largest trial (8) and
    # keeps them. pack: each trial on the first host that holds it whole, host 0;
    # nothing waits, and a release frees nothing.
    adm = _admission([8, 6, 2], ["a", "b", "c"], per_host=0)
    for j in range(3):
        adm.enqueue(j)
    assert [(j, p.hosts, p.gpus) for j, p in adm.admit()] == [(0, (0,), (8,)), (1, (0,), (6,)),
                                                               (2, (0,), (2,))]
    assert adm.free.tolist() == [8, 8] and adm.queue == []
    adm.release(0)
    assert adm.free.tolist() == [8, 8]
    # spread on 3 hosts (4 free each): a 4-GPU trial dealt one worker per host, round
    # robin: 3 hosts holding 1, 1 and 2; the next one too, on the same free GPUs
    adm = Admission(ClusterConfig(gpus_per_host=0, placement="spread"), num_hosts=3,
                    job_gpus=np.array([4, 4]), job_app=["a", "b"], seed=1)
    adm.enqueue(0)
    adm.enqueue(1)
    started = adm.admit()
    assert [j for j, _ in started] == [0, 1]
    assert all(sorted(p.gpus) == [1, 1, 2] and len(p.hosts) == 3 for _, p in started)
    assert adm.free.tolist() == [4, 4, 4]


# ------------------------------------------------------------------ a run, derived by hand

def _two_trial_trace() -> Trace:
    """One stage, two trials on 2 servers x 2 GPUs: A (4 GPUs, ring, 1 GB model, 1 s of
    compute, 1 iteration) spans both servers; B (2 GPUs) waits for it."""
    def job(name, gpus):
        return Job(job_id=f"a0/s/{name}", trial_id=f"a0/{name}", model="m", pattern="ring",
                   hosts=(), iterations=1, compute_s=1.0, coflows=(), gpus=gpus,
                   model_size_bytes=10**9, ps_servers=0)
    stage = Stage("a0/s", "a0", 1.0, (), (job("A", 4), job("B", 2)))
    return Trace(seed=1, endpoints="hosts", hosts=("h0", "h1"),
                 apps=(App("a0", 0.0, "random", (stage,)),),
                 cluster={"gpus_per_host": 2, "placement": "pack", "max_concurrent_trials": 0})


def _run_at_1_gb_per_s(t: Trace, tmp_path, policy: str = "fair") -> tuple[dict, object]:
    """Run ``t`` in the fluid backend with every host link at 8 Gbit/s (1 GB/s); its
    run.json and its record directory."""
    trace_mod.save(t, tmp_path / "t.json")
    topo = build_topology(TopologyConfig(link_rate_bps=8e9), t.hosts)
    run = run_fluid(trace=t, trace_path=tmp_path / "t.json", topology=topo, policy=policy,
                    outdir=tmp_path / "o")
    return run, tmp_path / "o"


def test_a_run_waits_for_gpus_and_places_by_hand(tmp_path):
    # A: compute 1 s, then each server sends 2(2-1)/2 x 1 GB = 1 GB at 1 GB/s: ends at 2 s.
    # B: waits for A's GPUs, starts at 2 s on h0 alone (no network), ends at 3 s.
    run, out = _run_at_1_gb_per_s(_two_trial_trace(), tmp_path)
    trials = pd.read_csv(out / "trials.csv")
    assert trials["hosts"].tolist() == ["h0:2;h1:2", "h0:2"]
    assert trials["queued_s"].tolist() == [0.0, 0.0]
    assert trials["start_s"].tolist() == pytest.approx([0.0, 2.0])
    assert trials["end_s"].tolist() == pytest.approx([2.0, 3.0])
    coflows = pd.read_csv(out / "coflows.csv")
    assert coflows["job_id"].tolist() == ["a0/s/A"]
    assert coflows["size_bytes"].tolist() == [2 * 10**9]
    assert run["avg_sct_s"] == pytest.approx(3.0)
    # GPU-seconds held: 4 x 2 + 2 x 1 = 10 of 4 GPUs x 3 s
    assert run["gpu_busy_share"] == pytest.approx(10 / 12)
    assert run["trial_wait_mean_s"] == pytest.approx(1.0)
    assert run["cluster"]["gpus_per_host"] == 2
    # the bound of this placement, with no wait for GPUs: A's 1 s of compute and its 1 GB
    # on each host link at 1 GB/s (2 s), B's 1 s beside it: 2 s, below the 3 s B waited for
    assert run["lower_bound_avg_sct_s"] == pytest.approx(2.0)


# ------------------------------------------------------------------ the records keep capacity

def _peak_gpus_per_host(trials: pd.DataFrame) -> dict[str, int]:
    """Most GPUs held on each host at any instant, from trials.csv alone (an end frees
    GPUs before a start at the same instant takes them)."""
    events = []
    for row in trials.itertuples():
        for pair in row.hosts.split(";"):
            host, gpus = pair.split(":")
            events += [(row.start_s, 1, host, int(gpus)), (row.end_s, 0, host, -int(gpus))]
    held: dict[str, int] = {}
    peak: dict[str, int] = {}
    for _, _, host, delta in sorted(events):
        held[host] = held.get(host, 0) + delta
        peak[host] = max(peak.get(host, 0), held[host])
    return peak


@pytest.mark.parametrize("placement", ["pack", "spread", "random"])
def test_no_host_ever_holds_more_gpus_than_it_has(tmp_path, placement):
    cfg = WorkloadConfig(seed=3, num_apps=4, algorithm="random", random_num_trials=6,
                         random_budget=1.0, arrival_rate_per_s=2.0, num_hosts=6,
                         gpu_mix={"2": 1.0, "4": 1.0, "8": 1.0}, sync_pattern="ring")
    t = generate(cfg, ClusterConfig(gpus_per_host=4, placement=placement))
    path = tmp_path / "t.json"
    trace_mod.save(t, path)
    topo = build_topology(TopologyConfig(), t.hosts)
    run_fluid(trace=t, trace_path=path, topology=topo, policy="beamer", outdir=tmp_path / "o")
    trials = pd.read_csv(tmp_path / "o" / "trials.csv")
    assert len(trials) == 24
    assert max(_peak_gpus_per_host(trials).values()) <= 4
    held = trials["hosts"].map(lambda s: sum(int(p.split(":")[1]) for p in s.split(";")))
    assert (held == trials["gpus"]).all()
    one_host = set(trials.loc[~trials["hosts"].str.contains(";"), "job_id"])
    flows_of = set(pd.read_csv(tmp_path / "o" / "coflows.csv")["job_id"])
    assert not one_host & flows_of  # a trial on one server puts no coflow on the network
    if placement == "pack":
        assert one_host == set(trials.loc[trials["gpus"] <= 4, "job_id"])


# ------------------------------------------------------------------ trace and config

def test_a_cluster_trace_round_trips_and_keeps_its_trials(tmp_path):
    cfg = WorkloadConfig(seed=5, num_apps=2, algorithm="sha", num_hosts=4)
    t = generate(cfg, ClusterConfig(gpus_per_host=8))
    trace_mod.save(t, tmp_path / "t.json")
    back = trace_mod.load(tmp_path / "t.json")
    assert back == t and back.cluster["gpus_per_host"] == 8
    assert all(j.gpus > 0 and not j.hosts and not j.coflows for j in back.jobs())
    # the same seed gives the same trials whatever the cluster
    other = generate(cfg, ClusterConfig(gpus_per_host=2, placement="spread"))
    assert [(j.job_id, j.gpus, j.model) for j in other.jobs()] == \
           [(j.job_id, j.gpus, j.model) for j in t.jobs()]


def test_a_placed_job_with_hosts_is_refused(tmp_path):
    t = _two_trial_trace()
    data = trace_mod.to_dict(t)
    data["apps"][0]["stages"][0]["jobs"][0]["hosts"] = ["h0"]
    with pytest.raises(TraceError, match="placed during the run"):
        trace_mod.validate_dict(data)
    data = json.loads(json.dumps(trace_mod.to_dict(t)))
    data["cluster"]["gpus_per_host"] = -1
    with pytest.raises(TraceError, match="gpus_per_host"):
        trace_mod.validate_dict(data)


def test_a_trial_larger_than_the_cluster_is_a_config_error():
    cfg = WorkloadConfig(num_hosts=2, gpu_mix={"32": 1.0})
    with pytest.raises(ConfigError, match="gpu_mix.32: a trial of 32 GPUs does not fit"):
        generate(cfg, ClusterConfig(gpus_per_host=8))


def test_the_runner_records_the_cluster(tmp_path):
    from runner.config import load_experiment
    f = tmp_path / "e.toml"
    f.write_text('[experiment]\nname = "x"\nseeds = [1]\npolicies = ["fair"]\n'
                 '[workload]\nnum_hosts = 4\n[cluster]\ngpus_per_host = 4\n'
                 '[sweep]\n"cluster.placement" = ["pack", "random"]\n')
    specs = load_experiment(f, full=False)
    assert [s.config["cluster"]["placement"] for s in specs] == ["pack", "random"]
    bare = tmp_path / "bare.toml"  # a file without [cluster]: pinned, its config without one
    bare.write_text('[experiment]\nname = "y"\nseeds = [1]\npolicies = ["fair"]\n')
    assert "cluster" not in load_experiment(bare, full=False)[0].config


def test_before_placement_a_trial_counts_with_its_coflows_on_the_empty_cluster():
    from emulation.state import ClusterState
    from workloads.cluster import nominal_hosts
    pack8 = ClusterConfig(gpus_per_host=8)
    assert [nominal_hosts(g, pack8, 16) for g in (4, 8, 16, 32)] == [1, 1, 2, 4]
    assert nominal_hosts(4, ClusterConfig(gpus_per_host=8, placement="spread"), 16) == 4
    assert nominal_hosts(32, ClusterConfig(gpus_per_host=0), 16) == 1
    t = _two_trial_trace()  # A: 4 GPUs on 2-GPU hosts, a 2-host ring of 1 GB; B: one host
    st = ClusterState(t, build_topology(TopologyConfig(), t.hosts))
    assert st.coflow_sizes_bytes().tolist() == [2e9]


# ------------------------------------------------------------------ before placement

TRIAL_GPUS = (1, 7, 8, 9, 17)


@pytest.mark.parametrize("placement,gpus_per_host,num_hosts,want_hosts", [
    # pack: the fewest servers that hold the trial, ceil(g / gpus_per_host)
    ("pack", 8, 16, [1, 1, 1, 2, 3]),      # 9 = 8 + 1, 17 = 8 + 8 + 1
    ("pack", 4, 16, [1, 2, 2, 3, 5]),      # 7 = 4 + 3, 9 = 4 + 4 + 1, 17 = 4 x 4 + 1
    ("pack", 1, 24, [1, 7, 8, 9, 17]),     # one GPU per server: a server per worker
    ("pack", 0, 16, [1, 1, 1, 1, 1]),      # unlimited servers: every trial on one
    # spread and random: a server per worker while there are servers
    ("spread", 8, 16, [1, 7, 8, 9, 16]),
    ("spread", 4, 16, [1, 7, 8, 9, 16]),
    ("spread", 0, 16, [1, 7, 8, 9, 16]),
    ("spread", 8, 8, [1, 7, 8, 8, 8]),
    ("random", 8, 16, [1, 7, 8, 9, 16]),
    ("random", 0, 16, [1, 7, 8, 9, 16]),
])
def test_nominal_hosts_by_hand(placement, gpus_per_host, num_hosts, want_hosts):
    from workloads.cluster import nominal_hosts
    cluster = ClusterConfig(gpus_per_host=gpus_per_host, placement=placement)
    assert [nominal_hosts(g, cluster, num_hosts) for g in TRIAL_GPUS] == want_hosts


@pytest.mark.parametrize("placement,gpus_per_host", [("pack", 8), ("pack", 4), ("spread", 8),
                                                      ("spread", 4)])
def test_nominal_hosts_are_those_of_the_placement_on_the_empty_cluster(placement, gpus_per_host):
    from workloads.cluster import nominal_hosts
    cluster = ClusterConfig(gpus_per_host=gpus_per_host, placement=placement)
    for g in TRIAL_GPUS:
        got = place(np.full(16, gpus_per_host), gpus=g, placement=placement, rng=_rng())
        assert len(got) == nominal_hosts(g, cluster, 16), g


MODEL_BYTES = 5_040_000  # divisible by 2..9 and 16: ring flows of whole bytes


def _trials_trace(gpus_per_host: int, placement: str) -> Trace:
    """One stage of ring trials of 1, 7, 8, 9 and 17 GPUs (one iteration each) on 16
    servers, placed during the run."""
    jobs = tuple(Job(job_id=f"a0/s/t{g}", trial_id=f"a0/t{g}", model="m", pattern="ring",
                     hosts=(), iterations=1, compute_s=1.0, coflows=(), gpus=g,
                     model_size_bytes=MODEL_BYTES, ps_servers=0) for g in TRIAL_GPUS)
    return Trace(seed=1, endpoints="hosts", hosts=tuple(f"h{i}" for i in range(16)),
                 apps=(App("a0", 0.0, "random", (Stage("a0/s", "a0", 1.0, (), jobs),)),),
                 cluster={"gpus_per_host": gpus_per_host, "placement": placement,
                          "max_concurrent_trials": 0})


@pytest.mark.parametrize("placement,gpus_per_host,want_sizes_m,want_threshold_m,head_heavy", [
    # A ring over h servers moves h x 2(h-1)/h x M = 2(h-1) M; a trial on one server
    # none (no coflow). FIFO-LM's threshold: the 90th percentile of those sizes,
    # linear interpolation at position 0.9 x (n - 1).
    # pack, 8 per server: hosts 1, 1, 1, 2, 3: sizes 2M, 4M; 2 + 0.9 x 2 = 3.8 M
    ("pack", 8, [2, 4], 3.8, True),
    # pack, 4 per server: hosts 1, 2, 2, 3, 5: 2M, 2M, 4M, 8M; position 2.7: 4 + 0.7 x 4
    ("pack", 4, [2, 2, 4, 8], 6.8, False),
    # spread: hosts 1, 7, 8, 9, 16: 12M, 14M, 16M, 30M; position 2.7: 16 + 0.7 x 14
    ("spread", 8, [12, 14, 16, 30], 25.8, False),
    # unlimited servers, pack: every trial on one server, no coflow: threshold 0
    ("pack", 0, [], 0.0, True),
])
def test_fifo_lms_threshold_counts_each_trial_on_its_nominal_hosts(
        placement, gpus_per_host, want_sizes_m, want_threshold_m, head_heavy):
    from emulation.scheduler import make_policy
    from emulation.state import ClusterState
    from tests.scheduler.test_policy_orders import fifo_view
    t = _trials_trace(gpus_per_host, placement)
    st = ClusterState(t, build_topology(TopologyConfig(), t.hosts))
    sizes_bytes = st.coflow_sizes_bytes()
    assert sorted(sizes_bytes.tolist()) == [m * MODEL_BYTES for m in want_sizes_m]
    pol = make_policy("fifo_lm")
    pol.prepare(coflow_sizes_bytes=sizes_bytes)
    assert pol.heavy_threshold_bytes == pytest.approx(want_threshold_m * MODEL_BYTES)
    # the head coflow has sent 5 M: heavy (its successor joins class 0) only where the
    # threshold is below 5 M
    d = pol.decide(fifo_view(sent=[5.0 * MODEL_BYTES, 0.0], seq=[0, 1]))
    assert d.classes.tolist() == ([0, 0] if head_heavy else [0, 1])


def test_the_cluster_table_pairs_runs_of_the_same_trace():
    from analysis.cluster import cluster_table
    rows = []
    for seed, (b, s) in {1: (10.0, 20.0), 2: (30.0, 20.0)}.items():
        for pol, sct in (("beamer", b), ("sincronia", s)):
            rows.append({"experiment": "gpus-x", "param:cluster.placement": "pack",
                         "scenario": "placement=pack", "workload_seed": seed, "policy": pol,
                         "avg_sct_s": sct, "gpu_busy_share": 0.5, "trial_wait_mean_s": seed,
                         "multi_host_trial_share": 0.25})
    t = cluster_table(pd.DataFrame(rows), "beamer")
    (r,) = t.to_dict("records")
    assert r["/ sincronia"] == pytest.approx((0.5 + 1.5) / 2)  # per-run ratios, then mean
    assert r["beamer_avg_sct_s"] == 20.0 and r["trial_wait_mean_s"] == 1.5 and r["runs"] == 2


@pytest.mark.slow
def test_the_readme_cluster_tables_are_the_records():
    """The README's two tables of the cluster-with-GPUs experiments (the regimes, then
    congestion and GPUs per server; the ideal fluid model's, the packet-aware runs have
    a table of their own), every cell recomputed from the committed run records."""
    from pathlib import Path

    from analysis.cluster import PACKET_AWARE, cluster_table
    from analysis.load import load_runs
    repo = Path(__file__).resolve().parents[2]
    t = cluster_table(load_runs(repo / "results"), "beamer")
    text = (repo / "README.md").read_text().split("### On a cluster with GPUs", 1)[1]
    text = text.split("\n### ", 1)[0]
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in text.splitlines()
            if line.startswith("| gpus-")]

    def pm(r, c):
        return f"{r[c]:.3f} ± {r[c + ' ci95']:.3f}"
    regimes = ["gpus-random", "gpus-asha", "gpus-sha", "gpus-hyperband", "gpus-mix",
               "gpus-fabric"]
    want = [[r["experiment"], r["placement"], pm(r, "/ sincronia"), pm(r, "/ beamer-sbssi"),
             pm(r, "/ fair"), f"{r['beamer_avg_sct_s']:.1f}", f"{r['trial_wait_mean_s']:.1f}",
             f"{r['gpu_busy_share']:.2f}", pm(r, "jct / sincronia"), f"{r['normalised_jct']:.2f}"]
            for e in regimes for r in t[t["experiment"] == e].to_dict("records")]
    rest = t[~t["experiment"].isin(regimes) & ~t["experiment"].str.endswith(PACKET_AWARE)]
    rest = rest.sort_values(["experiment", "placement"], kind="stable")
    want += [[r["experiment"], r["point"], r["placement"], pm(r, "/ sincronia"),
              pm(r, "/ beamer-sbssi"), pm(r, "/ fair"), f"{r['multi_host_trial_share']:.2f}",
              f"{r['gpu_busy_share']:.2f}", f"{r['beamer_avg_sct_s']:.1f}"]
             for r in rest.to_dict("records")]
    assert rows == want


def test_a_tuning_job_alone_is_its_own_normalisation(tmp_path):
    # one tuning job, arriving at 0: the run is the job alone, normalised JCT 1; by hand
    # (test_a_run_waits_for_gpus_and_places_by_hand) its last trial ends at 3 s
    run, out = _run_at_1_gb_per_s(_two_trial_trace(), tmp_path)
    apps = pd.read_csv(out / "apps.csv")
    assert apps["jct_s"].tolist() == pytest.approx([3.0])
    assert apps["jct_alone_s"].tolist() == pytest.approx([3.0])
    assert run["avg_normalised_jct"] == pytest.approx(1.0)


def test_a_tuning_job_slowed_by_another_has_a_normalised_jct_above_one(tmp_path):
    # two copies of the two-trial job, the second arriving at 0.5 s and queued behind the
    # first one's waiting trial B
    t = _two_trial_trace()
    app = t.apps[0]
    second = App("a1", 0.5, "random", (Stage("a1/s", "a1", 1.0, (), tuple(
        dataclasses.replace(j, job_id=j.job_id.replace("a0", "a1"),
                            trial_id=j.trial_id.replace("a0", "a1")) for j in app.stages[0].jobs)),))
    _, out = _run_at_1_gb_per_s(dataclasses.replace(t, apps=(app, second)), tmp_path)
    apps = pd.read_csv(out / "apps.csv").set_index("app_id")
    # FIFO: a0's B (queued at 0) starts at 2 s on h0; a1's A (4 GPUs) needs both hosts:
    # it starts when B ends at 3 s, ends at 5 s; a1's B then runs 5-6 s: a1 ends at 6 s,
    # JCT 5.5 s against 3 s alone
    assert apps.loc["a0", "jct_s"] == pytest.approx(3.0)
    assert apps.loc["a1", "jct_s"] == pytest.approx(5.5)
    assert apps.loc["a1", "normalised_jct"] == pytest.approx(5.5 / 3.0)


def test_records_follow_flows_numbered_in_placement_order(tmp_path):
    """A job later in the trace placed first: its coflow templates come first in the run's
    numbering, and every record still names the right job, hosts and bytes. By hand, on 2
    servers x 2 GPUs at 1 GB/s: tuning job a1 (arriving at 0) runs Q on both servers
    (compute 1 s, then each server sends 1 GB: ends at 2 s); a0 (arriving at 0.5, first in
    the trace) waits for the GPUs, runs P from 2 s, releases its coflow at 3 s, ends at 4 s."""
    def app(app_id, arrival_s, name):
        job = Job(job_id=f"{app_id}/s/{name}", trial_id=f"{app_id}/{name}", model="m",
                  pattern="ring", hosts=(), iterations=1, compute_s=1.0, coflows=(), gpus=4,
                  model_size_bytes=10**9, ps_servers=0)
        return App(app_id, arrival_s, "random", (Stage(f"{app_id}/s", app_id, 1.0, (), (job,)),))
    t = Trace(seed=1, endpoints="hosts", hosts=("h0", "h1"),
              apps=(app("a0", 0.5, "P"), app("a1", 0.0, "Q")),
              cluster={"gpus_per_host": 2, "placement": "pack", "max_concurrent_trials": 0})
    _, out = _run_at_1_gb_per_s(t, tmp_path)
    cf = pd.read_csv(out / "coflows.csv").set_index("job_id")
    assert cf.loc["a1/s/Q", "release_s"] == pytest.approx(1.0)
    assert cf.loc["a0/s/P", "release_s"] == pytest.approx(3.0)
    assert cf.loc["a0/s/P", "end_s"] == pytest.approx(4.0)
    assert cf["size_bytes"].tolist() == [2 * 10**9, 2 * 10**9]
    flows = pd.read_csv(out / "flows.csv")
    assert sorted(zip(flows["flow_id"], flows["src"], flows["dst"], flows["size_bytes"])) == [
        ("a0/s/P/i0/c0/f0", "h0", "h1", 10**9), ("a0/s/P/i0/c0/f1", "h1", "h0", 10**9),
        ("a1/s/Q/i0/c0/f0", "h0", "h1", 10**9), ("a1/s/Q/i0/c0/f1", "h1", "h0", 10**9)]
    stages = pd.read_csv(out / "stages.csv").set_index("stage_id")
    assert stages.loc["a0/s", "sct_s"] == pytest.approx(3.5)  # 0.5 -> 4, waiting included


def test_an_asha_segment_must_follow_its_trials_previous_rung():
    cfg = WorkloadConfig(seed=2, num_apps=1, algorithm="asha", asha_num_trials=3,
                         max_resource=3, eta=3, num_hosts=4)
    data = trace_mod.to_dict(generate(cfg, ClusterConfig(gpus_per_host=8)))
    trace_mod.validate_dict(json.loads(json.dumps(data)))  # as generated: valid
    stages = data["apps"][0]["stages"]
    second = next(s for s in stages if s["asha"]["rung"] == 1)
    second["depends_on"] = []
    with pytest.raises(TraceError, match="depends on exactly its trial's segment of rung 0"):
        trace_mod.validate_dict(data)


@pytest.mark.slow
def test_every_run_of_the_default_suite_keeps_its_servers_gpu_count():
    """The default suite runs on a cluster that can exist: each of its runs either replays
    a trace with its own hosts (FB2010) or placed its trials on servers with
    ``gpus_per_host`` >= 1; and every committed run whose trials a cluster placed
    (trials.csv: the default suite's, once per configuration) shows, at every instant of
    its records, no server holding more trial workers (one per GPU) than that, and each
    trial holding exactly its GPUs."""
    from pathlib import Path

    from runner.config import collect_specs, suite_configs
    results = Path(__file__).resolve().parents[2] / "results"
    specs = collect_specs(suite_configs(), full=False, backend="both")[0]
    placed = [s for s in specs if not s.experiment_cfg.get("trace")]
    assert len(placed) > 3000 and len(specs) - len(placed) < 20  # FB2010's runs only
    for s in placed:
        assert s.cluster, s.experiment  # a [cluster] table: its trials are placed
        assert s.cluster.get("gpus_per_host", ClusterConfig().gpus_per_host) >= 1, s.cluster
        run = store.read_json(results / s.experiment / s.name / "run.json")
        source = results / run["same_run_as"] if run.get("same_run_as") else None
        assert store.has((source or results / s.experiment / s.name) / "trials.csv")
    runs = [d / "trials.csv" for d in store.run_dirs(results) if store.has(d / "trials.csv")]
    assert len(runs) > 3000
    for path in runs:
        cluster = store.read_json(path.parent / "run.json")["cluster"]
        trials = store.read_table(path)
        peak = _peak_gpus_per_host(trials)
        assert max(peak.values()) <= cluster["gpus_per_host"], path.parent.name
        held = trials["hosts"].map(lambda h: sum(int(p.split(":")[1]) for p in h.split(";")))
        assert (held == trials["gpus"]).all(), path.parent.name


@pytest.mark.slow
def test_the_per_stage_table_compares_two_policies_whichever_is_the_reference():
    """With Sincronia as the analysis's reference, the per-stage table compares it with
    beamer (not with itself), and the per-experiment table has a column for beamer."""
    from pathlib import Path

    from analysis.cluster import cluster_table
    from analysis.cluster_stages import cluster_stage_table
    from analysis.load import load_runs
    results = Path(__file__).resolve().parents[2] / "results"
    runs = load_runs(results)
    runs = runs[(runs["experiment"] == "gpus-random") & (runs["workload_seed"] == 31)]
    stages = cluster_stage_table(runs, results, "sincronia")
    assert set(stages["policy"]) == {"sincronia", "beamer"}
    assert "/ beamer" in cluster_table(runs, "sincronia")
    assert "/ beamer" not in cluster_table(runs, "beamer")
