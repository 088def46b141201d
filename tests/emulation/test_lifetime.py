"""emulation/lifetime.py: a child given the parent-death signal ends when its parent is
killed outright, and one without it does not (the control); process start times."""
import os
import signal
import subprocess
import sys
import time

import pytest

from emulation.lifetime import process_start_ticks
from tests.conftest import REPO

PARENT = """
import subprocess, sys, time
from emulation.lifetime import parent_death_setter
kw = {"preexec_fn": parent_death_setter()} if sys.argv[1] == "tied" else {}
child = subprocess.Popen(["sleep", "60"], **kw)
print(child.pid, flush=True)
time.sleep(60)
"""


def _orphan_after_parent_killed(mode: str) -> tuple[int, bool]:
    """Start a parent that starts ``sleep 60``, SIGKILL the parent; (the sleep's pid,
    whether it still runs 5 s later)."""
    parent = subprocess.Popen([sys.executable, "-c", PARENT, mode], cwd=REPO,
                              stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": str(REPO)})
    child = int(parent.stdout.readline())
    parent.kill()
    parent.wait()
    deadline = time.time() + 5
    while process_start_ticks(child) is not None and time.time() < deadline:
        time.sleep(0.05)
    return child, process_start_ticks(child) is not None


@pytest.mark.slow
def test_a_tied_child_ends_with_its_parent_killed_outright_and_an_untied_one_does_not():
    child, alive = _orphan_after_parent_killed("tied")
    assert not alive
    child, alive = _orphan_after_parent_killed("free")
    try:
        assert alive  # the control: without the signal the orphan keeps running
    finally:
        os.kill(child, signal.SIGKILL)


def test_process_start_ticks_names_a_running_process_only():
    assert process_start_ticks(os.getpid()) == process_start_ticks(os.getpid()) > 0
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)  # exited, not reaped: a zombie
    try:
        assert process_start_ticks(pid) is None
    finally:
        os.waitpid(pid, 0)
