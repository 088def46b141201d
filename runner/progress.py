"""Progress of the runner's long loops (the runs, ``--verify``) on stderr: a tqdm bar on
a terminal; in a log file or a pipe, where a redrawn bar would leave carriage returns,
one plain line ``<desc>: <done>/<total> runs, <elapsed> s`` at most every ``log_every_s``
and at the end. ``StepProgress``: the same for a job of named steps (the analysis, from
``run_experiments.py`` and ``python -m analysis``): a line per step, and a step of
counted parts (figures) as a bar of them."""
from __future__ import annotations

import sys
import time
from typing import TextIO


class LogProgress:
    """tqdm's ``update`` / ``close`` for a stream that is not a terminal."""

    def __init__(self, *, total: int, desc: str, stream: TextIO, log_every_s: float,
                 unit: str = "run") -> None:
        self.total, self.desc, self.stream, self.log_every_s = total, desc, stream, log_every_s
        self.unit = unit
        self.n = 0
        self._t0 = self._last = time.time()
        self._closed = False

    def _line(self) -> None:
        print(f"{self.desc}: {self.n}/{self.total} {self.unit}s, {time.time() - self._t0:.0f} s",
              file=self.stream, flush=True)
        self._last = time.time()

    def update(self, n: int = 1) -> None:
        self.n += n
        if time.time() - self._last >= self.log_every_s:
            self._line()

    def close(self) -> None:
        if not self._closed and self.total:
            self._line()
        self._closed = True


def progress(*, total: int, desc: str, stream: TextIO | None = None,
             log_every_s: float = 30.0, disable: bool = False, leave: bool = True,
             unit: str = "run"):
    """A tqdm bar of ``total`` runs (or other ``unit``s) on a terminal (``leave``: kept on
    screen when done), else a ``LogProgress`` (both have ``update(n)`` and ``close()``);
    ``disable``: neither shows anything."""
    stream = stream or sys.stderr
    if not disable and getattr(stream, "isatty", lambda: False)():
        from tqdm import tqdm
        return tqdm(total=total, unit=unit, dynamic_ncols=True, file=stream, desc=desc,
                    leave=leave)
    return LogProgress(total=0 if disable else total, desc=desc, stream=stream,
                       log_every_s=float("inf") if disable else log_every_s, unit=unit)


class StepProgress:
    """Progress of a job of named steps on ``stream`` (stderr by default), called as
    ``step(name)`` when a step starts: one line ``<desc>: <name>``; and as ``step(name,
    done, total)`` for a step of counted parts (``figures``, 3 of 20): a ``progress`` bar
    of them on a terminal, else a line ``<desc>: <name> (<done> of <total>)`` when it
    starts, at most every ``log_every_s`` and when it is complete. ``close()`` ends a bar
    still open."""

    def __init__(self, desc: str, stream: TextIO | None = None,
                 log_every_s: float = 5.0) -> None:
        self.desc, self.stream, self.log_every_s = desc, stream or sys.stderr, log_every_s
        self._bar = None
        self._counted: str | None = None
        self._last = 0.0

    def _tty(self) -> bool:
        return getattr(self.stream, "isatty", lambda: False)()

    def __call__(self, name: str, done: int | None = None, total: int | None = None) -> None:
        if done is None or total is None:
            self.close()
            print(f"{self.desc}: {name}", file=self.stream, flush=True)
            return
        if name != self._counted:
            self.close()
            self._counted = name
            if self._tty():
                self._bar = progress(total=total, desc=f"{self.desc}: {name}",
                                     stream=self.stream, leave=False, unit="")
        if self._bar is not None:
            self._bar.update(done - self._bar.n)
        elif done in (0, total) or time.time() - self._last >= self.log_every_s:
            print(f"{self.desc}: {name} ({done} of {total})", file=self.stream, flush=True)
            self._last = time.time()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
        self._bar, self._counted = None, None
