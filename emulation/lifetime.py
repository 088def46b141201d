"""Tying a child process's life to its parent's, and telling whether a recorded process
still runs.

Owns ``parent_death_setter`` / ``set_parent_death_signal`` (Linux's ``prctl(PR_SET_PDEATHSIG)``: the kernel signals
the calling process when the thread that created it exits, so a parent killed outright,
which runs no cleanup, does not leave its children running) and ``process_start_ticks``
(a process's start time, which with its id names it across id reuse). Used by the
experiment runner's worker processes and by the packet backend's capture and scheduler
processes.
"""
from __future__ import annotations

import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1


def parent_death_setter(sig: int = signal.SIGTERM):
    """A function that asks the kernel to send ``sig`` to the calling process when the
    thread that created it exits (its parent process, for a single-threaded parent or its
    main thread) and returns True (False where that is not available: not Linux, no
    ``prctl``). Made in the parent and given as a ``subprocess`` ``preexec_fn``: the C
    function is looked up in the parent (no library loading between fork and exec), and a
    child whose parent died before the call (it would never get the signal) exits at
    once. The setting survives ``exec`` but not a change of user id (a program that drops
    privileges loses it)."""
    owner = os.getpid()
    prctl = None
    if sys.platform.startswith("linux"):
        try:
            prctl = ctypes.CDLL(None, use_errno=True).prctl
            prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong,
                              ctypes.c_ulong]
        except (OSError, AttributeError):
            prctl = None

    def set_it() -> bool:
        if prctl is None or prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0) != 0:
            return False
        if os.getpid() != owner and os.getppid() != owner:
            os._exit(1)  # the parent died between fork and prctl
        return True
    return set_it


def set_parent_death_signal(sig: int = signal.SIGTERM) -> bool:
    """``parent_death_setter(sig)()``: for a process setting it on itself."""
    return parent_death_setter(sig)()


def process_start_ticks(pid: int) -> int | None:
    """The start time of process ``pid`` in clock ticks since boot (``/proc/<pid>/stat``
    field 22), or None if there is no such process (or no ``/proc``). A zombie (exited,
    not yet reaped) counts as no process."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    if fields[0] == "Z":
        return None
    return int(fields[19])
