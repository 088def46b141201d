"""Packet capture on the emulated switch ports, its parsing, and the records derived from it.

Capture: one ``tcpdump`` per host-facing switch port (root namespace), BPF filter
``tcp dst port 9000`` (data direction only), snap length 96 bytes, written to pcap.
tcpdump sees a port's packets as they leave the port's queues (after HTB), so capture
times are the times packets went on the wire to the receiver.
Kernel drop counts reported by tcpdump are kept: capture loss is measured, not assumed.

Reading: ``frames`` frames the records: a pcap file (what the capture writes) by offset in
the file's bytes, anything else (pcapng, from other capture tools) with scapy's raw readers
(``RawPcapReader`` / ``RawPcapNgReader``; no dissection, which runs at a few thousand
packets per second); ``read_port`` unpacks the Ethernet, IPv4 and TCP header fields it
needs with ``struct``. scapy's raw reader framed the pcap files of the largest committed
packet-level run 1.64 x slower than the offset framing (``docs/testbed.md``), so pcap
files keep it. Each data
packet is counted on the switch port that faces its receiver only. Per TCP connection
(src ip, src port; a reused port starts a new connection at a SYN with a new ISN):

- ``payload_bytes``: distinct sequence space covered (retransmissions counted once);
  ``wire_payload_bytes``: payload on the wire (IP total length minus headers, so the snap
  length does not matter), retransmissions included;
- ``complete_s``: when the last payload byte became deliverable at the port, i.e. the
  time the CONTIGUOUS covered range (from the first data byte) last grew. Duplicates do
  not move it; a reordered segment counts when the hole before it is filled; a lost tail
  counts when its retransmission passes;
- ``key``/``size``: the flow's 16-byte header (``protocol.HEADER``: key, size) read from
  the first data segment (the snap length keeps 30 payload bytes), so a connection is
  tied to its flow from the packets alone; ``complete`` = all ``16 + size`` bytes covered.

Records (``capture_records``), written next to the driver's, in TRACE seconds like every
record (emulated seconds / time_scale; the ``*_emulated_s`` columns keep the emulated
values): ``flows_capture.csv`` (per flow: first packet (SYN) and last-byte times),
``coflows_capture.csv`` (per coflow: first packet, completion = its last flow's, cct),
``stages_capture.csv`` (per stage: start = its app's arrival or, for a later rung, the
capture-derived end of the stages it depends on; end = its last job's completion; sct).
Only the trace's structure is used besides the packets: which template flow a key names,
which job and stage a template belongs to, arrivals and compute-only jobs. A coflow's
iteration is the rank of its coflow instance id among those of the same template.

``priority_isolation`` measures strict priority from the packets; see its docstring.
"""
from __future__ import annotations

import bisect
import os
import re
import signal
import socket
import struct
import subprocess
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scapy.error import Scapy_Exception
from scapy.utils import RawPcapNgReader, RawPcapReader

from emulation.lifetime import parent_death_setter
from emulation.ids import coflow_id as coflow_name, flow_id
from emulation.mininet.protocol import DATA_PORT, HEADER

# tcpdump runs below the emulation's processes: the kernel stamps packets as they are
# captured, so a late reader changes nothing, but 8 readers woken per packet delayed the
# scheduler's class pushes (class latency p95 up to 20 ms with capture, 7 ms without).
CAPTURE_NICE = 10
SMALL_PACKET_BYTES = 128  # qos.py: IP packets shorter than this go to the control class


class Capture:
    """tcpdump processes on switch ports; ``stop()`` ends them (only the PIDs it started)."""

    def __init__(self, out_dir: Path, ports: dict[str, str], *,
                 bpf: str = f"tcp dst port {DATA_PORT}"):
        self.out_dir = Path(out_dir)
        self.procs: dict[str, subprocess.Popen] = {}
        self.ports = ports  # interface -> receiver ip
        self.drops: dict[str, int] = {}
        self._parsed: dict[str, Any] | None = None
        die_with_run = parent_death_setter()
        for iface in ports:
            pcap = self.out_dir / f"cap-{iface}.pcap"
            # -Z root: tcpdump keeps the user it starts as, which keeps the parent-death
            # signal (a change of user id clears it): it ends with the run even if the run
            # is killed outright
            self.procs[iface] = subprocess.Popen(
                ["tcpdump", "-i", iface, "-s", "96", "-U", "--immediate-mode", "-n", "-Z", "root",
                 "-w", str(pcap), bpf],
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                preexec_fn=lambda: (os.nice(CAPTURE_NICE), die_with_run()))

    @classmethod
    def from_files(cls, out_dir: Path, ports: dict[str, str]) -> "Capture":
        """A capture already on disk (``cap-<iface>.pcap`` per port), for parsing only."""
        cap = cls.__new__(cls)
        cap.out_dir, cap.ports, cap.procs, cap.drops, cap._parsed = Path(out_dir), ports, {}, {}, None
        return cap

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
        """(src ip, src port) -> its connections in SYN order (see ``read_port``); parsed
        once, with per-port packet tables in ``self.packets`` and the reader's speed in
        ``self.read_stats``."""
        if self._parsed is None:
            t = time.perf_counter()
            conns: dict[tuple[str, int], list[dict]] = {}
            packets: dict[str, dict[str, np.ndarray]] = {}
            n = 0
            for iface, dst_ip in self.ports.items():
                pcap = self.out_dir / f"cap-{iface}.pcap"
                if not pcap.exists() or pcap.stat().st_size == 0:
                    continue
                c, pk = read_port(pcap, dst_ip)
                for k, v in c.items():
                    conns.setdefault(k, []).extend(v)
                packets[iface] = pk
                n += len(pk["t"]) + len(pk["ingress"])
            wall = time.perf_counter() - t
            self._parsed = {"conns": conns, "packets": packets,
                            "stats": {"packets": n, "read_wall_s": wall,
                                      "packets_per_s": n / wall if wall > 0 else None}}
        return self._parsed["conns"]

    @property
    def packets(self) -> dict[str, dict[str, np.ndarray]]:
        self.parse()
        return self._parsed["packets"]

    @property
    def read_stats(self) -> dict[str, Any]:
        self.parse()
        return self._parsed["stats"]


_PCAP_MAGIC = {b"\xd4\xc3\xb2\xa1": ("<", 1e-6), b"\xa1\xb2\xc3\xd4": (">", 1e-6),
               b"\x4d\x3c\xb2\xa1": ("<", 1e-9), b"\xa1\xb2\x3c\x4d": (">", 1e-9)}


def frames(path: Path):
    """The records of a capture file as (timestamp in s, buffer, offset, length): the
    frame is ``buffer[offset:offset + length]``. A pcap file (what the capture writes) is
    read whole and framed here, by offset, without copying frames; any other file goes to
    scapy's raw reader (``RawPcapReader``, which hands pcapng to ``RawPcapNgReader``; no
    dissection). ValueError if the file is not a capture or not Ethernet."""
    data = Path(path).read_bytes()
    if data[:4] in _PCAP_MAGIC and len(data) >= 24:
        endian, tick = _PCAP_MAGIC[data[:4]]
        if struct.unpack_from(endian + "I", data, 20)[0] != 1:
            raise ValueError(f"{path}: link type is not Ethernet")
        rec = struct.Struct(endian + "IIII")
        off, n = 24, len(data)
        while off + 16 <= n:
            sec, frac, incl, _ = rec.unpack_from(data, off)
            p = off + 16
            off = p + incl
            if off > n:
                return  # truncated last record (capture cut short)
            yield sec + frac * tick, data, p, incl
        return
    try:
        reader = RawPcapReader(str(path))
    except Scapy_Exception as exc:
        raise ValueError(f"{path}: not a pcap file ({exc})") from None
    with reader:
        for pkt, meta in reader:
            if getattr(meta, "linktype", 1) != 1:
                raise ValueError(f"{path}: link type is not Ethernet")
            if isinstance(reader, RawPcapNgReader):
                ts = ((meta.tshigh << 32) | meta.tslow) / meta.tsresol
            else:
                ts = meta.sec + meta.usec * (1e-9 if reader.nano else 1e-6)
            yield ts, pkt, 0, len(pkt)


def read_port(path: Path, dst_ip: str) -> tuple[dict[tuple[str, int], list[dict]],
                                               dict[str, np.ndarray]]:
    """One port's pcap: its connections (see the module docstring) and a packet table of
    the packets leaving the switch to ``dst_ip`` (``t`` pcap seconds, ``wire_bytes`` = IP
    length + 14, ``tos``, ``small``, ``seq``, ``sport``, ``src``, ``conn`` = index into the
    port's connections in first-seen order), plus ``ingress``: the data packets the port's
    host sent INTO the switch, as (t, dst ip, sport, seq, ip_len, tos) tuples."""
    dst = src_self = socket.inet_aton(dst_ip)

    in_l: list[tuple] = []  # (t, dst ip bytes, sport, seq, ip_len, tos) of ingress packets
    conns: dict[tuple[str, int], list[dict]] = {}
    flat: list[dict] = []
    ts_l, wb_l, tos_l, small_l, conn_l, seq_l, sp_l, src_l = [], [], [], [], [], [], [], []
    hdr = HEADER.size
    for ts, data, p, incl in frames(path):
        # Ethernet (14) + IPv4 + TCP headers
        if incl < 34 or data[p + 12:p + 14] != b"\x08\x00" or data[p + 23] != 6:
            continue
        ihl = (data[p + 14] & 0x0F) * 4
        if data[p + 30:p + 34] != dst:
            if data[p + 26:p + 30] == src_self and incl >= 14 + ihl + 8:
                # sent by this port's host: the packet entering the switch (ingress)
                sport, _, seq = struct.unpack_from("!HHI", data, p + 14 + ihl)
                ip_len = (data[p + 16] << 8) | data[p + 17]
                in_l.append((ts, data[p + 30:p + 34], sport, seq, ip_len, data[p + 15]))
            continue
        ip_len = (data[p + 16] << 8) | data[p + 17]
        tcp = p + 14 + ihl
        if incl < 14 + ihl + 14:
            continue
        sport, _, seq = struct.unpack_from("!HHI", data, tcp)
        doff = (data[tcp + 12] >> 4) * 4
        syn = data[tcp + 13] & 0x02
        payload = ip_len - ihl - doff
        if payload < 0:
            payload = 0
        key = (data[p + 26:p + 30], sport)  # src ip as bytes; text once at the end
        lst = conns.get(key)
        c = lst[-1] if lst else None
        if c is None or (syn and seq != c["isn"]):
            # a new connection (an ephemeral port is reused by later flows)
            c = _new_connection(ts, seq, syn, len(flat))
            conns.setdefault(key, []).append(c)
            flat.append(c)
        c["last_s"] = ts
        c["packets"] += 1
        if payload:
            rel = (seq - c["isn"]) % 2**32
            if rel == 1 and c["key"] is None and incl >= 14 + ihl + doff + hdr and payload >= hdr:
                c["key"], c["size"] = HEADER.unpack_from(data, tcp + doff)
            _add_segment(c, rel, payload, ts)
        ts_l.append(ts)
        seq_l.append(seq)
        sp_l.append(sport)
        src_l.append(key[0])
        wb_l.append(ip_len + 14)
        tos_l.append(data[p + 15])
        small_l.append(ip_len < SMALL_PACKET_BYTES)
        conn_l.append(c["index"])
    for c in flat:
        c["payload_bytes"] = max(c["high"] - 1, 0)  # distinct bytes (the SYN takes seq 1)
        c["delivered_bytes"] = c["contig"] - 1
        c["complete"] = c["size"] is not None and c["delivered_bytes"] >= hdr + c["size"]
        del c["holes"], c["contig"]
    ip_text = {b: socket.inet_ntoa(b)
               for b in set(src_l) | {k[0] for k in conns} | {x[1] for x in in_l}}
    conns = {(ip_text[b], sport): v for (b, sport), v in conns.items()}
    return conns, _packet_table(ts_l, wb_l, tos_l, small_l, conn_l, seq_l, sp_l, src_l,
                                in_l, ip_text)


def _new_connection(ts: float, seq: int, syn: int, index: int) -> dict[str, Any]:
    """A connection first seen at ``ts`` (its initial sequence number from the SYN, or
    one before the first segment's)."""
    isn = seq if syn else (seq - 1) % 2**32
    return {"first_s": ts, "isn": isn, "high": 0, "payload_bytes": 0,
            "wire_payload_bytes": 0, "packets": 0, "contig": 1, "holes": [],
            "complete_s": None, "key": None, "size": None, "index": index}


def _add_segment(c: dict[str, Any], rel: int, payload: int, ts: float) -> None:
    """Count a segment of ``payload`` bytes at relative sequence ``rel``: the highest
    byte, the bytes on the wire, and the contiguous range from the start (segments that
    arrived early wait as holes; ``complete_s`` is when the range last grew)."""
    end = rel + payload
    if end > c["high"]:
        c["high"] = end
    c["wire_payload_bytes"] += payload
    if rel > c["contig"]:
        c["holes"].append((rel, end))
        return
    if end <= c["contig"]:
        return
    c["contig"] = end
    holes = c["holes"]
    while holes:  # segments that arrived early now join the contiguous range
        grown = False
        for h in list(holes):
            if h[0] <= c["contig"]:
                c["contig"] = max(c["contig"], h[1])
                holes.remove(h)
                grown = True
        if not grown:
            break
    c["complete_s"] = ts


def _packet_table(ts_l, wb_l, tos_l, small_l, conn_l, seq_l, sp_l, src_l, in_l,
                  ip_text: dict[bytes, str]) -> dict[str, Any]:
    """The port's packet table from its per-packet lists (source addresses as text)."""
    return {"t": np.array(ts_l, dtype=float), "wire_bytes": np.array(wb_l, dtype=np.int64),
               "tos": np.array(tos_l, dtype=np.int64), "small": np.array(small_l, dtype=bool),
               "conn": np.array(conn_l, dtype=np.int64), "seq": np.array(seq_l, dtype=np.int64),
               "sport": np.array(sp_l, dtype=np.int64),
               "src": np.array([ip_text[x] for x in src_l], dtype=object),
               "ingress": [(t, ip_text[d], sp, sq, ln, tos) for t, d, sp, sq, ln, tos in in_l]}


def class_of_tos(tos: np.ndarray, num_classes: int) -> np.ndarray:
    """Priority class of each packet's queue (qos.py): TOS (k+1)<<2 -> k, else the default
    (lowest) class num_classes - 1."""
    k = (np.asarray(tos) >> 2) - 1
    return np.where((k >= 0) & (k < num_classes) & ((np.asarray(tos) & 3) == 0), k, num_classes - 1)


def priority_isolation(packets: dict[str, dict[str, Any]], ports: dict[str, str], *,
                       num_classes: int) -> dict[str, Any]:
    """Share of a port that lower classes got while a higher class was backlogged there,
    from the queues reconstructed out of the capture.

    Every data packet is captured twice: entering the switch on its sender's port and
    leaving it on its receiver's port (after the port's HTB queues). Matching the two
    copies (src, src port, seq, IP length; the latest unmatched entry before the exit, so
    a retransmission pairs with itself) gives each packet's time in the port's queue;
    copies that never left were dropped and are left out. At each departure the classes
    with packets queued (the departing one included) are known exactly. Departures at
    moments when two or more classes were queued are counted: ``lower_share`` = bytes of
    such departures from classes below the highest queued one / all their bytes;
    ``lower_share_per_class`` divides by the number of lower classes queued. Strict
    priority with a guaranteed ``qos.MIN_SHARE`` per class predicts about MIN_SHARE per
    lower class (0.002); sharing the port equally would give about 1/(classes queued).
    Control packets (< 128 B, all in the control queue) are left out.
    """
    ingress: dict[tuple, list[float]] = {}
    for pk in packets.values():
        for t, dst, sport, seq, ip_len, _tos in pk["ingress"]:
            if ip_len >= SMALL_PACKET_BYTES:
                ingress.setdefault((dst, sport, seq, ip_len), []).append(t)
    for v in ingress.values():
        v.sort()
    low_b = all_b = den = 0.0
    departures = counted = unmatched = 0
    for iface, pk in packets.items():
        dst = ports[iface]
        data = np.flatnonzero(~pk["small"])
        cls = class_of_tos(pk["tos"], num_classes)
        events = []  # (time, order, class, bytes): order 0 = enqueue, 1 = departure
        for i in data[np.argsort(pk["t"][data], kind="stable")]:
            te = pk["t"][i]
            times = ingress.get((dst, int(pk["sport"][i]), int(pk["seq"][i]),
                                 int(pk["wire_bytes"][i]) - 14))
            j = bisect.bisect_right(times, te) - 1 if times else -1
            if j < 0:
                unmatched += 1
                continue
            ti = times.pop(j)
            k = int(cls[i])
            events.append((ti, 0, k, 0))
            events.append((te, 1, k, int(pk["wire_bytes"][i])))
        events.sort()
        queued = np.zeros(num_classes, dtype=np.int64)
        for _, kind, k, nbytes in events:
            if kind == 0:
                queued[k] += 1
                continue
            departures += 1
            busy = np.flatnonzero(queued)
            if len(busy) >= 2:
                counted += 1
                all_b += nbytes
                den += nbytes * (len(busy) - 1)
                if k > busy[0]:
                    low_b += nbytes
            queued[k] -= 1
    return {"lower_share": low_b / all_b if all_b else None,
            "lower_share_per_class": low_b / den if den else None,
            "departures_counted": counted, "departures": departures,
            "departures_unmatched": unmatched}


def clock_map(clock: list[tuple[float, float]]):
    """pcap (CLOCK_REALTIME) seconds -> the driver's CLOCK_MONOTONIC.

    ``clock`` holds (monotonic, realtime - monotonic) samples in time order, taken every few
    tens of ms through the run. The offset changes only when the realtime clock is stepped
    (NTP or a hypervisor setting the time; slewing moves both clocks alike), so the map is
    linear between consecutive samples: a step moves only the times inside the one
    interval that holds it. Before the first sample and after the last, the edge offset
    holds. A backward step makes realtime values repeat; such a value maps through the
    earliest interval, other than the stepped one, that covers it."""
    m = np.array([c[0] for c in clock], dtype=float)
    o = np.array([c[1] for c in clock], dtype=float)
    r = m + o
    rising = bool(np.all(np.diff(r) > 0))

    def to_mono(x: float) -> float:
        if x <= r[0] and (rising or x < r.min()):
            return x - o[0]
        if x >= r[-1] and (rising or x > r.max()):
            return x - o[-1]
        if rising:
            return float(np.interp(x, r, m))
        lo, hi = np.minimum(r[:-1], r[1:]), np.maximum(r[:-1], r[1:])
        cover = (lo <= x) & (x <= hi)
        up = cover & (r[1:] > r[:-1])
        i = int(np.flatnonzero(up if up.any() else cover)[0])
        if r[i + 1] == r[i]:
            return float(m[i])
        return float(m[i] + (x - r[i]) * (m[i + 1] - m[i]) / (r[i + 1] - r[i]))
    return to_mono


def clock_steps(clock: list[tuple[float, float]], t0: float, *,
                min_step_s: float = 1e-3) -> list[dict[str, float]]:
    """Steps of the realtime clock during the run: where between two samples (emulated
    seconds since ``t0``) and by how much (positive: set forward)."""
    return [{"after_emulated_s": a[0] - t0, "before_emulated_s": b[0] - t0, "step_s": b[1] - a[1]}
            for a, b in zip(clock, clock[1:]) if abs(b[1] - a[1]) >= min_step_s]


def capture_records(cap: Capture, out: Path, *, scaled, compiled, sizes: np.ndarray, clock,
                    t0: float, time_scale: float, num_classes: int,
                    reported_stages: list[dict], release_at_zero: bool = False,
                    job_start_s: np.ndarray | None = None) -> dict[str, Any]:
    """Write ``flows_capture.csv``, ``coflows_capture.csv``, ``stages_capture.csv`` (trace
    seconds) and return run.json's capture-derived fields: avg SCT from the packets, its
    agreement with the reported SCTs, priority isolation and the reader's speed.
    ``compiled``: the run's compiled trace as it ended (its flows numbered as the agents
    named them, jobs placed during the run included); ``sizes``: each of those flows'
    unscaled bytes (``ClusterState.flow_sizes``). ``job_start_s``: for a trace whose trials
    a cluster placed, when each job got its GPUs (emulated seconds, the driver's), from
    which a job with no traffic ends after its compute; the stages are those the run
    reports (an ASHA segment whose trial stopped has none)."""
    st = compiled
    to_mono = clock_map(clock)

    def em(r: float | None) -> float:  # pcap time -> emulated seconds since t0
        return np.nan if r is None else to_mono(r) - t0

    by_cid, unnamed = _named_connections(cap.parse())
    flow_rows, coflow_rows, job_end = _flow_and_coflow_rows(st, by_cid, sizes, em,
                                                            time_scale=time_scale)
    stage_rows = _stage_rows(st, scaled, job_end, reported_stages, time_scale=time_scale,
                             release_at_zero=release_at_zero, job_start_s=job_start_s)
    pd.DataFrame(flow_rows, columns=CAPTURE_FLOW_COLUMNS).to_csv(out / "flows_capture.csv", index=False)
    pd.DataFrame(coflow_rows, columns=CAPTURE_COFLOW_COLUMNS).to_csv(out / "coflows_capture.csv",
                                                                     index=False)
    pd.DataFrame(stage_rows, columns=CAPTURE_STAGE_COLUMNS).to_csv(out / "stages_capture.csv",
                                                                   index=False)
    cmp = compare_sct(stage_rows, reported_stages)
    sct = np.array([r["sct_s"] for r in stage_rows])
    iso = priority_isolation(cap.packets, cap.ports, num_classes=num_classes)
    return {"avg_sct_capture_s": float(np.mean(sct)) if len(sct) and not np.isnan(sct).any() else None,
            "capture_vs_reported": {**cmp, "flows_complete": sum(r["complete"] for r in flow_rows),
                                    "flows_seen": len(flow_rows), "connections_without_header": unnamed,
                                    "clock_offset_drift_s": clock[-1][1] - clock[0][1],
                                    "clock_steps": clock_steps(clock, t0)},
            "priority_isolation": iso,
            "capture_reader": cap.read_stats}


def _named_connections(conns: dict) -> tuple[dict[int, list[dict]], int]:
    """The connections that carried a flow header, grouped by coflow instance id, and how
    many carried none."""
    by_cid: dict[int, list[dict]] = {}
    unnamed = 0
    for lst in conns.values():
        for c in lst:
            if c["key"] is None:
                unnamed += 1
                continue
            by_cid.setdefault(c["key"] >> 32, []).append(c)
    return by_cid, unnamed


def _flow_and_coflow_rows(st, by_cid: dict[int, list[dict]], sizes: np.ndarray, em, *,
                          time_scale: float) -> tuple[list[dict], list[dict], dict[int, float]]:
    """Rows of flows_capture.csv and coflows_capture.csv, and each job's end (emulated s,
    NaN if its last coflow is incomplete in the capture)."""
    tmpl_of_tf = np.repeat(np.arange(len(st.t_f0)), st.t_f1 - st.t_f0)
    job_of_tmpl = np.zeros(len(st.t_f0), dtype=np.int64)  # jobs placed during the run: their
    for j, (a, b) in enumerate(zip(st.job_t0.tolist(), st.job_t1.tolist())):  # templates
        job_of_tmpl[a:b] = j                                   # follow in placement order
    iters: dict[int, list[int]] = {}  # template -> coflow instance ids in release order
    tmpl_of_cid = {}
    for cid, cs in by_cid.items():
        t = int(tmpl_of_tf[cs[0]["key"] & 0xFFFFFFFF])
        tmpl_of_cid[cid] = t
        iters.setdefault(t, []).append(cid)
    for v in iters.values():
        v.sort()
    flow_rows, coflow_rows = [], []
    job_end: dict[int, float] = {}
    for cid, cs in sorted(by_cid.items()):
        t = tmpl_of_cid[cid]
        j = int(job_of_tmpl[t])
        k = t - int(st.job_t0[j])
        it = iters[t].index(cid)
        coflow_id = coflow_name(st.job_ids[j], it, k)
        rows = [_flow_row(st, c, coflow_id, t, sizes, em, time_scale) for c in
                sorted(cs, key=lambda c: c["key"])]
        flow_rows += rows
        row = _coflow_row(st, rows, coflow_id, t, j, it, k, time_scale)
        coflow_rows.append(row)
        if it == st.job_iters[j] - 1 and t == st.job_t1[j] - 1:
            job_end[j] = row["end_emulated_s"]
    return flow_rows, coflow_rows, job_end


def _flow_row(st, c: dict, coflow_id: str, t: int, sizes: np.ndarray, em,
              time_scale: float) -> dict[str, Any]:
    tf = c["key"] & 0xFFFFFFFF
    s_em, e_em = em(c["first_s"]), em(c["complete_s"]) if c["complete"] else np.nan
    return {"flow_id": flow_id(coflow_id, tf - int(st.t_f0[t])), "coflow_id": coflow_id,
            "src": st.tf_src[tf], "dst": st.tf_dst[tf], "size_bytes": int(sizes[tf]),
            "start_s": s_em / time_scale, "end_s": e_em / time_scale,
            "complete": bool(c["complete"]), "packets": c["packets"],
            "retransmitted_emulated_bytes": c["wire_payload_bytes"] - c["payload_bytes"],
            "start_emulated_s": s_em, "end_emulated_s": e_em}


def _coflow_row(st, rows: list[dict], coflow_id: str, t: int, j: int, it: int, k: int,
                time_scale: float) -> dict[str, Any]:
    """A coflow's row from its flows' rows: complete once every flow it has completed."""
    n_exp = int(st.t_f1[t] - st.t_f0[t])
    n_ok = sum(r["complete"] for r in rows)
    done = n_ok == n_exp and len(rows) == n_exp
    end = max(r["end_emulated_s"] for r in rows) if done else np.nan
    first = min(r["start_emulated_s"] for r in rows)
    return {"coflow_id": coflow_id, "stage_id": st.stage_ids[int(st.job_stage[j])],
            "job_id": st.job_ids[j], "iteration": it, "index": k,
            "first_packet_s": first / time_scale, "end_s": end / time_scale,
            "cct_s": (end - first) / time_scale, "num_flows": n_exp, "flows_seen": len(rows),
            "flows_complete": n_ok, "first_packet_emulated_s": first, "end_emulated_s": end,
            "cct_emulated_s": end - first}


def _stage_rows(st, scaled, job_end: dict[int, float], reported_stages: list[dict], *,
                time_scale: float, release_at_zero: bool,
                job_start_s: np.ndarray | None) -> list[dict]:
    """Rows of stages_capture.csv for the stages the run reports: start = arrival or the
    capture-derived end of the stages depended on; end = its jobs' ends (a compute-only
    job: its start plus its compute); NaN if not complete in the capture."""
    stages = scaled.stages()
    reported = {r["stage_id"] for r in reported_stages}
    sidx = {s.stage_id: i for i, s in enumerate(stages)}
    arrival = {a.app_id: (0.0 if release_at_zero else a.arrival_s) for a in scaled.apps}
    start_em = np.full(len(stages), np.nan)
    end_em = np.full(len(stages), np.nan)  # NaN: not complete in the capture
    resolved = np.zeros(len(stages), dtype=bool)
    for _ in range(len(stages)):  # dependency order (each pass resolves at least one stage)
        for i, s in enumerate(stages):
            if resolved[i] or not all(resolved[sidx[d]] for d in s.depends_on):
                continue
            resolved[i] = True
            start_em[i] = max([arrival[s.app_id], *(end_em[sidx[d]] for d in s.depends_on)])
            began = (lambda j: start_em[i]) if job_start_s is None else (
                lambda j: job_start_s[j])
            je = [began(j) + st.job_iters[j] * st.job_compute[j]  # compute-only job
                  if st.job_t1[j] == st.job_t0[j] else job_end.get(j, np.nan)
                  for j in st.stage_jobs[i]]
            end_em[i] = max(je) if je else start_em[i]  # max() keeps a NaN: incomplete
            if any(np.isnan(je)):
                end_em[i] = np.nan
    return [{"stage_id": s.stage_id, "app_id": s.app_id, "start_s": start_em[i] / time_scale,
             "end_s": end_em[i] / time_scale, "sct_s": (end_em[i] - start_em[i]) / time_scale,
             "start_emulated_s": start_em[i], "end_emulated_s": end_em[i],
             "sct_emulated_s": end_em[i] - start_em[i]} for i, s in enumerate(stages)
            if s.stage_id in reported]


def compare_sct(capture_stages: list[dict], reported_stages: list[dict]) -> dict[str, Any]:
    """Capture-derived minus reported SCT per stage (trace seconds): median and max of the
    absolute difference, the largest relative one, and how many stages had both."""
    rep = {r["stage_id"]: r["sct_s"] for r in reported_stages}
    d, rel = [], []
    for r in capture_stages:
        if r["stage_id"] in rep and np.isfinite(r["sct_s"]) and np.isfinite(rep[r["stage_id"]]):
            diff = r["sct_s"] - rep[r["stage_id"]]
            d.append(diff)
            rel.append(abs(diff) / rep[r["stage_id"]] if rep[r["stage_id"]] > 0 else np.nan)
    a = np.abs(np.array(d))
    return {"sct_abs_diff_median_s": float(np.median(a)) if len(a) else None,
            "sct_abs_diff_max_s": float(a.max()) if len(a) else None,
            "sct_diff_mean_s": float(np.mean(d)) if len(d) else None,
            "sct_rel_diff_max": float(np.nanmax(rel)) if len(rel) else None,
            "stages_compared": len(d), "stages": len(capture_stages)}


CAPTURE_FLOW_COLUMNS = ["flow_id", "coflow_id", "src", "dst", "size_bytes", "start_s", "end_s",
                        "complete", "packets", "retransmitted_emulated_bytes", "start_emulated_s",
                        "end_emulated_s"]
CAPTURE_COFLOW_COLUMNS = ["coflow_id", "stage_id", "job_id", "iteration", "index",
                          "first_packet_s", "end_s", "cct_s", "num_flows", "flows_seen",
                          "flows_complete", "first_packet_emulated_s", "end_emulated_s",
                          "cct_emulated_s"]
CAPTURE_STAGE_COLUMNS = ["stage_id", "app_id", "start_s", "end_s", "sct_s", "start_emulated_s",
                         "end_emulated_s", "sct_emulated_s"]
