"""Messages between the driver, the scheduler process and the host agents.

Newline-delimited JSON over Unix domain sockets (the filesystem is shared across network
namespaces). A flow is named by ``key = cid << 32 | tf`` (coflow instance id, template
flow index), the same in every process. Times are ``time.monotonic()`` seconds
(CLOCK_MONOTONIC, one clock for all namespaces).

Data connections (agent -> agent, TCP port ``DATA_PORT``): a 16-byte header
``!QQ`` (key, size_bytes), then ``size_bytes`` of payload, then the receiver answers one
byte and both close. One TCP connection per flow: it starts with the coflow's current TOS
on its SYN, so the switch queues classify the whole flow, and flows never share a
connection's congestion window or head-of-line blocking.
"""
from __future__ import annotations

import json
import socket
import struct

DATA_PORT = 9000
HEADER = struct.Struct("!QQ")


class LineChannel:
    """Send and receive newline-delimited JSON on a stream socket."""

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self._buf = b""

    def send(self, msg: dict) -> None:
        self.sock.sendall(json.dumps(msg, separators=(",", ":")).encode() + b"\n")

    def recv_ready(self) -> list[dict]:
        """Read what is available (socket must be readable); [] + EOFError on close."""
        data = self.sock.recv(1 << 20)
        if not data:
            raise EOFError
        self._buf += data
        *lines, self._buf = self._buf.split(b"\n")
        return [json.loads(x) for x in lines if x]

    def fileno(self) -> int:
        return self.sock.fileno()

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass
