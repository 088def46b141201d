"""Host agent: runs inside one emulated host's namespace and moves that host's bytes.

- Receiver: accepts data connections on ``DATA_PORT``, reads each flow to its end, acks.
- Sender: on the driver's ``send`` command, opens one TCP connection per flow to the
  destination agent with the coflow's current TOS (``IP_TOS``), streams the bytes, waits
  for the ack, and reports ``done`` with start/end times (CLOCK_MONOTONIC). Progress
  (bytes sent per active flow) goes to the driver every 100 ms.
- Classes: the scheduler process pushes ``{cid: tos}``; the agent sets it on the sockets
  of that coflow's flows, active ones included. Under a rate-setting policy (Varys's
  MADD) the push also carries per-flow rates, which the agent enforces with the socket's
  ``SO_MAX_PACING_RATE`` (TCP's own pacing; no fq qdisc needed).
- Progress reports the bytes the receiver acknowledged (``tcpi_bytes_acked`` of
  ``TCP_INFO``), not the bytes written into the socket: a starved flow's whole payload
  can sit in its send buffer, which would show the scheduler a flow as nearly done. A new flow waits for its coflow's first
  push (at most ``CLASS_WAIT_S``) before it sends: a flow that started in the default
  class and moved up would have its first window overtaken by its own later packets in
  the higher class, which TCP takes for loss (measured on a one-job trace: 31 of about
  2,200 segments retransmitted; none with the wait; docs/testbed.md). If the scheduler
  connection breaks, every flow falls back to the default class (TOS 0) and the agent
  keeps going.
Exits when the driver says ``exit`` or its control connection closes.
"""
from __future__ import annotations

import argparse
import os
import selectors
import socket
import struct
import sys
import threading
import time

from emulation.mininet.protocol import DATA_PORT, HEADER, LineChannel

CHUNK = 64 * 1024
# Longest a new flow waits for its coflow's class (emulated seconds); the scheduler's
# reaction is a few ms (run.json class_latency_emulated_s), so this only bounds a lost push.
CLASS_WAIT_S = 0.2
# Cubic. Measured on both testbed traces (docs/testbed.md): with ACKs in their own queue
# (qos.py) and flows starting in their class, cubic's emulated / fluid-twin stage SCT
# ratio was 0.98-1.09 under every policy, BBR's 1.00-1.17 (BBR keeps pacing into a starved
# class at its old rate estimate, so promoted and demoted flows queue and retransmit).
CONGESTION_CONTROL = b"cubic"
SO_MAX_PACING_RATE = getattr(socket, "SO_MAX_PACING_RATE", 47)  # <asm-generic/socket.h>
# struct tcp_info (<linux/tcp.h>): u64 tcpi_bytes_acked at byte offset 120 (Linux >= 4.1)
TCP_INFO_BYTES_ACKED = slice(120, 128)
UNPACED = 0xFFFFFFFF  # SO_MAX_PACING_RATE's "no cap" (~0U)


def pace(sock: socket.socket, rate_bytes_per_s: int) -> None:
    """Cap the socket's sending rate at ``rate_bytes_per_s`` (TCP internal pacing)."""
    rate = min(max(1, int(rate_bytes_per_s)), UNPACED)
    sock.setsockopt(socket.SOL_SOCKET, SO_MAX_PACING_RATE, struct.pack("=I", rate))  # u32


def acked_bytes(sock: socket.socket) -> int | None:
    """Bytes of this connection the receiver acknowledged (header included); None if the
    kernel does not say."""
    try:
        info = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, TCP_INFO_BYTES_ACKED.stop)
    except OSError:
        return None
    if len(info) < TCP_INFO_BYTES_ACKED.stop:
        return None
    return int.from_bytes(info[TCP_INFO_BYTES_ACKED], sys.byteorder)


class Agent:
    def __init__(self, host: str, sock_dir: str):
        self.host = host
        self.sock_dir = sock_dir
        self.lock = threading.Lock()
        self.class_pushed = threading.Condition(self.lock)  # notified on every class push
        self.tos: dict[int, int] = {}          # cid -> tos
        self.socks: dict[int, list[socket.socket]] = {}  # cid -> active sockets
        self.sent: dict[int, int] = {}         # flow key -> payload bytes written (active)
        self.flow_sock: dict[int, socket.socket] = {}  # flow key -> its socket (active)
        self.rate: dict[int, int] = {}         # flow key -> pacing rate, bytes/s (MADD)
        self.applied: dict[int, float] = {}    # cid -> when a pushed class first hit a socket
        self.scheduler_lost = False
        self.driver = self._connect("driver.sock", {"op": "hello", "host": host, "pid": os.getpid()})
        self.driver_lock = threading.Lock()
        self.stop = threading.Event()

    def _connect(self, name: str, hello: dict) -> LineChannel:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(os.path.join(self.sock_dir, name))
        ch = LineChannel(s)
        ch.send(hello)
        return ch

    def report(self, msg: dict) -> None:
        with self.driver_lock:
            self.driver.send(msg)

    # ---------------------------------------------------------------- receiver
    def serve(self) -> None:
        srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        srv.bind(("0.0.0.0", DATA_PORT))
        srv.listen(256)
        while not self.stop.is_set():
            conn, _ = srv.accept()
            threading.Thread(target=self._receive, args=(conn,), daemon=True).start()

    def _receive(self, conn: socket.socket) -> None:
        with conn:
            head = b""
            while len(head) < HEADER.size:
                part = conn.recv(HEADER.size - len(head))
                if not part:
                    return
                head += part
            key, size = HEADER.unpack(head)
            left = size
            buf = bytearray(CHUNK)
            while left > 0:
                n = conn.recv_into(buf, min(CHUNK, left))
                if n == 0:
                    return
                left -= n
            t_end = time.monotonic()
            conn.sendall(b"\x01")
        self.report({"op": "recv", "key": key, "bytes": size, "t": t_end})

    # ---------------------------------------------------------------- sender
    def send_flow(self, key: int, cid: int, dst_ip: str, size: int) -> None:
        t_start = time.monotonic()
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        with self.lock:
            self.class_pushed.wait_for(lambda: cid in self.tos or self.scheduler_lost,
                                       timeout=CLASS_WAIT_S)
            tos = self.tos.get(cid, 0)
            self.socks.setdefault(cid, []).append(s)
            self.sent[key] = 0
            self.flow_sock[key] = s
            if key in self.rate:
                pace(s, self.rate[key])
        s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, tos)
        if CONGESTION_CONTROL:
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, CONGESTION_CONTROL)
        err = None
        sport = 0
        try:
            s.connect((dst_ip, DATA_PORT))
            sport = s.getsockname()[1]
            s.sendall(HEADER.pack(key, size))
            payload = memoryview(bytes(CHUNK))
            left = size
            while left > 0:
                n = s.send(payload[: min(CHUNK, left)])
                left -= n
                with self.lock:
                    self.sent[key] += n
            if s.recv(1) != b"\x01":
                err = "no ack"
        except OSError as exc:
            err = str(exc)
        t_end = time.monotonic()
        with self.lock:
            self.socks[cid].remove(s)
            self.sent.pop(key, None)
            self.flow_sock.pop(key, None)
            self.rate.pop(key, None)
        s.close()
        self.report({"op": "done", "key": key, "t_start": t_start, "t_end": t_end,
                     "bytes": size, "error": err, "sport": sport})

    def set_classes(self, tos_by_cid: dict[str, int], t_push: float,
                    rate_by_key: dict[str, int] | None = None) -> None:
        with self.lock:
            for k, r in (rate_by_key or {}).items():
                key = int(k)
                self.rate[key] = r
                s = self.flow_sock.get(key)
                if s is not None:
                    try:
                        pace(s, r)
                    except OSError:
                        pass
            for c, tos in tos_by_cid.items():
                cid = int(c)
                self.tos[cid] = tos
                for s in self.socks.get(cid, []):
                    try:
                        s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, tos)
                    except OSError:
                        pass
                if cid not in self.applied:
                    self.applied[cid] = time.monotonic()
            self.class_pushed.notify_all()

    def scheduler_loop(self) -> None:
        try:
            ch = self._connect("sched.sock", {"op": "hello", "host": self.host})
            while not self.stop.is_set():
                for msg in ch.recv_ready():
                    if msg.get("op") == "classes":
                        self.set_classes(msg["tos"], msg.get("t", 0.0), msg.get("rate_Bps"))
        except (OSError, EOFError, ValueError):
            pass
        with self.lock:  # fall back to the default class
            self.scheduler_lost = True
            self.class_pushed.notify_all()
            self.tos = {}
            for socks in self.socks.values():
                for s in socks:
                    try:
                        s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, 0)
                    except OSError:
                        pass
        if not self.stop.is_set():
            self.report({"op": "scheduler_lost", "t": time.monotonic()})

    def progress_loop(self) -> None:
        while not self.stop.wait(0.1):
            with self.lock:
                snap = {}
                for k, written in self.sent.items():
                    acked = acked_bytes(self.flow_sock[k])
                    snap[str(k)] = written if acked is None else max(0, min(acked - HEADER.size, written))
            if snap:
                self.report({"op": "progress", "sent": snap, "t": time.monotonic()})

    def run(self) -> int:
        threading.Thread(target=self.serve, daemon=True).start()
        threading.Thread(target=self.scheduler_loop, daemon=True).start()
        threading.Thread(target=self.progress_loop, daemon=True).start()
        self.report({"op": "ready", "host": self.host})
        sel = selectors.DefaultSelector()
        sel.register(self.driver.sock, selectors.EVENT_READ)
        try:
            while True:
                sel.select()
                for msg in self.driver.recv_ready():
                    if msg["op"] == "send":
                        threading.Thread(target=self.send_flow, daemon=True,
                                         args=(msg["key"], msg["cid"], msg["dst_ip"], msg["size"])).start()
                    elif msg["op"] == "exit":
                        with self.lock:
                            applied = {str(k): v for k, v in self.applied.items()}
                        self.report({"op": "bye", "applied": applied,
                                     "scheduler_lost": self.scheduler_lost})
                        return 0
        except EOFError:
            return 0
        finally:
            self.stop.set()


def main() -> int:
    # hand the GIL over within 0.5 ms (default 5 ms), so a class push is applied to the
    # sockets while sender and receiver threads are busy
    sys.setswitchinterval(0.0005)
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--host", required=True)
    ap.add_argument("--sock-dir", required=True)
    args = ap.parse_args()
    return Agent(args.host, args.sock_dir).run()


if __name__ == "__main__":
    sys.exit(main())
