"""Cost of one max-min refill under exact per-flow fair sharing on the FB trace: a full
progressive fill (``allocation_kernels._fill``) against the recorded fill refilled from
the first round the completions change (``refill_kernels._rounds`` / ``_refill_from``,
what the engine's compiled flow-event loop does), on the same consecutive inputs.

    .venv/bin/python benchmarks/fair_refill.py [--start 15000] [--steps 800] [--reps 3]

Runs FB2010 under ``fair`` asking the policy at every event (``reuse_decisions=False``),
keeps the per-path and per-link flow counts of ``--steps`` consecutive allocations from
call ``--start`` on, takes the longest stretch in which flows only leave (no release),
and times both ways per step (mean microseconds, ``--reps`` passes, the refill timed
call by call); the rates are compared bit for bit. Also prints how much of the recorded
fill the refills redo (rounds and path freezes), the quantity that decides the gain.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from workloads.cli import ArgumentParser  # noqa: E402  (one-line usage errors)


def capture(start: int, steps: int):
    """(path_links, cap, index, [(path counts, link counts), ...]) of consecutive calls."""
    from emulation import allocation_kernels
    from emulation.fluid import simulator as sim_mod
    from emulation.scheduler import make_policy
    from fluid_speed import _trace_topo
    orig = allocation_kernels.priority_rates
    caps: list[tuple[np.ndarray, np.ndarray]] = []
    calls = [0]

    def wrapped(*a):
        calls[0] += 1
        if start <= calls[0] < start + steps:
            caps.append((a[4].copy(), a[5].copy()))
        return orig(*a)

    trace, topo = _trace_topo("fb")
    sim_mod.allocation_kernels.priority_rates = wrapped
    try:
        sim = sim_mod.FluidSimulator(trace, topo, make_policy("fair"), realloc="flow",
                                     reuse_decisions=False)
        sim.run()
    finally:
        sim_mod.allocation_kernels.priority_rates = orig
    best: list = []
    cur: list = []
    for w, lf in caps:  # longest stretch where counts only fall
        if cur and ((w > cur[-1][0]).any() or not (w < cur[-1][0]).any()):
            best, cur = max(best, cur, key=len), []
        cur.append((w, lf))
    return sim.state.path_links, sim.state.cap, sim.index, max(best, cur, key=len)


def main() -> None:
    ap = ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--start", type=int, default=15000, help="first captured call")
    ap.add_argument("--steps", type=int, default=800, help="calls captured")
    ap.add_argument("--reps", type=int, default=3, help="timing passes")
    args = ap.parse_args()
    from emulation import allocation_kernels as A
    from emulation.fluid import refill_kernels as R
    pl, cap, (ptr, owners), seq = capture(args.start, args.steps)
    nl, npaths = len(cap), len(pl)
    tol = A._tolerance(cap)
    print(f"{len(seq) - 1} consecutive refills after flow completions "
          f"({int((seq[0][0] > 0).sum())} active paths at the start)")

    def full() -> tuple[float, list[np.ndarray]]:
        outs, t = [], 0.0
        for w, lf in seq[1:]:
            out = np.empty(npaths)
            t0 = time.perf_counter()
            A._fill(pl, ptr, owners, cap.copy(), w, lf.copy(), out, tol)
            t += time.perf_counter() - t0
            outs.append(out[w > 0])
        return t, outs

    def incremental() -> tuple[float, list[np.ndarray], float, float]:
        w0, lf0 = seq[0]
        c, cnt = cap.copy(), lf0.copy()
        cnt[-1] = 0
        live = np.zeros(nl, dtype=np.int64)
        nlive = int((cnt > 0).sum())
        live[:nlive] = np.flatnonzero(cnt > 0)
        fr = np.full(npaths, -1, dtype=np.int64)
        forder = np.empty(npaths, dtype=np.int64)
        rec = [np.zeros(nl + 2, dtype=np.int64), np.empty(nl + 2), np.empty(nl + 2),
               np.zeros(nl + 2, dtype=np.int64)]
        bufs = [np.empty(4 * nl, dtype=np.int64), np.empty(4 * nl), np.empty(4 * nl, dtype=np.int64)]
        out = np.empty(npaths)
        rounds, nfro, *bufs = R._rounds(0, nlive, live, 0.0, pl, ptr, owners, c, cnt, w0, out,
                                        tol, fr, forder, 0, *rec, *bufs)
        drop = np.zeros(nl, dtype=np.int64)
        prev, t, outs, redo_r, redo_p = w0, 0.0, [], [], []
        for w, _ in seq[1:]:
            gone = np.flatnonzero(w < prev)
            r0 = int(fr[gone].min())
            redo_r.append((rounds - r0) / rounds)
            redo_p.append((nfro - rec[0][r0]) / nfro)
            changed = np.unique(pl[gone].ravel())
            changed = changed[changed != nl - 1]
            for p in gone:
                np.add.at(drop, pl[p][pl[p] != nl - 1], prev[p] - w[p])
            t0 = time.perf_counter()
            rounds, nfro, *bufs = R._refill_from(r0, drop, changed, len(changed), cap, tol, pl,
                                                 ptr, owners, c, cnt, w, out, live, fr, forder,
                                                 nfro, *rec, *bufs)
            t += time.perf_counter() - t0
            outs.append(out[w > 0].copy())
            prev = w
        return t, outs, float(np.mean(redo_r)), float(np.mean(redo_p))

    full()
    incremental()  # compiled and warm
    n = len(seq) - 1
    for _ in range(args.reps):
        tf, a = full()
        ti, b, rr, rp = incremental()
        same = all(np.array_equal(x, y) for x, y in zip(a, b))
        print(f"full fill {tf / n * 1e6:7.1f} us/step   refill {ti / n * 1e6:7.1f} us/step   "
              f"x {ti / tf:.2f}   rates identical: {same}")
    print(f"refills redo on average {rr:.1%} of the rounds and {rp:.1%} of the path freezes")


if __name__ == "__main__":
    main()
