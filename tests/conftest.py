"""Common fixtures: paths to the repo and its vendored data (``data/``)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FB_TRACE = REPO / "data" / "FB2010-1Hr-150-0.txt"
PYTHON = sys.executable


@pytest.fixture(scope="session")
def fb_trace_path() -> Path:
    if not FB_TRACE.exists():
        pytest.fail(f"{FB_TRACE} is missing: the FB2010 trace ships with the repository (data/)")
    return FB_TRACE


@pytest.fixture(autouse=True)
def _lower_bound_cache_in_tmp(tmp_path_factory, monkeypatch):
    """Command-line runs keep their lower bound in a cache directory (default under the
    user's home): the tests' runs use a fresh one of their own."""
    monkeypatch.setenv("BEAMER_CACHE_DIR", str(tmp_path_factory.mktemp("beamer-cache")))
