"""Build tiny traces by hand for exact-time tests, and random flows for property tests."""
from __future__ import annotations

from hypothesis import strategies as st

from workloads.trace import App, CoflowSpec, Flow, Job, Stage, Trace


def tiny_trace(apps: list[dict], hosts: int = 4) -> Trace:
    """apps: [{"id", "arrival_s", "stages": [{"id", "deps", "jobs": [{"id", "iters",
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
        out.append(App(a["id"], a.get("arrival_s", 0.0), "test", tuple(stages)))
    return Trace(seed=0, endpoints="hosts", hosts=tuple(f"h{i}" for i in range(hosts)),
                 apps=tuple(out))


def draw_flow(draw, hosts: int, max_bytes: int) -> tuple[int, int, int]:
    """A random (src, dst, bytes) flow between two distinct hosts (hypothesis ``draw``)."""
    src = draw(st.integers(0, hosts - 1))
    dst = draw(st.integers(0, hosts - 2))
    return src, dst + 1 if dst >= src else dst, draw(st.integers(1, max_bytes))
