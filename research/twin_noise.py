"""How much each policy's fluid twin loses when flows run slightly slower than planned.

    .venv/bin/python research/twin_noise.py [--trace FILE] [--noise 0.03 0.06 0.10]
        [--draws 10] [--out research/data/twin_noise.json]

Runs the fluid twin of a packet-level experiment (each policy with the reallocation its
twin uses, ``Policy.realloc_mode``) on its trace, once as is and ``--draws``
times with every released flow instance's bytes multiplied by ``1 + m * U`` (U uniform on
[0, 2), one draw per flow instance, seeded by the draw number; mean slowdown ``1 + m``):
a fluid stand-in for TCP moving a flow slower than its max-min rate, which the twin
does not model. Prints, per policy and noise level, the mean over draws of avg SCT with
noise / avg SCT without (and its min and max), and writes them to ``--out``.

Flow-size noise is not TCP noise: the policies see the inflated bytes from the flow's
release on, where at packet level they see progress fall behind. What it measures is
how much a policy's order and its result move when completion times do.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from workloads.cli import ArgumentParser  # noqa: E402  (one-line usage errors)

DEFAULT_TRACE = REPO / "results" / "testbed-random" / "traces" / "6746e967cc0c6507.json"
POLICIES = ("beamer", "beamer-sbssi", "sincronia", "fair", "varys")


def add_noise(sim, *, noise: float, draw: int) -> None:
    """Multiply every flow instance ``sim`` releases by ``1 + noise * U`` (U uniform on
    [0, 2), seeded by ``draw``); nothing when ``noise`` is 0."""
    if noise <= 0:
        return
    rng = np.random.default_rng(draw)
    append = sim.state._append_active

    def noisy_append(**rows):
        rows["a_rem"] = rows["a_rem"] * (1.0 + noise * rng.uniform(0.0, 2.0, len(rows["a_rem"])))
        append(**rows)

    sim.state._append_active = noisy_append


def avg_sct_s(trace, topo, policy: str, *, noise: float, draw: int) -> float:
    """avg SCT of the twin of ``policy`` with per-flow-instance byte noise ``noise``."""
    from emulation.fluid.simulator import FluidSimulator
    from emulation.scheduler import make_policy
    pol = make_policy(policy)
    sim = FluidSimulator(trace, topo, pol, priority_classes=8,
                         realloc=pol.realloc_mode())
    add_noise(sim, noise=noise, draw=draw)
    rec = sim.run()
    return float(np.mean([s["sct_s"] for s in rec.stages]))


def main() -> int:
    ap = ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trace", type=Path, default=DEFAULT_TRACE)
    ap.add_argument("--noise", type=float, nargs="+", default=[0.03, 0.06, 0.10])
    ap.add_argument("--draws", type=int, default=10)
    ap.add_argument("--policies", nargs="+", default=list(POLICIES))
    ap.add_argument("--out", type=Path, default=REPO / "research" / "data" / "twin_noise.json")
    args = ap.parse_args()
    from emulation.topology import big_switch
    from workloads import trace as trace_mod
    trace = trace_mod.load(args.trace)
    topo = big_switch(len(trace.hosts), 10e9, host_names=trace.hosts)
    out = {"trace": str(args.trace.relative_to(REPO)) if args.trace.is_relative_to(REPO)
           else str(args.trace), "draws": args.draws, "rows": []}
    print(f"{'policy':14s} {'noise':>6s} {'base s':>8s} {'mean x':>7s} {'min x':>7s} {'max x':>7s}")
    for policy in args.policies:
        base = avg_sct_s(trace, topo, policy, noise=0.0, draw=0)
        for m in args.noise:
            r = [avg_sct_s(trace, topo, policy, noise=m, draw=d) / base
                 for d in range(args.draws)]
            out["rows"].append({"policy": policy, "noise": m, "base_avg_sct_s": base,
                                "ratios": r})
            print(f"{policy:14s} {m:6.2f} {base:8.3f} {np.mean(r):7.3f} {min(r):7.3f} "
                  f"{max(r):7.3f}", flush=True)
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
