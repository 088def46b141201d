"""``python -m analysis RESULTS_DIR``: regenerate tables, figures and summary.md from records.

Reads the run records under RESULTS_DIR (``<experiment>/<run>/run.json``, ``stages.csv``,
``coflows.csv``, ...) and writes ``summary.md``, ``tables/`` and ``figures/`` into that
directory only. ``python -m analysis results`` regenerates the analysis of the committed
reference results; ``python -m analysis runs/mine`` that of a run of your own.

Every call starts from the defaults: give all the flags you want in one command (the
summary's first paragraph names the command that made it). The analysis owns figures/ and
tables/ of RESULTS_DIR: a .png, .pdf or .csv there that this call did not write (a figure
no longer drawn) is removed, and named on stderr; nothing outside those two folders is.
Its progress goes to stderr (``runner.progress.StepProgress``: a line per step, the
figures as a bar on a terminal), the path of summary.md to stdout.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from workloads.cli import ArgumentParser, described, epilog, interrupts_end_quietly, run_cli

ANALYSIS_INTERRUPTED = ("interrupted: the analysis did not finish, so summary.md, tables/ and "
                        "figures/ may disagree until the same command runs again")
if __name__ == "__main__":  # Ctrl-C while the imports below load ends quietly too
    interrupts_end_quietly(ANALYSIS_INTERRUPTED)

from analysis.report import make_report
from runner.progress import StepProgress


def build_parser() -> ArgumentParser:
    ap = ArgumentParser(
        prog="python -m analysis", formatter_class=argparse.RawDescriptionHelpFormatter,
        description=described("Regenerate summary.md, tables/ and figures/ of a results "
                              "directory from its run records (files only; nothing is "
                              "written outside it)."),
        epilog=epilog(["python -m analysis results         # the committed reference results",
                       "python -m analysis runs/mine --reference sincronia --cdf all"],
                      "Every call starts from the defaults: give all the flags you want in "
                      "one command (the summary's first paragraph names the command that "
                      "made it). The analysis owns figures/ and tables/ of RESULTS_DIR: a "
                      ".png, .pdf or .csv there that this call did not write is removed and "
                      "named on stderr, where its progress goes too. See README.md, 'Your "
                      "own experiment'."))
    ap.add_argument("results", type=Path, metavar="RESULTS_DIR",
                    help="results directory (as run_experiments.py writes it)")
    ap.add_argument("--reference", metavar="POLICY",
                    help="policy every ratio is taken against, as reference / other (default: beamer "
                         "when the records have it, else the first policy in the registry "
                         "order of emulation.scheduler.POLICIES)")
    ap.add_argument("--cdf", metavar="EXPERIMENT", nargs="+",
                    help="experiments whose SCT CDFs are drawn, one figure per scenario; 'all': "
                         "every experiment (default: pattern when the records have it, else "
                         "the first experiment)")
    return ap


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.results.exists() and not args.results.is_dir():
        print(f"error: {args.results}: not a directory (give the results directory "
              "run_experiments.py wrote)", file=sys.stderr)
        return 2
    steps = StepProgress("analysis")
    try:
        summary = make_report(args.results, reference=args.reference, cdf=args.cdf,
                              progress=steps)
    except (FileNotFoundError, ValueError) as exc:
        steps.close()
        print(f"error: {exc}", file=sys.stderr)
        return 2
    steps.close()
    print(summary)
    return 0


if __name__ == "__main__":
    run_cli(main, interrupted=ANALYSIS_INTERRUPTED)
