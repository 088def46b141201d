"""How every command line of the project ends: ``run_cli(main)``.

``run_experiments.py``, ``python -m analysis``, ``python -m emulation.fluid``,
``python -m emulation.mininet`` and ``python -m workloads`` call ``run_cli(main)`` under
``if __name__ == "__main__"``: it exits with ``main()``'s status,
and when the reader of standard output goes away early (``... --dry-run | head``) it
exits quietly with status 141 (128 + SIGPIPE, what a tool the signal ends reports)
instead of printing a BrokenPipeError traceback. A broken pipe that is not standard
output (a socket, a worker's pipe) is an error as before. Interrupted (Ctrl-C, SIGINT;
inside a compiled kernel too, which reports it as a SystemError), it prints one line on
standard error, the command's own ``interrupted`` message (what was kept and how to go
on), and exits with status 130 (128 + SIGINT), without a traceback.
"""
from __future__ import annotations

import os
import select
import sys
from typing import Callable, NoReturn

CLOSED_STDOUT_STATUS = 141  # 128 + SIGPIPE (13)
INTERRUPTED_STATUS = 130  # 128 + SIGINT (2)


def run_cli(main: Callable[[], int | None], *, interrupted: str = "interrupted") -> NoReturn:
    """``sys.exit(main())``; exit ``CLOSED_STDOUT_STATUS`` without a word when standard
    output was closed by its reader, and ``INTERRUPTED_STATUS`` with the line
    ``interrupted`` on standard error when interrupted."""
    try:
        try:
            status = main()
        except SystemExit as exc:  # argparse's --help and usage errors
            status = exc.code
        except (KeyboardInterrupt, SystemError) as exc:
            if not _interrupt(exc):
                raise
            try:
                sys.stdout.flush()
            except (BrokenPipeError, ValueError):
                pass
            print(f"\n{interrupted}", file=sys.stderr, flush=True)
            os._exit(INTERRUPTED_STATUS)  # no waiting on worker threads or atexit joins
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's last flush
    except BrokenPipeError:
        if not stdout_closed():
            raise
        # output still buffered goes nowhere: the interpreter's last flush succeeds
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        status = CLOSED_STDOUT_STATUS
    sys.exit(status)


def interrupts_end_quietly(interrupted: str = "interrupted") -> None:
    """What ``run_cli`` does on an interrupt, from this call on: for an interrupt while a
    command line is still importing (before ``run_cli`` runs), through ``sys.excepthook``.
    Called first in each command line's ``__main__``, before its heavy imports."""
    previous = sys.excepthook

    def hook(kind, exc, tb):
        if _interrupt(exc):
            print(f"\n{interrupted}", file=sys.stderr, flush=True)
            os._exit(INTERRUPTED_STATUS)
        previous(kind, exc, tb)
    sys.excepthook = hook


def _interrupt(exc: BaseException) -> bool:
    """True if ``exc`` is a KeyboardInterrupt or was raised by one (a compiled kernel
    interrupted mid-call reports a SystemError whose cause is the KeyboardInterrupt)."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


def stdout_closed() -> bool:
    """True if standard output is a pipe (or socket) nobody reads any more: polling its
    descriptor reports an error or a hang-up."""
    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        events = poller.poll(0)
    except (OSError, ValueError, AttributeError):
        return False
    return any(ev & (select.POLLERR | select.POLLHUP) for _, ev in events)
