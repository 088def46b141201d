"""Generated traces: determinism in the seed, structure, config strictness."""
import pytest

from workloads import trace
from workloads.config import ConfigError, build
from workloads.generator import WorkloadConfig, generate
from workloads.__main__ import workload_config_from_toml


def cfg(**kw):
    return build(WorkloadConfig, kw, "workload")


@pytest.mark.parametrize("algorithm", ["hyperband", "sha", "asha"])
@pytest.mark.parametrize("pattern", ["ring", "ps"])
def test_same_seed_same_bytes_other_seed_other_trace(algorithm, pattern):
    c = dict(algorithm=algorithm, sync_pattern=pattern, num_apps=3, gpu_mix={"2": 1, "4": 1})
    a = trace.dumps(generate(cfg(seed=5, **c)))
    b = trace.dumps(generate(cfg(seed=5, **c)))
    other = trace.dumps(generate(cfg(seed=6, **c)))
    assert a == b
    assert a != other


def test_roundtrip_through_json(tmp_path):
    t = generate(cfg(seed=3, algorithm="asha", gpu_mix={"4": 1}))
    p = tmp_path / "t.json"
    trace.save(t, p)
    assert trace.dumps(trace.load(p)) == trace.dumps(t)


def test_hyperband_stage_structure():
    t = generate(cfg(seed=1, num_apps=1, max_resource=81, eta=3, gpu_mix={"2": 1}))
    (app,) = t.apps
    sizes = [len(s.jobs) for s in app.stages]
    assert sizes == [81, 27, 9, 3, 1, 34, 11, 3, 1, 15, 5, 1, 8, 2, 5]
    iters = [s.jobs[0].iterations for s in app.stages]
    assert iters == [1, 3, 9, 27, 81, 3, 9, 27, 81, 9, 27, 81, 27, 81, 81]
    # one chain: every stage after the first depends on its predecessor
    for prev, s in zip(app.stages, app.stages[1:]):
        assert s.depends_on == (prev.stage_id,)
    # survivors keep their hosts
    first = {j.trial_id: j.hosts for j in app.stages[0].jobs}
    for j in app.stages[1].jobs:
        assert j.hosts == first[j.trial_id]


def test_resume_promoted_trains_only_extra_units():
    t = generate(cfg(seed=1, num_apps=1, algorithm="sha", sha_num_configs=9,
                     resume_promoted=True, gpu_mix={"2": 1}))
    assert [s.jobs[0].iterations for s in t.apps[0].stages] == [1, 2, 6]


def test_ps_jobs_have_push_then_pull():
    t = generate(cfg(seed=2, num_apps=1, sync_pattern="ps", ps_servers=2, gpu_mix={"4": 1}))
    job = t.jobs()[0]
    push, pull = job.coflows
    servers = set(job.hosts[4:])
    assert {f.dst for f in push.flows} == servers and {f.src for f in pull.flows} == servers


def test_packed_placement_is_consecutive():
    t = generate(cfg(seed=4, num_apps=2, placement="packed", gpu_mix={"4": 1}))
    for j in t.jobs():
        idx = [int(h[1:]) for h in j.hosts]
        assert [(i - idx[0]) % 16 for i in idx] == [0, 1, 2, 3]


@pytest.mark.parametrize("table,needle", [
    ({"bogus": 1}, "workload.bogus"),
    ({"num_apps": "three"}, "workload.num_apps"),
    ({"models": {"nosuchnet": 1}}, "workload.models.nosuchnet"),
    ({"algorithm": "bohb"}, "workload.algorithm"),
    ({"models": {"inception_v3": 1}}, "inception_v3"),
])
def test_bad_config_names_the_key(table, needle):
    with pytest.raises(ConfigError, match=needle.replace(".", r"\.")):
        cfg(**table)


def test_a_pinned_trial_larger_than_the_hosts_names_the_key():
    """Without a cluster every worker needs a host of its own: 32 GPUs on 16 hosts fail
    (with a cluster of 8 GPUs per host they fit: tests/emulation/test_cluster.py)."""
    with pytest.raises(ConfigError, match=r"workload\.gpu_mix\.32: needs 32 hosts"):
        generate(cfg(gpu_mix={"32": 1}))


def test_unknown_top_level_table(tmp_path):
    p = tmp_path / "x.toml"
    p.write_text("[workloadd]\nseed = 1\n")
    with pytest.raises(ConfigError, match="workloadd"):
        workload_config_from_toml(str(p))


def test_random_search_is_one_stage_of_n_trials_at_the_full_budget():
    # 2 apps x 1 stage; each stage 6 trials of budget 3 units x 2 iterations per unit = 6
    t = generate(cfg(seed=4, num_apps=2, algorithm="random", random_num_trials=6,
                     random_budget=3.0, iterations_per_unit=2, gpu_mix={"2": 1}))
    assert [len(a.stages) for a in t.apps] == [1, 1]
    for a in t.apps:
        (st,) = a.stages
        assert a.algorithm == "random" and st.depends_on == ()
        assert len(st.jobs) == 6 and {j.iterations for j in st.jobs} == {6}
        assert len({j.trial_id for j in st.jobs}) == 6


def test_mixed_tenants_draw_their_tuner_and_parameters():
    tenants = [{"algorithm": "random", "random_num_trials": 3, "weight": 1.0},
               {"algorithm": "sha", "sha_num_configs": 4, "eta": 2, "weight": 1.0},
               {"algorithm": "asha", "weight": 0.0}]
    t = generate(cfg(seed=2, num_apps=12, algorithm="mix", tenants=tenants, gpu_mix={"2": 1}))
    kinds = [a.algorithm for a in t.apps]
    assert set(kinds) == {"random", "sha"}  # weight 0: never drawn
    for a in t.apps:
        if a.algorithm == "random":  # one stage of 3 trials at the default budget (9 units)
            assert [len(s.jobs) for s in a.stages] == [3]
            assert a.stages[0].jobs[0].iterations == 9
        else:  # SHA n=4, eta=2, r=1: rungs 4 x 1, 2 x 2, 1 x 4 units, chained
            assert [len(s.jobs) for s in a.stages] == [4, 2, 1]
            assert [s.jobs[0].iterations for s in a.stages] == [1, 2, 4]
            assert a.stages[1].depends_on == (a.stages[0].stage_id,)
    # the draw is seeded: same config, same trace
    again = generate(cfg(seed=2, num_apps=12, algorithm="mix", tenants=tenants,
                         gpu_mix={"2": 1}))
    assert trace.dumps(again) == trace.dumps(t)


def test_other_algorithms_are_unchanged_by_the_new_tuners():
    # the tuner draw is only made for "mix": an SHA trace with sha_num_configs < eta (one
    # rung) equals the random-search trace of the same trials and budget, stage ids aside
    a = generate(cfg(seed=9, num_apps=3, algorithm="sha", sha_num_configs=5, eta=9,
                     gpu_mix={"4": 1}))
    b = generate(cfg(seed=9, num_apps=3, algorithm="random", random_num_trials=5,
                     random_budget=1.0, gpu_mix={"4": 1}))
    for x, y in zip(a.apps, b.apps):
        assert x.arrival_s == y.arrival_s
        assert [(j.hosts, j.iterations, j.coflows) for j in x.stages[0].jobs] == \
            [(j.hosts, j.iterations, j.coflows) for j in y.stages[0].jobs]


@pytest.mark.parametrize("kw, key", [
    ({"algorithm": "mix"}, "workload.tenants"),
    ({"algorithm": "sha", "tenants": [{"algorithm": "random"}]}, "workload.tenants"),
    ({"algorithm": "mix", "tenants": [{"algorithm": "random", "weight": 0.0}]}, "workload.tenants"),
    ({"algorithm": "mix", "tenants": [{"algorithm": "random", "random_num_trials": 0}]},
     "workload.tenants[0].random_num_trials"),
    ({"algorithm": "mix", "tenants": [{"algorithm": "grid"}]}, "workload.tenants[0].algorithm"),
    ({"algorithm": "mix", "tenants": [{"algorithm": "sha", "sha_configs": 3}]},
     "workload.tenants[0].sha_configs"),
    ({"algorithm": "random", "random_budget": 0.0}, "workload.random_budget"),
])
def test_bad_tuner_config_names_the_key(kw, key):
    with pytest.raises(ConfigError, match=key.replace("[", r"\[").replace("]", r"\]")):
        cfg(**kw)
