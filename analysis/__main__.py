"""``python -m analysis RESULTS_DIR``: regenerate tables, figures and summary.md from records."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from analysis.report import make_report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m analysis", description=__doc__)
    ap.add_argument("results", type=Path, help="results directory (as run_experiments.py writes it)")
    args = ap.parse_args(argv)
    try:
        print(make_report(args.results))
    except FileNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
