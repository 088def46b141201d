"""What a packet-level run killed outright leaves, and clearing it at the next run.

A run tears its network down on every exit path it can see (exceptions, SIGINT,
SIGTERM); a SIGKILL (or a power cut) runs nothing. Its processes then end by themselves
(the host shells and agents when their pipes close; tcpdump and the scheduler process
by the parent-death signal, ``emulation/lifetime.py``), but kernel objects in the root
namespace stay: bridges and switch-side veth ends named with the run's prefix, and the
run's socket directory.

Owns a registry of live networks: one JSON file per network under ``registry_dir()``
(``$BEAMER_MININET_REGISTRY`` if set, else ``/run/beamer-artifact/mininet``; the backend
runs as root), written before the network is created (``register``: its name prefix, the
directory it made, and the owning process's id and start time) and removed after its
teardown (``unregister``). ``clear_dead`` removes what the entries of processes that no
longer run name (links with that prefix, that directory), and nothing else: never a link
or process another program made, nor one of a run still going.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from emulation.lifetime import process_start_ticks

DEFAULT_REGISTRY = "/run/beamer-artifact/mininet"


def registry_dir() -> Path:
    """Where live networks are registered (see the module docstring)."""
    return Path(os.environ.get("BEAMER_MININET_REGISTRY", DEFAULT_REGISTRY))


def register(prefix: str, *, dirs: tuple[str, ...] = ()) -> Path:
    """Record that this process is about to create links named ``prefix...`` and owns
    ``dirs`` (removed with them if it dies); the entry's path."""
    reg = registry_dir()
    reg.mkdir(parents=True, exist_ok=True)
    entry = reg / f"{prefix}.json"
    tmp = reg / f".{prefix}.json.{os.getpid()}.tmp"
    tmp.write_text(json.dumps({"prefix": prefix, "pid": os.getpid(),
                               "start_ticks": process_start_ticks(os.getpid()),
                               "dirs": list(dirs)}))
    os.replace(tmp, entry)
    return entry


def unregister(entry: Path) -> None:
    """Remove an entry after its network was torn down (missing: nothing to do)."""
    try:
        Path(entry).unlink()
    except FileNotFoundError:
        pass


def remove_links(prefix: str) -> list[str]:
    """Delete root-namespace links (bridges, veth ends) named with this prefix only; the
    names deleted."""
    out = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True).stdout
    gone = []
    for line in out.splitlines():
        name = line.split(":", 2)[1].strip().split("@")[0]
        if name.startswith(prefix):
            subprocess.run(["ip", "link", "del", name], capture_output=True)
            gone.append(name)
    return gone


def clear_dead() -> list[str]:
    """Clear what registered networks of processes that no longer run left (their links
    and directories, then the entry); one line per network cleared. An unreadable entry
    is left in place and named."""
    reg = registry_dir()
    lines = []
    for entry in sorted(reg.glob("*.json")) if reg.is_dir() else []:
        try:
            rec = json.loads(entry.read_text())
            prefix, pid = str(rec["prefix"]), int(rec["pid"])
            dirs = [str(d) for d in rec.get("dirs", [])]
        except (OSError, ValueError, KeyError, TypeError):
            lines.append(f"{entry}: unreadable, left in place")
            continue
        if not prefix or entry.stem != prefix:
            lines.append(f"{entry}: names prefix {prefix!r}, left in place")
            continue
        start = process_start_ticks(pid)
        if start is not None and start == rec.get("start_ticks"):
            continue  # its run is still going
        links = remove_links(prefix)
        for d in dirs:
            shutil.rmtree(d, ignore_errors=True)
        unregister(entry)
        lines.append(f"network {prefix} of process {pid}, which no longer runs: "
                     f"{len(links)} links removed" + (f", {', '.join(dirs)} removed" if dirs else ""))
    return lines
