"""The packet-level backend of the one event loop (``emulation/loop.py``): real time.

``Driver`` owns what differs from the fluid engine: its clock is wall-clock time since
the trace's start (``RealTimeClock``); a decision is released coflows' flows handed to
their sender agents and a ``decide`` forwarded to the scheduler process, which asks the
policy and pushes the classes; completions are what the agents report. Every state change
the loop makes is forwarded to the scheduler process, whose shadow state replays it
(``emulation/mininet/scheduler_proc.py``). Between events it injects the run's faults
(``Faults``) and keeps the watchdogs: an agent that dies or a flow that fails stops the
run (``RunError``); a scheduler or capture that dies marks it degraded; nothing moving for
``stall_timeout_s`` stops it.
"""
from __future__ import annotations

import selectors
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from emulation.loop import Backend, Finished, Reached, RealTimeClock
from emulation.mininet.protocol import LineChannel
from emulation.state import ClusterState

# How often the driver samples CLOCK_REALTIME - CLOCK_MONOTONIC (wall seconds): a step of
# the realtime clock then blurs the capture's times only inside one such interval.
CLOCK_SAMPLE_S = 0.02
WAIT_AT_MOST_S = 0.05  # the longest wait for reports between two looks at the watchdogs


class RunError(RuntimeError):
    """A packet-level run that cannot complete (after a full teardown)."""


@dataclass(frozen=True)
class Faults:
    """Faults injected into a run (robustness tests), times in emulated seconds from the
    start of the trace: kill one host's agent, kill the capture (every tcpdump this run
    started), or set one host's link down for a while."""

    kill_agent: tuple[str, float] | None = None            # (host, after_s)
    kill_capture_after_s: float | None = None
    link_down: tuple[str, float, float] | None = None      # (host, at_s, for_s)


@dataclass(frozen=True)
class Processes:
    """What a run started that the driver talks to or watches: the agents' channels
    (host -> channel) and processes, the scheduler process and its channel, the hosts'
    addresses, the capture (or None) and the emulated network."""

    chans: dict[str, LineChannel]
    agents: dict[str, Any]
    sched: Any
    sched_ch: LineChannel
    ip_of: dict[str, str]
    cap: Any
    net: Any


@dataclass(frozen=True)
class Watch:
    """The driver's watchdog settings and injected faults."""

    stall_timeout_s: float
    faults: Faults = Faults()
    kill_scheduler_after_s: float | None = None


def clock_offset() -> tuple[float, float]:
    """(monotonic now, CLOCK_REALTIME - CLOCK_MONOTONIC): maps pcap times (realtime) onto
    the driver's clock; the tightest of a few samples."""
    best = None
    for _ in range(5):
        a = time.monotonic()
        r = time.time()
        b = time.monotonic()
        if best is None or b - a < best[0]:
            best = (b - a, (a + b) / 2, r - (a + b) / 2)
    return best[1], best[2]


class Driver(Backend):
    """Drive one packet-level run in real time as the loop's backend; ``result()`` after
    the loop: the trace's start (monotonic), the agents' flow reports by key, whether the
    run is degraded and why, the clock samples."""

    def __init__(self, procs: Processes, watch: Watch):
        self.p, self.watch = procs, watch
        self.sel = selectors.DefaultSelector()
        for h, ch in procs.chans.items():
            ch.sock.setblocking(True)
            ch.sock.settimeout(None)
            self.sel.register(ch.sock, selectors.EVENT_READ, h)
        self.flows: dict[int, dict] = {}
        self.pending: list[tuple[float, int, float]] = []  # (end, key, start), trace s
        self.progress: dict[str, int] = {}
        self.sent_seen: dict[str, int] = {}  # flow key -> bytes sent, as last reported
        self.degraded = False
        self.reasons: list[str] = []
        self.injected: set[str] = set()
        self.cap_dead: set[str] = set()
        self.sched_alive = True
        self.released = 0
        self.clock = RealTimeClock()
        self.last_activity = self.clock.start_monotonic
        self.clock_samples = [clock_offset()]  # (monotonic, realtime - monotonic)

    def result(self) -> dict[str, Any]:
        self.clock_samples.append(clock_offset())
        return {"t0": self.clock.start_monotonic, "flows": self.flows,
                "degraded": self.degraded, "clock": self.clock_samples,
                "reasons": self.reasons}

    # ------------------------------------------------------------------ the loop's backend
    def allocate(self, state: ClusterState, *, decide: bool) -> None:
        """Hand released coflows' flows to their agents and ask the scheduler process to
        decide (it applies the policy's own reallocation rule)."""
        self._release_new(state)
        self._forward({"op": "decide"})

    def events(self, state: ClusterState) -> Iterator[Finished | Reached]:
        """Wait for reports (until the next timer, at most ``WAIT_AT_MOST_S``), look at
        the watchdogs, then the completions reported up to now in time order."""
        self._receive(self.clock.wait_s(state.next_timer_s(), at_most_s=WAIT_AT_MOST_S))
        self._look(state)
        if self.progress:
            self._forward({"op": "progress", "sent": self.progress})
            self.progress = {}
        now = self.clock.now_s()
        self.pending.sort()
        while self.pending and self.pending[0][0] <= now:
            end, key, start = self.pending.pop(0)
            yield Finished(end, keys=np.array([key]), starts_s=np.array([start]))
        yield Reached(now)

    def on_timer(self, state: ClusterState) -> None:
        self.last_activity = time.monotonic()
        self._forward({"op": "timer", "t": state.now})

    def on_done(self, state: ClusterState, done: Finished) -> None:
        self.last_activity = time.monotonic()
        self._forward({"op": "done", "key": int(done.keys[0]), "t": state.now})

    # ------------------------------------------------------------------ helpers
    def _forward(self, msg: dict[str, Any]) -> None:
        if not self.sched_alive:
            return
        try:
            self.p.sched_ch.send(msg)
        except OSError:
            self.sched_alive, self.degraded = False, True

    def _release_new(self, state: ClusterState) -> None:
        """Tell the senders of every coflow released since the last call to start."""
        while self.released < len(state.c_job):
            cid = self.released
            t = state.c_tmpl[cid]
            for tf in range(int(state.t_f0[t]), int(state.t_f1[t])):
                src, dst = state.tf_src[tf], state.tf_dst[tf]
                self.p.chans[src].send({"op": "send", "key": (cid << 32) | tf, "cid": cid,
                                        "dst_ip": self.p.ip_of[dst],
                                        "size": int(state.tf_size[tf])})
            self.released += 1

    def _receive(self, wait_s: float) -> None:
        """The agents' reports that arrive within ``wait_s``."""
        t0 = self.clock.start_monotonic
        for key, _ in self.sel.select(timeout=wait_s):
            h = key.data
            try:
                msgs = self.p.chans[h].recv_ready()
            except EOFError:
                raise RunError(f"agent on host {h} died (see agents/{h}.out)") from None
            for m in msgs:
                if m["op"] == "done":
                    if m.get("error"):
                        raise RunError(f"flow {m['key']} from host {h} failed: {m['error']}")
                    self.flows[m["key"]] = {**m, "src_host": h}
                    self.pending.append((m["t_end"] - t0, m["key"], m["t_start"] - t0))
                    self.last_activity = time.monotonic()
                elif m["op"] == "progress":
                    # agents report every 0.1 s while they have flows: only bytes that
                    # moved count as progress for the watchdog
                    if any(v > self.sent_seen.get(k, -1) for k, v in m["sent"].items()):
                        self.last_activity = time.monotonic()
                        self.sent_seen.update(m["sent"])
                    self.progress.update(m["sent"])
                elif m["op"] == "scheduler_lost":
                    self.degraded = True

    def _look(self, state: ClusterState) -> None:
        """Clock samples, due faults and the watchdogs."""
        if time.monotonic() - self.clock_samples[-1][0] >= CLOCK_SAMPLE_S:
            self.clock_samples.append(clock_offset())
        inject(self.watch.faults, self.clock.now_s(), self.injected, self.reasons,
               self.p.agents, self.p.cap, self.p.net)
        for h, proc in self.p.agents.items():
            if proc.poll() is not None:
                raise RunError(f"agent on host {h} exited with status {proc.returncode} "
                               f"(see agents/{h}.out)")
        self._look_at_capture()
        if time.monotonic() - self.last_activity > self.watch.stall_timeout_s:
            raise RunError(f"no progress for {self.watch.stall_timeout_s:g} s at trace time "
                           f"{state.now:.2f} s (a link or a host may be down)")
        self._look_at_scheduler()

    def _look_at_capture(self) -> None:
        if self.p.cap is None:
            return
        for iface, proc in self.p.cap.procs.items():
            if iface not in self.cap_dead and proc.poll() is not None:
                self.cap_dead.add(iface)
                self.degraded = True
                self.reasons.append(f"capture on {iface} exited during the run")

    def _look_at_scheduler(self) -> None:
        sched = self.p.sched
        if self.sched_alive and sched.poll() is not None:
            self.sched_alive, self.degraded = False, True
            self.reasons.append(f"scheduler process exited with status {sched.returncode}")
        kill_after_s = self.watch.kill_scheduler_after_s
        if kill_after_s is not None and self.sched_alive and self.clock.now_s() > kill_after_s:
            sched.kill()
            sched.wait()
            self.sched_alive, self.degraded = False, True
            self.reasons.append("scheduler process killed")


def inject(faults: Faults, elapsed_s: float, done: set[str], reasons: list[str],
           agents: dict[str, Any], cap: Any, net: Any) -> None:
    """Apply the faults due at ``elapsed_s`` (emulated s since t0), each once; only to
    processes and links this run created."""
    if faults.kill_agent and "agent" not in done and elapsed_s >= faults.kill_agent[1]:
        done.add("agent")
        agents[faults.kill_agent[0]].kill()
    if (faults.kill_capture_after_s is not None and cap is not None and "capture" not in done
            and elapsed_s >= faults.kill_capture_after_s):
        done.add("capture")
        for p in cap.procs.values():
            if p.poll() is None:
                p.kill()
    if faults.link_down and net is not None:
        host, at_s, for_s = faults.link_down
        intf = net.host(host).intfList()[0]
        if "down" not in done and elapsed_s >= at_s:
            done.add("down")
            net.host(host).cmd(f"ip link set {intf.name} down")
            reasons.append(f"link of {host} set down at {at_s:g} s for {for_s:g} s")
        if "down" in done and "up" not in done and elapsed_s >= at_s + for_s:
            done.add("up")
            net.host(host).cmd(f"ip link set {intf.name} up")
