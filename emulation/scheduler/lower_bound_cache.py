"""The lower bound of a trace file on a topology, kept on disk between command-line runs.

``lower_bound`` (``emulation.scheduler.lower_bound``) on the FB2010 trace takes 1.8-2.3 s
(``benchmarks/cli_steps.py``: per-link loads of 706,397 flows, then HiGHS), the same for
every policy run on that trace. ``cached_lower_bound`` computes it once per (trace, topology, setting) and
reads it back afterwards: one JSON file per key under ``lower_bound_cache_dir()``.

The key is the SHA-256 of everything the bound depends on (``cache_inputs``): the trace
file's bytes (its ``trace_sha256``), the topology (kind, hosts, switches, every directed
link and its rate, its parameters), ``release_at_zero``, ``max_rounds`` and ``use_lp``,
the source of the modules that turn those into the bound (the bound itself, the
topology's paths, the two trace readers) and the numpy and scipy versions (HiGHS ships
with scipy). An entry holds those inputs too and is used only if they match exactly; the
value is stored as JSON, whose float text reads back to the same double, so a hit gives
the value a fresh computation gives, bit for bit. A changed trace, topology, setting,
source file or library version is a different key: the bound is computed again.

Directory: ``$BEAMER_CACHE_DIR/lower-bound`` if that variable is set, else
``$XDG_CACHE_HOME/beamer-artifact/lower-bound``, else
``~/.cache/beamer-artifact/lower-bound``. Deleting it only costs the recomputation. An
unreadable or malformed entry is recomputed and rewritten; a directory that cannot be
written leaves the bound computed and not stored.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from emulation.topology import Topology
from workloads.trace import Trace

CACHE_ENV = "BEAMER_CACHE_DIR"
CACHE_SUBDIR = "lower-bound"
ENTRY_FORMAT = 1
_ROOT = Path(__file__).resolve().parents[2]
# the modules whose code decides the bound of a trace file on a topology
SOURCES = ("emulation/scheduler/lower_bound.py", "emulation/topology.py",
           "workloads/trace.py", "workloads/coflow_benchmark.py")


@dataclass(frozen=True)
class CachedBound:
    """``avg_sct_s``: the bound; ``hit``: read from ``path`` (else computed, and stored
    there when ``stored``)."""

    avg_sct_s: float
    method: str
    hit: bool
    stored: bool
    path: Path


def lower_bound_cache_dir() -> Path:
    """Where entries live (module docstring): from ``BEAMER_CACHE_DIR``,
    ``XDG_CACHE_HOME`` or the home directory, in that order."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]) / CACHE_SUBDIR
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "beamer-artifact" / CACHE_SUBDIR


def sources_sha256() -> str:
    """SHA-256 over the bound's source files (``SOURCES``), names and bytes."""
    h = hashlib.sha256()
    for rel in SOURCES:
        h.update(rel.encode() + b"\0" + (_ROOT / rel).read_bytes() + b"\0")
    return h.hexdigest()


def cache_inputs(topology: Topology, *, trace_sha256: str, release_at_zero: bool,
                 max_rounds: int, use_lp: bool) -> dict[str, Any]:
    """Everything the bound of the trace file ``trace_sha256`` depends on, as JSON data."""
    import scipy
    return {
        "format": ENTRY_FORMAT,
        "trace_sha256": trace_sha256,
        "topology": {
            "kind": topology.kind,
            "hosts": list(topology.hosts),
            "switches": list(topology.switches),
            "links": [[l.src, l.dst, float(l.rate_bps)] for l in topology.links],
            "params": json.loads(json.dumps(topology.params, sort_keys=True, default=str)),
        },
        "release_at_zero": bool(release_at_zero),
        "max_rounds": int(max_rounds),
        "use_lp": bool(use_lp),
        "sources_sha256": sources_sha256(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
    }


def cache_key(inputs: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()


def cached_lower_bound(trace: Trace, topology: Topology, *, trace_sha256: str,
                       release_at_zero: bool = False, max_rounds: int = 40,
                       use_lp: bool = True, cache_dir: str | Path | None = None
                       ) -> CachedBound:
    """``lower_bound(trace, topology, ...)``'s ``avg_sct_s``, read from the cache when an
    entry for these inputs exists, else computed and stored. ``trace`` must be what the
    file with bytes ``trace_sha256`` loads to (``coflow_benchmark.load_any``).
    ``cache_dir=None``: ``lower_bound_cache_dir()``."""
    from emulation.scheduler.lower_bound import lower_bound
    inputs = cache_inputs(topology, trace_sha256=trace_sha256,
                          release_at_zero=release_at_zero, max_rounds=max_rounds,
                          use_lp=use_lp)
    directory = Path(cache_dir) if cache_dir is not None else lower_bound_cache_dir()
    path = directory / f"{cache_key(inputs)}.json"
    entry = _read_entry(path, inputs)
    if entry is not None:
        return CachedBound(entry["avg_sct_s"], entry["method"], True, True, path)
    lb = lower_bound(trace, topology, release_at_zero=release_at_zero,
                     max_rounds=max_rounds, use_lp=use_lp)
    entry = {"avg_sct_s": float(lb.avg_sct_s), "method": lb.method,
             "lp_stages": lb.lp_stages, "lp_rounds": lb.lp_rounds, "lp_cuts": lb.lp_cuts,
             "inputs": inputs}
    stored = _write_entry(path, entry)
    return CachedBound(entry["avg_sct_s"], lb.method, False, stored, path)


def _read_entry(path: Path, inputs: dict[str, Any]) -> dict[str, Any] | None:
    try:
        entry = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if (not isinstance(entry, dict) or entry.get("inputs") != inputs
            or type(entry.get("avg_sct_s")) is not float
            or not isinstance(entry.get("method"), str)):
        return None
    return entry


def _write_entry(path: Path, entry: dict[str, Any]) -> bool:
    """Write ``entry`` atomically (a temporary file renamed); False if it cannot be."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
    except OSError:
        return False
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(json.dumps(entry, sort_keys=True) + "\n")
        os.replace(tmp, path)
    except OSError:
        Path(tmp).unlink(missing_ok=True)
        return False
    return True
