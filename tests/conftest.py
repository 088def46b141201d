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
