"""``python -m workloads generate`` takes every experiment TOML of the suite: it uses
[workload] (seeded by the experiment's first seed when [workload] has none) and names on
stderr, in one line, the tables it does not use, [topology] with how to apply it."""
import json
import subprocess

import pytest

from runner.config import load_experiment
from tests.conftest import PYTHON, REPO
from workloads import trace as trace_mod
from workloads.cluster import ClusterConfig
from workloads.config import build, load_toml
from workloads.generator import WorkloadConfig, generate

TOMLS = sorted((REPO / "experiments").rglob("*.toml"))  # both suites


def gen(config, out, *flags):
    return subprocess.run([PYTHON, "-m", "workloads", "generate", str(config), "-o", str(out),
                           *flags], cwd=REPO, capture_output=True, text=True)


@pytest.mark.slow
@pytest.mark.parametrize("path", TOMLS, ids=[p.name for p in TOMLS])
def test_every_experiment_toml_generates(path, tmp_path):
    r = gen(path.relative_to(REPO), tmp_path / "t.json")
    assert r.returncode == 0, r.stderr
    err = r.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("note: "), r.stderr
    if "topology" in load_toml(path):
        assert "[topology] (apply it: python -m emulation.fluid TRACE --config" in err[0]
    t = trace_mod.load(tmp_path / "t.json")  # valid
    spec = load_experiment(path, full=False)[0]
    if spec.trace_path:  # the experiment runs a trace file: that file, as JSON
        from workloads import coflow_benchmark
        assert trace_mod.sha256(t) == trace_mod.sha256(coflow_benchmark.load_any(spec.trace_path))
        assert "[workload] (the experiment runs experiment.trace)" in err[0]
        return
    exp = load_toml(path).get("experiment", {})
    wl = load_toml(path).get("workload", {})
    want_seed = wl.get("seed", exp.get("seeds", [1])[0])
    assert t.seed == want_seed
    if not load_toml(path).get("sweep"):
        # no sweep: the suite's own trace for that seed, byte for byte
        cluster = build(ClusterConfig, spec.cluster, "cluster") if spec.cluster else None
        ref = generate(build(WorkloadConfig, spec.workload, "workload"), cluster=cluster)
        assert spec.seed == want_seed and trace_mod.dumps(ref) == trace_mod.dumps(t)


@pytest.mark.slow
def test_seed_option_and_experiment_seeds(tmp_path):
    cfg = tmp_path / "x.toml"
    cfg.write_text('[experiment]\nname = "x"\nseeds = [7, 8]\n\n[workload]\nnum_apps = 1\n')
    r = gen(cfg, tmp_path / "a.json")
    assert r.returncode == 0 and "seed 7 = experiment.seeds[0]" in r.stderr
    assert trace_mod.load(tmp_path / "a.json").seed == 7
    r = gen(cfg, tmp_path / "b.json", "--seed", "9")
    assert r.returncode == 0 and trace_mod.load(tmp_path / "b.json").seed == 9
    only = tmp_path / "only.toml"
    only.write_text("[workload]\nnum_apps = 1\nseed = 3\n")
    r = gen(only, tmp_path / "c.json")
    assert r.returncode == 0 and r.stderr == ""  # nothing unused, nothing said


def test_generate_makes_the_output_directory(tmp_path):
    """README: ``generate ... -o runs/trace.json`` in a fresh clone, where runs/ is not there."""
    cfg = tmp_path / "x.toml"
    cfg.write_text("[workload]\nnum_apps = 1\nseed = 3\n")
    out = tmp_path / "runs" / "deeper" / "t.json"
    r = gen(cfg, out)
    assert r.returncode == 0, r.stderr
    assert trace_mod.load(out).seed == 3


@pytest.mark.parametrize("text,needle", [
    ("[workloadd]\nseed = 1\n", "unknown key 'workloadd' (known tables: "),
    ("[workload]\nnum_app = 1\n", "unknown key 'workload.num_app' (known: "),
    ("[topology]\nlink_rate = 1e9\n", "unknown key 'topology.link_rate' (known: "),
    ("[experiment]\nname = \"x\"\nseed = [1]\n", "unknown key 'experiment.seed' (known: "),
])
@pytest.mark.slow
def test_bad_tables_exit_2_with_one_line(tmp_path, text, needle):
    cfg = tmp_path / "x.toml"
    cfg.write_text(text)
    r = gen(cfg, tmp_path / "t.json")
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0] and str(cfg) in lines[0], r.stderr
    assert not (tmp_path / "t.json").exists()


def test_help_explains_generate():
    r = subprocess.run([PYTHON, "-m", "workloads", "generate", "--help"], cwd=REPO,
                       capture_output=True, text=True)
    text = " ".join(r.stdout.split())
    for needle in ("experiments/*.toml", "[experiment] seeds", "seconds", "bytes", "TRACE.json"):
        assert needle in text, needle
    r = subprocess.run([PYTHON, "-m", "workloads", "--help"], cwd=REPO, capture_output=True,
                       text=True)
    assert "[topology]" in r.stdout and "emulation.fluid" in r.stdout
