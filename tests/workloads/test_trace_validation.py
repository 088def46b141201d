"""Every malformed JSON trace exits 2 with one line naming the field and where it sits."""
import copy
import json
import subprocess

import pytest

from tests.conftest import PYTHON, REPO
from workloads import trace
from workloads.config import build
from workloads.generator import WorkloadConfig, generate


@pytest.fixture(scope="module")
def good():
    t = generate(build(WorkloadConfig, {"seed": 1, "num_apps": 2, "gpu_mix": {"4": 1}}, "workload"))
    return trace.to_dict(t)


def flow0(d):
    return d["apps"][0]["stages"][0]["jobs"][0]["coflows"][0]["flows"][0]


def job0(d):
    return d["apps"][0]["stages"][0]["jobs"][0]


CASES = {
    "negative_size": (lambda d: flow0(d).__setitem__("size_bytes", -5), "size_bytes", "a0/b0r0/b0t"),
    "unknown_host": (lambda d: flow0(d).__setitem__("dst", "h999"), "unknown host 'h999'", "job a0/b0r0"),
    "host_outside_job": (lambda d: flow0(d).__setitem__(
        "dst", next(h for h in d["hosts"] if h not in job0(d)["hosts"])),
        "is not one of the job's 'hosts'", "job a0/b0r0"),
    "src_eq_dst": (lambda d: flow0(d).__setitem__("dst", flow0(d)["src"]), "same host", "stage a0/b0r0"),
    "missing_key": (lambda d: job0(d).pop("compute_s"), "missing key 'compute_s'", "app a0"),
    "wrong_version": (lambda d: d.__setitem__("version", 99), "version", "trace"),
    "bad_type": (lambda d: job0(d).__setitem__("iterations", "3"), "'iterations' must be int", "job a0/"),
    "bad_dep": (lambda d: d["apps"][0]["stages"][1].__setitem__("depends_on", ["zzz"]), "depends_on", "stage a0/b0r1"),
    "dup_id": (lambda d: d["apps"][1].__setitem__("app_id", "a0"), "duplicate app id", "apps[1]"),
    "float_size": (lambda d: flow0(d).__setitem__("size_bytes", 1.5), "size_bytes", "flows[0]"),
}


def run_validate(path):
    return subprocess.run([PYTHON, "-m", "workloads", "validate", str(path)], cwd=REPO,
                          capture_output=True, text=True)


@pytest.mark.parametrize("name", sorted(CASES))
def test_malformed_trace_exits_2_with_one_line(good, tmp_path, name):
    mutate, field, where = CASES[name]
    d = copy.deepcopy(good)
    mutate(d)
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(d))
    r = run_validate(p)
    assert r.returncode == 2, r.stdout + r.stderr
    lines = r.stderr.strip().split("\n")
    assert len(lines) == 1 and "Traceback" not in r.stderr
    assert field in lines[0] and where in lines[0], lines[0]


@pytest.mark.parametrize("name", sorted(CASES))
def test_load_names_the_file_once(good, tmp_path, name):
    """Every reader of a trace (both backends' command lines, the workloads CLI) gets the
    file's path at the head of the message, once."""
    mutate, field, _ = CASES[name]
    d = copy.deepcopy(good)
    mutate(d)
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(d))
    with pytest.raises(trace.TraceError) as info:
        trace.load(p)
    msg = str(info.value)
    assert msg.startswith(f"{p}: ") and msg.count(str(p)) == 1 and field in msg, msg


def test_non_json_and_missing_file(tmp_path):
    p = tmp_path / "x.json"
    p.write_text("{not json")
    r = run_validate(p)
    assert r.returncode == 2 and "not JSON" in r.stderr and "line 1" in r.stderr
    r = run_validate(tmp_path / "nope.json")
    assert r.returncode == 2 and "cannot read" in r.stderr


def test_good_trace_validates_and_summarises(good, tmp_path):
    p = tmp_path / "ok.json"
    p.write_text(json.dumps(good))
    assert run_validate(p).returncode == 0
    r = subprocess.run([PYTHON, "-m", "workloads", "summary", str(p)], cwd=REPO,
                       capture_output=True, text=True)
    assert r.returncode == 0
    fields = dict(line.split(": ", 1) for line in r.stdout.strip().split("\n"))
    assert int(fields["apps"]) == 2 and int(fields["total_bytes"]) > 0


@pytest.mark.slow
def test_generate_cli_is_deterministic(tmp_path):
    out1, out2 = tmp_path / "a.json", tmp_path / "b.json"
    for out in (out1, out2):
        r = subprocess.run([PYTHON, "-m", "workloads", "generate", "experiments/default.toml",
                            "-o", str(out)], cwd=REPO, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
    assert out1.read_bytes() == out2.read_bytes()


def test_unknown_key_is_rejected_in_the_config_loaders_form(good, tmp_path):
    """A misspelt key used to pass (or to be reported as the right one missing)."""
    d = copy.deepcopy(good)
    job = d["apps"][0]["stages"][1]["jobs"][0]
    job["compute_seconds"] = job.pop("compute_s")
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(d))
    r = run_validate(p)
    assert r.returncode == 2
    assert r.stderr.startswith(f"error: {p}: unknown key "
                               "'apps[0].stages[1].jobs[0].compute_seconds' (known: ")
    assert "compute_s, gpus, hosts" in r.stderr


@pytest.mark.parametrize("mutate,key", [
    (lambda d: d.__setitem__("comment", "x"), "'comment'"),
    (lambda d: d["apps"][1].__setitem__("arrival", 1.0), "'apps[1].arrival'"),
    (lambda d: d["apps"][0]["stages"][0].__setitem__("deps", []), "'apps[0].stages[0].deps'"),
    (lambda d: job0(d)["coflows"][0].__setitem__("id", 3), "'apps[0].stages[0].jobs[0].coflows[0].id'"),
    (lambda d: flow0(d).__setitem__("bytes", 3), "'apps[0].stages[0].jobs[0].coflows[0].flows[0].bytes'"),
])
def test_unknown_key_at_every_level(good, tmp_path, mutate, key):
    d = copy.deepcopy(good)
    mutate(d)
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(d))
    r = run_validate(p)
    assert r.returncode == 2 and r.stderr.startswith(f"error: {p}: unknown key {key} (known: "), \
        r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_meta_stays_free_form(good, tmp_path):
    d = copy.deepcopy(good)
    d["meta"]["anything"] = {"nested": [1, 2]}
    p = tmp_path / "ok.json"
    p.write_text(json.dumps(d))
    assert run_validate(p).returncode == 0
