"""Calibrate the packet-aware fluid model (``emulation/packet_model.py``) from
micro-benchmarks at each emulated link rate, and save the costs in
``data/packet_model.json`` (Mininet, as root; about 3 s per run,
4 minutes per link rate):

    .venv/bin/python benchmarks/packet_costs.py [--rate-scale 0.003 0.01] [--time-scale 2]
        [--reps 10] [--no-save]

Seven traces on a 4-host big switch at the testbed's scale (10 Gbit/s links emulated at
``rate_scale``, time x ``time_scale``), each flow 153,820,272 trace bytes (0.123 trace s
alone on a link), ordered by Sincronia with its classes re-sharing at flow completions
(what the switch queues do):

- ``lone``: one flow h0 -> h1;
- ``ring``: one coflow of four flows h0 -> h1 -> h2 -> h3 -> h0 (a coflow's flows
  starting after the scheduler's class push);
- ``same path``: three one-flow jobs h0 -> h1 released together (classes 0, 1, 2: two
  flows wait behind the first);
- ``preempt``: a flow four times that size released at 0, then one of the single size
  at 0.05 s, which the policy puts ahead of it (a demotion, then a promotion);
- ``preempt 1/2``, ``1/4``, ``1/8``: the same with a shorter second flow, so that the
  first is stopped for a half, a quarter, an eighth as long.

None of them is a trace of the validation set or of any experiment. Measured per run
(trace seconds, from the capture at the receivers' switch ports and the driver's coflow
records): each flow's first payload byte after its release, each coflow's recorded end
after its last payload byte, a lone flow's duration over its ideal, each waiting flow's
end after the previous one's, and the demoted flow's end against the fluid model with
the costs measured before it. ``fit_costs`` turns them into five costs (medians;
the demoted flow's stall, which a retransmission timeout makes bimodal, by its mean; the
stop it takes for a stall from the shorter stops), of which the model applies three
(``emulation.packet_model.APPLIED``).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from workloads.cli import ArgumentParser  # noqa: E402  (one-line usage errors)

FLOW_BYTES = 153_820_272  # 0.123 s at 10 Gbit/s
LINK_RATE_BPS = 10e9
POLICY = "sincronia"
RATE_SCALES = (0.003, 0.01)  # the testbeds' 30 and 100 Mbit/s links
RING = (("h0", "h1"), ("h1", "h2"), ("h2", "h3"), ("h3", "h0"))


def trace_of(jobs: list[tuple[float, tuple[tuple[str, str, int], ...]]]):
    """One one-coflow job per (arrival_s, flows (src, dst, bytes)) on hosts h0..h3."""
    from workloads.trace import App, CoflowSpec, Flow, Job, Stage, Trace
    apps = []
    for k, (arrival_s, flows) in enumerate(jobs):
        job = Job(job_id=f"J{k}", trial_id=f"J{k}", model="test", pattern="test", hosts=(),
                  iterations=1, compute_s=0.0,
                  coflows=(CoflowSpec(tuple(Flow(s, d, b) for s, d, b in flows)),))
        apps.append(App(f"a{k}", arrival_s, "test", (Stage(f"S{k}", f"a{k}", 1.0, (), (job,)),)))
    return Trace(seed=0, endpoints="hosts", hosts=("h0", "h1", "h2", "h3"), apps=tuple(apps))


ONE = (("h0", "h1", FLOW_BYTES),)
CASES = {
    "lone": [(0.0, ONE)],
    "ring": [(0.0, tuple((s, d, FLOW_BYTES) for s, d in RING))],
    "same path": [(0.0, ONE)] * 3,
    "preempt": [(0.0, (("h0", "h1", 4 * FLOW_BYTES),)), (0.05, ONE)],
    **{f"preempt 1/{k}": [(0.0, (("h0", "h1", 4 * FLOW_BYTES),)),
                          (0.05, (("h0", "h1", FLOW_BYTES // k),))] for k in (2, 4, 8)},
}
PREEMPTS = {"preempt": 1, "preempt 1/2": 2, "preempt 1/4": 4, "preempt 1/8": 8}


def emulate(name: str, workdir: Path, *, rate_scale: float, time_scale: float
            ) -> tuple[Any, Any]:
    """One packet-level run of case ``name``: (capture's flows, driver's coflows)."""
    import pandas as pd
    from emulation.mininet.run import run_mininet
    from emulation.topology import TopologyConfig
    from workloads import trace as trace_mod
    tr = trace_of(CASES[name])
    path = workdir / "trace.json"
    trace_mod.save(tr, path)
    out = workdir / "run"
    run_mininet(trace=tr, trace_path=path, topo_cfg=TopologyConfig(), policy=POLICY,
                outdir=out, rate_scale=rate_scale, time_scale=time_scale)
    cap = pd.read_csv(out / "flows_capture.csv")
    cof = pd.read_csv(out / "coflows.csv")
    cap["coflow_id"] = cap.flow_id.str.rsplit("/", n=1).str[0]
    return cap.merge(cof[["coflow_id", "release_s", "end_s"]], on="coflow_id",
                     suffixes=("", "_coflow")), cof


def model_coflow_ends(name: str, costs) -> dict[str, float]:
    """Each coflow's end (trace s) in the fluid model with ``costs``."""
    from emulation.fluid.simulator import FluidSimulator
    from emulation.scheduler import make_policy
    from emulation.topology import TopologyConfig, build_topology
    tr = trace_of(CASES[name])
    pol = make_policy(POLICY)
    rec = FluidSimulator(tr, build_topology(TopologyConfig(), tr.hosts), pol,
                         realloc=pol.realloc_mode(), packet_costs=costs).run()
    return {c["coflow_id"]: c["end_s"] for c in rec.coflows}


def measure(runs: dict[str, list], *, ideal_s: float) -> dict[str, list[float]]:
    """The measurements ``fit_costs`` reads but the demoted flow's, from the runs."""
    m: dict[str, list[float]] = {"start_delay_s": [], "end_delay_s": [],
                                 "lone_duration_ratio": [], "wait_excess_s": []}
    for name in ("lone", "ring"):
        for flows, _ in runs[name]:
            m["start_delay_s"] += (flows.start_s - flows.release_s).tolist()
            last = flows.groupby("coflow_id").agg(end=("end_s", "max"), rec=("end_s_coflow", "max"))
            m["end_delay_s"] += (last.rec - last.end).tolist()
    lone_s = []
    for flows, _ in runs["lone"]:
        lone_s += (flows.end_s - flows.start_s).tolist()
    m["lone_duration_ratio"] = [d / ideal_s for d in lone_s]
    lone_med = statistics.median(lone_s)
    for _, cof in runs["same path"]:
        ends = sorted(cof.end_s)
        m["wait_excess_s"] += [b - a - lone_med for a, b in zip(ends, ends[1:])]
    return m


def calibrate(*, rate_scale: float, time_scale: float, reps: int):
    """Run every case ``reps`` times; the fitted costs and the measurements."""
    import dataclasses
    from emulation.packet_model import fit_costs
    runs: dict[str, list] = {name: [] for name in CASES}
    for rep in range(reps):
        for name in CASES:  # one repetition of every case before the next
            with tempfile.TemporaryDirectory(prefix="packet-costs-") as tmp:
                runs[name].append(emulate(name, Path(tmp), rate_scale=rate_scale,
                                          time_scale=time_scale))
            print(f"  rep {rep + 1}/{reps} {name}: done", flush=True)
    ideal_s = FLOW_BYTES * 8 / LINK_RATE_BPS
    m = measure(runs, ideal_s=ideal_s)
    m["preempt_excess_s"], m["stop_s"], m["stop_excess_s"] = [0.0], [], []
    partial = dataclasses.replace(fit_costs(m), preempt_resume_s=0.0)
    demoted = "J0/i0/c0"
    for name, k in PREEMPTS.items():
        model = model_coflow_ends(name, partial)
        excess = [float(cof.set_index("coflow_id").end_s[demoted] - model[demoted])
                  for _, cof in runs[name]]
        if k == 1:
            m["preempt_excess_s"] = excess
        m["stop_s"] += [ideal_s / k] * len(excess)  # how long the first flow is stopped
        m["stop_excess_s"] += excess
    return fit_costs(m), m


def report(costs, m: dict[str, list[float]]) -> None:
    """Print each measurement's spread and the fitted costs."""
    for k, v in m.items():
        print(f"{k:22s} median {statistics.median(v):9.5f}  mean {statistics.fmean(v):9.5f}  "
              f"range {min(v):9.5f} - {max(v):9.5f}  ({len(v)} values)")
    for k, v in costs.as_dict().items():
        print(f"{k:22s} {v:.5f}")


def main(argv: list[str] | None = None) -> int:
    ap = ArgumentParser(description=__doc__,
                        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rate-scale", type=float, nargs="+", default=list(RATE_SCALES),
                    help="emulated / trace link rate(s), each calibrated in turn (default "
                         "0.003 0.01: the testbeds' 30 and 100 Mbit/s links)")
    ap.add_argument("--time-scale", type=float, default=2.0,
                    help="emulated / trace time (default 2)")
    ap.add_argument("--reps", type=int, default=10, help="runs of each case (default 10)")
    ap.add_argument("--no-save", action="store_true",
                    help="print the costs without writing data/packet_model.json")
    args = ap.parse_args(argv)
    if args.reps < 1 or not (min(args.rate_scale) > 0 and args.time_scale > 0):
        ap.error("--reps must be >= 1 and the scales > 0")
    from emulation.packet_model import CALIBRATION_PATH, save_costs
    from emulation.mininet.net import require_root
    why = require_root()
    if why:
        print(f"packet_costs: {why}", file=sys.stderr)
        return 2
    for rate_scale in args.rate_scale:
        print(f"calibrating at rate_scale {rate_scale:g}, time_scale {args.time_scale:g}, "
              f"{args.reps} repetitions of {len(CASES)} cases", flush=True)
        costs, m = calibrate(rate_scale=rate_scale, time_scale=args.time_scale,
                             reps=args.reps)
        report(costs, m)
        if not args.no_save:
            save_costs(costs, rate_scale=rate_scale, time_scale=args.time_scale,
                       measurements=m)
            print(f"saved in {CALIBRATION_PATH.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
