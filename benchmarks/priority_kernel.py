"""Per-call cost of the strict-priority allocation kernel on real inputs from the FB trace.

    .venv/bin/python benchmarks/priority_kernel.py [--policy beamer] [--every 10]
        [--offline] [--reps 5] [--variant path/to/allocation_kernels_copy.py]

Runs the FB2010 trace (``data/``) once under ``--policy`` in its default reallocation
mode (``--offline``: all coflows at t = 0, unlimited classes), keeps a copy of the
inputs of every ``--every``-th call of ``allocation_kernels.priority_rates``, then times
the kernel on those inputs: the minimum over ``--reps`` passes of the mean milliseconds
per call. With ``--variant`` (a modified copy of ``emulation/allocation_kernels.py``)
both are timed alternately on the same inputs and the rates are compared bit for bit,
which is how the variants in ``docs/speed.md`` were judged. Prints flows, classes and distinct paths of a
few captured calls.
"""
from __future__ import annotations

import argparse
import importlib
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from workloads.cli import ArgumentParser  # noqa: E402  (one-line usage errors)


def capture(policy: str, every: int, offline: bool) -> list[tuple]:
    """Inputs of every ``every``-th priority_rates call of one FB run (copies)."""
    from emulation import allocation_kernels
    from emulation.fluid import simulator as sim_mod
    from emulation.scheduler import POLICIES, make_policy
    from fluid_speed import _trace_topo
    orig = allocation_kernels.priority_rates
    caps: list[tuple] = []
    calls = [0]

    def wrapped(*args):
        calls[0] += 1
        if calls[0] % every == 0:
            caps.append(tuple(np.array(a) if isinstance(a, np.ndarray) else a for a in args))
        return orig(*args)

    trace, topo = _trace_topo("fb")
    sim_mod.allocation_kernels.priority_rates = wrapped
    try:
        sim_mod.FluidSimulator(trace, topo, make_policy(policy),
                               realloc=POLICIES[policy].default_realloc,
                               release_at_zero=offline,
                               priority_classes=0 if offline else 8).run()
    finally:
        sim_mod.allocation_kernels.priority_rates = orig
    return caps


def time_calls(fn, caps: list[tuple]) -> tuple[float, list[np.ndarray]]:
    """Mean ms per call over ``caps`` (fresh copies of the mutable scratch), and outputs."""
    t0 = time.perf_counter()
    outs = [fn(*[a.copy() if isinstance(a, np.ndarray) else a for a in c]) for c in caps]
    return (time.perf_counter() - t0) / len(caps) * 1e3, outs


def main() -> int:
    from emulation import allocation_kernels
    from emulation.scheduler import POLICIES
    ap = ArgumentParser(description=__doc__,
                        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--policy", default="beamer", choices=sorted(POLICIES))
    ap.add_argument("--every", type=int, default=10, help="keep every N-th call's inputs")
    ap.add_argument("--offline", action="store_true",
                    help="all coflows at t = 0, unlimited priority classes")
    ap.add_argument("--reps", type=int, default=5, help="timing passes (minimum kept)")
    ap.add_argument("--variant", type=Path, help="a modified copy of emulation/allocation_kernels.py")
    args = ap.parse_args()
    if args.every < 1 or args.reps < 1:
        ap.error("--every and --reps must be >= 1")
    if args.variant is not None and not args.variant.is_file():
        ap.error(f"--variant {args.variant}: no such file")
    caps = capture(args.policy, args.every, args.offline)
    if not caps:
        ap.error("no call captured: lower --every")
    print(f"{len(caps)} calls captured; flows / classes / distinct paths of a few:")
    for c in caps[:: max(1, len(caps) // 5)]:
        print(f"  {len(c[0]):8d} {c[3]:5d} {len(np.unique(c[0])):7d}")
    fns = {"allocation_kernels.py": allocation_kernels.priority_rates}
    if args.variant is not None:
        # a fresh copy per run: numba's on-disk cache of a file loaded by path would be
        # stale or unloadable in the next run (it compiles here, about 15 s)
        tmp = Path(tempfile.mkdtemp(prefix="kernel_variant_"))
        shutil.copy(args.variant, tmp / "kernels_variant.py")
        sys.path.insert(0, str(tmp))
        mod = importlib.import_module("kernels_variant")
        fns[args.variant.name] = mod.priority_rates
    best = {name: np.inf for name in fns}
    outs = {}
    for name, fn in fns.items():  # compile / load outside the clock
        time_calls(fn, caps[:1])
    for _ in range(args.reps):
        for name, fn in fns.items():
            ms, outs[name] = time_calls(fn, caps)
            best[name] = min(best[name], ms)
    for name in fns:
        print(f"{name:30s} {best[name]:8.3f} ms per call")
    if args.variant is not None:
        same = all(np.array_equal(a, b) for a, b in zip(*outs.values()))
        print(f"rates bit-identical: {same}")
        return 0 if same else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
