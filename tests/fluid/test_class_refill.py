"""The incremental strict-priority max-min of ``queue_events``
(``emulation/fluid/class_refill_kernels.py``): after each flow completion its rates equal
a full ``priority_rates`` bit for bit, the numpy reference (``tests/reference_allocation``)
and the max-min bottleneck conditions checked class by class (an independent brute-force
characterisation); hand-derived cases for a top-class completion re-sharing a lower
class, and for classes becoming blocked and unblocked."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from emulation import allocation_kernels as A
from emulation.fluid import class_refill_kernels as C
from emulation.allocation import link_index
from emulation.fluid.refill_kernels import _class_groups
from emulation.topology import big_switch, leaf_spine
from tests import reference_allocation as R


def _network(kind, rng=None, ties=True):
    """(path_links, cap) over every ordered host pair: big switch (6 hosts) or
    leaf-spine (2 leaves x 3 hosts, 2 spines, 2:1); capacities equal per tier (ties) or
    each scaled by a random factor."""
    topo = (big_switch(6, 8.0) if kind == "big_switch"
            else leaf_spine(2, 3, 2, 8.0, oversubscription=2.0))
    paths = [topo.path_indices(s, d) for s in topo.hosts for d in topo.hosts if s != d]
    nl = len(topo.links) + 1
    P = max(len(p) for p in paths)
    pl = np.full((len(paths), P), nl - 1, dtype=np.int64)
    for i, p in enumerate(paths):
        pl[i, :len(p)] = p
    cap = np.array([l.rate_bps / 8 for l in topo.links] + [np.inf])
    if not ties:
        cap[:-1] *= rng.choice([0.5, 1.0, 1.5, 3.0], size=nl - 1) * (1 + rng.random(nl - 1))
    return pl, cap


class Incremental:
    """The kernel's state over a set of active flows (pid, class per flow)."""

    def __init__(self, pl, cap, pid, cls, ncls):
        self.pl, self.cap, self.ncls = pl, cap, ncls
        self.pid, self.cls = pid, cls
        self.tiny = A._tolerance(cap)
        n = len(pid)
        cls_of = np.arange(ncls, dtype=np.int64)  # coflow k is class k
        (self.g_ptr, _, self.g_w, _, _, self.f_grp, self.e_ptr, self.e_link, self.g_ent,
         self.o_ptr, self.o_grp) = _class_groups(n, cls, pid, cls_of, ncls, pl, len(cap))
        self.st, self.bufs, self.e_cls, self.e_nxt = C.new_state(
            self.g_ptr, self.g_w, self.g_ent, self.e_ptr, self.e_link, self.o_ptr,
            self.o_grp, cap, self.tiny)
        self.active = np.ones(n, dtype=bool)
        self.chg = np.empty(max(len(self.g_w), 1), dtype=np.int64)

    def complete(self, flows):
        """Flows complete together; returns the groups the update lists as changed."""
        s = self.st
        for i in flows:
            assert self.active[i]
            self.active[i] = False
            C.drop_flow(self.f_grp[i], self.cls[i], self.g_w, self.g_ent, s[3], s[4], s[11],
                        s[17], s[5], s[6], s[7], s[14], s[15], s[16], s[19])
        k0 = int(min(self.cls[i] for i in flows))
        nchg, self.bufs = C.update(k0, s, self.bufs, self.tiny, self.g_ptr, self.g_w,
                                   self.g_ent, self.e_ptr, self.o_ptr, self.o_grp, self.e_cls,
                                   self.e_nxt, self.chg)
        return set(self.chg[:nchg].tolist())

    def rates(self):
        """Rate of each active flow (its group's)."""
        return self.st[9][self.f_grp[self.active]]


def _full(pl, cap, pid, cls, ncls):
    ptr, owners = link_index(pl, len(cap))
    pf = np.bincount(pid, minlength=len(pl)).astype(np.int64)
    lf = np.bincount(pl[pid].ravel(), minlength=len(cap)).astype(np.int64)
    return A.priority_rates(pid, cls, np.arange(ncls, dtype=np.int64), ncls, pf, lf, pl, ptr,
                            owners, cap, np.zeros(len(pl), dtype=np.int64),
                            np.full(len(cap), -1, dtype=np.int64))


def _check_maxmin(pl, cap, pid, cls, rate, ncls):
    """Strict priority, max-min inside a class, from the definitions: class by class on
    the residual the higher classes leave, rates are feasible, and every flow either has
    a bottleneck (a link its class fills, on which no flow of its class gets more) or,
    with rate 0, its whole class crosses a full link (blocked). Returns the blocked
    classes that have flows."""
    nl = len(cap)
    tol = 1e-9 * cap[:-1].max()
    c = cap.astype(float).copy()
    blocked = 0
    for k in range(ncls):
        idx = np.flatnonzero(cls == k)
        if len(idx) == 0:
            continue
        links = [[l for l in pl[pid[i]] if l != nl - 1] for i in idx]
        full = c <= tol
        if all(any(full[l] for l in ls) for ls in links):
            assert np.all(rate[idx] == 0.0)
            blocked += 1
            continue
        use = np.zeros(nl)
        top = np.zeros(nl)
        for i, ls in zip(idx, links):
            assert rate[i] >= 0
            for l in ls:
                use[l] += rate[i]
                top[l] = max(top[l], rate[i])
        assert np.all(use[:-1] <= c[:-1] + 1e-7 * cap[:-1].max())
        for i, ls in zip(idx, links):
            assert any(use[l] >= c[l] - 1e-7 * cap[:-1].max() and rate[i] >= top[l] - 1e-6
                       for l in ls), (k, i)
        c[:-1] = c[:-1] - use[:-1]
        c[c <= tol] = 0.0
    return blocked


def _flows(rng, npaths, ncls, n):
    pid = rng.integers(0, npaths, size=n).astype(np.int64)
    cls = rng.integers(0, ncls, size=n).astype(np.int64)
    return pid, cls


def _run_chain(kind, ncls, seed, ties, mode):
    """Complete flows one or a few at a time (``mode``: from the top class, the lowest
    class, or anywhere) and compare every step; returns (steps, blocked classes seen)."""
    rng = np.random.default_rng(seed)
    pl, cap = _network(kind, rng, ties)
    n = int(rng.integers(5, 60))
    pid, cls = _flows(rng, len(pl), ncls, n)
    inc = Incremental(pl, cap, pid, cls, ncls)
    assert np.array_equal(inc.rates(), _full(pl, cap, pid, cls, ncls))
    ptr_own = R.link_index(pl, len(cap))
    steps = blocked = 0
    while inc.active.sum() > 1:
        act = np.flatnonzero(inc.active)
        if mode == "top":
            pool = act[cls[act] == cls[act].min()]
        elif mode == "low":
            pool = act[cls[act] == cls[act].max()]
        else:
            pool = act
        fin = rng.choice(pool, size=min(len(pool), int(rng.integers(1, 3))), replace=False)
        before = inc.st[9].copy()
        listed = inc.complete(sorted(fin.tolist()))
        act = np.flatnonzero(inc.active)
        got = inc.rates()
        want = _full(pl, cap, pid[act], cls[act], ncls)
        assert np.array_equal(got, want), (kind, ncls, seed, steps)
        ref = R.priority(pid[act], pl, cls[act], cap, ptr_own)
        assert np.allclose(got, ref, rtol=1e-9, atol=1e-9 * cap[:-1].max())
        blocked += _check_maxmin(pl, cap, pid[act], cls[act], got, ncls)
        # the groups listed as changed are exactly those of active flows whose rate moved
        live = set(inc.f_grp[act].tolist())
        moved = {g for g in live if not before[g] == inc.st[9][g]}
        assert moved <= listed
        assert all(not before[g] == inc.st[9][g] for g in listed)
        steps += 1
    return steps, blocked


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kind=st.sampled_from(["big_switch", "leaf_spine"]), ncls=st.sampled_from([1, 2, 3, 8]),
       seed=st.integers(0, 2**32 - 1), ties=st.booleans(),
       mode=st.sampled_from(["top", "low", "any"]))
@pytest.mark.slow
def test_incremental_equals_a_full_priority_fill_at_every_completion(kind, ncls, seed, ties,
                                                                    mode):
    _run_chain(kind, ncls, seed, ties, mode)


@pytest.mark.slow
def test_random_chains_exercise_blocked_classes_and_every_removal_mode():
    """Deterministic sweep: both topologies, K in {2, 4, 8}, ties or not, removals from
    the top, the lowest or any class; blocked classes must occur (and be checked)."""
    steps = blocked = 0
    for seed in range(60):
        for kind in ("big_switch", "leaf_spine"):
            s, b = _run_chain(kind, (2, 4, 8)[seed % 3], seed, seed % 2 == 0,
                              ("top", "low", "any")[seed % 3 - 1])
            steps += s
            blocked += b
    assert steps > 2000 and blocked > 100


def _hand(pl, cap, pid, cls, ncls):
    inc = Incremental(np.array(pl, dtype=np.int64), np.array(cap), np.array(pid),
                      np.array(cls), ncls)
    return inc


def test_a_top_class_completion_re_shares_the_lower_class_by_hand():
    # Big switch, 3 hosts, 1 B/s links: up(h) = 2h, down(h) = 2h + 1, dummy 6.
    # Class 0: A1 h0->h1, A2 h0->h2 share up(h0): 1/2 each; down(h1) keeps 1/2.
    # Class 1: B h2->h1 on up(h2) (1) and down(h1) (1/2): 1/2.
    # A1 completes: A2 alone on up(h0): 1; down(h1) is free: B gets 1.
    pl = [[0, 3], [0, 5], [4, 3]]  # h0->h1, h0->h2, h2->h1
    inc = _hand(pl, [1.0] * 6 + [np.inf], [0, 1, 2], [0, 0, 1], 2)
    assert inc.rates().tolist() == [0.5, 0.5, 0.5]
    changed = inc.complete([0])
    assert inc.rates().tolist() == [1.0, 1.0]
    # listed: both survivors' groups, and A1's emptied group (its rate drops to 0)
    assert changed == {int(inc.f_grp[0]), int(inc.f_grp[1]), int(inc.f_grp[2])}


def test_classes_turn_blocked_and_unblocked_by_hand():
    # Class 0: h0->h1 at 1 B/s fills down(h1). Class 1: B h2->h1 crosses that full link:
    # blocked, 0. Class 2: C h2->h0: up(h2) and down(h0) free: 1.
    # The class-0 flow completes: B gets 1 (up(h2), down(h1)); C's up(h2) is now full:
    # class 2 is blocked, C gets 0.
    pl = [[0, 3], [4, 3], [4, 1]]  # h0->h1, h2->h1, h2->h0
    inc = _hand(pl, [1.0] * 6 + [np.inf], [0, 1, 2], [0, 1, 2], 3)
    assert inc.rates().tolist() == [1.0, 0.0, 1.0]
    inc.complete([0])
    assert inc.rates().tolist() == [1.0, 0.0]
    # and back: B completes, C is unblocked again
    inc.complete([1])
    assert inc.rates().tolist() == [1.0]


def test_a_lower_class_completion_leaves_the_classes_above_alone_by_hand():
    # Class 0: h0->h1 alone at 1 B/s fills down(h1). Class 1: h2->h1 and h2->h0 share
    # up(h2); h2->h0 crosses no full link, so the class is filled: round one freezes
    # h2->h1 at 0 (down(h1) has share 0), round two gives h2->h0 the rest of up(h2), 1
    # (tied with down(h0)). h2->h0 completes: the class is blocked, h2->h1 stays 0, the
    # class-0 flow keeps 1; only the emptied group changes rate.
    pl = [[0, 3], [4, 3], [4, 1]]
    inc = _hand(pl, [1.0] * 6 + [np.inf], [0, 1, 2], [0, 1, 1], 2)
    assert inc.rates().tolist() == [1.0, 0.0, 1.0]
    changed = inc.complete([2])
    assert inc.rates().tolist() == [1.0, 0.0]
    assert changed == {int(inc.f_grp[2])}  # only the emptied group is listed


def test_ties_saturate_together_by_hand():
    # One class, three links of 2 B/s; X crosses a and b, Y crosses a, Z crosses b:
    # a and b tie at 1 B/s per flow and saturate in the same round: 1, 1, 1.
    # Y completes: X and Z share b (1 each) and X has a to itself (a keeps 1): 1, 1.
    # Z completes: X alone: 2.
    pl = [[0, 1], [0, 3], [1, 3]]  # X: a, b; Y: a; Z: b (3 = dummy)
    inc = _hand(pl, [2.0, 2.0, 2.0, np.inf], [0, 1, 2], [0, 0, 0], 1)
    assert inc.rates().tolist() == [1.0, 1.0, 1.0]
    inc.complete([1])
    assert inc.rates().tolist() == [1.0, 1.0]
    inc.complete([2])
    assert inc.rates().tolist() == [2.0]


@pytest.mark.parametrize("kind", ["big_switch", "leaf_spine"])
def test_many_classes_with_one_flow_each_like_offline_sincronia(kind):
    """526 coflows offline are 526 classes; here 40 classes of 1-3 flows on a small
    network, completed in random order, several at once sometimes."""
    rng = np.random.default_rng(7)
    pl, cap = _network(kind, rng, ties=True)
    ncls = 40
    pid, cls = _flows(rng, len(pl), ncls, 80)
    inc = Incremental(pl, cap, pid, cls, ncls)
    while inc.active.any():
        act = np.flatnonzero(inc.active)
        fin = rng.choice(act, size=min(len(act), int(rng.integers(1, 4))), replace=False)
        inc.complete(sorted(fin.tolist()))
        act = np.flatnonzero(inc.active)
        assert np.array_equal(inc.rates(), _full(pl, cap, pid[act], cls[act], ncls))
