"""The admission rules of the cluster scheduler (``emulation/admission_rules.py``): strict
FIFO, first fit and EASY backfilling on a hand-built timeline, the runtime estimate that
backfilling reads, and properties of first fit and backfilling on random queues. Expected
values derived by hand in the comments."""
from __future__ import annotations

import math
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from emulation import admission as admission_mod
from emulation import admission_rules
from emulation.admission import Admission
from emulation.admission_rules import ADMISSION_RULES, make_admission_rule, reservation
from emulation.state import ClusterState
from emulation.topology import big_switch
from workloads.cluster import ClusterConfig, place, runtime_estimates_s
from workloads.trace import App, Job, Stage, Trace


def _adm(gpus, *, rule, estimate_s=None, apps=None, cap=0, per_host=4, hosts=2,
         placement="pack"):
    return Admission(ClusterConfig(gpus_per_host=per_host, placement=placement,
                                   max_concurrent_trials=cap),
                     num_hosts=hosts, job_gpus=np.array(gpus),
                     job_app=apps or [f"a{j}" for j in range(len(gpus))], seed=1,
                     rule=make_admission_rule(rule),
                     estimate_s=None if estimate_s is None else np.array(estimate_s, float))


def _drive(adm, *, arrival_s, run_s):
    """Each job's start time when every job runs exactly ``run_s`` once started: at each
    event time, the jobs ending then release their GPUs, the jobs arriving then join the
    queue in index order, then the rule admits (as ``ClusterState`` does)."""
    starts, ends = {}, {}
    pending = set(arrival_s.values())
    while pending:
        t = min(pending)
        pending.discard(t)
        for j in sorted(j for j, e in ends.items() if e == t):
            adm.release(j)
        for j in sorted(j for j, a in arrival_s.items() if a == t):
            adm.enqueue(j)
        for j, _ in adm.admit(now_s=t):
            starts[j] = t
            ends[j] = t + run_s[j]
            pending.add(ends[j])
    return starts


def test_the_registry_names_the_three_rules():
    assert set(ADMISSION_RULES) == {"fifo", "first_fit", "backfill"}
    assert all(cls.name == name for name, cls in ADMISSION_RULES.items())
    assert type(Admission(ClusterConfig(), num_hosts=1, job_gpus=np.array([1]), job_app=["a"],
                          seed=0).rule).name == "fifo"
    with pytest.raises(ValueError, match="known: first_fit, backfill, fifo"):
        make_admission_rule("sjf")


# ------------------------------------------------------------------ a timeline by hand
# 2 hosts x 4 GPUs, pack, every trial its own tuning job, run times = estimates.
# t = 0: R (job 0, 4 GPUs, 10 s) starts on host 0: free [0, 4].
# t = 1: H (job 1, 8 GPUs, 5 s), S (job 2, 2 GPUs, 2 s), L (job 3, 2 GPUs, 20 s) queue.
# H needs the whole cluster: its reservation is R's end, 10 s, with 8 - 8 = 0 GPUs over.
GPUS, EST = [4, 8, 2, 2], [10.0, 5.0, 2.0, 20.0]
ARRIVAL = {0: 0.0, 1: 1.0, 2: 1.0, 3: 1.0}


def _at_one_second(rule):
    adm = _adm(GPUS, rule=rule, estimate_s=EST)
    adm.enqueue(0)
    assert [j for j, _ in adm.admit(now_s=0.0)] == [0]
    for j in (1, 2, 3):
        adm.enqueue(j)
    return adm


def test_fifo_holds_the_small_trials_behind_the_head():
    adm = _at_one_second("fifo")
    assert adm.admit(now_s=1.0) == []
    # H at R's end (10); S and L at H's end (15)
    assert _drive(_adm(GPUS, rule="fifo", estimate_s=EST), arrival_s=ARRIVAL,
                  run_s=EST) == {0: 0.0, 1: 10.0, 2: 15.0, 3: 15.0}


def test_first_fit_starts_every_trial_that_fits_and_delays_the_head():
    adm = _at_one_second("first_fit")
    # S on host 1 (free [0, 2]), then L on host 1 too (free [0, 0])
    assert [(j, p.hosts, p.gpus) for j, p in adm.admit(now_s=1.0)] == [(2, (1,), (2,)),
                                                                        (3, (1,), (2,))]
    # at 10 R ends: 4 + 2 (S ended at 3) = 6 free, H waits for L's end at 1 + 20 = 21,
    # 11 s past the 10 s it would have started at under FIFO
    assert _drive(_adm(GPUS, rule="first_fit", estimate_s=EST), arrival_s=ARRIVAL,
                  run_s=EST) == {0: 0.0, 2: 1.0, 3: 1.0, 1: 21.0}


def test_backfill_starts_only_the_trial_that_ends_before_the_heads_reservation():
    adm = _at_one_second("backfill")
    assert reservation(adm, gpus=8, now_s=1.0) == (10.0, 0)
    # S: 1 + 2 = 3 <= 10, starts on host 1; L fits the 2 GPUs left but 1 + 20 = 21 > 10
    # and 2 > 0 GPUs over: it waits
    assert [(j, p.hosts, p.gpus) for j, p in adm.admit(now_s=1.0)] == [(2, (1,), (2,))]
    assert adm.queue == [1, 3] and adm.fits(3)
    # S ends at 3: L fits 4 GPUs but 3 + 20 > 10: waits again. R ends at 10: H starts at
    # its reservation; L at H's end, 15
    assert _drive(_adm(GPUS, rule="backfill", estimate_s=EST), arrival_s=ARRIVAL,
                  run_s=EST) == {0: 0.0, 2: 1.0, 1: 10.0, 3: 15.0}


def test_backfill_lets_a_long_trial_use_the_gpus_the_reservation_leaves_over():
    # as above but H needs 6 GPUs and two long 2-GPU trials L1 (job 2), L2 (job 3) of
    # 20 s queue behind it: reservation at R's end, 10 s, with 4 + 4 - 6 = 2 GPUs over.
    # L1 (21 > 10) takes those 2 (none left over); L2 fits the 2 still free but waits
    gpus, est = [4, 6, 2, 2], [10.0, 5.0, 20.0, 20.0]
    adm = _adm(gpus, rule="backfill", estimate_s=est)
    adm.enqueue(0)
    adm.admit(now_s=0.0)
    for j in (1, 2, 3):
        adm.enqueue(j)
    assert reservation(adm, gpus=6, now_s=1.0) == (10.0, 2)
    assert [j for j, _ in adm.admit(now_s=1.0)] == [2]
    assert adm.fits(3) and adm.queue == [1, 3]
    # at 10 R ends: host 0's 4 + host 1's 2 = 6: H starts at its reservation on both
    # hosts; L2 when H ends at 15. First fit would start L2 at 1 and H at 21
    starts = _drive(_adm(gpus, rule="backfill", estimate_s=est), arrival_s=ARRIVAL, run_s=est)
    assert starts == {0: 0.0, 2: 1.0, 1: 10.0, 3: 15.0}
    assert _drive(_adm(gpus, rule="first_fit", estimate_s=est), arrival_s=ARRIVAL,
                  run_s=est) == {0: 0.0, 2: 1.0, 3: 1.0, 1: 21.0}


def test_backfill_skips_a_trial_at_its_cap_without_a_reservation():
    # cap 1. a's first trial (job 0, 4 GPUs, 10 s) runs on host 0. At 1: a's 8-GPU trial
    # (job 1) is at its cap: skipped, no reservation. b's 6-GPU trial (job 2) is the head:
    # 4 free now + 4 at 10 = 8, reservation 10 with 2 over. c (job 3, 2 GPUs, 20 s) takes
    # the 2 over; d (job 4, 2 GPUs, 3 s) ends at 4 <= 10: both start
    adm = _adm([4, 8, 6, 2, 2], rule="backfill", estimate_s=[10, 5, 5, 20, 3],
               apps=["a", "a", "b", "c", "d"], cap=1)
    adm.enqueue(0)
    adm.admit(now_s=0.0)
    for j in (1, 2, 3, 4):
        adm.enqueue(j)
    assert [j for j, _ in adm.admit(now_s=1.0)] == [3, 4]
    assert adm.queue == [1, 2]


def test_an_expected_end_already_past_counts_as_now():
    # R (10 s estimate) started at 0 is still running at 12: expected to end now, 12
    adm = _adm([4, 8], rule="backfill", estimate_s=[10.0, 5.0])
    adm.enqueue(0)
    adm.admit(now_s=0.0)
    assert adm.expected_ends_s(now_s=12.0) == [(12.0, 4)]
    assert reservation(adm, gpus=8, now_s=12.0) == (12.0, 0)


def test_the_gpus_left_over_count_every_job_ending_at_the_reservation():
    # R1 (4 GPUs, host 0) and R2 (2 GPUs, host 1) both expected to end at 10; 2 free now.
    # A 4-GPU head: 2 + 2 (R2) would do, but at 10 R1 ends too: 2 + 2 + 4 - 4 = 4 over
    adm = _adm([4, 2, 4], rule="backfill", estimate_s=[10.0, 10.0, 5.0])
    adm.enqueue(0)
    adm.enqueue(1)
    adm.admit(now_s=0.0)
    assert adm.free.tolist() == [0, 2]
    assert adm.expected_ends_s(now_s=0.0) == [(10.0, 2), (10.0, 4)]
    assert reservation(adm, gpus=4, now_s=0.0) == (10.0, 4)


def test_backfill_needs_the_estimates():
    adm = _adm([4], rule="backfill")
    adm.enqueue(0)
    with pytest.raises(ValueError, match="estimate"):
        adm.admit(now_s=0.0)


# ------------------------------------------------------------------ fifo's place calls

@pytest.mark.parametrize("placement", ["pack", "spread", "random"])
def test_fifo_never_places_a_trial_behind_one_that_does_not_fit(monkeypatch, placement):
    # 2 hosts x 4 GPUs; trials of 3, 6, 1, 2 GPUs. The 3 takes 3 of 8; the 6 does not
    # fit the 5 left: FIFO asks no placement for the 1 and the 2 (no random draw either)
    calls = []

    def counting(free, *, gpus, placement, rng):
        calls.append(gpus)
        return place(free, gpus=gpus, placement=placement, rng=rng)

    monkeypatch.setattr(admission_mod, "place", counting)
    adm = _adm([3, 6, 1, 2], rule="fifo", placement=placement)
    for j in range(4):
        adm.enqueue(j)
    assert [j for j, _ in adm.admit()] == [0]
    assert calls == [3, 6]


def test_fifos_pack_placements_by_hand(monkeypatch):
    # pack on [4, 4]: the 3 on host 0 (best fit, lowest index): [1, 4]; the 6 waits.
    # Release: [4, 4]: the 6 takes host 0's 4 then 2 of host 1: [0, 2]; the 1 on host 1:
    # [0, 1]; the 2 does not fit and stops the pass. First fit instead places the 1 on
    # host 0 (best fit for 1 of [1, 4]) and the 2 on host 1 in the first pass
    calls = []

    def counting(free, *, gpus, placement, rng):
        calls.append(gpus)
        return place(free, gpus=gpus, placement=placement, rng=rng)

    monkeypatch.setattr(admission_mod, "place", counting)
    adm = _adm([3, 6, 1, 2], rule="fifo")
    for j in range(4):
        adm.enqueue(j)
    assert [(j, p.hosts, p.gpus) for j, p in adm.admit()] == [(0, (0,), (3,))]
    adm.release(0)
    assert [(j, p.hosts, p.gpus) for j, p in adm.admit()] == [(1, (0, 1), (4, 2)),
                                                              (2, (1,), (1,))]
    assert adm.free.tolist() == [0, 1] and adm.queue == [3]
    assert calls == [3, 6, 6, 1, 2]
    calls.clear()
    adm = _adm([3, 6, 1, 2], rule="first_fit")
    for j in range(4):
        adm.enqueue(j)
    assert [(j, p.hosts, p.gpus) for j, p in adm.admit()] == [
        (0, (0,), (3,)), (2, (0,), (1,)), (3, (1,), (2,))]
    assert calls == [3, 6, 1, 2]


# ------------------------------------------------------------------ properties

@st.composite
def _queues(draw):
    hosts, per_host = draw(st.integers(1, 3)), draw(st.integers(1, 4))
    n = draw(st.integers(1, 8))
    gpus = draw(st.lists(st.integers(1, hosts * per_host), min_size=n, max_size=n))
    apps = draw(st.lists(st.sampled_from("abc"), min_size=n, max_size=n))
    return hosts, per_host, gpus, apps


@settings(max_examples=60, deadline=None)
@given(q=_queues(), placement=st.sampled_from(["pack", "spread", "random"]),
       cap=st.integers(0, 2), data=st.data())
def test_after_first_fit_no_waiting_trial_fits(q, placement, cap, data):
    hosts, per_host, gpus, apps = q
    adm = _adm(gpus, rule="first_fit", apps=list(apps), cap=cap, per_host=per_host,
               hosts=hosts, placement=placement)
    arriving, running = list(range(len(gpus))), []
    while arriving or running:
        if arriving and (not running or data.draw(st.booleans())):
            adm.enqueue(arriving.pop(0))
        else:
            adm.release(running.pop(data.draw(st.integers(0, len(running) - 1))))
        running += [j for j, _ in adm.admit()]
        for j in adm.queue:
            assert adm.at_cap(j) or place(
                adm.free, gpus=int(gpus[j]), placement=placement,
                rng=np.random.default_rng(0)) is None


@settings(max_examples=100, deadline=None)
@given(q=_queues(), data=st.data())
def test_backfill_starts_each_head_at_its_first_reservation(q, data):
    # with run times equal to the estimates and no caps, the first reservation the rule
    # makes for a trial at the head of the queue is when it starts: no trial backfilled
    # then or later delays it
    hosts, per_host, gpus, _ = q
    n = len(gpus)
    est = data.draw(st.lists(st.integers(1, 10), min_size=n, max_size=n))
    arrivals = data.draw(st.lists(st.integers(0, 5), min_size=n, max_size=n))
    adm = _adm(gpus, rule="backfill", estimate_s=est, per_host=per_host, hosts=hosts)
    first_reservation = {}

    def noting(adm, *, gpus, now_s):
        got = reservation(adm, gpus=gpus, now_s=now_s)
        head = next(j for j in adm.queue if j not in adm.placements)
        first_reservation.setdefault(head, got[0])
        return got

    with mock.patch.object(admission_rules, "reservation", noting):
        starts = _drive(adm, arrival_s={j: float(a) for j, a in enumerate(arrivals)},
                        run_s=[float(e) for e in est])
    assert sorted(starts) == list(range(n))
    for head, shadow_s in first_reservation.items():
        assert not math.isinf(shadow_s)
        assert starts[head] == shadow_s


# ------------------------------------------------------------------ the runtime estimate

def _job(*, gpus, pattern, model_size_bytes, ps_servers=0, iterations=1, compute_s=0.0):
    return Job(job_id="a0/s/t", trial_id="a0/t", model="m", pattern=pattern,
               hosts=(), iterations=iterations, compute_s=compute_s, coflows=(), gpus=gpus,
               model_size_bytes=model_size_bytes, ps_servers=ps_servers)


def test_the_runtime_estimate_of_a_ring_and_a_ps_trial_by_hand():
    hosts = ("h0", "h1", "h2")
    cluster = ClusterConfig(gpus_per_host=4, placement="pack")
    # ring, 8 GPUs on 4 per host: 2 nominal hosts h0, h1; each sends 2(2-1)/2 x 1 GB = 1 GB
    # and receives 1 GB, at 8 Gbit/s = 1 GB/s: 1 s per iteration; 3 x (2 + 1) = 9 s
    ring = _job(gpus=8, pattern="ring", model_size_bytes=10**9, iterations=3, compute_s=2.0)
    # ps, 12 GPUs: h0, h1, h2 with shards on h0 and h1, 300 MB each of a 600 MB model.
    # push: h0 sends 300 MB (to h1), h1 300 MB (to h0), h2 600 MB (to h0, h1); h0 and h1
    # each receive 600 MB. At 1 GB/s everywhere the busiest moves 600 MB: 0.6 s; the pull
    # mirrors it: 0.6 s. 2 x (0.5 + 1.2) = 3.4 s
    ps = _job(gpus=12, pattern="ps", model_size_bytes=6 * 10**8, ps_servers=2, iterations=2,
              compute_s=0.5)
    # 4 GPUs fit one host: no network: 5 x 1 = 5 s
    single = _job(gpus=4, pattern="ring", model_size_bytes=10**9, iterations=5, compute_s=1.0)
    fast = {h: 8e9 for h in hosts}
    got = runtime_estimates_s([ring, ps, single], cluster=cluster, hosts=hosts,
                              nic_rate_bps=fast)
    assert got.tolist() == pytest.approx([9.0, 3.4, 5.0])
    # h2's NIC at 4 Gbit/s (0.5 GB/s): its 600 MB take 1.2 s in the push and in the pull,
    # above h0's and h1's 0.6 s: 2 x (0.5 + 2.4) = 5.8 s; the ring on h0, h1 is unchanged
    slow = {**fast, "h2": 4e9}
    got = runtime_estimates_s([ring, ps], cluster=cluster, hosts=hosts, nic_rate_bps=slow)
    assert got.tolist() == pytest.approx([9.0, 5.8])
    # spread: 2 GPUs on 2 of the hosts (h0, h1): the ring of 1 GB each way: 1 x (0 + 1) = 1 s
    two = _job(gpus=2, pattern="ring", model_size_bytes=10**9)
    got = runtime_estimates_s([two], cluster=ClusterConfig(gpus_per_host=4, placement="spread"),
                              hosts=hosts, nic_rate_bps=fast)
    assert got.tolist() == pytest.approx([1.0])


# ------------------------------------------------------------------ through ClusterState

def _timeline_trace() -> Trace:
    """The timeline above as a trace on 2 servers x 4 GPUs: a0 (arrives at 0) runs R (4
    GPUs, 10 s of compute, one host: no network); a1 (arrives at 1) queues H (8 GPUs, a
    ring of a 1 GB model over both servers after 1 s of compute), S (2 GPUs, 2 s) and L
    (2 GPUs, 20 s)."""
    def job(app, name, gpus, compute_s):
        return Job(job_id=f"{app}/s/{name}", trial_id=f"{app}/{name}", model="m",
                   pattern="ring", hosts=(), iterations=1, compute_s=compute_s, coflows=(),
                   gpus=gpus, model_size_bytes=10**9, ps_servers=0)
    a0 = App("a0", 0.0, "random", (Stage("a0/s", "a0", 1.0, (), (job("a0", "R", 4, 10.0),)),))
    a1 = App("a1", 1.0, "random", (Stage("a1/s", "a1", 1.0, (), (
        job("a1", "H", 8, 1.0), job("a1", "S", 2, 2.0), job("a1", "L", 2, 20.0))),))
    return Trace(seed=1, endpoints="hosts", hosts=("h0", "h1"), apps=(a0, a1),
                 cluster={"gpus_per_host": 4, "placement": "pack", "max_concurrent_trials": 0})


@pytest.mark.parametrize("rule,want", [
    # jobs R, H, S, L; started by 12 s (nan: not yet)
    ("fifo", [0.0, 10.0, np.nan, np.nan]),
    ("first_fit", [0.0, np.nan, 1.0, 1.0]),
    ("backfill", [0.0, 10.0, 1.0, np.nan]),
])
def test_cluster_state_hands_the_time_and_estimates_to_its_rule(rule, want):
    # at 8 Gbit/s (1 GB/s) H's estimate is 1 s of compute + 1 GB each way at 1 GB/s = 2 s;
    # the others compute only. R ends at 10, S at 3: the timeline above up to 12 s
    st_ = ClusterState(_timeline_trace(), big_switch(2, 8e9), admission_rule=rule)
    assert st_.admission.estimate_s.tolist() == pytest.approx([10.0, 2.0, 2.0, 20.0])
    assert type(st_.admission.rule).name == rule
    while st_.next_timer_s() <= 12.0:
        st_.advance_clock(st_.next_timer_s())
        st_.fire_timers()
    np.testing.assert_array_equal(st_.job_start_s, want)
