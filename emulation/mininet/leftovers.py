"""What a packet-level run killed outright leaves, and clearing it at the next run.

A run tears its network down on every exit path it can see (exceptions, SIGINT,
SIGTERM); a SIGKILL (or a power cut) runs nothing. Its processes then end by themselves
(the host shells when their stdin pipe closes, the agents when the driver's socket
closes, tcpdump and the scheduler process by the parent-death signal,
``emulation/lifetime.py``), but kernel objects in the root namespace stay: the bridges and
switch-side veth ends named with the run's prefix, and the run's socket directory.

Owns the names of a run's network and a registry of live networks: ``claim`` draws a
prefix (``b`` + 4 hex digits) that no registered network and no link of this machine
uses, and registers it, atomically, before anything is created: one JSON file per network
under ``registry_dir()`` (``$BEAMER_MININET_REGISTRY`` if set, else
``/run/beamer-artifact/mininet``, mode 0700; the backend runs as root) with the prefix, the
socket directories the run made, and the owning process's id and start time.
``unregister`` removes the entry after the teardown. ``remove_links`` deletes the links
of one network (``<prefix><node>`` and ``<prefix><node>-eth<N>``, nothing else), and
``clear_dead`` does that, and removes the directories, for the entries of processes that no
longer run (an entry whose prefix or directories do not have the shapes this module
writes is left in place and named).
"""
from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

from emulation.lifetime import process_start_ticks

DEFAULT_REGISTRY = "/run/beamer-artifact/mininet"
PREFIX = re.compile(r"^b[0-9a-f]{4}$")
SOCK_DIR_PREFIX = "bmr-"  # tempfile.mkdtemp(prefix=...) of the run's socket directory


def registry_dir() -> Path:
    """Where live networks are registered (see the module docstring)."""
    return Path(os.environ.get("BEAMER_MININET_REGISTRY", DEFAULT_REGISTRY))


def _registry(create: bool) -> Path | None:
    """The registry directory if it is this user's own and writable by nobody else
    (created so when ``create``); None otherwise."""
    reg = registry_dir()
    if create:
        reg.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        st = reg.stat()
    except OSError:
        return None
    if st.st_uid != os.geteuid() or st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return None
    return reg


def _link_names() -> list[str]:
    out = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True).stdout
    return [line.split(":", 2)[1].strip().split("@")[0] for line in out.splitlines()
            if line.count(":") >= 2]


def _is_sock_dir(d: object) -> bool:
    """A run's socket directory: ``<tempdir>/bmr-...``, as ``run.py`` makes it."""
    if not isinstance(d, str) or not os.path.isabs(d):
        return False
    p = Path(d)
    return p.parent == Path(tempfile.gettempdir()) and p.name.startswith(SOCK_DIR_PREFIX)


def claim(*, dirs: tuple[str, ...] = ()) -> tuple[str, Path]:
    """A fresh prefix for a network this process is about to create, registered with the
    socket directories ``dirs`` it owns: (prefix, entry). RuntimeError (one line) if the
    registry cannot be written."""
    if isinstance(dirs, str) or not all(_is_sock_dir(d) for d in dirs):
        raise ValueError(f"dirs must be socket directories {tempfile.gettempdir()}/"
                         f"{SOCK_DIR_PREFIX}*, got {dirs!r}")
    try:
        reg = _registry(create=True)
        if reg is None:
            raise OSError(f"{registry_dir()} is not this user's own directory")
        used = _link_names()
        for _ in range(100):
            prefix = f"b{secrets.token_hex(2)}"
            if any(n.startswith(prefix) for n in used):
                continue
            tmp = reg / f".{prefix}.json.{os.getpid()}.tmp"
            tmp.write_text(json.dumps({"prefix": prefix, "pid": os.getpid(),
                                       "start_ticks": process_start_ticks(os.getpid()),
                                       "dirs": list(dirs)}))
            try:
                os.link(tmp, reg / f"{prefix}.json")  # fails if another run holds it
            except FileExistsError:
                continue
            finally:
                tmp.unlink()
            return prefix, reg / f"{prefix}.json"
    except OSError as exc:
        raise RuntimeError(f"cannot register the emulated network in {registry_dir()} "
                           f"(set BEAMER_MININET_REGISTRY to another directory): {exc}") from None
    raise RuntimeError("no free network prefix after 100 draws")


def unregister(entry: Path) -> None:
    """Remove an entry after its network was torn down (missing: nothing to do)."""
    try:
        Path(entry).unlink()
    except FileNotFoundError:
        pass


def remove_links(prefix: str) -> list[str]:
    """Delete the root-namespace links of the network ``prefix`` (``<prefix><node>``,
    ``<prefix><node>-eth<N>``: bridges and switch-side veth ends); the names deleted."""
    if not PREFIX.match(prefix):
        raise ValueError(f"not a network prefix: {prefix!r}")
    ours = re.compile(rf"^{prefix}[a-z]+\d+(-eth\d+)?$")
    gone = []
    for name in _link_names():
        if ours.match(name):
            r = subprocess.run(["ip", "link", "del", name], capture_output=True)
            if r.returncode == 0:
                gone.append(name)
    return gone


def _running(rec: dict) -> bool:
    """The entry's process still runs (same id and start time; without a recorded start
    time, any process of that id)."""
    start = process_start_ticks(int(rec["pid"]))
    return start is not None and rec.get("start_ticks") in (None, start)


def clear_dead() -> list[str]:
    """Clear what registered networks of processes that no longer run left (their links
    and directories, then the entry, and temporary entry files of such processes); one
    line per network cleared or entry left in place."""
    reg = _registry(create=False)
    if reg is None:
        return []
    lines = []
    for tmp in reg.glob(".*.json.*.tmp"):
        pid = tmp.name.rsplit(".", 2)[-2]
        if pid.isdigit() and process_start_ticks(int(pid)) is None:
            tmp.unlink(missing_ok=True)
    for entry in sorted(reg.glob("*.json")):
        try:
            rec = json.loads(entry.read_text())
            prefix, pid, dirs = rec["prefix"], int(rec["pid"]), rec.get("dirs", [])
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            lines.append(f"{entry}: unreadable, left in place")
            continue
        if (not isinstance(prefix, str) or not PREFIX.match(prefix) or entry.stem != prefix
                or not isinstance(dirs, list) or not all(_is_sock_dir(d) for d in dirs)):
            lines.append(f"{entry}: not an entry this backend writes, left in place")
            continue
        if _running(rec):
            continue  # its run is still going
        links = remove_links(prefix)
        for d in dirs:
            shutil.rmtree(d, ignore_errors=True)
        unregister(entry)
        lines.append(f"network {prefix} of process {pid}, which no longer runs: "
                     f"{len(links)} links removed" + (f", {', '.join(dirs)} removed" if dirs else ""))
    return lines
