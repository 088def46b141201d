"""What a packet-level run starts and stops: the emulated network, the capture, the
scheduler process and the host agents (``Started``), and the teardown of exactly those
on every exit path (never a process or link this run did not create).

The scheduler process runs ahead of the data path for the CPU (``SCHEDULER_NICE``, as
root; a real coflow scheduler has a machine of its own): on 2 cores, agents moving bytes
and the capture otherwise delayed its class pushes (class latency p95 up to 23 ms).
"""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from emulation.lifetime import parent_death_setter
from emulation.mininet.capture import Capture
from emulation.mininet.driver import Processes, RunError
from emulation.mininet.net import build_net
from emulation.mininet.protocol import LineChannel
from emulation.topology import Topology

REPO = Path(__file__).resolve().parents[2]
SCHEDULER_NICE = -10


class Started:
    """Everything a run has started so far (filled while starting, so that a failure half
    way tears down what exists)."""

    def __init__(self, sock_dir: str):
        self.sock_dir = sock_dir
        self.en: Any = None
        self.cap: Capture | None = None
        self.sched: subprocess.Popen | None = None
        self.sched_ch: LineChannel | None = None
        self.drv: socket.socket | None = None
        self.agents: dict[str, subprocess.Popen] = {}
        self.files: list[Any] = []  # log files handed to child processes
        self.chans: dict[str, LineChannel] = {}

    def processes(self) -> Processes:
        return Processes(chans=self.chans, agents=self.agents, sched=self.sched,
                         sched_ch=self.sched_ch, ip_of=self.en.ips, cap=self.cap, net=self.en)


def start(s: Started, topo: Topology, out: Path, *, priority_classes: int,
          capture: bool) -> Processes:
    """Build the network, start the capture (if asked), the scheduler process and one
    agent per host; return them once every agent is ready."""
    s.en = build_net(topo, num_classes=priority_classes, dirs=(s.sock_dir,))
    if capture:
        ports = s.en.receiver_ports()
        (out / "capture_ports.json").write_text(json.dumps(ports))  # iface -> receiver ip
        s.cap = Capture(out, ports)
    s.drv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.drv.bind(os.path.join(s.sock_dir, "driver.sock"))
    s.drv.listen(len(topo.hosts) + 4)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    _start_scheduler(s, out, env)
    logs = out / "agents"
    logs.mkdir(exist_ok=True)
    for h in topo.hosts:
        s.agents[h] = s.en.host(h).popen(
            [sys.executable, "-m", "emulation.mininet.agent", "--host", h,
             "--sock-dir", s.sock_dir],
            cwd=str(REPO), env=env, stdout=_log_file(s.files, logs / f"{h}.out"),
            stderr=subprocess.STDOUT)
    _accept_agents(s, len(topo.hosts))
    time.sleep(0.2)  # let agents connect to the scheduler
    return s.processes()


def _start_scheduler(s: Started, out: Path, env: dict[str, str]) -> None:
    die_with_run = parent_death_setter()
    s.sched = subprocess.Popen([sys.executable, "-m", "emulation.mininet.scheduler_proc",
                                "--run-dir", str(out), "--sock-dir", s.sock_dir],
                               cwd=REPO, env=env,
                               stderr=_log_file(s.files, out / "scheduler.log"),
                               preexec_fn=lambda: (os.nice(SCHEDULER_NICE), die_with_run()))
    # the scheduler binds its socket after its warm-up (numba kernels: seconds when cold)
    path = os.path.join(s.sock_dir, "sched.sock")
    _wait_for(lambda: os.path.exists(path), 120,
              "the scheduler process did not start (see scheduler.log)", s.sched)
    sch = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sch.connect(path)
    s.sched_ch = LineChannel(sch)
    s.sched_ch.send({"op": "hello", "role": "driver"})


def _accept_agents(s: Started, num_hosts: int) -> None:
    """Each agent's connection, once it says it is ready."""
    s.drv.settimeout(30)
    for _ in range(num_hosts):
        try:
            conn, _ = s.drv.accept()
            conn.settimeout(30)
            ch = LineChannel(conn)
            host, is_ready = None, False
            while not is_ready:
                for msg in ch.recv_ready():
                    host = msg.get("host", host)
                    is_ready = is_ready or msg["op"] == "ready"
        except (OSError, EOFError):
            dead = [h for h, p in s.agents.items() if p.poll() is not None]
            raise RunError(f"agent on host {dead[0] if dead else '?'} did not start "
                           f"(see agents/)") from None
        s.chans[host] = ch


def finish(s: Started) -> tuple[dict[str, dict[int, float]], bool]:
    """Tell the agents and the scheduler process to exit; per host, when each coflow's
    class was first set on its sockets (host -> cid -> monotonic time), and whether any
    agent had lost the scheduler."""
    for ch in s.chans.values():
        ch.sock.settimeout(10)
        ch.send({"op": "exit"})
    applied: dict[str, dict[int, float]] = {}
    lost = False
    for h, ch in s.chans.items():
        for _ in range(100):
            bye = [m for m in ch.recv_ready() if m["op"] == "bye"]
            if bye:
                applied[h] = {int(k): v for k, v in bye[0]["applied"].items()}
                lost |= bye[0]["scheduler_lost"]
                break
    try:
        s.sched_ch.send({"op": "exit"})
    except OSError:
        pass
    return applied, lost


def teardown(s: Started) -> None:
    """Stop everything this run started; never touches processes or links it did not
    create."""
    for p in s.agents.values():
        if p.poll() is None:
            p.terminate()
    for p in s.agents.values():
        try:
            p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    if s.sched is not None and s.sched.poll() is None:
        s.sched.terminate()
        try:
            s.sched.wait(timeout=5)
        except subprocess.TimeoutExpired:
            s.sched.kill()
            s.sched.wait()
    if s.cap is not None:
        s.cap.stop()
    if s.en is not None:
        s.en.stop()
    shutil.rmtree(s.sock_dir, ignore_errors=True)
    for f in [*s.files, s.drv, *(c.sock for c in s.chans.values())]:
        if f is not None:
            f.close()


def _log_file(files: list, path: Path) -> Any:
    f = open(path, "w")
    files.append(f)
    return f


def _wait_for(cond: Callable[[], bool], timeout_s: float, why: str,
              proc: subprocess.Popen | None = None) -> None:
    end = time.time() + timeout_s
    while not cond():
        if time.time() > end or (proc is not None and proc.poll() is not None):
            raise RunError(why)
        time.sleep(0.02)
