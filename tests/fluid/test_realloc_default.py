"""The fluid CLI and the suite run every policy in its default mode unless asked
otherwise (``policy``: as the packet backend enforces it, ``Policy.realloc_mode``), say so
before the run and record where the mode came from; ``--realloc flow|coflow|queues`` runs
every policy under one mode; a policy that declares no published mode gets ``flow``, and
the settings say it declares none."""
import dataclasses
import json
import subprocess

import numpy as np
import pytest

from emulation.fluid.__main__ import DEFAULT_REALLOC
from emulation.scheduler import POLICIES, Decision, Policy
from schema.experiment import ExperimentSection
from tests.conftest import PYTHON, REPO
from tests.helpers import tiny_trace
from workloads import trace as trace_mod

# what each paper does (see each policy's module docstring): Varys, Sincronia, Baraat and
# Beamer's centralised scheduler decide at coflow-level events; fair sharing is per flow
PUBLISHED = {"varys": "coflow", "sincronia": "coflow", "fifo_lm": "coflow", "fair": "flow",
             "beamer": "coflow", "beamer-coflow": "coflow", "beamer-sbssi": "coflow",
             "beamer-stage-only": "coflow",
             # the ablation: Varys under the priority policies' rule, not a published mode
             "varys-queues": "queues"}


def test_declared_defaults():
    """Every shipped policy declares its published mode itself (or through the policy it
    derives from), and keeps the one it always had."""
    assert set(PUBLISHED) == set(POLICIES)
    for name, mode in PUBLISHED.items():
        assert POLICIES[name].default_realloc == mode, name
        assert POLICIES[name].declared_realloc() == mode, name


class Undeclared(Policy):
    """A user's policy written as README step 3 says: no default_realloc."""
    name = "undeclared"

    def decide(self, view):
        return Decision(order=np.arange(view.num_coflows))


class Declared(Undeclared):
    name = "declared"
    default_realloc = "coflow"


# the mode each shipped policy runs in by default, from what the packet backend enforces
# (docs/design.md, section 6.3): a strict-priority policy deciding at coflow events has its
# switch queues re-share the rates at every flow completion; Varys's agents pace MADD rates
# held between coflow events; fair sharing is TCP's, per flow
ENFORCED = {"varys": "coflow", "sincronia": "queues", "fifo_lm": "queues", "fair": "flow",
            "beamer": "queues", "beamer-coflow": "queues", "beamer-sbssi": "queues",
            "beamer-stage-only": "queues", "varys-queues": "queues"}


def test_each_policy_runs_as_the_packet_backend_enforces_it():
    assert set(ENFORCED) == set(POLICIES)
    for name, mode in ENFORCED.items():
        assert POLICIES[name].realloc_mode() == mode, name


class Paced(Declared):
    name = "paced"
    allocation = "madd"


def test_a_policy_that_declares_no_mode_gets_flow():
    """The base class's default, ``flow``, is not a declaration: the Mininet scheduler
    asks such a policy at every flow completion and its fluid twin recomputes at every
    flow completion."""
    assert Undeclared.default_realloc == "flow" and Undeclared.declared_realloc() is None
    assert Declared.declared_realloc() == "coflow"
    assert type("Derived", (Declared,), {}).declared_realloc() == "coflow"  # inherited
    assert Undeclared.realloc_mode() == "flow"
    assert Declared.realloc_mode() == "queues"
    assert Paced.realloc_mode() == "coflow"  # MADD keeps its rates between coflow events
    # a run asked for "policy" (or no mode) takes realloc_mode(); any other mode is kept
    assert [Declared.resolve_realloc(m) for m in (None, "policy", "flow", "coflow")] == [
        "queues", "queues", "flow", "coflow"]


@pytest.mark.parametrize("realloc,source,want", [
    ("policy", "default", "realloc: flow (the default: undeclared declares no published "
                          "mode)"),
    ("policy", "--realloc", "realloc: flow (from --realloc: undeclared declares no "
                            "published mode)"),
    ("coflow", "--realloc", "realloc: coflow (from --realloc; undeclared declares no "
                            "published mode)")])
def test_settings_say_a_policy_declares_no_mode(monkeypatch, realloc, source, want):
    from emulation.fluid.__main__ import build_parser, header
    from emulation.topology import TopologyConfig, big_switch
    monkeypatch.setitem(POLICIES, "undeclared", Undeclared)
    opts = {"realloc": realloc, "realloc_source": source, "priority_classes": 8,
            "release_at_zero": False}
    lines = header("undeclared", big_switch(2, 10e9), TopologyConfig(), opts).splitlines()
    assert lines[1] == want
    help_text = " ".join(build_parser().format_help().split())
    for entry in ("undeclared=flow (declares none) -> flow", "beamer=coflow -> queues",
                  "varys=coflow -> coflow"):
        assert f" {entry}" in help_text, entry


@pytest.mark.parametrize("policy,opts,want", [
    ("beamer", {"realloc": "policy", "realloc_source": "default"},
     "realloc: queues (the default: beamer decides at coflow-level events as published, "
     "its classes re-share the rates at every flow completion as switch queues do)"),
    ("varys", {"realloc": "policy", "realloc_source": "default"},
     "realloc: coflow (the default: varys's published mode)"),
    ("fair", {"realloc": "policy", "realloc_source": "--realloc"},
     "realloc: flow (from --realloc: fair's published mode)"),
    ("beamer", {"realloc": "flow", "realloc_source": "--realloc"},
     "realloc: flow (from --realloc; beamer's default is queues: --realloc policy)"),
    ("varys", {"realloc": "coflow", "realloc_source": "--realloc"},
     "realloc: coflow (from --realloc)")])
def test_settings_name_the_mode_and_why(policy, opts, want):
    from emulation.fluid.__main__ import header
    from emulation.topology import TopologyConfig, big_switch
    opts = {**opts, "priority_classes": 8, "release_at_zero": False}
    assert header(policy, big_switch(2, 10e9), TopologyConfig(), opts).splitlines()[1] == want


def test_cli_default_is_the_suites():
    suite = {f.name: f.default for f in dataclasses.fields(ExperimentSection)}["realloc"]
    assert DEFAULT_REALLOC == suite == "policy"


@pytest.fixture(scope="module")
def trace_file(tmp_path_factory):
    t = tiny_trace([{"id": "a", "stages": [{"id": "s", "jobs": [
        {"id": "j", "coflows": [[(0, 1, 1000), (0, 2, 3000)]]}]}]}])
    p = tmp_path_factory.mktemp("t") / "t.json"
    trace_mod.save(t, p)
    return p


def run_cli(trace_file, out, policy, *flags):
    return subprocess.run([PYTHON, "-m", "emulation.fluid", str(trace_file), "--policy", policy,
                           "-o", str(out), *flags], cwd=REPO, capture_output=True, text=True)


@pytest.mark.parametrize("policy,flag,want,is_default,source", [
    # the default: each policy as the packet backend enforces it
    ("beamer", [], "queues", True, "default"), ("varys", [], "coflow", True, "default"),
    ("fair", [], "flow", True, "default"),
    ("beamer", ["--realloc", "policy"], "queues", True, "--realloc"),
    # ablations: one mode for every policy
    ("beamer", ["--realloc", "flow"], "flow", False, "--realloc"),
    ("varys", ["--realloc", "flow"], "flow", False, "--realloc"),
    ("fair", ["--realloc", "coflow"], "coflow", False, "--realloc"),
    ("sincronia", ["--realloc", "queues"], "queues", False, "--realloc")])
@pytest.mark.slow
def test_cli_default_and_override_recorded(trace_file, tmp_path, policy, flag, want,
                                           is_default, source):
    r = run_cli(trace_file, tmp_path / "o", policy, *flag)
    assert r.returncode == 0, r.stderr
    out = r.stdout.splitlines()
    line = next(i for i, ln in enumerate(out) if ln.startswith("realloc: "))
    assert out[line].split()[1] == want
    assert line < next(i for i, ln in enumerate(out) if ln.startswith("avg_sct_s"))  # said first
    run = json.loads((tmp_path / "o" / "run.json").read_text())
    assert run["realloc"] == want and run["realloc_is_policy_default"] is is_default
    assert run["realloc_source"] == source
    assert run["policy_default_realloc"] == POLICIES[policy].default_realloc


@pytest.mark.slow
def test_policies_run_in_their_own_modes_by_default(trace_file, tmp_path):
    """The README's everyday commands (no --realloc) run each policy in its own mode."""
    modes = {}
    for p in ("beamer", "fair", "sincronia", "varys"):
        assert run_cli(trace_file, tmp_path / p, p).returncode == 0
        modes[p] = json.loads((tmp_path / p / "run.json").read_text())["realloc"]
    assert modes == {"beamer": "queues", "fair": "flow", "sincronia": "queues",
                     "varys": "coflow"}


def test_help_shows_each_policys_published_mode():
    r = subprocess.run([PYTHON, "-m", "emulation.fluid", "--help"], cwd=REPO, capture_output=True,
                       text=True)
    text = " ".join(r.stdout.split())
    for name, cls in POLICIES.items():
        assert f"{name}={cls.default_realloc} -> {cls.realloc_mode()}" in text
    assert "policy (default, the suite's): each policy as the packet backend runs it" in text


def test_cli_rejects_an_unknown_mode(trace_file, tmp_path):
    r = run_cli(trace_file, tmp_path / "o", "varys", "--realloc", "sometimes")
    assert r.returncode == 2 and "invalid choice" in r.stderr
