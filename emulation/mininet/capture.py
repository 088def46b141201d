"""Packet capture on the emulated switch ports and its parsing with scapy.

Capture: one ``tcpdump`` per host-facing switch port (root namespace), BPF filter
``tcp dst port 9000`` (data direction only), snap length 96 bytes, written to pcap.
tcpdump is a C process that keeps up with the traffic; the capture is read with scapy's
``RawPcapReader`` afterwards and the IPv4/TCP headers decoded with ``struct`` (full
scapy dissection runs at a few thousand packets per second, too slow for a run's capture). Each data packet is counted on the switch port that faces its receiver only.
Parsing yields, per TCP connection (src ip, src port), first/last packet time and payload
bytes: distinct sequence space covered (retransmissions counted once) and payload on the
wire (IP total length minus headers, so the snap length does not matter).
Kernel drop counts reported by tcpdump are kept: capture loss is measured, not assumed.
"""
from __future__ import annotations

import re
import signal
import socket
import struct
import time
import subprocess
from pathlib import Path

from emulation.mininet.protocol import DATA_PORT


class Capture:
    """tcpdump processes on switch ports; ``stop()`` ends them (only the PIDs it started)."""

    def __init__(self, out_dir: Path, ports: dict[str, str]):
        self.out_dir = Path(out_dir)
        self.procs: dict[str, subprocess.Popen] = {}
        self.ports = ports  # interface -> receiver ip
        for iface in ports:
            pcap = self.out_dir / f"cap-{iface}.pcap"
            self.procs[iface] = subprocess.Popen(
                ["tcpdump", "-i", iface, "-s", "96", "-U", "--immediate-mode", "-n", "-w", str(pcap),
                 f"tcp dst port {DATA_PORT}"],
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.drops: dict[str, int] = {}

    def stop(self) -> None:
        if self.procs:
            time.sleep(0.5)  # let tcpdump drain the kernel's capture buffer
        for iface, p in self.procs.items():
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
            try:
                _, err = p.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                _, err = p.communicate()
            m = re.search(rb"(\d+) packets dropped by kernel", err or b"")
            self.drops[iface] = int(m.group(1)) if m else 0
        self.procs = {}

    def parse(self) -> dict[tuple[str, int], list[dict]]:
        """(src ip, src port) -> its connections in SYN order, each {first_s, last_s (pcap
        clock), payload_bytes, wire_payload_bytes, packets}."""
        from scapy.utils import RawPcapReader
        conns: dict[tuple[str, int], dict] = {}
        for iface, dst_ip in self.ports.items():
            pcap = self.out_dir / f"cap-{iface}.pcap"
            if not pcap.exists() or pcap.stat().st_size == 0:
                continue
            dst = socket.inet_aton(dst_ip)
            with RawPcapReader(str(pcap)) as rd:
                for data, meta in rd:
                    # Ethernet (14) + IPv4 + TCP headers, read with struct (no dissection)
                    if len(data) < 34 or data[12:14] != b"\x08\x00" or data[23] != 6:
                        continue
                    if data[30:34] != dst:
                        continue
                    ihl = (data[14] & 0x0F) * 4
                    ip_len = struct.unpack_from("!H", data, 16)[0]
                    t = 14 + ihl
                    if len(data) < t + 14:
                        continue
                    sport, _, seq = struct.unpack_from("!HHI", data, t)
                    doff = (data[t + 12] >> 4) * 4
                    syn = bool(data[t + 13] & 0x02)
                    payload = max(ip_len - ihl - doff, 0)
                    ts = meta.sec + meta.usec / 1e6 if hasattr(meta, "usec") else float(meta.sec)
                    key = (socket.inet_ntoa(data[26:30]), sport)
                    lst = conns.setdefault(key, [])
                    c = lst[-1] if lst else None
                    if c is None or (syn and seq != c["isn"]):
                        # a new connection (an ephemeral port is reused by later flows)
                        isn = seq if syn else (seq - 1) % 2**32
                        c = {"first_s": ts, "isn": isn, "high": 0, "payload_bytes": 0,
                             "wire_payload_bytes": 0, "packets": 0}
                        lst.append(c)
                    c["last_s"] = ts
                    rel = (seq - c["isn"]) % 2**32
                    if payload:
                        c["high"] = max(c["high"], rel + payload)
                    c["payload_bytes"] = max(c["high"] - 1, 0)  # distinct bytes (SYN takes 1)
                    c["wire_payload_bytes"] += payload         # retransmissions included
                    c["packets"] += 1
        return conns
