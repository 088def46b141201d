"""Capture parsing on synthetic pcaps built with scapy: distinct bytes per connection
(retransmissions once, reused ports split), completion times under reordering,
retransmission and a lost tail, priority isolation from rebuilt queues, the stages'
times derived from a capture, and the capture checked against what the agents sent.
Expected values are worked out by hand in each test."""
import pytest
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
    cap = Capture.from_files(tmp_path, {"sw-eth2": "10.0.0.2"})
    conns = cap.parse()
    first, second = conns[("10.0.0.1", 40000)]
    assert first["payload_bytes"] == 230          # 100 retransmitted bytes counted once
    assert first["wire_payload_bytes"] == 330     # the wire total keeps them
    assert second["payload_bytes"] == 70
    assert ("10.0.0.3", 40000) not in conns       # not addressed to this port's host


# ---------------------------------------------------------------- completion times
from emulation.mininet.capture import class_of_tos, priority_isolation  # noqa: E402
from emulation.mininet.protocol import HEADER  # noqa: E402


def _flow(src, sport, isn, size, segments, dst="10.0.0.2", tos=0):
    """A SYN plus data segments (t, offset, length) of one flow whose payload is the
    16-byte header (key, size) followed by ``size`` bytes."""
    body = HEADER.pack((7 << 32) | 3, size) + bytes(range(256)) * (size // 256 + 1)
    body = body[:16 + size]
    syn = Ether() / IP(src=src, dst=dst, tos=tos) / TCP(sport=sport, dport=9000, flags="S", seq=isn)
    syn.time = segments[0][0] - 0.001
    out = [syn]
    for t, off, n in segments:
        p = (Ether() / IP(src=src, dst=dst, tos=tos) /
             TCP(sport=sport, dport=9000, flags="A", seq=(isn + 1 + off) % 2**32) /
             Raw(body[off:off + n]))
        p.time = t
        out.append(p)
    return out


def test_completion_with_reordering_retransmission_and_lost_tail(tmp_path):
    # A: 300 payload bytes; the last segment arrives before the middle one (reordering),
    #    the middle one is then retransmitted once more (duplicate): complete when the hole
    #    is filled (t=1.003), not at the duplicate (1.004). ISN near 2^32: sequence wraps.
    a = _flow("10.0.0.1", 40000, 2**32 - 120, 284,
              [(1.001, 0, 100), (1.002, 200, 100), (1.003, 100, 100), (1.004, 100, 100)])
    # B: the tail segment is lost before the port; a duplicate of the first segment (a
    #    probe) passes at 2.2; the tail's retransmission passes at 2.3: complete at 2.3.
    b = _flow("10.0.0.3", 40001, 5000, 184, [(2.001, 0, 100), (2.2, 0, 100), (2.3, 100, 100)])
    # C: the tail never passes: not complete, 100 of 200 bytes delivered.
    c = _flow("10.0.0.4", 40002, 9, 184, [(3.001, 0, 100)])
    pk = sorted(a + b + c, key=lambda p: p.time)
    wrpcap(str(tmp_path / "cap-sw-eth2.pcap"), pk)
    cap = Capture.from_files(tmp_path, {"sw-eth2": "10.0.0.2"})
    conns = cap.parse()
    (fa,), (fb,), (fc,) = (conns[("10.0.0.1", 40000)], conns[("10.0.0.3", 40001)],
                           conns[("10.0.0.4", 40002)])
    assert (fa["key"], fa["size"]) == ((7 << 32) | 3, 284)   # header read from the packets
    assert fa["complete"] and abs(fa["complete_s"] - 1.003) < 1e-6
    assert fa["payload_bytes"] == 300 and fa["wire_payload_bytes"] == 400
    assert fb["complete"] and abs(fb["complete_s"] - 2.3) < 1e-6
    assert fb["wire_payload_bytes"] - fb["payload_bytes"] == 100
    assert not fc["complete"] and fc["delivered_bytes"] == 100
    assert cap.read_stats["packets"] == len(pk)


def test_class_of_tos_matches_qos_marking():
    from emulation.mininet.qos import tos_for_class
    assert class_of_tos([tos_for_class(k) for k in range(8)], 8).tolist() == list(range(8))
    assert class_of_tos([0, 1], 8).tolist() == [7, 7]   # unmarked / ECN bits: default class
    assert class_of_tos([tos_for_class(5)], 4).tolist() == [3]


def test_isolation_from_queues_rebuilt_out_of_two_ports(tmp_path):
    """By hand: class-0 packets p1..p3 and one class-7 packet q enter the switch at t=0
    (on their senders' ports) and leave the receiver's port at 1 (p1), 2 (q), 3 (p2),
    4 (p3). At p1's and q's departures both classes are queued (counted); at p2's and
    p3's only class 0 is. Counted bytes: p1 and q, q is lower: share 1/2."""
    def pkt(src, sport, seq, tos, t):
        p = (Ether() / IP(src=src, dst="10.0.0.2", tos=tos) /
             TCP(sport=sport, dport=9000, flags="A", seq=seq) / Raw(b"x" * 1000))
        p.time = t
        return p
    hi, lo = 1 << 2, 8 << 2
    enter_a = [pkt("10.0.0.1", 1000, s, hi, 0.0) for s in (1, 1001, 2001)]
    enter_b = [pkt("10.0.0.3", 2000, 1, lo, 0.0)]
    leave = [pkt("10.0.0.1", 1000, 1, hi, 1.0), pkt("10.0.0.3", 2000, 1, lo, 2.0),
             pkt("10.0.0.1", 1000, 1001, hi, 3.0), pkt("10.0.0.1", 1000, 2001, hi, 4.0)]
    wrpcap(str(tmp_path / "cap-s-eth1.pcap"), enter_a)
    wrpcap(str(tmp_path / "cap-s-eth3.pcap"), enter_b)
    wrpcap(str(tmp_path / "cap-s-eth2.pcap"), leave)
    ports = {"s-eth1": "10.0.0.1", "s-eth2": "10.0.0.2", "s-eth3": "10.0.0.3"}
    cap = Capture.from_files(tmp_path, ports)
    iso = priority_isolation(cap.packets, ports, num_classes=8)
    assert iso["departures"] == 4 and iso["departures_counted"] == 2
    assert iso["lower_share"] == 0.5 and iso["lower_share_per_class"] == 0.5


# ---------------------------------------------------------------- capture formats

def test_pcapng_reads_as_its_pcap_and_a_non_capture_is_refused(tmp_path):
    """The same packets written as pcap and as pcapng (scapy's writers) parse to the same
    connections; a file that is no capture is a ValueError naming it."""
    from scapy.utils import PcapNgWriter
    from emulation.mininet.capture import frames, read_port
    a = _pkts("10.0.0.1", 40000, 1000, [(0, 100), (100, 100), (200, 30)], 3.5)
    wrpcap(str(tmp_path / "a.pcap"), a)
    with PcapNgWriter(str(tmp_path / "a.pcapng")) as w:
        for p in a:
            w.write(p)
    ts_pcap = [t for t, *_ in frames(tmp_path / "a.pcap")]
    ts_ng = [t for t, *_ in frames(tmp_path / "a.pcapng")]
    assert ts_pcap == pytest.approx([3.5, 3.501, 3.502, 3.503]) and ts_ng == pytest.approx(ts_pcap)
    c1, p1 = read_port(tmp_path / "a.pcap", "10.0.0.2")
    c2, p2 = read_port(tmp_path / "a.pcapng", "10.0.0.2")
    (conn,) = c1[("10.0.0.1", 40000)]
    assert conn["payload_bytes"] == 230
    assert {k: v for k, v in conn.items() if not k.endswith("_s")} == \
        {k: v for k, v in c2[("10.0.0.1", 40000)][0].items() if not k.endswith("_s")}
    assert list(p1["seq"]) == list(p2["seq"])
    (tmp_path / "not.pcap").write_bytes(b"hello, this is not a capture file at all")
    with pytest.raises(ValueError, match="not.pcap"):
        read_port(tmp_path / "not.pcap", "10.0.0.2")


def test_clock_map_confines_a_realtime_step_to_the_interval_that_holds_it():
    """Samples (monotonic, realtime - monotonic) every 0.1 s with the realtime clock set
    1.5 s forward between monotonic 10.2 and 10.3 (offset 1000 -> 1001.5). By hand: a
    packet stamped before the step maps with offset 1000, after it with 1001.5; only a
    stamp inside the stepped interval is interpolated; outside the samples the edge
    offset holds. A step the other way (offset 1000 -> 999.5) makes realtime values repeat:
    one seen before the step maps to its first monotonic time, one seen only after it to
    its later one. ``clock_steps`` names the interval and the size of each step."""
    from emulation.mininet.capture import clock_map, clock_steps
    fwd = [(10.0 + 0.1 * i, 1000.0 if i <= 2 else 1001.5) for i in range(6)]
    to_mono = clock_map(fwd)
    assert abs(to_mono(1010.15) - 10.15) < 1e-9      # before the step
    assert abs(to_mono(1001.5 + 10.45) - 10.45) < 1e-9  # after it
    assert abs(to_mono(1001.5 + 10.9) - 10.9) < 1e-9   # after the last sample
    assert abs(to_mono(1009.0) - 9.0) < 1e-9           # before the first
    # inside the stepped interval: realtime 1010.2 .. 1011.8 spans monotonic 10.2 .. 10.3
    assert abs(to_mono(1011.0) - 10.25) < 1e-9
    (s,) = clock_steps(fwd, t0=10.0)
    assert abs(s["after_emulated_s"] - 0.2) < 1e-9 and abs(s["before_emulated_s"] - 0.3) < 1e-9
    assert abs(s["step_s"] - 1.5) < 1e-9
    back = [(10.0 + 0.1 * i, 1000.0 if i <= 2 else 999.5) for i in range(6)]
    to_mono = clock_map(back)
    # realtime runs 1010.0 .. 1010.2, then from 1009.8 at monotonic 10.3: a value below
    # 1010.0 is seen only after the step; 1010.05 is first seen at 10.05 (again at 10.55)
    assert abs(to_mono(999.5 + 10.45) - 10.45) < 1e-9
    assert abs(to_mono(1010.05) - 10.05) < 1e-9
    assert abs(to_mono(1010.0) - 10.0) < 1e-9
    assert abs(to_mono(999.5 + 10.8) - 10.8) < 1e-9  # past every realtime seen before
    (s,) = clock_steps(back, t0=10.0)
    assert abs(s["step_s"] + 0.5) < 1e-9
    assert clock_steps([(0.0, 5.0), (0.1, 5.0 + 1e-6)], t0=0.0) == []  # sampling jitter


# ---------------------------------------------------------------- stages from the capture

TIME_SCALE = 2.0      # emulated seconds per trace second
OFFSET_S = 1000.0     # pcap (realtime) stamp = monotonic + OFFSET_S throughout the run
T0_S = 50.0           # monotonic time of the run's t = 0


def _chained_trace():
    """App a (arrives at 1 trace s): stage a/s0, one job of one 100-byte flow h0 -> h1;
    stage a/s1 depends on a/s0, one job of one flow h2 -> h1. App b (arrives at 0): stage
    b/s0, one compute-only job of 2 iterations x 0.75 trace s."""
    from tests.helpers import tiny_trace
    return tiny_trace([
        {"id": "a", "arrival_s": 1.0, "stages": [
            {"id": "a/s0", "jobs": [{"id": "a/s0/j", "coflows": [[(0, 1, 100)]]}]},
            {"id": "a/s1", "deps": ["a/s0"],
             "jobs": [{"id": "a/s1/j", "coflows": [[(2, 1, 100)]]}]}]},
        {"id": "b", "arrival_s": 0.0, "stages": [
            {"id": "b/s0", "jobs": [{"id": "b/s0/j", "iters": 2, "compute_s": 0.75,
                                      "coflows": []}]}]}], hosts=3)


def _whole_flow(src, sport, key, syn_emulated_s, last_emulated_s):
    """A SYN, then one segment with the 16-byte header (key, 100) and the 100 bytes, to
    10.0.0.2, stamped at the given emulated seconds (pcap time = emulated + t0 + offset)."""
    body = HEADER.pack(key, 100) + b"x" * 100
    syn = Ether() / IP(src=src, dst="10.0.0.2") / TCP(sport=sport, dport=9000, flags="S", seq=0)
    data = (Ether() / IP(src=src, dst="10.0.0.2") /
            TCP(sport=sport, dport=9000, flags="A", seq=1) / Raw(body))
    syn.time = OFFSET_S + T0_S + syn_emulated_s
    data.time = OFFSET_S + T0_S + last_emulated_s
    return [syn, data]


def _capture_stages(tmp_path, job_start_s=None):
    """capture_records on a synthetic capture of ``_chained_trace`` run at TIME_SCALE: the
    flow of a/s0 (coflow instance 0, template flow 0) passes from emulated 2.5 s to 5.0 s,
    that of a/s1 (instance 1, template flow 1) from 5.5 s to 9.0 s. Returns run.json's
    fields and stages_capture.csv by stage."""
    import pandas as pd
    from emulation.mininet.capture import capture_records
    from emulation.mininet.run import scale_trace
    from emulation.state import ClusterState
    from emulation.topology import TopologyConfig, build_topology
    trace = _chained_trace()
    scaled = scale_trace(trace, rate_scale=1.0, time_scale=TIME_SCALE)
    state = ClusterState(scaled, build_topology(TopologyConfig(), scaled.hosts))
    assert state.tf_src == ["h0", "h2"] and state.job_ids == ["a/s0/j", "a/s1/j", "b/s0/j"]
    wrpcap(str(tmp_path / "cap-s1-eth2.pcap"),
           _whole_flow("10.0.0.1", 40000, (0 << 32) | 0, 2.5, 5.0) +
           _whole_flow("10.0.0.3", 40001, (1 << 32) | 1, 5.5, 9.0))
    cap = Capture.from_files(tmp_path, {"s1-eth2": "10.0.0.2"})
    reported = [{"stage_id": "a/s0", "sct_s": 1.5}, {"stage_id": "a/s1", "sct_s": 2.5},
                {"stage_id": "b/s0", "sct_s": 1.5}]
    run = capture_records(cap, tmp_path, scaled=scaled, compiled=state.compiled,
                          sizes=state.flow_sizes(trace),
                          clock=[(T0_S, OFFSET_S), (T0_S + 20.0, OFFSET_S)], t0=T0_S,
                          time_scale=TIME_SCALE, num_classes=8, reported_stages=reported,
                          job_start_s=job_start_s)
    return run, pd.read_csv(tmp_path / "stages_capture.csv").set_index("stage_id")


def test_stage_times_from_the_capture_by_hand(tmp_path):
    # In emulated seconds: a arrives at 1 x 2 = 2. a/s0 starts at 2, its flow's last byte
    # passes at 5: SCT 3 emulated = 1.5 trace s. a/s1 starts at the later of a's arrival
    # (2) and a/s0's end (5): 5, not at its first packet (5.5); ends at 9: SCT 4 emulated
    # = 2 trace s. b/s0: arrives at 0, 2 x 0.75 x 2 = 3 emulated s of compute: 1.5 trace s.
    run, st = _capture_stages(tmp_path)
    assert st.loc["a/s0", ["start_emulated_s", "end_emulated_s", "sct_emulated_s"]].tolist() == \
        pytest.approx([2.0, 5.0, 3.0])
    assert st.loc["a/s0", ["start_s", "end_s", "sct_s"]].tolist() == pytest.approx([1.0, 2.5, 1.5])
    assert st.loc["a/s1", ["start_emulated_s", "end_emulated_s", "sct_emulated_s"]].tolist() == \
        pytest.approx([5.0, 9.0, 4.0])
    assert st.loc["a/s1", ["start_s", "end_s", "sct_s"]].tolist() == pytest.approx([2.5, 4.5, 2.0])
    assert st.loc["b/s0", ["start_s", "end_s", "sct_s"]].tolist() == pytest.approx([0.0, 1.5, 1.5])
    # mean SCT (1.5 + 2 + 1.5) / 3; against the reported 1.5, 2.5, 1.5: differences 0, 0.5, 0
    assert run["avg_sct_capture_s"] == pytest.approx(5.0 / 3)
    cmp = run["capture_vs_reported"]
    assert cmp["sct_abs_diff_median_s"] == pytest.approx(0.0)
    assert cmp["sct_abs_diff_max_s"] == pytest.approx(0.5)
    assert cmp["sct_diff_mean_s"] == pytest.approx(-0.5 / 3)
    assert cmp["sct_rel_diff_max"] == pytest.approx(0.5 / 2.5)
    assert cmp["flows_complete"] == cmp["flows_seen"] == 2 and cmp["stages_compared"] == 3


def test_a_compute_only_job_of_a_placed_trial_ends_after_its_compute_from_its_start(tmp_path):
    # With the jobs' GPU start times (a cluster run): b/s0's job got its GPUs at emulated
    # 4 s, then 3 emulated s of compute: ends at 7, SCT 7 emulated = 3.5 trace s from b's
    # arrival at 0. The jobs with traffic end with their last byte as before.
    import numpy as np
    _, st = _capture_stages(tmp_path, job_start_s=np.array([2.0, 5.0, 4.0]))
    assert st.loc["b/s0", ["start_s", "end_s", "sct_s"]].tolist() == pytest.approx([0.0, 3.5, 3.5])
    assert st.loc["a/s1", "sct_s"] == pytest.approx(2.0)


def test_the_capture_checked_against_what_the_agents_sent(tmp_path):
    """The agents' log: flow 1 (100 bytes) then flow 2 (70 bytes) from h0's port 40000
    (reused), flow 3 (30 bytes) from h2. Each connection carries the 16-byte header and
    the payload. Captured: flow 1 whole (116 distinct bytes; its second segment, 56 bytes,
    retransmitted once: a match all the same), flow 2's first 50 of 86 bytes,
    nothing of flow 3. By hand: 3 flows, 1 missing, 1 mismatch; sent 116 + 86 + 46 = 248
    bytes, captured 116 + 50 = 166. The log lists flow 2 first: a port's flows are matched
    to its connections in start order."""
    import pandas as pd
    from emulation.mininet.run import _check_capture
    pk = (_flow("10.0.0.1", 40000, 1000, 100,
                [(1.001, 0, 60), (1.002, 60, 56), (1.003, 60, 56)]) +
          _flow("10.0.0.1", 40000, 5000, 70, [(2.001, 0, 50)]))
    wrpcap(str(tmp_path / "cap-s1-eth2.pcap"), pk)
    cap = Capture.from_files(tmp_path, {"s1-eth2": "10.0.0.2"})
    flows_log = {2: {"src_host": "h0", "sport": 40000, "t_start": 2.0, "bytes": 70},
                 1: {"src_host": "h0", "sport": 40000, "t_start": 1.0, "bytes": 100},
                 3: {"src_host": "h2", "sport": 40001, "t_start": 1.5, "bytes": 30}}
    got = _check_capture(cap, flows_log, {"h0": "10.0.0.1", "h2": "10.0.0.3"})
    assert (got["flows"], got["flows_missing"], got["flows_byte_mismatch"]) == (3, 1, 1)
    assert (got["sent_bytes"], got["captured_bytes"]) == (248, 166)
    assert got["captured_fraction"] == pytest.approx(166 / 248)
    rows = pd.read_csv(tmp_path / "capture_flows.csv")
    assert rows[["key", "sent_bytes", "captured_bytes"]].values.tolist() == [[1, 116, 116],
                                                                             [2, 86, 50]]
