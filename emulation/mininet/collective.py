"""A real all-reduce on the emulated hosts, measured the way the packet backend measures
its replay: jax's CPU collectives (gloo over TCP, ``allreduce_worker``) sum a gradient
buffer across the hosts of a big switch, optionally while a competing flow in the highest
class (iperf3, TOS of class 0) crosses the ring; the switch ports are captured (but for
the coordinator's and the competitor's ports) and each host pair's payload bytes, send
bursts and the collective's completion time are read off.

Owns ``run_real_allreduce`` (as root; the optional jax), ``pair_bytes`` and
``send_bursts`` (from a capture; the replay's capture goes through them too), and
``Competitor``. The comparison with the replay is ``benchmarks/real_collective.py``.
"""
from __future__ import annotations

import json
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from emulation.lifetime import parent_death_setter
from emulation.mininet.capture import Capture, read_port
from emulation.mininet.leftovers import clear_dead
from emulation.mininet.net import MTU_BYTES, build_net
from emulation.mininet.qos import tos_for_class
from emulation.topology import TopologyConfig, build_topology

COORDINATOR_PORT = 12355  # jax's coordination service on the first host
IPERF_PORT = 5201
START_DELAY_S = 0.5  # from the last rank's "ready" to the timed all-reduce's start
REPO = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Competitor:
    """One flow of ``size_bytes`` (whole KiB: iperf3 sends whole blocks, of 1 KiB here)
    from ``src`` to ``dst`` in the highest class, sent when the timed all-reduce starts."""

    src: str
    dst: str
    size_bytes: int

    def __post_init__(self) -> None:
        if self.size_bytes <= 0 or self.size_bytes % 1024:
            raise ValueError(f"a competitor's size must be whole KiB, got {self.size_bytes}")


def pair_bytes(cap: Capture, host_of: dict[str, str]) -> dict[tuple[str, str], int]:
    """Payload bytes each (src host, dst host) pair delivered (each connection's distinct
    bytes once, retransmissions left out), from a capture of the receivers' switch ports."""
    out: Counter = Counter()
    for iface, dst_ip in cap.ports.items():
        pcap = cap.out_dir / f"cap-{iface}.pcap"
        if not pcap.exists():
            continue
        conns, _ = read_port(pcap, dst_ip)
        for (src_ip, _), cs in conns.items():
            if src_ip in host_of:
                out[(host_of[src_ip], host_of[dst_ip])] += sum(int(c["payload_bytes"]) for c in cs)
    return {k: v for k, v in sorted(out.items()) if v > 0}


def send_bursts(cap: Capture, host_of: dict[str, str], *, gap_s: float,
                min_bytes: int = 0) -> dict[tuple[str, str], int]:
    """Per (src host, dst host) pair: runs of payload packets separated by more than
    ``gap_s`` of silence (a collective's steps, when it waits between them); pairs that
    carried ``min_bytes`` or fewer are left out."""
    ip_of_port = cap.ports
    runs: dict[tuple[str, str], int] = {}
    sizes = pair_bytes(cap, host_of)
    for iface, pk in cap.packets.items():
        dst = host_of[ip_of_port[iface]]
        data = pk["wire_bytes"] > 54 + 40  # more than headers
        for src_ip in np.unique(pk["src"][data]):
            src = host_of.get(str(src_ip))
            if src is None or sizes.get((src, dst), 0) <= min_bytes:
                continue
            t = np.sort(pk["t"][data & (pk["src"] == src_ip)])
            runs[(src, dst)] = 1 + int((np.diff(t) > gap_s).sum())
    return dict(sorted(runs.items()))


def _workers(en, hosts: tuple[str, ...], size_bytes: int) -> list:
    coord = f"{en.ips[hosts[0]]}:{COORDINATOR_PORT}"
    return [en.host(h).popen(
        [sys.executable, "-m", "emulation.mininet.allreduce_worker", "--rank", str(r),
         "--world", str(len(hosts)), "--coordinator", coord, "--bind-ip", en.ips[h],
         "--size-bytes", str(size_bytes)],
        cwd=str(REPO), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        preexec_fn=parent_death_setter())  # ends with this process, even if it is killed
        for r, h in enumerate(hosts)]


def _start_together(procs: list, timeout_s: float) -> float:
    """Wait for every rank's ready line, then send them one start instant; returns it.
    RuntimeError if a rank exits or stays silent past ``timeout_s``."""
    deadline = time.time() + timeout_s
    for p in procs:
        line = b""
        while not line.startswith(b"{"):
            if time.time() > deadline or p.poll() is not None:
                raise RuntimeError("an all-reduce rank did not get ready: "
                                   + (p.stderr.read() if p.poll() is not None else b"")
                                   .decode(errors="replace").strip()[-300:])
            line = p.stdout.readline()
    start_at = time.time() + START_DELAY_S
    for p in procs:
        p.stdin.write(f"{start_at:.6f}\n".encode())
        p.stdin.flush()
    return start_at


def _competitor(en, comp: Competitor, start_at: float) -> list:
    server = en.host(comp.dst).popen(["iperf3", "-s", "-1", "-p", str(IPERF_PORT)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     preexec_fn=parent_death_setter())
    client = en.host(comp.src).popen(
        ["sh", "-c", f"sleep {max(0.0, start_at - time.time()):.3f}; exec iperf3 -J -c "
         f"{en.ips[comp.dst]} -p {IPERF_PORT} -l 1K -n {comp.size_bytes} -S {tos_for_class(0)}"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=parent_death_setter())
    return [server, client]


def _finish(procs: list, timeout_s: float) -> list[tuple[int, str, str]]:
    """Wait for ``procs`` (kill those still running at the deadline); (rc, out, err)."""
    out = []
    deadline = time.time() + timeout_s
    for p in procs:
        try:
            o, e = p.communicate(timeout=max(1.0, deadline - time.time()))
        except subprocess.TimeoutExpired:
            p.kill()
            o, e = p.communicate()
        out.append((p.returncode, (o or b"").decode(errors="replace"),
                    (e or b"").decode(errors="replace")))
    return out


def run_real_allreduce(*, hosts: tuple[str, ...], size_bytes: int, link_rate_bps: float,
                       outdir: Path, competitor: Competitor | None = None,
                       timeout_s: float = 120.0) -> dict[str, Any]:
    """One timed all-reduce of ``size_bytes`` over ``hosts`` (a big switch, links at
    ``link_rate_bps``, two classes); the capture stays in ``outdir``. Returns the ranks'
    reports, the completion time (first start to last end, s), pair bytes and bursts.
    RuntimeError if a rank fails or the sum is wrong."""
    outdir.mkdir(parents=True, exist_ok=True)
    for line in clear_dead():
        print(f"note: cleared what an interrupted packet-level run left: {line}",
              file=sys.stderr)
    topo = build_topology(TopologyConfig(link_rate_bps=link_rate_bps), hosts)
    en = build_net(topo, num_classes=2)
    cap = None
    try:
        ports = en.receiver_ports()
        cap = Capture(outdir, ports,
                      bpf=f"tcp and not port {COORDINATOR_PORT} and not port {IPERF_PORT}")
        procs = _workers(en, hosts, size_bytes)
        try:
            start_at = _start_together(procs, timeout_s)
            extra = _competitor(en, competitor, start_at) if competitor else []
        finally:
            done = _finish(procs, timeout_s)
        done += _finish(extra, timeout_s)
    finally:
        if cap is not None:
            cap.stop()
        en.stop()
    return _report(done[:len(hosts)], done[len(hosts):], cap, ports, en.ips, link_rate_bps)


def _report(ranks, extra, cap: Capture, ports: dict[str, str], ips: dict[str, str],
            link_rate_bps: float) -> dict[str, Any]:
    reports = []
    for rc, out, err in ranks:
        lines = [ln for ln in out.splitlines() if ln.startswith("{")]
        if rc != 0 or not lines:
            raise RuntimeError(f"an all-reduce rank failed (exit {rc}): {err.strip()[-300:]}")
        reports.append(json.loads(lines[-1]))
    host_of = {ip: h for h, ip in ips.items()}
    packet_s = MTU_BYTES * 8 / link_rate_bps
    rec = {"ranks": reports,
           "completion_s": max(r["end_s"] for r in reports) - min(r["start_s"] for r in reports),
           "pair_bytes": {f"{a}->{b}": n for (a, b), n in pair_bytes(cap, host_of).items()},
           "send_bursts": {f"{a}->{b}": n for (a, b), n in send_bursts(
               cap, host_of, gap_s=3 * packet_s, min_bytes=64 * 1024).items()},
           "burst_gap_s": 3 * packet_s, "capture_drops": sum(cap.drops.values())}
    if extra:
        rc, out, err = extra[1]
        if rc != 0:
            raise RuntimeError(f"the competing flow failed (exit {rc}): {err.strip()[-300:]}")
        end = json.loads(out)["end"]["sum_sent"]
        rec["competitor"] = {"bytes": int(end["bytes"]), "seconds": float(end["seconds"])}
    return rec
