"""One simulation of a benchmark trace in this process, for A/B timings of two checkouts,
and the comparison of two runs' records.

    cd CHECKOUT && .venv/bin/python benchmarks/fb_row.py run POLICY REALLOC [--offline] \\
        [--trace fb|hpo|cluster] [--out runs.npz]
    .venv/bin/python benchmarks/fb_row.py compare a.npz b.npz

``run`` uses the modules of the current directory's checkout (it puts the directory
first on ``sys.path``), loads the compiled kernels before the clock starts, simulates the
FB2010 trace (``data/``; 150 ports at 1 Gbit/s) or ``--trace``'s trace of
``benchmarks/fluid_speed.py`` (online with K = 8 classes, or ``--offline``: every
coflow at t = 0, unlimited classes) and prints one JSON line:
simulation seconds (``FluidSimulator.run``), avg CCT, rate allocations. ``--out`` keeps
the records (coflow CCTs, every flow's id, start and end) for ``compare``, which prints,
per column, "identical" or the largest relative difference.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np


def run(policy: str, realloc: str, offline: bool, out: str | None, kind: str = "fb") -> None:
    sys.path.insert(0, os.getcwd())
    sys.path.insert(0, os.path.join(os.getcwd(), "benchmarks"))
    from emulation import kernels
    from emulation.fluid.simulator import FluidSimulator
    from emulation.scheduler import make_policy
    from fluid_speed import _trace_topo
    kernels.warm_up()
    trace, topo = _trace_topo(kind)
    sim = FluidSimulator(trace, topo, make_policy(policy), realloc=realloc,
                         release_at_zero=offline, priority_classes=0 if offline else 8)
    t0 = time.perf_counter()
    res = sim.run()
    sim_s = time.perf_counter() - t0
    cct = np.array([c["cct_s"] for c in res.coflows])
    if out:
        np.savez(out, cct=cct, start=np.asarray(res.flows["start_s"]),
                 end=np.asarray(res.flows["end_s"]),
                 fid=np.asarray(res.flows["flow_id"]).astype(str))
    print(json.dumps({"checkout": os.getcwd(), "trace": kind, "policy": policy,
                      "realloc": realloc, "offline": offline, "sim_s": round(sim_s, 3),
                      "avg_cct_s": float(cct.mean()), "decisions": sim.num_decisions}))


def compare(a_path: str, b_path: str) -> None:
    a, b = np.load(a_path), np.load(b_path)
    if not np.array_equal(a["fid"], b["fid"]):
        print("flow ids differ")
        return
    for col in ("cct", "start", "end"):
        x, y = a[col], b[col]
        if np.array_equal(x, y, equal_nan=True):
            print(f"{col}: identical")
            continue
        ok = np.isfinite(x) & np.isfinite(y)
        rel = np.abs(x[ok] - y[ok]) / np.maximum(np.abs(x[ok]), 1e-300)
        print(f"{col}: largest relative difference {rel.max():.3g}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("policy")
    r.add_argument("realloc")
    r.add_argument("--offline", action="store_true")
    r.add_argument("--out")
    r.add_argument("--trace", choices=("fb", "hpo", "cluster", "cluster8"), default="fb",
                   help="cluster: 1,024 hosts, 16 spines; cluster8: the same with 8 spines")
    c = sub.add_parser("compare")
    c.add_argument("a")
    c.add_argument("b")
    args = ap.parse_args()
    if args.cmd == "run":
        run(args.policy, args.realloc, args.offline, args.out, args.trace)
    else:
        compare(args.a, args.b)


if __name__ == "__main__":
    main()
