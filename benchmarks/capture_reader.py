"""Capture reader speed: packets/s of ``emulation.mininet.capture.read_port`` on a
synthetic pcap, against the packet rate a switch port can produce.

    .venv/bin/python benchmarks/capture_reader.py [--packets 300000] [--flows 200] [--reps 3]

The pcap (written with ``struct``, one port's view: data packets of ``--flows`` TCP
connections to the port's host, 9000-byte frames snapped to 96 bytes, 1 in 50 a
retransmission, 1 in 100 swapped with its successor) is read ``--reps`` times; the median
is printed. Target: the reader must keep up with a run, i.e. read faster than the ports
send. A host-facing port at the testbed's emulated 30 Mbit/s sends at most
30e6 / 8 / 9014 = 416 jumbo frames/s; ratio = that rate x --ports / reader rate, < 1 means
the reader is faster than all the ports of a run together at line rate.
"""
from __future__ import annotations

import argparse
import socket
import statistics
import struct
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from workloads.cli import ArgumentParser  # noqa: E402  (one-line usage errors)

from emulation.mininet.capture import read_port  # noqa: E402
from emulation.mininet.protocol import HEADER  # noqa: E402

MSS = 8948  # 9000-byte MTU minus IPv4 (20) and TCP with timestamps (32)


def write_pcap(path: Path, *, packets: int, flows: int) -> int:
    """One port's capture; returns the number of packet records written."""
    dst = socket.inet_aton("10.0.0.2")
    out = [struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 96, 1)]
    per_flow = max(packets // flows, 2)
    n = 0
    t = 1_000_000.0
    for f in range(flows):
        src = socket.inet_aton(f"10.0.1.{f % 250 + 1}")
        sport = 40000 + f
        isn = (f * 2654435761) % 2**32
        size = (per_flow - 1) * MSS - HEADER.size
        segs = list(range(per_flow))
        for i in range(1, len(segs) - 1, 100):  # reordering
            segs[i], segs[i + 1] = segs[i + 1], segs[i]
        segs += segs[::50]  # retransmissions
        for k, s in enumerate([-1] + segs):
            syn = s < 0
            seq = isn if syn else (isn + 1 + s * MSS) % 2**32
            payload = 0 if syn else MSS
            ip = struct.pack("!BBHHHBBH4s4s", 0x45, 4, 20 + 32 + payload, 0, 0x4000, 64, 6, 0,
                             src, dst)
            tcp = struct.pack("!HHIIBBHHH", sport, 9000, seq, 0, 8 << 4, 0x02 if syn else 0x10,
                              65535, 0, 0) + b"\x00" * 12
            body = HEADER.pack((f << 32) | 1, size) if s == 0 else b"\x00" * 16
            frame = (b"\x00" * 12 + b"\x08\x00" + ip + tcp + body + b"\x00" * 14)[:96]
            t += 2.4e-5
            out.append(struct.pack("<IIII", int(t), int((t % 1) * 1e6), len(frame),
                                   14 + 20 + 32 + payload) + frame)
            n += 1
    path.write_bytes(b"".join(out))
    return n


def main() -> int:
    ap = ArgumentParser(description=__doc__,
                        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--packets", type=int, default=300_000, help="data packets (approx.)")
    ap.add_argument("--flows", type=int, default=200, help="TCP connections")
    ap.add_argument("--reps", type=int, default=3, help="timed reads (median printed)")
    ap.add_argument("--ports", type=int, default=16, help="ports of a run, for the ratio")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "cap.pcap"
        n = write_pcap(p, packets=args.packets, flows=args.flows)
        times = []
        for _ in range(args.reps):
            t = time.perf_counter()
            conns, pk = read_port(p, "10.0.0.2")
            times.append(time.perf_counter() - t)
        assert len(pk["t"]) == n and sum(len(v) for v in conns.values()) == args.flows
        assert all(c["complete"] for v in conns.values() for c in v)
    med = statistics.median(times)
    rate = n / med
    line = 30e6 / 8 / 9014 * args.ports
    print(f"packets {n:,}  read median {med:.3f} s  -> {rate:,.0f} packets/s")
    print(f"{args.ports} ports at 30 Mbit/s line rate: {line:,.0f} packets/s  ratio {line / rate:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
