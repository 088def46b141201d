"""Each policy's published reallocation semantics is the fluid CLI's default and is
recorded in run.json; an explicit ``--realloc`` overrides it."""
import json
import subprocess

import pytest

from emulation.scheduler import POLICIES
from tests.conftest import PYTHON, REPO
from tests.helpers import tiny_trace
from workloads import trace as trace_mod

# what each paper does (see each policy's module docstring): Varys, Sincronia, Baraat and
# Beamer's centralised scheduler decide at coflow-level events; fair sharing is per flow
PUBLISHED = {"varys": "coflow", "sincronia": "coflow", "fifo_lm": "coflow", "fair": "flow"}


def test_declared_defaults():
    for name, cls in POLICIES.items():
        assert cls.default_realloc in ("flow", "coflow"), name
    for name, mode in PUBLISHED.items():
        assert POLICIES[name].default_realloc == mode, name


@pytest.fixture(scope="module")
def trace_file(tmp_path_factory):
    t = tiny_trace([{"id": "a", "stages": [{"id": "s", "jobs": [
        {"id": "j", "coflows": [[(0, 1, 1000), (0, 2, 3000)]]}]}]}])
    p = tmp_path_factory.mktemp("t") / "t.json"
    trace_mod.save(t, p)
    return p


@pytest.mark.parametrize("policy,flag,want,is_default", [
    ("varys", [], "coflow", True), ("fair", [], "flow", True),
    ("varys", ["--realloc", "flow"], "flow", False), ("fair", ["--realloc", "coflow"], "coflow", False),
    ("sincronia", ["--realloc", "queues"], "queues", False)])
def test_cli_default_and_override_recorded(trace_file, tmp_path, policy, flag, want, is_default):
    r = subprocess.run([PYTHON, "-m", "emulation.fluid", str(trace_file), "--policy", policy,
                        "-o", str(tmp_path / "o"), *flag], cwd=REPO, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert f"realloc: {want}" in r.stdout
    run = json.loads((tmp_path / "o" / "run.json").read_text())
    assert run["realloc"] == want and run["realloc_is_policy_default"] is is_default


def test_help_shows_each_policys_default():
    r = subprocess.run([PYTHON, "-m", "emulation.fluid", "--help"], cwd=REPO, capture_output=True,
                       text=True)
    text = " ".join(r.stdout.split())
    for name, cls in POLICIES.items():
        assert f"{name}={cls.default_realloc}" in text


def test_cli_rejects_an_unknown_mode(trace_file, tmp_path):
    r = subprocess.run([PYTHON, "-m", "emulation.fluid", str(trace_file), "--policy", "varys",
                        "-o", str(tmp_path / "o"), "--realloc", "sometimes"], cwd=REPO,
                       capture_output=True, text=True)
    assert r.returncode == 2 and "invalid choice" in r.stderr
