"""``[experiment] policies`` left out: every registered policy, in registry order. A policy
registered later (README, "Your own experiment", step 3) runs in every such experiment,
and the runs made before it keep their config hashes (the committed ``results/`` stays
done)."""
from collections import Counter

import pytest

from emulation.scheduler import POLICIES
from emulation.scheduler.fifo_lm import FifoLM
from runner.config import load_experiment
from runner.results_dir import run_status
from tests.conftest import REPO
from workloads.config import ConfigError

# the registry as shipped, in the order of emulation/scheduler/__init__.py
SHIPPED = ["beamer", "beamer-coflow", "beamer-sbssi", "beamer-stage-only", "sincronia",
           "fifo_lm", "fair", "varys", "varys-queues"]
ADDED = "fifo_arrival"

SMALL = """
[experiment]
name = "small"
seeds = [1, 2]
{policies}

[workload]
num_apps = 2
max_resource = 3
num_hosts = 8
"""


def write(tmp_path, policies="", name="small.toml"):
    p = tmp_path / name
    p.write_text(SMALL.format(policies=policies))
    return p


def register_added(monkeypatch):
    """A policy appended to the registry, as a user's line in POLICIES does."""
    monkeypatch.setitem(POLICIES, ADDED, FifoLM)


def test_without_policies_every_registered_policy_runs_in_registry_order(tmp_path, monkeypatch):
    cfg = write(tmp_path)
    specs = load_experiment(cfg, full=False)
    assert [s.policy for s in specs] == SHIPPED * 2  # seed 1's runs, then seed 2's
    register_added(monkeypatch)
    specs_added = load_experiment(cfg, full=False)
    assert [s.policy for s in specs_added] == (SHIPPED + [ADDED]) * 2
    assert [s.name for s in specs_added if s.policy == ADDED] == [
        f"policy={ADDED},seed=1", f"policy={ADDED},seed=2"]
    # the shipped policies' runs of each seed are the same runs as before the added one
    before = {s.name: s.config_hash for s in specs}
    assert {s.name: s.config_hash for s in specs_added if s.policy != ADDED} == before


def test_a_listed_policy_set_is_run_as_listed(tmp_path, monkeypatch):
    register_added(monkeypatch)
    specs = load_experiment(write(tmp_path, 'policies = ["fair", "beamer"]'), full=False)
    assert [s.policy for s in specs] == ["fair", "beamer"] * 2
    assert all(s.experiment_cfg["policies"] == ["fair", "beamer"] for s in specs)


def test_listing_the_shipped_policies_is_the_same_runs_as_leaving_the_key_out(tmp_path, monkeypatch):
    """A file without ``policies`` records the shipped names (its config hash); the same
    file with them listed explicitly is the same runs, with another policy registered too."""
    register_added(monkeypatch)
    implicit = load_experiment(write(tmp_path), full=False)
    listed = 'policies = [' + ", ".join(f'"{p}"' for p in SHIPPED) + ']'
    explicit = load_experiment(write(tmp_path, listed, name="listed.toml"), full=False)
    assert all(s.experiment_cfg["policies"] == SHIPPED for s in implicit)
    assert {s.name: s.config_hash for s in explicit} == {
        s.name: s.config_hash for s in implicit if s.policy != ADDED}


def test_an_empty_list_is_an_error(tmp_path):
    with pytest.raises(ConfigError, match="policies and seeds must not be empty"):
        load_experiment(write(tmp_path, "policies = []"), full=False)


def test_registering_a_policy_keeps_the_committed_runs_done(monkeypatch):
    """experiments/pinned_hosts/pattern.toml lists no policies: 2 sync patterns x 3 seeds; the
    committed results/pattern/ holds the 54 runs of the nine shipped policies. With another
    registered they are still done (their run_config.json hashes, written when they were
    run) and the added policy's 6 runs are to run."""
    register_added(monkeypatch)
    specs = load_experiment(REPO / "experiments" / "pinned_hosts" / "pattern.toml", full=False)
    status = Counter((run_status(s, REPO / "results").state, s.policy == ADDED) for s in specs)
    assert status == {("done", False): 54, ("to run", True): 6}


def test_dry_run_lists_the_registered_policy(tmp_path, monkeypatch, capsys):
    import run_experiments as rx
    register_added(monkeypatch)
    out = tmp_path / "res"
    assert rx.main(["--config", str(write(tmp_path)), "--out", str(out), "--dry-run"]) == 0
    lines = capsys.readouterr().out.strip().split("\n")
    assert lines[-1].startswith(f"20 runs into {out}: 0 done") and lines[-1].endswith(
        ", 20 to run"), lines[-1]
    assert f"small/policy={ADDED},seed=2  (to run)" in lines
