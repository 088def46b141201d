"""Capture parsing: distinct bytes per connection, retransmissions once, reused ports split."""
from scapy.layers.inet import IP, TCP
from scapy.layers.l2 import Ether
from scapy.packet import Raw
from scapy.utils import wrpcap

from emulation.mininet.capture import Capture


def _pkts(src, sport, isn, chunks, t0):
    out = [Ether() / IP(src=src, dst="10.0.0.2") / TCP(sport=sport, dport=9000, flags="S", seq=isn)]
    out[0].time = t0
    for i, (off, n) in enumerate(chunks):
        p = Ether() / IP(src=src, dst="10.0.0.2") / TCP(sport=sport, dport=9000, flags="A",
                                                         seq=(isn + 1 + off) % 2**32) / Raw(b"x" * n)
        p.time = t0 + 0.001 * (i + 1)
        out.append(p)
    return out


def test_parse_counts_distinct_bytes_and_splits_reused_ports(tmp_path):
    a = _pkts("10.0.0.1", 40000, 2**32 - 50, [(0, 100), (100, 100), (100, 100), (200, 30)], 1.0)
    b = _pkts("10.0.0.1", 40000, 12345, [(0, 70)], 5.0)  # same port, next connection
    other = _pkts("10.0.0.3", 40000, 7, [(0, 10)], 2.0)  # different receiver: other port
    for p in other:
        p[IP].dst = "10.0.0.9"
    wrpcap(str(tmp_path / "cap-sw-eth2.pcap"), a + b + other)
    cap = Capture.__new__(Capture)
    cap.out_dir, cap.ports, cap.procs, cap.drops = tmp_path, {"sw-eth2": "10.0.0.2"}, {}, {}
    conns = cap.parse()
    first, second = conns[("10.0.0.1", 40000)]
    assert first["payload_bytes"] == 230          # 100 retransmitted bytes counted once
    assert first["wire_payload_bytes"] == 330     # the wire total keeps them
    assert second["payload_bytes"] == 70
    assert ("10.0.0.3", 40000) not in conns       # not addressed to this port's host
