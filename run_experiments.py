"""One-shot runner: experiment configs -> runs -> a results directory -> figures and summary.

    python run_experiments.py                 # the default suite into results/, then the analysis
    python run_experiments.py --dry-run       # list the runs (done / to run) without running them,
                                              # with the run's notes, errors and exit status
    python run_experiments.py --config runs/mine.toml       # your experiment into runs/mine/
    python run_experiments.py --config runs/mine.toml --out DIR  # ... or into DIR
    python run_experiments.py --full --jobs 2 # paper-scale sizes and repetitions, into runs/full/
    python run_experiments.py --verify        # recompute the committed results and compare
    python run_experiments.py --suite pinned-hosts  # the ablation on hosts without GPUs

Where results go. ``results/`` holds the committed reference results of the default
suite, and only ``python run_experiments.py`` without ``--config`` and ``--full``
writes there. Run as committed, it finds every run done (the same runs recorded) and only
regenerates the analysis (``python -m analysis results`` does that alone). To recompute
the reference itself, run the default suite into an empty directory (``--out
/tmp/fresh``) and compare, or remove the experiment directories under ``results/`` and
run it again (a run whose config changed needs ``--force``). Runs of ``--config``
go to ``runs/<config stem>/`` (several configs: stems joined by ``+``; with ``--full``,
``-full`` appended; ``runs/`` is gitignored), ``--full`` alone to ``runs/full/``, and
``--out DIR`` anywhere; writing them into ``results/`` needs ``--force``. The analysis
of a directory writes only into that directory (``python -m analysis DIR`` redoes it) and
reads every run in it: run directories the given configs do not name (an earlier config's)
are kept and analysed with the rest, and a note says so, on stdout and in the summary.

Each ``experiments/*.toml`` (except ``default.toml``, the workload CLI's example, and
``testbed.toml``, the small packet-level scenario of the Mininet tests: run them with
``--config``) is one experiment of the default suite, on a cluster with GPUs;
``testbed_gpus.toml`` is its packet-level one (it needs root and is skipped with a note
otherwise). ``--suite pinned-hosts`` runs the ablation of ``experiments/pinned_hosts/``
instead (trial workers on fixed hosts with no GPU capacity, a cluster that cannot exist;
its ``testbed_random_seeds.toml``, the random-search testbed over 20 seeds, only with
``--config``); its results are committed in ``results/`` too. Tables:
``[experiment]`` (backend, policies, seeds, K, realloc, repetitions, ...; ``policies`` left out =
every policy registered in ``emulation.scheduler.POLICIES``, in registry order: a policy
added there runs in every such experiment, and the runs made before it stay done),
``[workload]`` (or ``experiment.trace`` = a trace file), ``[topology]``, ``[sweep]``
(dotted key -> list of values; runs are the cartesian product x seeds x policies) and
``[full]`` (dotted key -> value, applied with ``--full``). Every run writes
``<results dir>/<experiment>/<run name>/`` atomically (temp dir, then rename) with the
records and ``run_config.json``; a rerun skips runs whose directory holds the same config
hash, so an interrupted suite resumes where it stopped (on Linux the ``--jobs`` worker
processes end with the runner, even when it is killed outright; what a runner killed on
this machine left is cleared by the next run: a whole run it had not yet renamed into place,
or had renamed aside while replacing it, is put back, its other temporary directories
and files are removed). A directory that holds a
different run (another config hash: the config changed) is replaced only with
``--force``; without it the runner stops before any run and names the directory and
the keys that changed (``--dry-run`` prints the same error and exits with the same
status, 2). The
labels ``[experiment] description`` and ``figure`` and the run lists ``policies``,
``seeds`` and ``repetitions`` are not part of what makes a run different: after an edit
of them alone every run still listed stays done (``--dry-run`` says so; a policy, seed or
repetition added is a run to run), and the next run without ``--dry-run`` writes the new
labels and lists into each run's ``run_config.json`` (the analysis reads the figure kind
there) and keeps the records.
Bad configs fail before any run starts, ``--dry-run`` included, with one line ``error:
FILE: ...`` naming the key and exit status 2, and nothing is written: an unknown or
mistyped key, a value out of range (also one that ``[sweep]`` replaces at every point),
a ``[workload]`` key no tuner of the file reads at
any sweep point (``asha_num_trials`` with ``algorithm = "sha"``, in a tenant too), a
trace file (``[experiment] trace``) that is not a valid trace (validated whole, as a run
loads it; the error names the key, the file and its problem), or a
topology short of the trace's hosts (``[topology] num_hosts`` below ``[workload]
num_hosts``; leave it out and the topology takes the trace's count). An ``--out`` that
is a file (or lies under one) is refused the same way. Hosts no flow uses
are named in a ``note:`` line on stderr: those of a ``[topology] num_hosts`` above the
trace's, and those a leaf-spine adds when its ``hosts_per_leaf`` does not divide the host
count (16 hosts, 5 per leaf: 4 leaves, 20 hosts, h16..h19 idle, and the last leaf's
uplinks sized for 5 hosts). A run that fails
inside (an error in the simulator) leaves no run directory: its temporary directory is
removed, an older run of the same name is kept, and a rerun runs it again; the traces
and bounds already made under ``<experiment>/traces/`` are whole files and are reused.
Paths in the records (run.json ``trace_path``) are relative to the results directory.

The analysis (``analysis/``; its progress on stderr, a line per step) reports every policy that ran, in the registry order of
``emulation.scheduler.POLICIES``; its ratios are taken against ``--reference POLICY``
(default ``beamer`` when it ran, else the first policy in that order), and ``--cdf
EXPERIMENT ...`` (or ``all``) chooses the experiments whose SCT CDFs it draws; both are
checked against the configs' runs and those already in the results directory (whole
runs an interrupted runner left aside included, which the run puts back) before any
run starts (and refused with ``--no-analysis`` or ``--verify``, which make no analysis),
and the summary's first line repeats them.

``--verify`` (artifact evaluation) recomputes the fluid runs of the results directory
the same command writes to (``--out``; else ``runs/<config stem>/`` with ``--config``,
``results/`` without it; all of them or ``--sample N``) from their own
``run_config.json`` into a temporary directory and compares each with the committed
records: avg SCT, p95 SCT and every stage's SCT must be equal exactly (the fluid
simulator is deterministic). Packet-level (Mininet) runs are listed as not recomputed:
TCP makes them vary run to run (``tests/mininet/test_mininet.py`` checks them against tolerance
bands). Prints a pass/fail table per experiment; exits 1 on any mismatch.

Packet-level runs are not deterministic (TCP, host scheduling): ``experiment.repetitions``
(mininet backend only) repeats each (policy, seed) run; the run names end in ``,rep=N``
(N = 0, 1, ...) and run.json records ``repetition``.

``run_experiments.py`` is the command line only (options, where results go, the checks
before any run starts); the runner itself is the ``runner`` package: ``runner.config`` (the
expansion of experiment TOMLs into runs, checked with the ``schema`` package's experiment
schema), ``runner.execute`` (running them into a results directory),
``runner.results_dir`` (what a results directory holds) and ``runner.verify``
(``--verify``).
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from workloads.cli import (ArgumentParser, described, epilog, interrupts_end_quietly,
                           output_path_error, run_cli)

INTERRUPTED = ("interrupted: finished runs are kept, and the same command runs the rest (a "
               "run cut short leaves nothing the next one does not clear); if the analysis was "
               "cut short, summary.md, tables/ and figures/ may disagree until it runs again")
if __name__ == "__main__":  # Ctrl-C while the imports below load ends quietly too
    interrupts_end_quietly(INTERRUPTED)

from emulation.backends import BACKENDS
from runner.config import (REPO, SUITES, RunSpec, collect_specs, registered_policies,
                           skipped_note, suite_configs)
from runner.execute import run_all
from runner.results_dir import (RunStatus, backend_of, clear_leftovers, committed_runs,
                                config_changes, interrupted_leftovers, label_changes,
                                pack_written, put_back_plan, recorded_policies, relabel,
                                resolved_realloc, run_policies, run_status, stale_runs)
from runner.verify import verify
from workloads.config import ConfigError

REFERENCE_DIR = REPO / "results"  # the committed reference results of the default suite
RUNS_DIR = REPO / "runs"          # --config / --full runs without --out (gitignored)


def default_out(configs: list[Path] | None, *, full: bool) -> Path:
    """Where a run goes without ``--out``: the default suite into ``results/`` (the
    committed reference results); ``--full`` and ``--config`` runs into a directory of
    their own under ``runs/`` (gitignored): ``runs/full``, ``runs/<config stem>`` (stems
    joined by ``+``), with ``-full`` appended for ``--full``."""
    if not configs:
        return REFERENCE_DIR if not full else RUNS_DIR / "full"
    name = "+".join(dict.fromkeys(Path(c).stem for c in configs))
    return RUNS_DIR / (name + ("-full" if full else ""))


def _shown(path: Path) -> str:
    """A path for the terminal: relative to the working directory when inside it."""
    try:
        return Path(path).resolve().relative_to(Path.cwd().resolve()).as_posix() or "."
    except ValueError:
        return str(path)


def _into_reference(out: Path, args: argparse.Namespace) -> bool:
    """True if ``--config`` / ``--full`` runs would go into ``results/`` without ``--force``."""
    return out == REFERENCE_DIR.resolve() and bool(args.config or args.full) and not args.force


def _dirty_reference(out: Path, *, writes: bool) -> str | None:
    """Why runs may not be written into ``results/`` now: each reference record names the
    commit that made it (run.json ``git_sha``), so the code must be committed (no tracked
    change outside ``results/``: ``emulation.records.git_sha`` would add ``-dirty``)."""
    from emulation.records import git_sha
    if not writes or out != REFERENCE_DIR.resolve() or not (git_sha() or "").endswith("-dirty"):
        return None
    return (f"{_shown(out)} keeps reference records, each naming the commit that made it, "
            "and the work tree has uncommitted changes outside it (git status): commit "
            "them first, or write the runs elsewhere with --out DIR")


def found_leftovers(out: Path, args: argparse.Namespace) -> list[Path]:
    """What runners killed mid-write left in ``out`` (``interrupted_leftovers``). Not
    looked for with a remote Dask cluster, whose workers' process ids are not this
    machine's."""
    if not out.is_dir() or (args.dask and args.dask != "local"):
        return []
    return interrupted_leftovers(out)


def leftovers(out: Path, args: argparse.Namespace,
              found: list[Path]) -> tuple[str | None, dict[Path, Path]]:
    """``found`` (``found_leftovers``): cleared by this call (``clear_leftovers``: whole
    runs put back in place, the rest removed) unless this is a dry run or a run that will
    be refused. Returns the note that says what was (or would be) done, and for a dry run
    the runs a clear would put back (``put_back_plan``: run directory -> leftover), so
    that its listing shows what the run would find."""
    if not found:
        return None, {}
    plan = put_back_plan(found)
    if args.dry_run or _into_reference(out, args):
        them = "it" if len(found) == 1 else "them"
        back = (f" ({_count(len(plan), 'whole run', 'whole runs')} put back in place, the rest "
                "removed)" if plan else " (removed)")
        return (f"{_count(len(found), 'file or directory', 'files or directories')} left by "
                f"interrupted runs under {_shown(out)} (e.g. "
                f"{found[0].relative_to(out).as_posix()}): a run clears {them}{back}"), plan
    removed, restored, failed = clear_leftovers(found)
    parts = [f"{_count(removed, 'temporary file or directory', 'temporary files or directories')}"
             " removed"] if removed else []
    if restored:
        parts.append(f"{_count(restored, 'whole run', 'whole runs')} put back in place")
    if failed:
        parts.append(f"not cleared: {'; '.join(failed)}")
    return f"cleared what interrupted runs left under {_shown(out)}: {', '.join(parts)}", {}


def _kernels_ready() -> None:
    """Compile the simulator's kernels here, with a notice, if their cache is missing or
    older than a kernel source (``emulation.fluid.run.ensure_kernels``, as the setup step
    and the single-run command line do), before any worker loads them: a worker then only
    loads them, and no run's wall time holds the compilation."""
    from emulation.fluid.run import ensure_kernels
    ensure_kernels(sys.stdout)


def other_suite_runs(stale: list[str], out: Path, args: argparse.Namespace
                     ) -> tuple[str | None, list[str]]:
    """A suite run into ``results/`` finds the other suites' committed runs there: a
    sentence naming them (or None), and the rest of ``stale``, run directories of no
    suite."""
    if not stale or args.config or args.full or out != REFERENCE_DIR.resolve():
        return None, stale
    counts: dict[str, int] = {}
    rest = set(stale)
    for other in (name for name in SUITES if name != args.suite):
        names = {f"{s.experiment}/{s.name}" for s in
                 collect_specs(suite_configs(other), full=False, backend="both")[0]}
        theirs = rest & names
        if theirs:
            counts[other] = len(theirs)
            rest -= theirs
    if not counts:
        return None, stale
    which = "; ".join(f"{n:,} of the {name} suite (--suite {name})" for name, n in counts.items())
    return (f"the committed runs of other suites are kept in {_shown(out)} ({which}), and the "
            "analysis reads them with these (the summary labels the pinned-hosts ablation's "
            "sections)"), [r for r in stale if r in rest]


def _count(n: int, one: str, many: str) -> str:
    """``n`` and the noun in its number: "1 run", "2 runs"."""
    return f"{n} {one if n == 1 else many}"


def start_refusal(out: Path, *, status: dict, different: list, args: argparse.Namespace,
                  put_back: dict[Path, Path] | None = None) -> str | None:
    """Why a run (and its ``--dry-run``) stops before any run, exit status 2, or None:
    ``--config`` / ``--full`` runs into ``results/`` without ``--force``, or a run directory
    that holds a different run (another config hash) without ``--force``. ``put_back``:
    the runs ``leftovers`` would put back in place (a dry run names what it would find)."""
    where = _shown(out)
    if _into_reference(out, args):
        return (f"{where} holds the committed reference results of the default suite; "
                f"--config and --full runs go to "
                f"{_shown(default_out(args.config, full=args.full))} (the default) or to "
                "--out DIR; pass --force to write them into it")
    if different and not args.force:
        s = different[0]
        held = status[(s.experiment, s.name)]
        more = f"; {len(different) - 1} more run directories too" if len(different) > 1 else ""
        if held.recorded_realloc is not None:
            return (f"{_shown(out / s.experiment / s.name)} holds a run recorded under "
                    f"realloc {held.recorded_realloc}, "
                    f"and this config runs {s.policy} under realloc {resolved_realloc(s)} "
                    f"(its default_realloc or allocation differs from the run's{more}); pass "
                    f"--force to replace {'them' if more else 'it'}")
        changes = config_changes(s, out,
                                 run_dir=(put_back or {}).get(out / s.experiment / s.name))
        return (f"{_shown(out / s.experiment / s.name)} holds a different run ("
                + (f"changed: {changes}; " if changes else "")
                + f"config hash {held.recorded_hash or 'unreadable'}, this config's "
                f"{s.config_hash}{more}); "
                f"pass --force to replace {'them' if more else 'it'}")
    return None


def build_parser() -> ArgumentParser:
    ap = ArgumentParser(
        prog="run_experiments.py", formatter_class=argparse.RawDescriptionHelpFormatter,
        description=described(
            "Run experiment configs (TOML) into a results directory, then write its "
            "tables, figures and summary.md. Runs already recorded are skipped, so an "
            "interrupted suite resumes where it stopped."),
        epilog=epilog(
            ["python run_experiments.py              # the suite -> results/, analysed",
             "python run_experiments.py --dry-run    # the runs: done / to run / different",
             "python run_experiments.py --config runs/mine.toml   # -> runs/mine/",
             "python run_experiments.py --config runs/mine.toml --out DIR --jobs 2",
             "python run_experiments.py --verify     # recompute results/, compare"],
            "results/ holds the committed reference results of the default suite: only "
            "the default suite writes there (--config and --full runs need --force); to "
            "recompute the reference itself, run the suite with --out /tmp/fresh and "
            "compare. A bad config (an unknown key, a value out of range, a bad trace "
            "file, a topology short of the trace's hosts) fails before any run, --dry-run "
            "included: one line 'error: FILE: ...', exit status 2, nothing written. See "
            "README.md, 'Your own experiment' (a config's tables, sweeps) and 'Artifact "
            "evaluation'."))
    ap.add_argument("--config", action="extend", nargs="+", type=Path, metavar="FILE",
                    help="experiment TOMLs (one or more, repeatable: --config "
                         "experiments/gpus_cong_*.toml; default: the files of --suite)")
    ap.add_argument("--suite", choices=list(SUITES), default="default",
                    help="which suite runs without --config (default: default, the "
                         "experiments/*.toml but default.toml and testbed.toml: a cluster "
                         "with GPUs, and FB2010; pinned-hosts: the "
                         "ablation of experiments/pinned_hosts/, trial workers on fixed "
                         "hosts with no GPU capacity, a cluster that cannot exist); both "
                         "write into results/")
    ap.add_argument("--backend", choices=[*BACKENDS, "both"], default="both",
                    help="which experiments to run: one backend's, or every one's (default "
                         "both; packet-level ones need root)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, metavar="N",
                    help=f"worker processes of the fluid runs (default: the CPUs, "
                         f"{os.cpu_count() or 1} here)")
    ap.add_argument("--out", type=Path, default=None, metavar="DIR",
                    help="results directory (default: results/ for the suite, "
                         "runs/<config stem>/ with --config, runs/full/ with --full)")
    ap.add_argument("--force", action="store_true",
                    help="replace run directories that hold a different run; allow "
                         "--config / --full runs into results/")
    ap.add_argument("--reference", metavar="POLICY",
                    help="policy the analysis's ratios are taken against (default: beamer "
                         "when it ran)")
    ap.add_argument("--cdf", metavar="EXPERIMENT", nargs="+",
                    help="experiments whose SCT CDFs the analysis draws, or 'all' "
                         "(default: pattern when it ran)")
    size = ap.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true",
                      help="the default: each file's own sizes and seeds")
    size.add_argument("--full", action="store_true",
                      help="paper-scale sizes and repetitions ([full] tables)")
    ap.add_argument("--dry-run", action="store_true",
                    help="list the runs (done / to run / different), the notes and the "
                         "error a run would print; exit with its status")
    ap.add_argument("--dask", metavar="ADDRESS",
                    help="run on a Dask scheduler: tcp://host:8786, or 'local' (--jobs "
                         "worker processes here)")
    ap.add_argument("--no-analysis", action="store_true",
                    help="skip tables, figures and summary")
    ap.add_argument("--verify", action="store_true",
                    help="recompute the fluid runs of the results directory in a temporary "
                         "one and compare exactly; exit 1 on a mismatch")
    ap.add_argument("--sample", type=int, default=0, metavar="N",
                    help="with --verify: a seeded random sample of N fluid runs (default 0 "
                         "= all)")
    return ap


def _check_options(ap: ArgumentParser, args: argparse.Namespace) -> None:
    """Options that do not go together: ``ap.error`` (exit 2) on the first."""
    if args.jobs < 1:
        ap.error("--jobs must be >= 1")
    if args.sample < 0:
        ap.error("--sample must be >= 0")
    if args.sample and not args.verify:
        ap.error("--sample needs --verify")
    if args.cdf and "all" in args.cdf and len(args.cdf) > 1:
        ap.error(f"--cdf {' '.join(args.cdf)}: 'all' draws every experiment; give it alone or "
                 "name the experiments")
    shaping = [o for o, v in (("--reference", args.reference), ("--cdf", args.cdf)) if v]
    if shaping and (args.no_analysis or args.verify):
        skip = "--no-analysis skips" if args.no_analysis else "--verify does not make"
        ap.error(f"{' and '.join(shaping)} {'shapes' if len(shaping) == 1 else 'shape'} the "
                 f"analysis, which {skip}")


def _verify(args: argparse.Namespace) -> int:
    """``--verify``: recompute the fluid runs of the results directory and compare."""
    target = (args.out or default_out(args.config, full=args.full)).resolve()
    if not target.is_dir():
        print(f"error: --verify: {_shown(target)} is not a results directory (run the "
              "same command without --verify first, or name one with --out)",
              file=sys.stderr)
        return 2
    _kernels_ready()
    return verify(target, sample=args.sample, jobs=args.jobs)


def _with_kept_packet_runs(notes: list[str], out: Path) -> list[str]:
    """``notes``, each note on a backend skipped here saying how many of its runs already
    in ``out`` are analysed as recorded."""
    for name, info in BACKENDS.items():
        prefix = skipped_note(name)
        if not any(n.startswith(prefix) for n in notes):
            continue
        kept = sum(1 for r in committed_runs(out) if backend_of(r) == name)
        if kept:
            notes = [n + (f"; the {kept} {info.label} runs already in this directory are "
                          "analysed as recorded" if n.startswith(prefix) else "")
                     for n in notes]
    return notes


def _shaping_error(args: argparse.Namespace, specs: list[RunSpec], out: Path,
                   coming_back: dict[Path, Path]) -> str | None:
    """Why ``--reference`` or ``--cdf`` names no policy or experiment of these runs, of
    ``out`` or of the runs put back in it (``coming_back``), or None."""
    in_out = f" or of {_shown(out)}" if out.is_dir() else ""  # what the analysis would read too
    if args.reference is not None:
        known = {s.policy for s in specs} | recorded_policies(out)
        known |= set().union(*(run_policies(d) for d in coming_back.values()))
        if args.reference not in known:
            order = {p: i for i, p in enumerate(registered_policies())}  # then the rest
            shown = sorted(known, key=lambda p: (order.get(p, len(order)), p))
            return (f"--reference {args.reference}: not a policy of these runs{in_out} "
                    f"({', '.join(shown)})")
    if args.cdf and "all" not in args.cdf:
        ours = list(dict.fromkeys(s.experiment for s in specs))  # in the configs' order
        elsewhere = ({r.parent.name for r in committed_runs(out)}
                     | {d.parent.name for d in coming_back}) - set(ours)
        known = ours + sorted(elsewhere)
        unknown = [e for e in args.cdf if e not in known]
        if unknown:
            return (f"--cdf {' '.join(unknown)}: not an experiment of these runs"
                    f"{in_out} ({', '.join(known)})")
    return None


def _stale_runs_note(specs: list[RunSpec], out: Path, args: argparse.Namespace
                     ) -> tuple[str | None, list[str], str | None]:
    """The run directories of ``out`` that are no runs of these configs: the sentence on
    the other suites' committed runs (``other_suite_runs``) or None, the rest, and the
    note lines printed on both, or None."""
    stale = stale_runs(specs, out)
    other_suite, stale = other_suite_runs(stale, out, args)
    stale_lines = [f"note: {other_suite}"] if other_suite else []
    if stale:
        stale_lines.append(f"note: {len(stale)} run directories under {_shown(out)} are not "
                           f"runs of these configs (e.g. {stale[0]}); they are kept and the "
                           "analysis reads them too")
    return other_suite, stale, "\n".join(stale_lines) or None


def _dry_run_state(s: RunSpec, held: RunStatus, out: Path, args: argparse.Namespace,
                   run_dir: Path | None, *, relabelled: bool) -> str:
    """A run's state as the dry run lists it: done, to run, or a different run (what
    changed, or the reallocation mode it was recorded under); a done run recorded with
    other labels or run lists says so."""
    replaced = "replaced (--force)" if args.force else "--force replaces it"
    st = held.state
    shown = {"different": f"different run: {replaced}"}.get(st, st)
    if st == "different" and (changes := config_changes(s, out, limit=None, run_dir=run_dir)):
        shown = f"different run, changed: {changes}; {replaced}"
    if st == "different" and held.recorded_realloc is not None:
        shown = (f"different run: recorded under realloc {held.recorded_realloc}, "
                 f"this config's is realloc {resolved_realloc(s)}; {replaced}")
    if relabelled:
        labels = label_changes(s, out, run_dir=run_dir)
        shown = (f"done; recorded with other {labels or 'labels or run lists'}: "
                 "rewritten by a run")
    return shown


def _dry_run(specs: list[RunSpec], status: dict[tuple[str, str], RunStatus], *, out: Path,
             args: argparse.Namespace, put_back: dict[Path, Path], todo: list[RunSpec],
             different: list[RunSpec], relabelled: list[RunSpec],
             stale_note: str | None, refusal: str | None) -> int:
    """``--dry-run``: a line per run (``_dry_run_state``), the notes on other run
    directories, the counts, and the refusal a run would stop with (exit 2), if any."""
    relabelled_names = {(s.experiment, s.name) for s in relabelled}
    for s in specs:
        shown = _dry_run_state(s, status[(s.experiment, s.name)], out, args,
                               put_back.get(out / s.experiment / s.name),
                               relabelled=(s.experiment, s.name) in relabelled_names)
        print(f"{s.experiment}/{s.name}  ({shown})")
    if stale_note:
        print(stale_note)
    n_done = len(specs) - len(todo)
    print(f"{_count(len(specs), 'run', 'runs')} into {_shown(out)}: {n_done} done (the same run recorded"
          + (f"; {len(relabelled)} of them "
             f"{'records' if len(relabelled) == 1 else 'record'} another [experiment] description, "
             "figure or run list (policies, seeds, repetitions), which a run rewrites, "
             "config hash included" if relabelled else "")
          + f"), {len(todo) - len(different)} to run"
          + (f", {_count(len(different), 'directory holds', 'directories hold')} a "
             "different run" if different else "")
          + ("; a run stops before any of them (error below)" if refusal else ""))
    if refusal:
        print(f"error: {refusal}", file=sys.stderr)
        return 2
    return 0


def _relabel(relabelled: list[RunSpec], out: Path) -> None:
    """Rewrite the labels and run lists of the done runs ``relabelled`` (``relabel``)."""
    for s in relabelled:
        relabel(s, out)
    if relabelled:
        print(f"note: {len(relabelled)} done runs recorded another [experiment] description, "
              "figure or run list: rewritten in their run_config.json and the config hash "
              "in their run.json (the records are kept)")


def _pack(out: Path, specs: list[RunSpec], *, written: list[RunSpec]) -> None:
    """Pack the runs just written into their experiments' columnar files, a line each."""
    for exp, n in pack_written(out, {s.experiment for s in specs},
                               written={s.experiment for s in written}):
        print(f"records: {_count(n, 'run', 'runs')} packed into {_shown(out / exp)}/*.parquet")


def _write_notes(out: Path, notes: list[str], other_suite: str | None,
                 stale: list[str]) -> None:
    """The results directory's NOTES.md: what was skipped and which of its run
    directories are no runs of these configs; removed when there is nothing to say."""
    if other_suite:
        notes = notes + [other_suite]
    if stale:  # the summary says so too: its tables mix these runs with the configs' own
        notes = notes + [f"{len(stale)} run directories of this directory are not runs of the "
                         f"configs last run into it (e.g. `{stale[0]}`): kept, and analysed "
                         "with the rest"]
    if notes:
        (out / "NOTES.md").write_text("\n".join(f"- {n}" for n in notes) + "\n")
    elif (out / "NOTES.md").exists():
        (out / "NOTES.md").unlink()


def _analyse(out: Path, args: argparse.Namespace) -> int:
    """The analysis of ``out`` (tables, figures, summary.md), a line per step on stderr."""
    from analysis.report import make_report
    from runner.progress import StepProgress
    steps = StepProgress("analysis")  # a line per step on stderr, the figures as a bar
    summary = make_report(out, reference=args.reference, cdf=args.cdf, progress=steps)
    steps.close()
    print(f"results: {_shown(out)} (summary: {_shown(summary)}, tables/, figures/)")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = build_parser()
    args = ap.parse_args(argv)
    _check_options(ap, args)
    if args.verify:
        return _verify(args)
    out = (args.out or default_out(args.config, full=args.full)).resolve()
    bad_out = output_path_error(args.out or _shown(out),
                                option="--out" if args.out else "results directory")
    if bad_out:
        print(f"error: {bad_out}", file=sys.stderr)
        return 2
    if args.config and args.suite != "default":
        print("error: give --suite or --config, not both (each names the experiment files)",
              file=sys.stderr)
        return 2
    configs = args.config or suite_configs(args.suite)
    try:
        specs, notes, config_notes = collect_specs(configs, full=args.full, backend=args.backend)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for n in config_notes:
        print(f"note: {n}", file=sys.stderr)
    where = _shown(out)
    notes = _with_kept_packet_runs(notes, out)
    found = found_leftovers(out, args)
    # whole runs an interrupted runner left aside, which this run puts back before analysing
    bad_shaping = _shaping_error(args, specs, out, put_back_plan(found))
    if bad_shaping:
        print(f"error: {bad_shaping}", file=sys.stderr)
        return 2
    for n in notes:
        print(f"note: {n}")
    left, put_back = leftovers(out, args, found)
    if left:
        print(f"note: {left}")
    # the directory a run would find: put back first when a dry run
    status = {(s.experiment, s.name): run_status(s, out, run_dir=put_back.get(
        out / s.experiment / s.name)) for s in specs}
    different = [s for s in specs if status[(s.experiment, s.name)].state == "different"]
    todo = [s for s in specs if status[(s.experiment, s.name)].state != "done"]
    # done, but recorded with another description, figure or run list: rewritten first
    relabelled = [s for s in specs if status[(s.experiment, s.name)].state == "done"
                  and status[(s.experiment, s.name)].recorded_hash != s.config_hash]
    refusal = start_refusal(out, status=status, different=different, args=args,
                            put_back=put_back)
    other_suite, stale, stale_note = _stale_runs_note(specs, out, args)
    if args.dry_run:
        return _dry_run(specs, status, out=out, args=args, put_back=put_back, todo=todo,
                        different=different, relabelled=relabelled, stale_note=stale_note,
                        refusal=refusal)
    if refusal:
        print(f"error: {refusal}", file=sys.stderr)
        return 2
    dirty = _dirty_reference(out, writes=bool(todo or relabelled))
    if dirty:
        print(f"error: {dirty}", file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)
    _relabel(relabelled, out)
    if stale_note:
        print(stale_note)
    workers = (f"dask {args.dask}" if args.dask
               else f"{args.jobs} job{'s' if args.jobs != 1 else ''}")
    replacing = f", {len(different)} of them replacing a different run" if different else ""
    print(f"{_count(len(specs), 'run', 'runs')} into {where}: {len(specs) - len(todo)} already "
          f"done, {len(todo)} to run{replacing} ({workers})")
    if todo:
        _kernels_ready()
    run_all(todo, out, jobs=args.jobs, dask_address=args.dask,
            done_specs=[s for s in specs if s not in todo])
    _pack(out, specs, written=[*todo, *relabelled])
    _write_notes(out, notes, other_suite, stale)
    if args.no_analysis:
        print(f"results: {where} (analysis skipped; later: python -m analysis {where})")
        return 0
    return _analyse(out, args)


if __name__ == "__main__":
    run_cli(main, interrupted=INTERRUPTED)
