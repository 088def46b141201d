"""Compare our per-coflow CCTs with the log of Sincronia's own offline simulator.

    .venv/bin/python scripts/compare_sincronia.py RUN_LOG OUR_RUN_DIR [--unit-s 0.008388608]

RUN_LOG is what ``offlinesim`` (sincronia-coflow/simulator) prints: one line per coflow,
``Coflow ID: <id> Oracle Time: <x> Selected Ordering: <rank> Scheduled time: <x>
Completion Time: <cct>`` with the CCT in the simulator's units, then ``Average CCT:
<mean>``. OUR_RUN_DIR is a fluid run of the same coflow-benchmark trace (its
``coflows.csv``: ``app_id`` is ``c<id>``, ``cct_s`` in seconds). ``--unit-s``: seconds
per simulator unit (1 MB per unit at the port rate; 2^20 B / 1.25e8 B/s for 1 Gbit/s).
Prints both means, how many coflows agree within a few relative bands, the largest
relative difference, the Spearman rank correlation and the summed absolute difference.
See docs/sincronia-check.md.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from emulation import store  # noqa: E402
from workloads.cli import ArgumentParser  # noqa: E402  (one-line usage errors)

LINE = re.compile(r"Coflow ID: (\d+) Oracle Time: \S+ Selected Ordering: (\d+) "
                  r"Scheduled time: \S+ Completion Time: (\S+)")


def read_log(path: Path) -> pd.DataFrame:
    """Per-coflow rows (id, rank, cct_units) of an offlinesim log; raises if none."""
    rows = [(int(m[1]), int(m[2]), float(m[3]))
            for m in map(LINE.match, path.read_text().splitlines()) if m]
    if not rows:
        raise ValueError(f"{path}: no 'Coflow ID: ... Completion Time: ...' lines")
    return pd.DataFrame(rows, columns=["id", "rank", "cct_units"])


def compare(theirs: pd.DataFrame, ours: pd.DataFrame, unit_s: float) -> dict[str, float]:
    """Per-coflow agreement of ``theirs`` (read_log) and ``ours`` (coflows.csv)."""
    ours = ours.assign(id=ours["app_id"].str.removeprefix("c").astype(int))
    m = theirs.merge(ours[["id", "cct_s"]], on="id", how="inner", validate="one_to_one")
    if len(m) != len(theirs) or len(m) != len(ours):
        raise ValueError(f"coflow ids differ: {len(theirs)} theirs, {len(ours)} ours, "
                         f"{len(m)} in common")
    t = m["cct_units"].to_numpy() * unit_s
    o = m["cct_s"].to_numpy()
    rel = np.abs(o - t) / t
    out = {"coflows": float(len(m)), "theirs_mean_s": float(t.mean()),
           "ours_mean_s": float(o.mean()), "max_rel": float(rel.max()),
           "spearman": float(pd.Series(t).rank().corr(pd.Series(o).rank())),
           "sum_abs_diff_s": float(np.abs(o - t).sum())}
    for band in (1e-6, 1e-2, 5e-2, 2e-1):
        out[f"within_{band:g}"] = float((rel <= band).sum())
    return out


def main(argv: list[str] | None = None) -> int:
    ap = ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run_log", type=Path, help="offlinesim's printed log")
    ap.add_argument("our_run", type=Path, help="our fluid run directory (coflows.csv)")
    ap.add_argument("--unit-s", type=float, default=2**20 / 1.25e8,
                    help="seconds per simulator unit (default: 1 MB at 1 Gbit/s)")
    args = ap.parse_args(argv)
    try:
        res = compare(read_log(args.run_log), store.read_table(args.our_run / "coflows.csv"),
                      args.unit_s)
    except (OSError, ValueError, KeyError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for k, v in res.items():
        print(f"{k}: {v:.6g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
