"""ASHA decided during the run: the rule by hand, decisions that follow the run, and the
same decisions as Ray Tune's own ASHAScheduler on the same stream of results."""
from __future__ import annotations

import types

import numpy as np

import pandas as pd
import pytest

from emulation.fluid.run import run_fluid
from emulation.topology import TopologyConfig, build_topology
from emulation.tuner import AshaRule
from workloads import trace as trace_mod
from workloads.cluster import ClusterConfig
from workloads.generator import WorkloadConfig, generate


def test_the_rule_by_hand():
    # eta = 3; rung-0 results arrive with scores 0.5, 0.2, 0.9, 0.1 (lower is better),
    # judged as rewards -score against the 2/3 quantile of those recorded before:
    # 1st: nothing recorded: goes on. 2nd: quantile of [-0.5] = -0.5; -0.2 >= it: goes on.
    # 3rd: quantile of [-0.5, -0.2] = -0.5 + 2/3 x 0.3 = -0.3; -0.9 < it: stops.
    # 4th: quantile of [-0.9, -0.5, -0.2] at position 4/3 = -0.5 + 1/3 x 0.3 = -0.4;
    # -0.1 >= it: goes on.
    rule = AshaRule()
    got = [rule.judge(app_id="a", trial_id=f"t{i}", rung=0, score=s, eta=3, now_s=float(i))
           for i, s in enumerate([0.5, 0.2, 0.9, 0.1])]
    assert got == [True, True, False, True]
    # another tuning job, or another rung, starts from nothing
    assert rule.judge(app_id="b", trial_id="t0", rung=0, score=0.99, eta=3, now_s=5.0)
    assert rule.judge(app_id="a", trial_id="t0", rung=1, score=0.99, eta=3, now_s=6.0)


def _judge_all(scores: list[float], *, eta: int) -> list[bool]:
    """Each score judged in turn as one trial's result at rung 0 of one tuning job."""
    rule = AshaRule()
    return [rule.judge(app_id="a", trial_id=f"t{i}", rung=0, score=s, eta=eta, now_s=float(i))
            for i, s in enumerate(scores)]


def test_the_rule_on_the_example_of_ray_tunes_bracket():
    # The docstring of Ray Tune's async_hyperband._Bracket (reduction factor 2, rewards
    # 2, 4, 1): CONTINUE, CONTINUE, then the cutoff is the median of [2, 4] = 3.0 and the
    # reward 1 < 3 is a STOP. Here rewards are -score: scores -2, -4, -1.
    assert _judge_all([-2.0, -4.0, -1.0], eta=2) == [True, True, False]


def test_the_rule_for_eta_3_by_hand():
    # Cutoff: the 2/3 quantile (linear interpolation, position 2/3 x (n - 1) in the
    # sorted list) of the rewards (-score) recorded BEFORE the new one.
    # 4:    nothing recorded: goes on.
    # 6:    [-4] -> -4; -6 < -4: stops.
    # 4.5:  [-6, -4], position 2/3: -6 + 2/3 x 2 = -4.667; -4.5 >= it: goes on (the
    #       highest, -4, would stop it; so would counting the new result too:
    #       [-6, -4.5, -4] at position 4/3 is -4.5 + 1/3 x 0.5 = -4.333).
    # 5:    [-6, -4.5, -4], position 4/3: -4.333; -5 < it: stops (the 1/3 quantile,
    #       -6 + 2/3 x 1.5 = -5, or the lowest, -6, would let it on).
    # 4.25: [-6, -5, -4.5, -4], position 2: -4.5; -4.25 >= it: goes on.
    assert _judge_all([4.0, 6.0, 4.5, 5.0, 4.25], eta=3) == [True, False, True, False, True]


def test_the_rule_for_eta_4_by_hand():
    # Cutoff: the 3/4 quantile, position 3/4 x (n - 1), of the rewards recorded before.
    # 4:    nothing recorded: goes on.
    # 8:    [-4] -> -4; -8 < -4: stops.
    # 2:    [-8, -4], position 0.75: -8 + 0.75 x 4 = -5; -2 >= it: goes on.
    # 2.5:  [-8, -4, -2], position 1.5: -4 + 0.5 x 2 = -3; -2.5 >= it: goes on (the
    #       highest, -2, would stop it; so would counting the new result too:
    #       [-8, -4, -2.5, -2] at position 2.25 is -2.5 + 0.25 x 0.5 = -2.375).
    # 3:    [-8, -4, -2.5, -2], position 2.25: -2.375; -3 < it: stops (the median,
    #       -4 + 0.5 x 1.5 = -3.25, or the 1/4 quantile, -8 + 0.75 x 4 = -5, would let
    #       it on).
    assert _judge_all([4.0, 8.0, 2.0, 2.5, 3.0], eta=4) == [True, False, True, True, False]


def test_a_result_equal_to_the_cutoff_goes_on_and_a_rungs_first_result_always_does():
    # Ray Tune stops a trial only if its reward is strictly below the cutoff.
    # eta 3, scores 2, 2, 2: first goes on; then cutoffs -2 ([-2]) and -2 ([-2, -2]):
    # both equal the new reward, both go on.
    assert _judge_all([2.0, 2.0, 2.0], eta=3) == [True, True, True]
    # eta 4, scores 8, 2, 2, 2: cutoffs -8, then [-8, -2] at 0.75: -3.5, then [-8, -2, -2]
    # at position 1.5: -2, equal to the last reward: all go on.
    assert _judge_all([8.0, 2.0, 2.0, 2.0], eta=4) == [True, True, True, True]
    # the first result of a rung goes on however bad, at any eta, even when another rung
    # of the same tuning job has results
    rule = AshaRule()
    assert rule.judge(app_id="a", trial_id="t0", rung=0, score=0.1, eta=4, now_s=0.0)
    assert not rule.judge(app_id="a", trial_id="t1", rung=0, score=0.9, eta=4, now_s=1.0)
    assert rule.judge(app_id="a", trial_id="t0", rung=1, score=1e9, eta=4, now_s=2.0)
    assert [d.goes_on for d in rule.decisions] == [True, False, True]


@pytest.fixture(scope="module")
def asha_runs(tmp_path_factory):
    """One ASHA trace on a fragmented cluster, run under two policies."""
    tmp = tmp_path_factory.mktemp("asha")
    cfg = WorkloadConfig(seed=1, num_apps=4, algorithm="asha", asha_num_trials=9,
                         max_resource=9, eta=3, iterations_per_unit=2, arrival_rate_per_s=0.5,
                         models={"vgg16": 1.0, "resnet50": 1.0, "bert_base": 1.0},
                         gpu_mix={"8": 1.0, "16": 1.0, "32": 1.0}, num_hosts=16)
    t = generate(cfg, ClusterConfig(placement="random"))
    trace_mod.save(t, tmp / "t.json")
    topo = build_topology(TopologyConfig(), t.hosts)
    out = {}
    for policy in ("beamer", "fair"):
        run_fluid(trace=t, trace_path=tmp / "t.json", topology=topo, policy=policy,
                  outdir=tmp / policy)
        out[policy] = (pd.read_csv(tmp / policy / "decisions.csv"),
                       pd.read_csv(tmp / policy / "stages.csv"),
                       pd.read_csv(tmp / policy / "trials.csv"))
    return t, out


@pytest.mark.slow
def test_which_trials_go_on_follows_the_run(asha_runs):
    _, out = asha_runs
    key = ["app_id", "trial_id", "rung"]
    a, b = (out[p][0].set_index(key)["goes_on"] for p in ("beamer", "fair"))
    both = a.index.intersection(b.index)
    assert (a[both] != b[both]).any() or set(a.index) != set(b.index)
    for policy, (decisions, stages, _) in out.items():
        # a segment past rung 0 ran exactly when its trial went on after the rung before
        ran = set(stages["stage_id"])
        for d in decisions.itertuples():
            app, trial = d.trial_id.split("/")
            assert (f"{app}/{trial}/r{d.rung + 1}" in ran) == bool(d.goes_on), (policy, d)


def test_a_trial_that_goes_on_keeps_its_gpus_and_starts_at_once(asha_runs):
    """As in Ray Tune, a trial told to continue trains its next rung on the GPUs it holds:
    same hosts, starting when the decision is made, never queued."""
    _, out = asha_runs
    for decisions, _, trials in out.values():
        by_job = trials.set_index("job_id")
        for d in decisions[decisions["goes_on"]].itertuples():
            app, trial = d.trial_id.split("/")
            prev = by_job.loc[f"{app}/{trial}/r{d.rung}/{trial}"]
            nxt = by_job.loc[f"{app}/{trial}/r{d.rung + 1}/{trial}"]
            assert nxt["hosts"] == prev["hosts"]
            assert nxt["queued_s"] == nxt["start_s"] == prev["end_s"] == d.time_s


def test_each_decision_is_justified_by_the_results_that_had_arrived(asha_runs):
    _, out = asha_runs
    for decisions, _, _ in out.values():
        for (app, rung), g in decisions.groupby(["app_id", "rung"]):
            g = g.sort_values("time_s", kind="stable")
            scores = g["score"].tolist()
            for i, goes_on in enumerate(g["goes_on"]):
                before = sorted(scores[:i])
                if not before:
                    assert goes_on
                elif scores[i] <= before[0]:
                    assert goes_on            # better than every result before it
                elif scores[i] > before[-1] and len(before) >= 2:
                    assert not goes_on        # worse than every one (eta 3, two or more)


@pytest.mark.slow
def test_the_decisions_are_ray_tunes(asha_runs):
    pytest.importorskip("ray.tune", reason="Ray Tune (requirements-optional.txt) not installed")
    from ray.tune.schedulers import ASHAScheduler, TrialScheduler
    t, out = asha_runs
    for decisions, _, _ in out.values():
        for app, g in decisions.groupby("app_id"):
            sched = ASHAScheduler(time_attr="units", metric="score", mode="min", max_t=9,
                                  grace_period=1, reduction_factor=3)
            trials = {}
            for d in g.sort_values("time_s", kind="stable").itertuples():
                if d.trial_id not in trials:
                    trials[d.trial_id] = types.SimpleNamespace(trial_id=d.trial_id)
                    sched.on_trial_add(None, trials[d.trial_id])
                action = sched.on_trial_result(None, trials[d.trial_id],
                                               {"units": 3 ** d.rung, "score": d.score})
                assert (action == TrialScheduler.CONTINUE) == bool(d.goes_on), (app, d)


class _Trial:
    """What Ray's bracket needs of a trial: an id, hashable."""

    def __init__(self, trial_id: str):
        self.trial_id = trial_id


@pytest.mark.parametrize("R,eta", [(9, 3), (27, 3), (16, 2), (81, 3)])
def test_hyperband_rungs_keep_what_ray_tunes_bracket_keeps(R, eta):
    """Every rung of every Hyperband bracket, on seeded scores: the model keeps the best
    floor(n/eta) (Li et al., Algorithm 1); Ray Tune's HyperBandScheduler bracket keeps the
    best ceil(n/eta). Where the two counts agree the survivors are the same trials; where
    n is not a multiple of eta, Ray keeps the model's survivors and the next best one."""
    pytest.importorskip("ray.tune", reason="Ray Tune (requirements-optional.txt) not installed")
    from ray.tune.schedulers.hyperband import _Bracket
    from workloads.hpo import hyperband, survivors
    rng = np.random.default_rng(R * eta)
    for rungs in hyperband(R, eta):
        n0 = rungs[0].n
        scores = {f"t{i}": float(rng.random()) for i in range(n0)}
        trials = {tid: _Trial(tid) for tid in scores}
        bracket = _Bracket(time_attr="units", max_trials=n0, init_t_attr=rungs[0].r,
                           max_t_attr=R, eta=eta, s=len(rungs) - 1)
        for trial in trials.values():
            bracket.add_trial(trial)
        live = dict(scores)
        for rung, nxt in zip(rungs, rungs[1:]):
            for tid in live:
                bracket.update_trial_stats(trials[tid], {"units": rung.r, "score": live[tid]})
            good, bad = bracket.successive_halving("score", -1.0)
            for trial in bad:
                bracket.cleanup_trial(trial)
            ray_kept = {t.trial_id for t in good}
            assert nxt.n == rung.n // eta  # the model's bracket: floor at every rung
            model_kept = set(survivors(live, len(live) // eta))
            assert len(ray_kept) == -(-len(live) // eta)
            ranked = survivors(live, len(live))
            assert model_kept <= ray_kept and ray_kept == set(ranked[:len(ray_kept)])
            live = {tid: live[tid] for tid in ray_kept}
