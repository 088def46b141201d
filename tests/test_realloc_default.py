"""The fluid CLI runs every policy under the suite's reallocation rule (``flow``) unless
asked otherwise, says so before the run and records where the mode came from;
``--realloc policy`` gives each policy's published semantics; a policy that declares none
gets the suite's ``flow``, and the settings say it declares none."""
import dataclasses
import json
import subprocess

import numpy as np
import pytest

from emulation.fluid.__main__ import DEFAULT_REALLOC
from emulation.scheduler import POLICIES, Decision, Policy
from runner.config import ExperimentSection
from tests.conftest import PYTHON, REPO
from tests.helpers import tiny_trace
from workloads import trace as trace_mod

# what each paper does (see each policy's module docstring): Varys, Sincronia, Baraat and
# Beamer's centralised scheduler decide at coflow-level events; fair sharing is per flow
PUBLISHED = {"varys": "coflow", "sincronia": "coflow", "fifo_lm": "coflow", "fair": "flow",
             "beamer": "coflow", "beamer-coflow": "coflow", "beamer-sbssi": "coflow",
             "beamer-stage-only": "coflow"}


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


def test_a_policy_that_declares_no_mode_gets_the_suites():
    """The base class's default is the suite's rule, ``flow``, and is not a declaration:
    the Mininet scheduler asks such a policy at every flow completion and its fluid twin
    recomputes at every flow completion (no "queues" override), as the suite does."""
    from runner.execute import twin_realloc
    assert Undeclared.default_realloc == "flow" and Undeclared.declared_realloc() is None
    assert Declared.declared_realloc() == "coflow"
    assert type("Derived", (Declared,), {}).declared_realloc() == "coflow"  # inherited
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(POLICIES, "undeclared", Undeclared)
        mp.setitem(POLICIES, "declared", Declared)
        assert twin_realloc("undeclared") is None  # run_fluid then takes "flow"
        assert twin_realloc("declared") == "queues"
    assert twin_realloc("beamer") == "queues" and twin_realloc("fair") is None  # as before


@pytest.mark.parametrize("realloc,source,want", [
    ("flow", "default", "realloc: flow (the default for every policy, as in the suite; "
                        "undeclared declares no published mode)"),
    ("policy", "--realloc", "realloc: flow (from --realloc: undeclared declares no published "
                            "mode; using the suite's flow)"),
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
    # a shipped policy still names its published mode
    beamer = header("beamer", big_switch(2, 10e9), TopologyConfig(),
                    {**opts, "realloc": "flow", "realloc_source": "default"}).splitlines()
    assert beamer[1] == ("realloc: flow (the default for every policy, as in the suite; "
                         "beamer's published mode is coflow: --realloc policy)")
    help_text = build_parser().format_help()
    assert "  undeclared=flow (declares none: the suite's rule)" in help_text
    assert "  beamer=coflow\n" in help_text


def test_cli_default_is_the_suites():
    suite = {f.name: f.default for f in dataclasses.fields(ExperimentSection)}["realloc"]
    assert DEFAULT_REALLOC == suite == "flow"


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
    # the default: flow for every policy, whatever it was published with
    ("beamer", [], "flow", False, "default"), ("varys", [], "flow", False, "default"),
    ("fair", [], "flow", False, "default"),
    # each policy's published mode on request
    ("beamer", ["--realloc", "policy"], "coflow", True, "--realloc"),
    ("varys", ["--realloc", "policy"], "coflow", True, "--realloc"),
    ("fair", ["--realloc", "policy"], "flow", True, "--realloc"),
    # ablations
    ("fair", ["--realloc", "coflow"], "coflow", False, "--realloc"),
    ("sincronia", ["--realloc", "queues"], "queues", False, "--realloc")])
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


def test_policies_compared_under_one_rule_by_default(trace_file, tmp_path):
    """The README's everyday commands (no --realloc) run beamer and fair alike."""
    modes = set()
    for p in ("beamer", "fair", "sincronia", "varys"):
        assert run_cli(trace_file, tmp_path / p, p).returncode == 0
        modes.add(json.loads((tmp_path / p / "run.json").read_text())["realloc"])
    assert modes == {"flow"}


def test_help_shows_each_policys_published_mode():
    r = subprocess.run([PYTHON, "-m", "emulation.fluid", "--help"], cwd=REPO, capture_output=True,
                       text=True)
    text = " ".join(r.stdout.split())
    for name, cls in POLICIES.items():
        assert f"{name}={cls.default_realloc}" in text
    assert "default for every policy" in text and "policy: each policy's published mode" in text


def test_cli_rejects_an_unknown_mode(trace_file, tmp_path):
    r = run_cli(trace_file, tmp_path / "o", "varys", "--realloc", "sometimes")
    assert r.returncode == 2 and "invalid choice" in r.stderr
