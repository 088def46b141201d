"""The packet-level backend's pure functions, without root or Mininet.

qos.py (class -> TOS, HTB commands), scheduler_proc.py (the decision pushed to agents
and the FIFO-LM byte wake-up), protocol.py's line framing, run.py's trace scaling, its
records and cluster records in trace seconds and its class latency, leftovers.py's
registry of live networks.
Expected values are written out by hand from the documented scheme.
"""
import json
import shutil
import socket

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as hst

from emulation.mininet.protocol import LineChannel
from emulation.mininet.qos import MAX_CLASSES, htb_commands, tos_for_class
from emulation.mininet.run import scale_trace
from emulation.mininet.agent import UNPACED
from emulation.mininet.scheduler_proc import decide_and_push, madd_pacing, should_decide
from emulation.scheduler import make_policy
from emulation.state import ClusterState
from emulation.topology import big_switch
from tests.helpers import tiny_trace


def test_tos_for_class_is_dscp_k_plus_one():
    # DSCP k+1 in the upper six bits of the TOS byte
    assert [tos_for_class(k) for k in range(8)] == [4, 8, 12, 16, 20, 24, 28, 32]
    for bad in (-1, MAX_CLASSES):
        with pytest.raises(ValueError):
            tos_for_class(bad)


def test_htb_commands_by_hand():
    cmds = htb_commands("s0-eth1", 100e6, 3)
    q = "quantum 9014 burst 20k cburst 20k"
    assert cmds == [
        "qdisc del dev s0-eth1 root",
        "qdisc add dev s0-eth1 root handle 1: htb default 12",  # unmarked -> lowest class
        f"class add dev s0-eth1 parent 1: classid 1:1 htb rate 100000000bit ceil 100000000bit {q}",
        # control class (ACKs): 5% of 100 Mbit/s guaranteed, HTB prio 0
        f"class add dev s0-eth1 parent 1:1 classid 1:9 htb rate 5000000bit ceil 100000000bit prio 0 {q}",
        "qdisc add dev s0-eth1 parent 1:9 handle 9: pfifo limit 64",
        # data classes: 0.2% of 100 Mbit/s = 200 kbit/s guaranteed each, HTB prio k
        f"class add dev s0-eth1 parent 1:1 classid 1:10 htb rate 200000bit ceil 100000000bit prio 0 {q}",
        "qdisc add dev s0-eth1 parent 1:10 handle 10: pfifo limit 64",
        f"class add dev s0-eth1 parent 1:1 classid 1:11 htb rate 200000bit ceil 100000000bit prio 1 {q}",
        "qdisc add dev s0-eth1 parent 1:11 handle 11: pfifo limit 64",
        f"class add dev s0-eth1 parent 1:1 classid 1:12 htb rate 200000bit ceil 100000000bit prio 2 {q}",
        "qdisc add dev s0-eth1 parent 1:12 handle 12: pfifo limit 64",
        # packets shorter than 128 bytes (IP total length, bytes 2-3) -> control class
        "filter add dev s0-eth1 parent 1: protocol ip prio 1 u32 match u16 0x0000 0xff80 at 2 flowid 1:9",
        "filter add dev s0-eth1 parent 1: protocol ip prio 2 u32 match ip tos 0x04 0xfc flowid 1:10",
        "filter add dev s0-eth1 parent 1: protocol ip prio 2 u32 match ip tos 0x08 0xfc flowid 1:11",
        "filter add dev s0-eth1 parent 1: protocol ip prio 2 u32 match ip tos 0x0c 0xfc flowid 1:12",
    ]


def test_htb_guarantee_floor_and_class_bounds():
    # 0.2% of 300 kbit/s is 600 bit/s and 5% is 15000: HTB's useful minimum is 8000 bit/s
    cmds = htb_commands("e", 300e3, 1)
    assert "classid 1:9 htb rate 15000bit ceil 300000bit prio 0" in cmds[3]
    assert "classid 1:10 htb rate 8000bit ceil 300000bit prio 0" in cmds[5]
    assert cmds[1].endswith("htb default 10")
    assert len(htb_commands("e", 1e9, 8)) == 3 + 2 + 2 * 8 + 1 + 8
    for bad in (0, 9):
        with pytest.raises(ValueError):
            htb_commands("e", 1e9, bad)


class FakeAgent:
    """Records what the scheduler pushes; ``fail`` makes send raise like a dead socket."""

    def __init__(self, fail=False):
        self.sent, self.fail = [], fail

    def send(self, msg):
        if self.fail:
            raise OSError("gone")
        self.sent.append(msg)


def three_jobs_state():
    """Three one-flow jobs into h3 (4, 8, 12 bytes) released at t = 0."""
    t = tiny_trace([{"id": "a", "stages": [{"id": "s", "jobs": [
        {"id": f"j{k}", "coflows": [[(k, 3, 4 * (k + 1))]]} for k in range(3)]}]}])
    st = ClusterState(t, big_switch(4, 8.0))
    st.fire_timers()
    return st


def test_decide_pushes_classes_only_when_they_change():
    st = three_jobs_state()
    pol = make_policy("fifo_lm", heavy_threshold_bytes=2.0)
    live, dead = FakeAgent(), FakeAgent(fail=True)
    agents = [live, dead]
    pushed, first = {}, {}
    wakes = decide_and_push(st, pol, 8, agents, pushed, first)
    # FIFO by release: cids 0, 1, 2 ranked 0, 1, 2, all new: from the lowest up, each takes
    # the middle of the classes left (queue_safe_classes): cid 2 (2 + 7 + 1) // 2 = 5, cid 1
    # (1 + 4 + 1) // 2 = 3, cid 0 (0 + 2 + 1) // 2 = 1 -> TOS (k + 1) << 2 = 8, 16, 24
    assert pushed == {0: 8, 1: 16, 2: 24}
    assert live.sent[0]["op"] == "classes" and live.sent[0]["tos"] == {"0": 8, "1": 16, "2": 24}
    assert agents == [live]  # the dead agent was dropped
    assert set(first) == {0, 1, 2}
    assert wakes == [(0, 2.0)]  # wake when coflow 0 has sent more than 2 bytes
    # same state: nothing changes, nothing is sent
    assert decide_and_push(st, pol, 8, agents, pushed, first) == [(0, 2.0)]
    assert len(live.sent) == 1
    # coflow 0 sent 3 of 4 bytes (> 2): it is heavy, coflow 1 joins its class (FIFO-LM's
    # classes 0, 0, 1). Coflow 2 keeps 5; the group {0, 1} keeps the larger of its classes,
    # 3 (below 5); only the changed coflow 0 is pushed
    st.record_progress(np.array([list(st.a_cf).index(0)]), np.array([3.0]))
    assert st.wake_due([(0, 2.0)])
    assert decide_and_push(st, pol, 8, agents, pushed, first) == [(1, 2.0)]
    assert live.sent[-1]["tos"] == {"0": 16}
    assert pushed == {0: 16, 1: 16, 2: 24}


def test_decide_maps_ranks_onto_k_classes():
    st = three_jobs_state()
    agent = FakeAgent()
    pushed = {}
    decide_and_push(st, make_policy("varys"), 2, [agent], pushed, {})
    # SEBF: 4 B, 8 B, 12 B -> ranks 0, 1, 2 -> with K = 2 classes 0, 1, 1 (two groups in
    # two classes: no freedom to renumber)
    assert pushed == {0: 4, 1: 8, 2: 8}
    pushed = {}
    # fair: one class for all; with K = 2 and no earlier push it is the middle of 0..1, 1
    decide_and_push(st, make_policy("fair"), 2, [agent], pushed, {})
    assert pushed == {0: 8, 1: 8, 2: 8}


def test_varys_pushes_madd_pacing_rates_by_hand():
    # three one-flow coflows into h3 (4, 8, 12 B) on 8 bit/s = 1 B/s links. MADD in SEBF
    # order: coflow 0 alone on h3's downlink at 1 B/s (finishes in 4 s); the downlink is
    # then full, so coflows 1 and 2 get 0: not paced (UNPACED), they wait in their class
    st = three_jobs_state()
    key = {int(c): int(k) for c, k in zip(st.a_cf, st.active_flow_keys())}
    agent, paced = FakeAgent(), {}
    decide_and_push(st, make_policy("varys"), 8, [agent], {}, {}, paced)
    assert paced == {key[0]: 1, key[1]: UNPACED, key[2]: UNPACED}
    assert agent.sent[-1]["rate_Bps"] == {str(k): v for k, v in paced.items()}
    # unchanged rates are not pushed again; a priority policy pushes no rates at all
    decide_and_push(st, make_policy("varys"), 8, [agent], {}, {}, paced)
    assert "rate_Bps" not in agent.sent[-1]
    decide_and_push(st, make_policy("sincronia"), 8, [agent], {}, {})
    assert "rate_Bps" not in agent.sent[-1]


def test_madd_pacing_gives_disjoint_coflows_their_own_links():
    # coflow 0: h0 -> h3, 4 B; coflow 1: h1 -> h2, 8 B; no shared link: each runs at its
    # links' 1 B/s (MADD for coflow 0, leftover max-min for coflow 1, which MADD also
    # gives 1 B/s: 8 B over its own bottleneck of 8 s)
    t = tiny_trace([{"id": "a", "stages": [{"id": "s", "jobs": [
        {"id": "j0", "coflows": [[(0, 3, 4)]]}, {"id": "j1", "coflows": [[(1, 2, 8)]]}]}]}])
    st = ClusterState(t, big_switch(4, 8.0))
    st.fire_timers()
    cids = np.array(sorted(st.active_coflows))
    rates = madd_pacing(st, cids, np.arange(len(cids)))
    assert sorted(rates.values()) == [1, 1]


def test_decide_without_active_coflows_does_nothing():
    t = tiny_trace([{"id": "a", "stages": [{"id": "s", "jobs": [
        {"id": "j", "compute_s": 1.0, "coflows": [[(0, 1, 4)]]}]}]}])
    st = ClusterState(t, big_switch(2, 8.0))
    st.fire_timers()  # stage started, job computing: no coflow yet
    agent = FakeAgent()
    assert decide_and_push(st, make_policy("beamer"), 8, [agent], {}, {}) == [] and agent.sent == []


def test_wake_due_strictly_above_threshold_and_only_for_active_coflows():
    st = three_jobs_state()
    row = list(st.a_cf).index(1)  # coflow 1: 8 bytes
    st.a_rem[row] = 5.0  # sent 3
    assert not st.wake_due([(1, 3.0)])
    assert st.wake_due([(1, 2.9)])
    assert not st.wake_due([(7, 0.0)])  # no such active coflow
    assert not st.wake_due([])
    assert st.wake_due([(0, 100.0), (1, 2.0)])


def test_line_channel_frames_json_lines():
    a, b = socket.socketpair()
    ca, cb = LineChannel(a), LineChannel(b)
    ca.send({"op": "hello", "host": "h1"})
    ca.send({"op": "done", "key": 1 << 32, "t": 0.5})
    got = []
    while len(got) < 2:
        got += cb.recv_ready()
    assert got == [{"op": "hello", "host": "h1"}, {"op": "done", "key": 1 << 32, "t": 0.5}]
    a.sendall(b'{"op": "par')  # half a line stays buffered
    assert cb.recv_ready() == []
    a.sendall(b'tial"}\n')
    assert cb.recv_ready() == [{"op": "partial"}]
    ca.close()
    with pytest.raises(EOFError):
        cb.recv_ready()
    cb.close()


def test_scale_trace_bytes_and_times():
    t = tiny_trace([{"id": "a", "arrival_s": 3.0, "stages": [{"id": "s", "jobs": [
        {"id": "j", "compute_s": 0.5, "coflows": [[(0, 1, 1000), (1, 0, 100)]]}]}]}])
    s = scale_trace(t, rate_scale=0.003, time_scale=2.0)
    # bytes x 0.006 rounded, at least 1; times x 2
    flows = s.apps[0].stages[0].jobs[0].coflows[0].flows
    assert [f.size_bytes for f in flows] == [6, 1]
    assert s.apps[0].arrival_s == 6.0 and s.apps[0].stages[0].jobs[0].compute_s == 1.0
    assert s.meta["scaled"] == {"rate_scale": 0.003, "time_scale": 2.0, "size_scale": 0.006}


def test_the_drivers_records_in_trace_seconds_and_the_traces_bytes():
    """Records of the scaled trace (emulated seconds and bytes) written by hand; at
    time_scale 2 and rate_scale 0.25 the scaled trace has 0.5 x the bytes. Expected: every
    time / 2, every size the unscaled trace's, the emulated values kept beside them."""
    import types
    from emulation.mininet.run import to_trace_time
    t = tiny_trace([{"id": "a", "stages": [{"id": "a/s", "jobs": [
        {"id": "a/s/j", "coflows": [[(0, 1, 100), (2, 1, 300)], [(1, 0, 700)]]}]}]}], hosts=3)
    scaled = scale_trace(t, rate_scale=0.25, time_scale=2.0)
    state = ClusterState(scaled, big_switch(len(scaled.hosts), 1e9))
    c0, c1 = "a/s/j/i0/c0", "a/s/j/i0/c1"
    rec = types.SimpleNamespace(
        stages=[{"stage_id": "a/s", "start_s": 2.0, "end_s": 9.0, "sct_s": 7.0}],
        coflows=[{"coflow_id": c0, "release_s": 2.0, "end_s": 6.0, "cct_s": 4.0,
                  "size_bytes": 200},
                 {"coflow_id": c1, "release_s": 6.0, "end_s": 9.0, "cct_s": 3.0,
                  "size_bytes": 350}],
        flows={"flow_id": [f"{c0}/f0", f"{c0}/f1", f"{c1}/f0"],
               "release_s": np.array([2.0, 2.0, 6.0]), "start_s": np.array([2.5, 3.0, 6.5]),
               "end_s": np.array([5.0, 6.0, 9.0]), "size_bytes": np.array([50, 150, 350])})
    stages, coflows, flows = to_trace_time(rec, state, t, time_scale=2.0)
    (s,) = stages
    assert (s["start_s"], s["end_s"], s["sct_s"]) == (1.0, 4.5, 3.5)
    assert (s["start_emulated_s"], s["end_emulated_s"], s["sct_emulated_s"]) == (2.0, 9.0, 7.0)
    assert [(c["release_s"], c["end_s"], c["cct_s"]) for c in coflows] == [(1.0, 3.0, 2.0),
                                                                           (3.0, 4.5, 1.5)]
    assert [c["cct_emulated_s"] for c in coflows] == [4.0, 3.0]
    # c0: 100 + 300 bytes of the unscaled trace; c1: 700
    assert [(c["size_bytes"], c["size_emulated_bytes"]) for c in coflows] == [(400, 200),
                                                                              (700, 350)]
    assert flows["size_bytes"].tolist() == [100, 300, 700]
    assert flows["size_emulated_bytes"].tolist() == [50, 150, 350]
    assert flows["start_s"].tolist() == [1.25, 1.5, 3.25]
    assert flows["end_s"].tolist() == [2.5, 3.0, 4.5]
    assert flows["release_s"].tolist() == [1.0, 1.0, 3.0]
    assert flows["end_emulated_s"].tolist() == [5.0, 6.0, 9.0]


def test_the_cluster_records_of_a_scaled_run_in_trace_seconds():
    """The two-trial cluster trace (A: 4 GPUs over both 2-GPU servers, a ring of a 1 GB
    model, 1 s of compute; B: 2 GPUs, waits for A) run at time_scale 2, rate_scale 1 on
    1 GB/s links: 2 x the bytes and 2 x the compute. Emulated: A computes 2 s and each
    server sends 2 GB at 1 GB/s (2 s): ends at 4; B runs 4 to 6. In trace seconds: A 0 to
    2, B 2 to 3, makespan 3; GPU-seconds 4 x 2 + 2 x 1 = 10 of 2 x 2 x 3 = 12. The bound
    is on the unscaled trace as placed, on the unscaled links: A's 1 s of compute and
    1 GB per host link at 1 GB/s, B beside it: 2 s."""
    from emulation.fluid.simulator import FluidSimulator
    from emulation.mininet.run import _cluster_records
    from emulation.topology import TopologyConfig, build_topology
    from tests.emulation.test_cluster import _two_trial_trace
    t = _two_trial_trace()
    topo_cfg = TopologyConfig(link_rate_bps=8e9)
    scaled = scale_trace(t, rate_scale=1.0, time_scale=2.0)
    sim = FluidSimulator(scaled, build_topology(topo_cfg, scaled.hosts), make_policy("fair"))
    rec = sim.run()
    run = {"avg_sct_s": 3.0}
    trials, decisions = _cluster_records(sim.state, t, rec, topo_cfg, run, time_scale=2.0,
                                         release_at_zero=False)
    assert [(r["job_id"], r["queued_s"], r["start_s"], r["end_s"]) for r in trials] == \
        [("a0/s/A", 0.0, 0.0, pytest.approx(2.0)), ("a0/s/B", 0.0, pytest.approx(2.0),
                                                     pytest.approx(3.0))]
    assert decisions == []
    assert run["gpu_busy_share"] == pytest.approx(10 / 12)
    assert run["trial_wait_mean_s"] == pytest.approx(1.0)  # B waited 2 s, A none
    assert run["lower_bound_avg_sct_s"] == pytest.approx(2.0)
    assert run["avg_sct_over_lb"] == pytest.approx(1.5)


def test_class_latency_is_the_last_sender_to_apply_the_class():
    """Coflow 0 (released at emulated 1.0) has senders h0 and h2, which applied its class
    at 1.2 and 1.5: its latency is the last, 0.5. Coflow 1's only sender h1 never applied a
    class: without push. Coflow 2 (released at 3.0), sender h0 at 3.1: 0.1. Coflow 3
    sent nothing: without push. Coflow 4: h0 applied its class, h1 never did: without
    push. Latencies [0.5, 0.1]: median 0.3, p95 (linear) 0.1 + 0.95 x 0.4 = 0.48, max 0.5."""
    import types
    from emulation.mininet.run import class_latency
    t0_s = 100.0
    state = types.SimpleNamespace(c_job=[0, 0, 1, 1, 2], c_release=[1.0, 2.0, 3.0, 4.0, 5.0])
    flows_log = {(0 << 32) | 0: {"src_host": "h0"}, (0 << 32) | 1: {"src_host": "h2"},
                 (1 << 32) | 2: {"src_host": "h1"}, (2 << 32) | 3: {"src_host": "h0"},
                 (4 << 32) | 4: {"src_host": "h0"}, (4 << 32) | 5: {"src_host": "h1"}}
    applied = {"h0": {0: t0_s + 1.2, 2: t0_s + 3.1, 4: t0_s + 5.1}, "h2": {0: t0_s + 1.5},
               "h1": {}}
    got = class_latency(state, flows_log, applied, t0_s)
    assert got["coflows"] == 2 and got["coflows_without_push"] == 3
    assert got["median"] == pytest.approx(0.3)
    assert got["p95"] == pytest.approx(0.48)
    assert got["max"] == pytest.approx(0.5)


def test_should_decide_follows_the_realloc_semantics():
    a, b = frozenset({1, 2}), frozenset({2, 3})
    kw = dict(wake_due=False)
    # a coflow-level policy (Varys, Sincronia): only when the active set changed
    assert should_decide(asked=True, per_flow=False, active=a, decided_for=None, **kw)
    assert not should_decide(asked=True, per_flow=False, active=a, decided_for=a, **kw)
    assert should_decide(asked=True, per_flow=False, active=b, decided_for=a, **kw)
    # a per-flow policy (fair): at every decide the driver asks for
    assert should_decide(asked=True, per_flow=True, active=a, decided_for=a, **kw)
    # nothing asked: no decision; a due byte wake-up (FIFO-LM) decides regardless
    assert not should_decide(asked=False, per_flow=True, active=b, decided_for=a, **kw)
    assert should_decide(asked=False, wake_due=True, per_flow=False, active=a, decided_for=a)


def test_queue_safe_classes_by_hand():
    from emulation.mininet.qos import queue_safe_classes as qs
    # a new coflow alone: the middle of 0..7
    assert qs(np.array([0]), [None], 8).tolist() == [4]
    # B (new) ranked above A (class 4): A keeps 4, B takes the middle of 0..3
    assert qs(np.array([0, 1]), [None, 4], 8).tolist() == [2, 4]
    # C (new) ranked below A (class 4): A keeps 4 (no move, no reordering), C the middle of 5..7
    assert qs(np.array([0, 1]), [4, None], 8).tolist() == [4, 6]
    # B (was 3) now above A (was 2): B may not take 2 or 3 (A's packets may still wait in
    # class 2), so it goes to 1; A keeps 2
    assert qs(np.array([0, 1]), [3, 2], 8).tolist() == [1, 2]
    # two coflows of one class stay together
    assert qs(np.array([0, 0, 1]), [None, None, None], 8).tolist() == [2, 2, 4]
    # as many groups as classes: no freedom, the ranks' own classes
    ranks = np.minimum(np.arange(10), 7)
    assert qs(ranks, [None] * 10, 8).tolist() == ranks.tolist()
    assert qs(ranks, [7 - (i % 8) for i in range(10)], 8).tolist() == ranks.tolist()
    with pytest.raises(ValueError):
        qs(np.arange(9), [None] * 9, 8)


@given(hst.lists(hst.tuples(hst.integers(0, 7), hst.one_of(hst.none(), hst.integers(0, 7))),
                min_size=1, max_size=12))
def test_queue_safe_classes_keep_the_order(pairs):
    from emulation.mininet.qos import queue_safe_classes as qs
    cls = np.array([c for c, _ in pairs])
    out = qs(cls, [p for _, p in pairs], 8)
    assert out.min() >= 0 and out.max() <= 7
    # the same groups in the same order: out is a strictly increasing function of cls
    for a in range(len(cls)):
        for b in range(len(cls)):
            assert (cls[a] < cls[b]) == (out[a] < out[b])
            assert (cls[a] == cls[b]) == (out[a] == out[b])


def test_the_registry_clears_only_the_networks_of_processes_that_no_longer_run(
        tmp_path, monkeypatch, request):
    """Entries of: this process (still running: kept), a process that no longer runs, a
    live process id recorded with another start time (the id was reused: its run is gone),
    a zombie (exited, not reaped); each of the last three has its links removed (by its own
    prefix only), its socket directory removed and its entry dropped. An unreadable entry
    and one whose prefix is not of the backend's shape are left in place and named."""
    import os
    import tempfile
    from emulation.lifetime import process_start_ticks
    from emulation.mininet import leftovers
    monkeypatch.setenv("BEAMER_MININET_REGISTRY", str(tmp_path / "reg"))
    removed = []
    monkeypatch.setattr(leftovers, "remove_links", lambda p: removed.append(p) or [p + "s0"])
    monkeypatch.setattr(leftovers, "_link_names", lambda: [])
    socks = {k: tempfile.mkdtemp(prefix=leftovers.SOCK_DIR_PREFIX) for k in "abcd"}
    request.addfinalizer(lambda: [shutil.rmtree(d, ignore_errors=True) for d in socks.values()])
    prefix, live = leftovers.claim(dirs=(socks["a"],))
    reg = tmp_path / "reg"
    gone = os.fork()
    if gone == 0:
        os._exit(0)
    os.waitpid(gone, 0)  # a process id that no longer runs
    zombie = os.fork()
    if zombie == 0:
        os._exit(0)
    os.waitid(os.P_PID, zombie, os.WEXITED | os.WNOWAIT)  # exited, not reaped
    try:
        entries = {"b0002": (gone, 1, "b"),
                   "b0003": (os.getpid(), process_start_ticks(os.getpid()) + 1, "c"),
                   "b0004": (zombie, 1, "d")}
        for p, (pid, ticks, d) in entries.items():
            (reg / f"{p}.json").write_text(json.dumps(
                {"prefix": p, "pid": pid, "start_ticks": ticks, "dirs": [socks[d]]}))
        (reg / "b0005.json").write_text("{not json")
        (reg / "eth.json").write_text(json.dumps({"prefix": "eth", "pid": gone, "dirs": []}))
        lines = leftovers.clear_dead()
    finally:
        os.waitpid(zombie, 0)
    assert lines == [
        f"network b0002 of process {gone}, which no longer runs: 1 links removed, {socks['b']} removed",
        f"network b0003 of process {os.getpid()}, which no longer runs: 1 links removed, "
        f"{socks['c']} removed",
        f"network b0004 of process {zombie}, which no longer runs: 1 links removed, "
        f"{socks['d']} removed",
        f"{reg / 'b0005.json'}: unreadable, left in place",
        f"{reg / 'eth.json'}: not an entry this backend writes, left in place"]
    assert removed == ["b0002", "b0003", "b0004"]
    assert live.exists() and os.path.isdir(socks["a"]) and prefix not in removed
    assert not any(os.path.exists(socks[d]) for d in "bcd")
    assert sorted(p.name for p in reg.glob("*.json")) == sorted([live.name, "b0005.json", "eth.json"])
    leftovers.unregister(live)


def test_a_registry_entry_names_only_socket_directories_and_claims_a_fresh_prefix(
        tmp_path, monkeypatch):
    import tempfile
    from emulation.mininet import leftovers
    monkeypatch.setenv("BEAMER_MININET_REGISTRY", str(tmp_path / "reg"))
    for bad in ("/tmp/bmr-x", ("/",), (str(tmp_path),)):  # a string, not a socket dir
        with pytest.raises(ValueError):
            leftovers.claim(dirs=bad)
    draws = iter(["aaaa", "aaaa", "bbbb", "cccc"])
    monkeypatch.setattr(leftovers.secrets, "token_hex", lambda n: next(draws))
    monkeypatch.setattr(leftovers, "_link_names", lambda: ["bbbbbs0"])  # another network's
    first, e1 = leftovers.claim()
    second, e2 = leftovers.claim()  # aaaa is registered, bbbb has links: cccc
    assert (first, second) == ("baaaa", "bcccc") and e1.exists() and e2.exists()
    assert (tmp_path / "reg").stat().st_mode & 0o777 == 0o700
    with pytest.raises(ValueError):
        leftovers.remove_links("eth")
