"""What the compiled (numba) kernels share: the decorator that compiles them with numba's
on-disk cache (``jit``), the tiny network their warm-ups run on (``tiny_network``), the
modules that hold them (``MODULES``) and ``warm_up()``, which compiles or loads them all.

The kernels sit beside the code that calls them:

- ``emulation/allocation_kernels.py``: rate allocation (max-min, strict priority,
  MADD);
- ``emulation/fluid/refill_kernels.py``: re-allocation after flow completions (one class);
- ``emulation/fluid/class_refill_kernels.py``: the incremental strict-priority re-allocation
  of several classes;
- ``emulation/fluid/event_kernels.py``: time advance, the loops over events that only
  complete flows;
- ``emulation/state_kernels.py``: retiring active flows (the shared state's);
- ``emulation/view_kernels.py``: the policies' view loads;
- ``emulation/scheduler/bssi_kernel.py``: the BSSI ordering loop.

numba's cache stores the machine code beside each module (``__pycache__``, or in
``NUMBA_CACHE_DIR``), so only the first run on a machine pays the compilation (about a
minute); ``warm_up()`` triggers it explicitly, and a second call only loads it. numba
invalidates a kernel's cache when its own file changes, not when a kernel it calls from
another of these modules does; ``source_sha256()`` fingerprints them all, and the setup
step and the command line (``emulation.fluid.run.ensure_kernels``) empty every kernel's
cache when the fingerprint stored beside it differs.
"""
from __future__ import annotations

import hashlib
import importlib
import importlib.util
from pathlib import Path
from types import ModuleType

import numpy as np
from numba import njit

MODULES = ("emulation.allocation_kernels", "emulation.fluid.refill_kernels",
           "emulation.fluid.class_refill_kernels",
           "emulation.state_kernels", "emulation.fluid.event_kernels", "emulation.view_kernels",
           "emulation.scheduler.bssi_kernel")


def jit(fn):
    """``njit`` with numba's on-disk cache, or without it where no cache directory is
    writable (a read-only checkout run by another user): compiled per process then."""
    try:
        return njit(cache=True)(fn)
    except RuntimeError:
        return njit(fn)


def tiny_network() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(path_links, ptr, owners, cap) of two one-link paths (links 0 and 1, then the dummy
    link 2 of infinite capacity): the input the warm-ups compile the kernels on."""
    path_links = np.array([[0, 2], [1, 2]], dtype=np.int64)
    ptr = np.array([0, 1, 2, 4], dtype=np.int64)
    owners = np.array([0, 1, 0, 1], dtype=np.int64)
    cap = np.array([1.0, 2.0, np.inf])
    return path_links, ptr, owners, cap


def source_sha256() -> str:
    """SHA-256 of the source files of every module in ``MODULES`` and of this one, in that
    order (what the compiled kernels depend on), without importing them."""
    h = hashlib.sha256()
    for name in MODULES + (__name__,):
        h.update(Path(importlib.util.find_spec(name).origin).read_bytes())
    return h.hexdigest()


def modules() -> list[ModuleType]:
    """The modules that hold compiled kernels, imported."""
    return [importlib.import_module(name) for name in MODULES]


def _warm_up_module(name: str) -> None:
    importlib.import_module(name).warm_up()


def warm_up(jobs: int = 1) -> None:
    """Compile (or load from cache) every kernel on a tiny input; with ``jobs`` > 1 the
    modules compile in that many forked processes first (each writes its own cache; 41 s
    -> 29 s on 2 cores), then this process loads them from the cache."""
    if jobs > 1:
        import multiprocessing
        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            pool.map(_warm_up_module, MODULES, chunksize=1)
    for module in modules():
        module.warm_up()
