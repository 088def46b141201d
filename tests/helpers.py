"""Build tiny traces by hand for exact-time tests, random flows and traces for property
tests, and compare two runs' records exactly."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from workloads.trace import App, CoflowSpec, Flow, Job, Stage, Trace


def tiny_trace(apps: list[dict], hosts: int = 4) -> Trace:
    """apps: [{"id", "arrival_s", "algorithm" (default "test"), "stages": [{"id", "deps", "jobs": [{"id", "iters",
    "compute_s", "coflows": [[(src, dst, bytes), ...], ...]}]}]}]"""
    out = []
    for a in apps:
        stages = []
        for s in a["stages"]:
            jobs = tuple(
                Job(job_id=j["id"], trial_id=j["id"], model="test", pattern="test", hosts=(),
                    iterations=j.get("iters", 1), compute_s=j.get("compute_s", 0.0),
                    coflows=tuple(CoflowSpec(tuple(Flow(f"h{x}", f"h{y}", b) for x, y, b in c))
                                  for c in j["coflows"]))
                for j in s["jobs"])
            stages.append(Stage(s["id"], a["id"], s.get("weight", 1.0), tuple(s.get("deps", ())), jobs))
        out.append(App(a["id"], a.get("arrival_s", 0.0), a.get("algorithm", "test"),
                       tuple(stages)))
    return Trace(seed=0, endpoints="hosts", hosts=tuple(f"h{i}" for i in range(hosts)),
                 apps=tuple(out))


def draw_flow(draw, hosts: int, max_bytes: int) -> tuple[int, int, int]:
    """A random (src, dst, bytes) flow between two distinct hosts (hypothesis ``draw``)."""
    src = draw(st.integers(0, hosts - 1))
    dst = draw(st.integers(0, hosts - 2))
    return src, dst + 1 if dst >= src else dst, draw(st.integers(1, max_bytes))


@st.composite
def one_stage_traces(draw, hosts: int = 4, max_apps: int = 3, max_flows: int = 5):
    """Random traces: 1..max_apps one-stage apps arriving at 0, 1 or 2.5 s, each of 1-3
    jobs (1-2 iterations, compute 0-1 s) of 1-2 coflows of 1..max_flows flows of <= 50 B."""
    apps = []
    for a in range(draw(st.integers(1, max_apps))):
        jobs = [{"id": f"a{a}j{j}", "iters": draw(st.integers(1, 2)),
                 "compute_s": draw(st.sampled_from([0.0, 0.5, 1.0])),
                 "coflows": [[draw_flow(draw, hosts, 50)
                              for _ in range(draw(st.integers(1, max_flows)))]
                             for _ in range(draw(st.integers(1, 2)))]}
                for j in range(draw(st.integers(1, 3)))]
        apps.append({"id": f"a{a}", "arrival_s": draw(st.sampled_from([0.0, 1.0, 2.5])),
                     "stages": [{"id": f"a{a}s0", "jobs": jobs}]})
    return tiny_trace(apps, hosts=hosts)


def assert_same_records(a, b) -> None:
    """Two runs' flow, coflow and stage records are identical (floats bit for bit)."""
    for col in ("start_s", "end_s", "size_bytes", "release_s"):
        assert np.array_equal(a.flows[col], b.flows[col]), col
    assert list(a.flows["flow_id"]) == list(b.flows["flow_id"])
    assert a.coflows == b.coflows
    assert a.stages == b.stages


def small_hyperband_trace(seed: int):
    """A generated trace of 3 Hyperband apps (R = 9, eta = 3, 2- and 4-GPU ResNet-50
    trials) on 16 hosts, for comparing two engine paths on realistic structure."""
    from workloads.config import build
    from workloads.generator import WorkloadConfig, generate
    return generate(build(WorkloadConfig, {
        "seed": seed, "num_apps": 3, "algorithm": "hyperband", "max_resource": 9, "eta": 3,
        "iterations_per_unit": 2, "gpu_mix": {"2": 1, "4": 1}, "models": {"resnet50": 1},
        "num_hosts": 16, "arrival_rate_per_s": 0.2}, "workload"))


def child_pids(pid: int) -> list[int]:
    """Live processes (zombies excluded) whose parent is ``pid``, from /proc."""
    import os
    from emulation.lifetime import process_start_ticks
    kids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError):
                continue
            if ppid == pid and process_start_ticks(int(entry)) is not None:
                kids.append(int(entry))
    return kids
