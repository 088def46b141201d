"""``python -m runner.pack EXPERIMENT_DIR...``: pack the loose runs of experiment
directories into their columnar record files (``emulation.store.pack``), a line per
experiment. The runner packs what it writes by itself; this is for a results directory
written before (loose runs only), or runs a runner cut short left loose."""
from __future__ import annotations

import sys
import time
from pathlib import Path

from emulation import store
from workloads.cli import ArgumentParser


def main(argv: list[str] | None = None) -> int:
    ap = ArgumentParser(prog="python -m runner.pack", description=__doc__.split("\n\n")[0])
    ap.add_argument("experiments", nargs="+", type=Path,
                    help="experiment directories (<results>/<experiment>)")
    args = ap.parse_args(argv)
    bad = [str(d) for d in args.experiments if not d.is_dir()]
    if bad:
        print(f"error: not a directory: {', '.join(bad)}", file=sys.stderr)
        return 2
    for i, d in enumerate(args.experiments, 1):
        t0 = time.time()
        n = store.pack(d)
        print(f"[{i}/{len(args.experiments)}] {d}: {n} loose runs packed "
              f"({time.time() - t0:.1f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
