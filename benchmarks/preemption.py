"""What a packet-level priority change costs one flow, on the smallest traces that show it
(Mininet, as root; each run about 6 s):

    .venv/bin/python benchmarks/preemption.py [--reps 3] [--policy sincronia]

Three traces on a 4-host big switch at the testbed's scale (10 Gbit/s emulated at 30
Mbit/s, time x 2), every flow h0 -> h1, each one its own tuning job, and 153,820,272
trace bytes (0.123 trace s alone on a link):

- ``lone``: one flow;
- ``same path``: three such flows released together (the policy gives them classes
  0, 1, 2: the first is served while two lower classes wait on the same links);
- ``preempt``: a flow four times that size released at 0, then one of the single size at
  0.05 s, which the policy puts ahead of it (class 0), demoting the first.

Printed per run: each flow's first and last payload packet at the receiver's switch port
(from the capture, trace seconds) and its duration against the fluid twin's. The fluid
model gives the preempting flow the whole link at once; at packet level it waits while
packets the demoted flow already queued in its class drain, unless the preempting flow
gets a class above that one (``emulation/mininet/qos.py``, ``queue_safe_classes``;
``docs/testbed.md``, rows 28-31).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from workloads.cli import ArgumentParser  # noqa: E402  (one-line usage errors)

FLOW_BYTES = 153_820_272  # 0.123 s at 10 Gbit/s


def _trace(flows: list[tuple[float, int]]):
    """One single-flow job per (arrival_s, bytes), h0 -> h1, on hosts h0..h3."""
    from workloads.trace import App, CoflowSpec, Flow, Job, Stage, Trace
    apps = []
    for k, (arrival_s, size) in enumerate(flows):
        job = Job(job_id=f"J{k}", trial_id=f"J{k}", model="test", pattern="test", hosts=(),
                  iterations=1, compute_s=0.0,
                  coflows=(CoflowSpec((Flow("h0", "h1", size),)),))
        apps.append(App(f"a{k}", arrival_s, "test", (Stage(f"S{k}", f"a{k}", 1.0, (), (job,)),)))
    return Trace(seed=0, endpoints="hosts", hosts=("h0", "h1", "h2", "h3"), apps=tuple(apps))


CASES = {
    "lone": [(0.0, FLOW_BYTES)],
    "same path": [(0.0, FLOW_BYTES)] * 3,
    "preempt": [(0.0, 4 * FLOW_BYTES), (0.05, FLOW_BYTES)],
}


def run_case(name: str, policy: str, workdir: Path) -> list[tuple[str, float, float, float]]:
    """(flow id, first packet s, last packet s, twin's duration s) per flow of one run."""
    import pandas as pd
    from emulation.mininet.run import run_mininet
    from emulation.topology import TopologyConfig
    from workloads import trace as trace_mod
    tr = _trace(CASES[name])
    path = workdir / f"{name.replace(' ', '_')}.json"
    trace_mod.save(tr, path)
    out = workdir / "run"
    run_mininet(trace=tr, trace_path=path, topo_cfg=TopologyConfig(), policy=policy, outdir=out)
    cap = pd.read_csv(out / "flows_capture.csv")
    twin = run_twin(tr, policy)
    return [(fid, s, e, twin[fid]) for fid, s, e in zip(cap.flow_id, cap.start_s, cap.end_s)]


def run_twin(tr, policy: str) -> dict[str, float]:
    """Each flow's duration (end - release) in the fluid model, rates re-shared at every
    flow completion (what the switch queues do)."""
    from emulation.fluid.simulator import FluidSimulator
    from emulation.scheduler import make_policy
    from emulation.topology import TopologyConfig, build_topology
    rec = FluidSimulator(tr, build_topology(TopologyConfig(), tr.hosts), make_policy(policy),
                         realloc="queues").run()
    cols = rec.flows
    return {f: e - r for f, e, r in zip(cols["flow_id"], cols["end_s"], cols["release_s"])}


def main(argv: list[str] | None = None) -> int:
    ap = ArgumentParser(description=__doc__,
                        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=3, help="runs of each case (default 3)")
    ap.add_argument("--policy", default="sincronia",
                    help="policy that orders the flows (default sincronia)")
    args = ap.parse_args(argv)
    from emulation.mininet.net import require_root
    why = require_root()
    if why:
        print(f"preemption: {why}", file=sys.stderr)
        return 2
    print(f"{'case':10s} {'flow':12s} {'first s':>8s} {'last s':>8s} {'duration':>9s} "
          f"{'twin':>7s} {'ratio':>6s}")
    for name in CASES:
        ratios: dict[str, list[float]] = {}
        for _ in range(args.reps):
            with tempfile.TemporaryDirectory(prefix="preempt-") as tmp:
                for fid, s, e, tw in run_case(name, args.policy, Path(tmp)):
                    ratios.setdefault(fid, []).append((e - s) / tw)
                    print(f"{name:10s} {fid:12s} {s:8.4f} {e:8.4f} {e - s:9.4f} {tw:7.4f} "
                          f"{(e - s) / tw:6.3f}")
        for fid, r in ratios.items():
            print(f"{name:10s} {fid:12s} median duration / twin over {len(r)} runs: "
                  f"{statistics.median(r):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
