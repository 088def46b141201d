"""How every command line of the project parses its options (``ArgumentParser``, its
``--help`` layout: ``described``, ``epilog``; ``output_path_error``) and how it ends:
``run_cli(main)``.

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

Every command line parses its options with ``ArgumentParser`` (argparse's, with a usage
error as one line ``<prog>: error: ...`` and exit status 2, the usage itself only with
``--help``; a float literal after an option, ``--link-rate-bps -1e9``, is the option's
value, for the command's own check to judge), and checks where it writes with
``output_path_error`` before anything is built or written.
"""
from __future__ import annotations

import argparse
import os
import re
import select
import sys
import textwrap
from pathlib import Path
from typing import Callable, Literal, NoReturn, Sequence

CLOSED_STDOUT_STATUS = 141  # 128 + SIGPIPE (13)
INTERRUPTED_STATUS = 130  # 128 + SIGINT (2)
USAGE_STATUS = 2  # argparse's status for a usage error, the commands' for bad input
HELP_WIDTH = 79  # columns of the descriptions and epilogs of --help (options: the terminal's)
# any float literal with a leading minus (-3, -.5, -1e9, -2.5E-3): a value, not an option
NEGATIVE_NUMBER = re.compile(r"^-(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")


class ArgumentParser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` as every command line of the project uses it: a usage
    error (an unknown option, a bad choice, a missing argument, ``ap.error(...)``) is one
    line ``<prog>: error: ...`` on standard error and exit status 2, without the usage
    block (``--help`` shows it); and a negative number in any float spelling (``-1e9``)
    after an option is that option's value rather than an unknown option. Subcommands
    (``add_subparsers``) are of this class too (argparse's default ``parser_class``: the
    parser's own)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = NEGATIVE_NUMBER

    def error(self, message: str) -> NoReturn:
        self.exit(USAGE_STATUS, f"{self.prog}: error: {' '.join(message.split())}\n")


def described(text: str) -> str:
    """A ``--help`` description (for ``RawDescriptionHelpFormatter``): ``text`` filled to
    ``HELP_WIDTH`` columns."""
    return textwrap.fill(" ".join(text.split()), HELP_WIDTH)


def epilog(examples: Sequence[str], *paragraphs: str) -> str:
    """A ``--help`` epilog (for ``RawDescriptionHelpFormatter``): the example commands, one
    a line as given, then short paragraphs filled to ``HELP_WIDTH`` columns."""
    return "\n\n".join(["examples:\n" + "\n".join(f"  {e}" for e in examples),
                        *(described(p) for p in paragraphs)])


def output_path_error(path: str | Path, *, option: str,
                      kind: Literal["directory", "file"] = "directory") -> str | None:
    """Why ``path`` cannot be the output named by ``option`` (``--out``, ``-o``), in one
    line, or None: a directory to create or write into (``kind="directory"``) must not be
    an existing file, a file to write (``kind="file"``) not an existing directory, and in
    both cases no existing part of the path above it may be a file."""
    p = Path(path)
    if kind == "directory" and (p.is_symlink() or p.exists()) and not p.is_dir():
        return f"{option} {path}: exists and is not a directory"
    if kind == "file" and p.is_dir():
        return f"{option} {path}: is a directory; name the file to write"
    for parent in p.parents:
        if parent.is_symlink() or parent.exists():
            if parent.is_dir():
                return None
            return f"{option} {path}: {parent} is a file, not a directory"
    return None


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
