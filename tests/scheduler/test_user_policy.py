"""A user's own policy, added exactly as the README says (one class in
``emulation/scheduler/`` and its line in ``POLICIES``), in a temporary copy of the
repository, run through ``run_experiments.py`` on two tiny configs: the new policy is in
every table of summary.md, in every table CSV and in every figure's data, with one colour
everywhere; without beamer in the configs the ratios are taken against the first policy in
registry order; the copy's committed ``results/`` is left as it was."""
import hashlib
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import PYTHON, REPO

NEEDED = ("run_experiments.py", "runner", "schema", "analysis", "emulation", "workloads",
          "experiments")


def repo_copy(dest: Path) -> Path:
    """The parts of the repository a run needs (no .venv, .git, results, data), copied with
    their timestamps so numba's kernel cache in ``emulation/__pycache__`` stays valid; a
    stand-in ``results/`` (summary, a table and one run record) to check nothing writes
    there."""
    from emulation import kernels
    kernels.warm_up()  # the cache the copy reuses (compiled once per checkout otherwise)
    dest.mkdir(parents=True)
    for name in NEEDED:
        src = REPO / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("*.pyc"))
        else:
            shutil.copy2(src, dest / name)
    ref = dest / "results"
    (ref / "tables").mkdir(parents=True)
    (ref / "summary.md").write_text("# the committed reference summary\n")
    (ref / "tables" / "runs.csv").write_text("experiment,policy\nload,beamer\n")
    run = REPO / "results" / "pattern" / "sync_pattern=ps,policy=fair,seed=1"
    shutil.copytree(run, ref / "pattern" / run.name, ignore=shutil.ignore_patterns("flows.csv"))
    return dest


def tree_digest(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


POLICY_FILE = '''"""FIFO by arrival: coflows in release order, ranks mapped to classes (a user's example)."""
from __future__ import annotations

import numpy as np

from emulation.scheduler.base import Decision, Policy, View


class FifoArrival(Policy):
    name = "fifo_arrival"

    def decide(self, view: View) -> Decision:
        return Decision(order=np.argsort(view.coflow_seq, kind="stable"))
'''

CONFIGS = {
    "mine": """
[experiment]
name = "mine"
policies = ["fifo_arrival", "sincronia", "fair"]
seeds = [1]
figure = "line"

[workload]
num_apps = 3
max_resource = 3
num_hosts = 8
gpu_mix = { "2" = 1.0, "4" = 1.0 }

[sweep]
"workload.arrival_rate_per_s" = [0.05, 0.2]
""",
    "cong-mine": """
[experiment]
name = "cong-mine"
policies = ["fifo_arrival", "sincronia", "fair"]
seeds = [1]

[workload]
num_apps = 3
max_resource = 3
num_hosts = 8
gpu_mix = { "2" = 1.0 }
""",
}


def add_policy(repo: Path) -> None:
    """What the README tells a user to do: a class in emulation/scheduler/, its line in
    POLICIES."""
    (repo / "emulation" / "scheduler" / "fifo_arrival.py").write_text(POLICY_FILE)
    init = repo / "emulation" / "scheduler" / "__init__.py"
    text = init.read_text()
    text = text.replace("from emulation.scheduler.fifo_lm import FifoLM\n",
                        "from emulation.scheduler.fifo_lm import FifoLM\n"
                        "from emulation.scheduler.fifo_arrival import FifoArrival\n", 1)
    text = text.replace("Fair, Varys, VarysQueues)", "Fair, Varys, VarysQueues, FifoArrival)", 1)
    assert "FifoArrival)" in text, "the registry line moved: update this test's edit"
    init.write_text(text)


def markdown_tables(text: str) -> list[str]:
    tables, cur = [], []
    for line in text.splitlines() + [""]:
        if line.startswith("|"):
            cur.append(line)
        elif cur:
            tables.append("\n".join(cur))
            cur = []
    return tables


@pytest.mark.slow
def test_a_new_policy_is_reported_everywhere(tmp_path):
    repo = repo_copy(tmp_path / "repo")
    add_policy(repo)
    for name, body in CONFIGS.items():
        (tmp_path / f"{name}.toml").write_text(body)
    before = tree_digest(repo / "results")
    out = tmp_path / "out"
    r = subprocess.run([PYTHON, "run_experiments.py", "--config", str(tmp_path / "mine.toml"),
                        "--config", str(tmp_path / "cong-mine.toml"), "--out", str(out),
                        "--jobs", "1"], cwd=repo, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert tree_digest(repo / "results") == before  # the reference is not touched
    assert f"results: {out}" in r.stdout
    text = (out / "summary.md").read_text()
    # no beamer in these configs: the reference is the first policy in registry order
    assert "Reference policy of every ratio (`sincronia` / other, < 1: `sincronia` faster): `sincronia`" in text
    assert "`sincronia`, `fair`, `fifo_arrival`" in text  # registry order, the new one last
    # every table that compares policies has the new one; the trial processes per host
    # are the workload's (counted on the reference policy's runs), not a policy's
    tables = [t for t in markdown_tables(text) if "peak on one host" not in t]
    assert len(tables) >= 3  # ratios, distance from the LB, congestion family
    for t in tables:
        assert "fifo_arrival" in t, t
    assert "nan" not in text.lower()
    for csv in sorted((out / "tables").glob("*.csv")):
        if csv.name != "host_load.csv":
            assert "fifo_arrival" in csv.read_text(), csv.name
    figures = sorted((out / "figures").glob("*.csv"))
    assert {f.stem for f in figures} == {
        "mine_normalised_avg_sct", "mine_avg_sct_vs_arrival_rate_per_s", "cong-mine_normalised_avg_sct",
        "cong-mine_sct_cdf", "ratio_to_lower_bound"}  # CDF: the first experiment (no "pattern")
    colours = set()
    for f in figures:
        assert (out / "figures" / f"{f.stem}.png").stat().st_size > 10_000
        df = pd.read_csv(f)
        mine = df[df["policy"] == "fifo_arrival"]
        assert len(mine) and mine.drop(columns="colour").notna().any(axis=None), f.name
        colours |= set(mine["colour"])
        ratio = "avg_sct_ratio_ref_over_policy_mean"
        if ratio in df:  # ratios to the reference are defined for the new policy
            assert mine[ratio].notna().all(), f.name
    assert len(colours) == 1  # one colour for the policy in every figure
