"""Progress of the runner's long loops (the runs, ``--verify``) on stderr: a tqdm bar on
a terminal; in a log file or a pipe, where a redrawn bar would leave carriage returns,
one plain line ``<desc>: <done>/<total> runs, <elapsed> s`` at most every ``log_every_s``
and at the end."""
from __future__ import annotations

import sys
import time
from typing import TextIO


class LogProgress:
    """tqdm's ``update`` / ``close`` for a stream that is not a terminal."""

    def __init__(self, *, total: int, desc: str, stream: TextIO, log_every_s: float) -> None:
        self.total, self.desc, self.stream, self.log_every_s = total, desc, stream, log_every_s
        self.n = 0
        self._t0 = self._last = time.time()
        self._closed = False

    def _line(self) -> None:
        print(f"{self.desc}: {self.n}/{self.total} runs, {time.time() - self._t0:.0f} s",
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
             log_every_s: float = 30.0, disable: bool = False, leave: bool = True):
    """A tqdm bar of ``total`` runs on a terminal (``leave``: kept on screen when done),
    else a ``LogProgress`` (both have ``update(n)`` and ``close()``); ``disable``: neither
    shows anything."""
    stream = stream or sys.stderr
    if not disable and getattr(stream, "isatty", lambda: False)():
        from tqdm import tqdm
        return tqdm(total=total, unit="run", dynamic_ncols=True, file=stream, desc=desc,
                    leave=leave)
    return LogProgress(total=0 if disable else total, desc=desc, stream=stream,
                       log_every_s=float("inf") if disable else log_every_s)
