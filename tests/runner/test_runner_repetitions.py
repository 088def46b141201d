"""Packet-level experiments expanded into runs: repetitions named and hashed one by one,
run policy by policy within each repetition; a fluid realloc mode refused for the
packet backend, repetitions refused for the deterministic fluid one."""
import pytest

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
    from runner.config import load_experiment
    p = tmp_path / "pkt.toml"
    p.write_text(PKT.format(reps=2))
    specs = load_experiment(p, full=False)
    assert sorted(s.name for s in specs) == ["policy=beamer,seed=5,rep=0", "policy=beamer,seed=5,rep=1",
                                              "policy=fair,seed=5,rep=0", "policy=fair,seed=5,rep=1"]
    assert len({s.config_hash for s in specs}) == 4
    assert [s.repetition for s in specs if s.policy == "fair"] == [0, 1]
    assert len(load_experiment(p, full=True)) == 6


def test_packet_level_repetitions_run_policy_by_policy_within_each_repetition(tmp_path):
    """Paired runs are made back to back: per seed, repetition 0 of every policy (in the
    file's order), then repetition 1 of every policy, ..., so that the machine's state
    drifting over a long batch does not fall on one policy's runs only."""
    from runner.config import load_experiment
    p = tmp_path / "pkt.toml"
    p.write_text(PKT.format(reps=3).replace("seeds = [5]", "seeds = [5, 6]"))
    assert [s.name for s in load_experiment(p, full=False)] == [
        f"policy={pol},seed={seed},rep={rep}"
        for seed in (5, 6) for rep in (0, 1, 2) for pol in ("beamer", "fair")]


@pytest.mark.parametrize("mode", ["flow", "coflow", "queues"])
def test_packet_level_experiment_rejects_a_fluid_realloc(tmp_path, mode):
    """The packet backend decides at each policy's published events whatever the file
    says: a realloc mode that would change only its twin is refused, naming the key."""
    from runner.config import load_experiment
    from workloads.config import ConfigError
    p = tmp_path / "pkt.toml"
    p.write_text(PKT.format(reps=1).replace("[experiment]\n", f'[experiment]\nrealloc = "{mode}"\n'))
    with pytest.raises(ConfigError, match=f"realloc: the mininet backend .* realloc \"{mode}\" "
                                          "applies to fluid runs only"):
        load_experiment(p, full=False)
    p.write_text(PKT.format(reps=1).replace("[experiment]\n", '[experiment]\nrealloc = "policy"\n'))
    assert len(load_experiment(p, full=False)) == 2


def test_repetitions_rejected_for_the_deterministic_fluid_backend(tmp_path):
    from runner.config import load_experiment
    from workloads.config import ConfigError
    p = tmp_path / "pkt.toml"
    p.write_text(PKT.format(reps=2).replace('backend = "mininet"', 'backend = "fluid"'))
    with pytest.raises(ConfigError, match="repetitions"):
        load_experiment(p, full=False)
    p.write_text(PKT.format(reps=0))
    with pytest.raises(ConfigError, match="repetitions: must be >= 1"):
        load_experiment(p, full=False)
