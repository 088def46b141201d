"""A real all-reduce on the emulated hosts against the packet backend's replay of the same
collective (Mininet, as root, with the optional jax: requirements-collective.txt):

    .venv/bin/python benchmarks/real_collective.py [--hosts 4] [--model resnet50]
        [--reps 3] [--out results/real-collective]

One ring all-reduce of a model's fp32 gradients over ``--hosts`` hosts of a big switch,
at the testbed's scale (10 Gbit/s links emulated at rate_scale 0.003, time x 2: the
buffer is the model's bytes x 0.006, the links 30 Mbit/s), four ways:

- ``real``: jax's CPU collectives (gloo over TCP) sum the buffer (emulation/mininet/
  collective.py), every rank starting at one instant;
- ``replay``: the packet backend runs the trace's coflow of that all-reduce
  (workloads/sync.py: each host sends 2(n-1)/n x the buffer to its ring successor);
- ``stepped replay``: the same bytes as the ring's 2(n-1) steps, one coflow each in
  order, each host sending 1/n of the buffer per step;
- each again with a competing flow of about half the buffer (whole KiB) from the first
  host to the second,
  in the highest class (the real one: iperf3 marked for class 0; the replay: a smaller
  coflow that Sincronia puts first).

Measured from the captures of the switch ports, the same reader for both: payload bytes
per host pair, send bursts per pair (runs of packets with no gap over three packet
times), and the completion time (real: first rank's start to last rank's end; replay: the
coflow's release to its end, the first step's release to the last one's end), emulated
seconds. Medians over ``--reps`` runs go to
``OUT/comparison-N-hosts.json`` with every run's numbers.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from workloads.cli import ArgumentParser  # noqa: E402  (one-line usage errors)

RATE_SCALE, TIME_SCALE, LINK_RATE_BPS = 0.003, 2.0, 10e9
COMPETITOR_SHARE = 0.5  # of the buffer
CASES = ("real", "replay", "stepped replay", "real + competitor", "replay + competitor",
         "stepped replay + competitor")


def model_bytes(name: str) -> int:
    from workloads.models import MODELS
    return MODELS[name].size_bytes


def competitor_bytes(size_bytes: int) -> int:
    """The competing flow's emulated bytes: about half the emulated buffer, whole KiB."""
    return 1024 * round(COMPETITOR_SHARE * size_bytes * RATE_SCALE * TIME_SCALE / 1024)


def ring_steps(hosts: tuple[str, ...], size_bytes: int):
    """A ring all-reduce as its 2(n-1) steps, one coflow each, in order: every host sends
    a chunk of 1/n of the buffer to its successor (reduce-scatter, then all-gather)."""
    from workloads.trace import CoflowSpec, Flow
    n = len(hosts)
    step = CoflowSpec(tuple(Flow(hosts[i], hosts[(i + 1) % n], round(size_bytes / n))
                            for i in range(n)))
    return (step,) * (2 * (n - 1))


def ring_trace(hosts: tuple[str, ...], size_bytes: int, competitor: bool,
               stepped: bool = False):
    """The all-reduce's coflow (``stepped``: its steps' coflows, in order) and the
    competitor's as a trace, released at 0."""
    from workloads.sync import ring_allreduce
    from workloads.trace import App, Flow, Job, Stage, Trace
    coflows = [("ring", ring_steps(hosts, size_bytes) if stepped
                else tuple(ring_allreduce(list(hosts), size_bytes)))]
    if competitor:
        from workloads.trace import CoflowSpec
        c = round(competitor_bytes(size_bytes) / (RATE_SCALE * TIME_SCALE))
        coflows.append(("competitor", (CoflowSpec((Flow(hosts[0], hosts[1], c),)),)))
    apps = []
    for k, (name, specs) in enumerate(coflows):
        job = Job(job_id=name, trial_id=name, model="test", pattern="test", hosts=(),
                  iterations=1, compute_s=0.0, coflows=specs)
        apps.append(App(f"a{k}", 0.0, "test", (Stage(f"S{k}", f"a{k}", 1.0, (), (job,)),)))
    return Trace(seed=0, endpoints="hosts", hosts=hosts, apps=tuple(apps))


def replay(hosts: tuple[str, ...], size_bytes: int, competitor: bool, workdir: Path,
           stepped: bool = False) -> dict[str, Any]:
    """The packet backend's run of the all-reduce's coflow(s); the same measures as real
    (completion: the first step's release to the last one's end)."""
    import pandas as pd
    from emulation.mininet.capture import Capture
    from emulation.mininet.collective import pair_bytes, send_bursts
    from emulation.mininet.net import MTU_BYTES, host_address
    from emulation.mininet.run import run_mininet
    from emulation.topology import TopologyConfig
    from workloads import trace as trace_mod
    tr = ring_trace(hosts, size_bytes, competitor, stepped)
    trace_mod.save(tr, workdir / "trace.json")
    out = workdir / "run"
    run_mininet(trace=tr, trace_path=workdir / "trace.json", topo_cfg=TopologyConfig(),
                policy="sincronia", outdir=out, priority_classes=2, rate_scale=RATE_SCALE,
                time_scale=TIME_SCALE)
    cap = Capture.from_files(out, json.loads((out / "capture_ports.json").read_text()))
    host_of = {host_address(i): h for i, h in enumerate(hosts)}
    cof = pd.read_csv(out / "coflows.csv")
    ring = cof[cof["job_id"] == "ring"]
    packet_s = MTU_BYTES * 8 / (LINK_RATE_BPS * RATE_SCALE)
    return {"completion_s": float(ring["end_emulated_s"].max() - ring["release_emulated_s"].min()),
            "pair_bytes": {f"{a}->{b}": n for (a, b), n in pair_bytes(cap, host_of).items()},
            "send_bursts": {f"{a}->{b}": n for (a, b), n in send_bursts(
                cap, host_of, gap_s=3 * packet_s, min_bytes=64 * 1024).items()}}


def one_run(case: str, hosts: tuple[str, ...], size_bytes: int) -> dict[str, Any]:
    from emulation.mininet.collective import Competitor, run_real_allreduce
    competitor = case.endswith("competitor")
    emulated = round(size_bytes * RATE_SCALE * TIME_SCALE)
    with tempfile.TemporaryDirectory(prefix="real-collective-") as tmp:
        if "replay" in case:
            return replay(hosts, size_bytes, competitor, Path(tmp),
                          stepped=case.startswith("stepped"))
        comp = (Competitor(hosts[0], hosts[1], competitor_bytes(size_bytes))
                if competitor else None)
        rec = run_real_allreduce(hosts=hosts, size_bytes=emulated,
                                 link_rate_bps=LINK_RATE_BPS * RATE_SCALE,
                                 outdir=Path(tmp), competitor=comp)
        rec.pop("ranks")
        return rec


def summary(runs: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Per case: median completion time, median bytes and bursts per pair."""
    out = {}
    for case, rs in runs.items():
        pairs = sorted({p for r in rs for p in r["pair_bytes"]})
        out[case] = {
            "completion_s": statistics.median(r["completion_s"] for r in rs),
            "pair_bytes": {p: statistics.median(r["pair_bytes"].get(p, 0) for r in rs)
                           for p in pairs},
            "send_bursts": {p: statistics.median(r["send_bursts"].get(p, 0) for r in rs)
                            for p in pairs if any(p in r["send_bursts"] for r in rs)}}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = ArgumentParser(description=__doc__,
                        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hosts", type=int, default=4, help="ranks, one per host (default 4)")
    ap.add_argument("--model", default="resnet50", help="whose gradients (default resnet50)")
    ap.add_argument("--reps", type=int, default=3, help="runs of each case (default 3)")
    ap.add_argument("--out", type=Path, default=REPO / "results" / "real-collective",
                    help="where comparison-N-hosts.json goes (default "
                         "results/real-collective)")
    args = ap.parse_args(argv)
    from workloads.models import MODELS
    if args.model not in MODELS:
        ap.error(f"unknown model {args.model!r}; one of {', '.join(sorted(MODELS))}")
    if not 2 <= args.hosts <= 8 or args.reps < 1:
        ap.error("--hosts must be 2..8 and --reps >= 1")
    from emulation.mininet.net import require_root
    why = require_root()
    if why:
        print(f"real_collective: {why}", file=sys.stderr)
        return 2
    hosts = tuple(f"h{i}" for i in range(args.hosts))
    size = model_bytes(args.model)
    runs: dict[str, list] = {c: [] for c in CASES}
    for rep in range(args.reps):
        for case in CASES:
            runs[case].append(one_run(case, hosts, size))
            print(f"rep {rep + 1}/{args.reps} {case}: {runs[case][-1]['completion_s']:.3f} s",
                  flush=True)
    s = summary(runs)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"comparison-{args.hosts}-hosts.json").write_text(json.dumps(
        {"model": args.model, "model_bytes": size, "hosts": list(hosts),
         "rate_scale": RATE_SCALE, "time_scale": TIME_SCALE, "reps": args.reps,
         "summary": s, "runs": runs}, indent=1) + "\n")
    print(json.dumps(s, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
