"""Mutation testing of the scheduling core: one-line AST mutants, each run against a fast
test subset; prints the score and writes every mutant's outcome.

    .venv/bin/python scripts/mutation.py                  # all targets (long: minutes)
    .venv/bin/python scripts/mutation.py --list           # the mutants, nothing run
    .venv/bin/python scripts/mutation.py --target emulation/scheduler/bssi.py
    .venv/bin/python scripts/mutation.py --ids 12 40      # rerun chosen mutants

Mutants (one at a time, on a private copy of the repository, never on the worktree):
arithmetic operators (+ -, * /, // /, ** *), comparisons (< <=, > >=, == !=, is / is not,
in / not in), and/or, removal of ``not`` and of unary minus, augmented assignment
(+= -=), integer constants (0 -> 1, n -> n + 1), float constants (x -> 2x, 0.0 -> 1.0),
True/False, an ``if`` condition replaced by True and by False (not for an ``if`` whose
body is only a ``raise``), and max/min swaps (``max``/``min``, ``np.maximum``/``np.minimum``,
``.max()``/``.min()``, ``np.argmax``/``np.argmin``). Docstrings, string constants and
the arguments of ``raise`` are left alone. ``TARGETS`` maps every mutated file to the
tests run against it (the golden-master file ``tests/artifact/test_reference_results.py`` is never
among them: it would kill mutants by "changed", not by "wrong").

Speed: the parent process imports the third-party libraries and the compiled kernels
(``emulation.kernels.MODULES``, not targets) once, then forks one child per mutant; the
child imports the project from the mutated copy and runs pytest in-process. A mutant is
*killed* if a test fails or the child exceeds the timeout, *survived* if the tests pass.
Results go to ``--out`` (JSON lines); ``docs/mutation.md`` records the score and the
surviving mutants with why each is equivalent. Run it at low priority
(``nice -n 10``): it is CPU-bound.
"""
from __future__ import annotations

import argparse
import ast
import copy
import importlib
import json
import os
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

SCHED_TESTS = ["tests/scheduler/test_policy_orders.py", "tests/scheduler/test_bssi.py", "tests/fluid/test_fluid_exact.py",
               "tests/mininet/test_mininet_units.py"]
FLUID_TESTS = ["tests/fluid/test_fluid_exact.py", "tests/fluid/test_fluid_run.py",
               "tests/fluid/test_fluid_properties.py"]
LB = "tests/scheduler/test_lower_bound.py::"
# fast exact tests first: pytest -x stops at the first failure, so most mutants die quickly
LB_TESTS = ["tests/fluid/test_fluid_run.py", LB + "test_per_stage_bound_by_hand",
            LB + "test_per_stage_bound_on_faster_links_by_hand",
            LB + "test_release_dates_in_the_lp_by_hand",
            LB + "test_lp_prefix_cut_matches_shortest_first",
            LB + "test_lp_keeps_the_per_stage_bounds_as_variable_bounds",
            LB + "test_lp_release_of_a_stage_off_the_link_does_not_relax_the_others",
            LB + "test_lp_with_disjoint_sub_second_stages_is_the_per_stage_mean",
            LB + "test_lp_plus_dependent_stages",
            LB + "test_lp_tightens_the_per_stage_bound_and_report_distances",
            LB + "test_lb_valid_with_arrivals_chains_multi_coflow_jobs_leaf_spine"]
# file -> (tests run against its mutants, names of the functions/methods mutated or None = all)
TARGETS: dict[str, tuple[list[str], list[str] | None]] = {
    "emulation/scheduler/base.py": (SCHED_TESTS, None),
    "emulation/scheduler/bssi.py": (["tests/scheduler/test_bssi.py", "tests/scheduler/test_policy_orders.py"], None),
    "emulation/scheduler/beamer.py": (["tests/scheduler/test_policy_orders.py", "tests/fluid/test_fluid_exact.py",
                                       "tests/scheduler/test_beamer.py", "tests/scheduler/test_beamer_hybrid.py"], None),
    "emulation/scheduler/fair.py": (SCHED_TESTS, None),
    "emulation/scheduler/fifo_lm.py": (SCHED_TESTS, None),
    "emulation/scheduler/sincronia.py": (SCHED_TESTS + ["tests/scheduler/test_beamer.py"], None),
    "emulation/scheduler/varys.py": (SCHED_TESTS, None),
    "emulation/scheduler/lower_bound.py": (LB_TESTS + ["tests/scheduler/test_chain_bound.py"], None),
    "emulation/view.py": (["tests/emulation/test_view.py", "tests/mininet/test_mininet_units.py",
                           "tests/fluid/test_fluid_exact.py"], None),
    "emulation/allocation.py": (["tests/fluid/test_allocation.py"], None),
    "emulation/fluid/simulator.py": (FLUID_TESTS, None),
    "emulation/fluid/run.py": (["tests/fluid/test_fluid_run.py"], None),
    "analysis/metrics.py": (["tests/analysis/test_report.py", "tests/analysis/test_congestion_metrics.py"], None),
}
EXCLUDED_TESTS = {"tests/artifact/test_reference_results.py"}

BINOP_SWAP = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult,
              ast.FloorDiv: ast.Div, ast.Pow: ast.Mult, ast.Mod: ast.FloorDiv,
              ast.LShift: ast.RShift, ast.RShift: ast.LShift, ast.BitOr: ast.BitAnd,
              ast.BitAnd: ast.BitOr}
CMP_SWAP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt,
            ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Is: ast.IsNot, ast.IsNot: ast.Is,
            ast.In: ast.NotIn, ast.NotIn: ast.In}
NAME_SWAP = {"max": "min", "min": "max", "maximum": "minimum", "minimum": "maximum",
             "argmax": "argmin", "argmin": "argmax"}


@dataclass
class Mutant:
    id: int
    file: str
    line: int
    function: str
    before: str
    after: str
    source: str  # the whole mutated module


def _docstring_nodes(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
    return out


def _skip_nodes(tree: ast.AST) -> set[int]:
    """ids of nodes never mutated: docstrings, raise statements, f-strings, annotations."""
    skip = _docstring_nodes(tree)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Raise, ast.JoinedStr)):
            skip.update(id(n) for n in ast.walk(node))
        if isinstance(node, (ast.arg, ast.AnnAssign)) and getattr(node, "annotation", None):
            skip.update(id(n) for n in ast.walk(node.annotation))
        if isinstance(node, ast.FunctionDef) and node.returns is not None:
            skip.update(id(n) for n in ast.walk(node.returns))
    return skip


def _variants(node: ast.AST) -> list[ast.AST]:
    """Mutated copies of ``node`` (the node itself is replaced by each)."""
    out = []
    if isinstance(node, ast.BinOp) and type(node.op) in BINOP_SWAP:
        n = copy.deepcopy(node)
        n.op = BINOP_SWAP[type(node.op)]()
        out.append(n)
    elif isinstance(node, ast.AugAssign) and type(node.op) in (ast.Add, ast.Sub):
        n = copy.deepcopy(node)
        n.op = ast.Sub() if isinstance(node.op, ast.Add) else ast.Add()
        out.append(n)
    elif isinstance(node, ast.Compare):
        for i, op in enumerate(node.ops):
            if type(op) in CMP_SWAP:
                n = copy.deepcopy(node)
                n.ops[i] = CMP_SWAP[type(op)]()
                out.append(n)
    elif isinstance(node, ast.BoolOp):
        n = copy.deepcopy(node)
        n.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        out.append(n)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Not, ast.USub)):
        out.append(copy.deepcopy(node.operand))
    elif isinstance(node, ast.Constant) and not isinstance(node.value, str):
        v = node.value
        if isinstance(v, bool):
            out.append(ast.Constant(not v))
        elif isinstance(v, int):
            out.append(ast.Constant(1 if v == 0 else v + 1))
        elif isinstance(v, float):
            out.append(ast.Constant(1.0 if v == 0.0 else v * 2))
    elif isinstance(node, ast.If) and not (len(node.body) == 1 and isinstance(node.body[0], ast.Raise)):
        for value in (True, False):
            n = copy.deepcopy(node)
            n.test = ast.Constant(value)
            out.append(n)
    elif isinstance(node, ast.Name) and node.id in ("max", "min") and isinstance(node.ctx, ast.Load):
        out.append(ast.Name(NAME_SWAP[node.id], ast.Load()))
    elif isinstance(node, ast.Attribute) and node.attr in NAME_SWAP:
        n = copy.deepcopy(node)
        n.attr = NAME_SWAP[node.attr]
        out.append(n)
    return out


def _functions(tree: ast.AST) -> list[tuple[ast.AST, str]]:
    """Every (node, enclosing top-level function/method name)."""
    out = []

    def walk(node, fname):
        for child in ast.iter_child_nodes(node):
            name = fname
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) and fname is None:
                name = child.name
            out.append((child, name))
            walk(child, name)

    for top in tree.body:
        if isinstance(top, ast.ClassDef):
            for item in top.body:
                n = item.name if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
                out.append((item, n))
                walk(item, n)
        else:
            n = top.name if isinstance(top, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
            out.append((top, n))
            walk(top, n)
    return out


def mutants_of(rel: str, functions: list[str] | None, start_id: int) -> list[Mutant]:
    src = (REPO / rel).read_text()
    tree = ast.parse(src)
    skip = _skip_nodes(tree)
    out: list[Mutant] = []
    for node, fname in _functions(tree):
        if fname is None or (functions is not None and fname not in functions):
            continue  # module-level code (imports, constants, class attributes) is not mutated
        if id(node) in skip:
            continue
        for new in _variants(node):
            # put the variant in place, unparse the module, put the original back
            parent_swap = _swap_in(tree, node, new)
            try:
                text = ast.unparse(tree)
            finally:
                parent_swap()
            before = ast.unparse(node)
            after = ast.unparse(new)
            if isinstance(node, (ast.AugAssign, ast.If)):
                before, after = before.split("\n")[0], after.split("\n")[0]
            out.append(Mutant(start_id + len(out), rel, getattr(node, "lineno", 0), fname,
                              before[:90], after[:90], text))
    return out


def _swap_in(tree: ast.AST, old: ast.AST, new: ast.AST):
    """Put ``new`` where ``old`` is in ``tree``; returns a function that undoes it."""
    for parent in ast.walk(tree):
        for field, value in ast.iter_fields(parent):
            if value is old:
                setattr(parent, field, new)
                return lambda: setattr(parent, field, old)
            if isinstance(value, list):
                for i, item in enumerate(value):
                    if item is old:
                        value[i] = new
                        return lambda: value.__setitem__(i, old)
    raise RuntimeError("node not found")


def all_mutants(targets: list[str]) -> list[Mutant]:
    out: list[Mutant] = []
    for rel in targets:
        out += mutants_of(rel, TARGETS[rel][1], len(out))
    return out


def _copy_repo(dst: Path) -> Path:
    root = dst / "repo"
    shutil.copytree(REPO, root, symlinks=True, ignore=shutil.ignore_patterns(
        ".git", ".venv", "results", ".hypothesis", "__pycache__", "*.pyc", ".pytest_cache"))
    return root


def _preload(root: Path) -> None:
    """Import the heavy third-party libraries and the compiled kernels once (parent)."""
    os.chdir(root)
    sys.path.insert(0, str(root))
    sys.dont_write_bytecode = True
    import numpy, scipy.optimize, scipy.stats, pandas, pytest, matplotlib  # noqa: F401,E401
    matplotlib.use("Agg")
    import matplotlib.pyplot, seaborn  # noqa: F401,E401
    import hypothesis
    hypothesis.settings.register_profile("mutation", database=None, print_blob=False)
    hypothesis.settings.load_profile("mutation")
    import emulation.kernels
    # the kernel modules outside the policies' package (importing that package would load
    # its targets); the BSSI kernel is compiled once into the copy's cache by the baseline
    preloaded = [m for m in emulation.kernels.MODULES if not m.startswith("emulation.scheduler.")]
    for name in preloaded:
        importlib.import_module(name).warm_up()
    loaded = [m for m in sys.modules if m.split(".")[0] in ("emulation", "analysis", "workloads",
                                                            "tests", "run_experiments", "runner",
                                                            "schema")]
    allowed = {"emulation", "emulation.kernels", "emulation.fluid", *preloaded}
    if set(loaded) - allowed:
        raise RuntimeError(f"project modules preloaded: {sorted(set(loaded) - allowed)}")


def _run_child(tests: list[str], timeout_s: float) -> tuple[str, float]:
    t0 = time.monotonic()
    pid = os.fork()
    if pid == 0:  # child
        try:
            os.setpgid(0, 0)
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            import pytest
            code = pytest.main(["-x", "-q", "-p", "no:cacheprovider", "--hypothesis-seed=0",
                                "-m", "not slow and not mininet", *tests])
            os._exit(int(code))
        except BaseException:
            os._exit(99)
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            code = os.waitstatus_to_exitcode(status)
            dt = time.monotonic() - t0
            if code == 0:
                return "survived", dt
            if code in (1, 2, 99) or code < 0:  # failed, collection/import error, crash
                return "killed", dt
            return f"error:{code}", dt
        if time.monotonic() - t0 > timeout_s:
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.waitpid(pid, 0)
            return "timeout", time.monotonic() - t0
        time.sleep(0.02)


def merge_report(paths: list[Path]) -> int:
    """Score per file and the surviving mutants of merged result files (markdown)."""
    recs: dict[int, dict] = {}
    for p in paths:
        for line in Path(p).read_text().splitlines():
            if line.strip():
                r = json.loads(line)
                recs[r["id"]] = r
    by_file: dict[str, list[dict]] = {}
    for r in sorted(recs.values(), key=lambda r: r["id"]):
        by_file.setdefault(r["file"], []).append(r)
    print("| file | mutants | killed | survived |\n|---|---|---|---|")
    tot = kil = 0
    for f, rs in by_file.items():
        k = sum(r["status"] in ("killed", "timeout") for r in rs)
        tot, kil = tot + len(rs), kil + k
        print(f"| {f} | {len(rs)} | {k} | {len(rs) - k} |")
    print(f"| all | {tot} | {kil} | {tot - kil} |\n")
    print("| id | file:line | mutation |\n|---|---|---|")
    for r in sorted(recs.values(), key=lambda r: r["id"]):
        if r["status"] not in ("killed", "timeout"):
            print(f"| {r['id']} | {r['file']}:{r['line']} | `{r['before']}` -> `{r['after']}` |")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--target", action="append", choices=sorted(TARGETS),
                    help="file to mutate (repeatable; default: all targets)")
    ap.add_argument("--ids", type=int, nargs="*", help="run only these mutant ids")
    ap.add_argument("--list", action="store_true", help="list the mutants and exit")
    ap.add_argument("--timeout-factor", type=float, default=5.0,
                    help="timeout per mutant = factor x the unmutated run of its tests (min 20 s)")
    ap.add_argument("--out", type=Path, default=Path("mutation-results.jsonl"),
                    help="JSON lines with every mutant's outcome (default ./mutation-results.jsonl)")
    ap.add_argument("--merge", type=Path, nargs="+", metavar="JSONL",
                    help="merge result files (later ones win per mutant id), print the score "
                         "per file and the survivors as a markdown table, run nothing")
    args = ap.parse_args(argv)
    if args.merge:
        return merge_report(args.merge)
    targets = args.target or list(TARGETS)
    for t in targets:
        for test in TARGETS[t][0]:
            if test.split("::")[0] in EXCLUDED_TESTS:
                raise SystemExit(f"{test} is excluded from mutation runs")
    muts = all_mutants(list(TARGETS))  # ids are stable whatever subset is run
    muts = [m for m in muts if m.file in targets and (not args.ids or m.id in args.ids)]
    if args.list:
        for m in muts:
            print(f"{m.id:4d} {m.file}:{m.line} [{m.function}] {m.before!r} -> {m.after!r}")
        print(f"{len(muts)} mutants")
        return 0
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # clean up the copy on kill
    out_path = args.out.resolve()
    tmp = Path(tempfile.mkdtemp(prefix="mutation-"))
    try:
        root = _copy_repo(tmp)
        _preload(root)
        baseline: dict[str, float] = {}
        for rel in dict.fromkeys(m.file for m in muts):
            status, dt = _run_child(TARGETS[rel][0], timeout_s=600)
            if status != "survived":
                raise SystemExit(f"tests for {rel} fail without any mutant ({status})")
            baseline[rel] = dt
            print(f"baseline {rel}: {dt:.1f} s", flush=True)
        counts: dict[str, int] = {}
        with open(out_path, "w") as fh:
            for m in muts:
                path = root / m.file
                original = path.read_text()
                path.write_text(m.source)
                try:
                    status, dt = _run_child(TARGETS[m.file][0],
                                            max(20.0, args.timeout_factor * baseline[m.file]))
                finally:
                    path.write_text(original)
                counts[status] = counts.get(status, 0) + 1
                rec = {"id": m.id, "file": m.file, "line": m.line, "function": m.function,
                       "before": m.before, "after": m.after, "status": status,
                       "seconds": round(dt, 2)}
                fh.write(json.dumps(rec) + "\n")
                fh.flush()
                mark = "." if status in ("killed", "timeout") else "S" if status == "survived" else "E"
                print(f"{mark} {m.id:4d} {m.file}:{m.line} {m.before!r} -> {m.after!r} "
                      f"[{status} {dt:.1f}s]", flush=True)
    finally:
        os.chdir(REPO)
        shutil.rmtree(tmp, ignore_errors=True)
    killed = counts.get("killed", 0) + counts.get("timeout", 0)
    total = sum(counts.values())
    print(f"\n{total} mutants: {killed} killed ({counts.get('timeout', 0)} by timeout), "
          f"{counts.get('survived', 0)} survived, "
          f"{sum(v for k, v in counts.items() if k.startswith('error'))} errors; "
          f"raw score {killed / max(total, 1):.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
