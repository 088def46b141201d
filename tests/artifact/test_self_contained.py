"""The repository is self-contained: no code, config or script reads ``../shared`` (or any
folder beside the clone) at run time, and the vendored FB2010 trace is the public file."""
from __future__ import annotations

import ast
import hashlib
import re
import tomllib

import pytest

from tests.conftest import FB_TRACE, REPO

SKIP_DIRS = {".git", ".venv", "results", "__pycache__", ".pytest_cache", ".hypothesis", "scratch"}
# a path that leaves the repository for the design folder: "../shared", "..\shared",
# or the bare component "shared" joined onto a path (REPO.parent / "shared")
OUTSIDE = re.compile(r"(^|[/\\])\.\.[/\\]+shared\b|^shared$")


def _files(*suffixes: str):
    for p in sorted(REPO.rglob("*")):
        if p.is_file() and p.suffix in suffixes and not SKIP_DIRS & set(p.relative_to(REPO).parts):
            yield p


def _docstrings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                ids.add(id(body[0].value))
    return ids


def python_hits(src: str) -> list[str]:
    """String literals (docstrings excepted) of ``src`` that point outside the repository."""
    tree = ast.parse(src)
    docs = _docstrings(tree)
    return [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)
            and isinstance(n.value, str) and id(n) not in docs and OUTSIDE.search(n.value)]


def _toml_strings(obj):
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _toml_strings(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _toml_strings(v)


def test_detector_flags_outside_paths():
    """The check itself: it must catch the forms a path to a folder beside the clone takes."""
    up = "../.."  # split so that this file's own literals do not match
    assert python_hits('FB = REPO.parent / "sha' + 'red" / "data" / "x.txt"')
    assert python_hits(f'p = "{up}/sha' + 'red/data/FB2010-1Hr-150-0.txt"')
    assert not python_hits('"""Docstring naming ../shared/DESIGN.md."""\nx = "shared memory"')


@pytest.mark.slow
def test_no_python_file_reads_outside_the_repository():
    bad = {str(p.relative_to(REPO)): h for p in _files(".py") if (h := python_hits(p.read_text()))}
    assert not bad, f"run-time references to a folder outside the repository: {bad}"


@pytest.mark.slow
def test_no_config_or_script_points_outside_the_repository():
    bad = []
    for p in _files(".toml"):
        bad += [(p.name, s) for s in _toml_strings(tomllib.loads(p.read_text()))
                if OUTSIDE.search(s) or ".." in s and (p.parent / s).resolve().is_relative_to(REPO.parent)
                and not (p.parent / s).resolve().is_relative_to(REPO)]
    for p in list(_files(".sh")) + [REPO / ".ci" / "run"]:
        for ln in p.read_text().splitlines():
            code = ln.split("#", 1)[0]
            if re.search(r"\.\./shared|\.\./\.\.", code):
                bad.append((p.name, ln))
    assert not bad, bad


def test_vendored_fb_trace_is_the_public_file():
    # sha256 of coflow/coflow-benchmark's FB2010-1Hr-150-0.txt, as recorded in data/README.md
    digest = hashlib.sha256(FB_TRACE.read_bytes()).hexdigest()
    assert digest == "cdd0d94d26c6ab10ce3634cf6a0f836859578e914de6b6faa980a245237dbc6e"
    assert digest in (REPO / "data" / "README.md").read_text()
