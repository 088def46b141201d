"""Property tests of the compiled rate-allocation kernels on random networks and flows.

- Max-min fairness by its bottleneck characterisation: rates are feasible and every flow
  crosses a saturated link on which no flow has a higher rate.
- Strict priority: each class is max-min fair on what the higher classes left.
- The kernels give the same rates as the numpy formulation of
  ``tests/reference_allocation.py``, priority and MADD alike.
"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from emulation import allocation
from tests import reference_allocation as ref

TOL = 1e-9


@st.composite
def networks(draw, max_links=6, max_paths=8, max_flows=25):
    """(path_links, cap, pid): random paths over links (dummy last), flows on them."""
    L = draw(st.integers(1, max_links))
    P = draw(st.integers(1, 3))
    npaths = draw(st.integers(1, max_paths))
    path_links = np.full((npaths, P), L, dtype=np.int64)
    for p in range(npaths):
        k = draw(st.integers(1, min(P, L)))
        path_links[p, :k] = draw(st.permutations(range(L)))[:k]
    cap = np.array(draw(st.lists(st.sampled_from([1.0, 2.0, 3.0, 5.0, 8.0, 10.0]),
                                 min_size=L, max_size=L)) + [np.inf])
    pid = np.array(draw(st.lists(st.integers(0, npaths - 1), min_size=1, max_size=max_flows)),
                   dtype=np.int64)
    return path_links, cap, pid


def _usage(path_links, pid, rate, nl):
    return allocation.link_usage(path_links[pid], rate, nl)


def assert_maxmin_fair(path_links, cap, pid, rate):
    """Feasible, and every flow has a bottleneck: a full link where its rate is the max."""
    nl = len(cap)
    use = _usage(path_links, pid, rate, nl)
    assert (use[:-1] <= cap[:-1] * (1 + TOL)).all()
    assert (rate > 0).all()
    full = use >= cap * (1 - TOL)
    for i, p in enumerate(pid):
        links = [l for l in path_links[p] if l != nl - 1]
        ok = False
        for l in links:
            on_l = [j for j, q in enumerate(pid) if l in path_links[q]]
            if full[l] and rate[i] >= max(rate[on_l]) * (1 - TOL):
                ok = True
        assert ok, f"flow {i} on path {links} at {rate[i]} has no bottleneck"


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(net=networks())
def test_maxmin_has_a_bottleneck_for_every_flow(net):
    path_links, cap, pid = net
    per_path = allocation.maxmin(path_links, cap, np.bincount(pid, minlength=len(path_links)))
    assert_maxmin_fair(path_links, cap, pid, per_path[pid])


@settings(max_examples=200, deadline=None)
@given(net=networks(), data=st.data())
def test_priority_classes_are_maxmin_on_what_higher_classes_left(net, data):
    path_links, cap, pid = net
    cls = np.array(data.draw(st.lists(st.integers(0, 3), min_size=len(pid), max_size=len(pid))))
    rate = allocation.priority(pid, path_links, cls, cap)
    left = cap.copy()
    for k in np.unique(cls):
        mine = cls == k
        sub = rate[mine]
        # flows of this class that can still move form a max-min allocation on `left`
        movable = np.array([not any(left[l] <= TOL * 10 for l in path_links[p] if l != len(cap) - 1)
                            for p in pid[mine]])
        assert (sub[~movable] == 0).all()
        if movable.any():
            assert_maxmin_fair(path_links, left, pid[mine][movable], sub[movable])
        left = left - _usage(path_links, pid[mine], sub, len(cap))
        left[-1] = np.inf
        left = np.maximum(left, 0.0)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(net=networks(), data=st.data())
def test_kernels_match_the_numpy_formulation(net, data):
    path_links, cap, pid = net
    n = len(pid)
    cls = np.array(data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)))
    index = allocation.link_index(path_links, len(cap))
    got = allocation.priority(pid, path_links, cls, cap, index)
    want = ref.priority(pid, path_links, cls, cap, ref.link_index(path_links, len(cap)))
    np.testing.assert_array_equal(got, want)
    # MADD: flows grouped into coflows, coflows ranked
    cof = np.array(data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)))
    remaining = np.array(data.draw(st.lists(st.sampled_from([1.0, 2.5, 4.0, 7.0]),
                                            min_size=n, max_size=n)))
    got = allocation.madd(pid, path_links, remaining, cof, cap, index)
    want = ref.madd(pid, path_links, remaining, cof, cap, ref.link_index(path_links, len(cap)))
    np.testing.assert_array_equal(got, want)


def test_rounding_dust_leaves_a_full_link_full():
    # 9 flows on two paths fill link 0 at 1/9 each; 7/9 + 2/9 leaves ~2e-17 of residual
    # capacity, which must not trickle to the lower class (found by hypothesis)
    path_links = np.array([[0], [0], [1]])
    cap = np.array([1.0, 1.0, np.inf])
    pid = np.array([0] * 7 + [1] * 2 + [0] * 5 + [2])
    cls = np.array([0] * 9 + [1] * 5 + [1])
    rate = allocation.priority(pid, path_links, cls, cap)
    assert (rate[9:14] == 0).all() and rate[14] == 1.0
    assert rate[:9] == pytest.approx(1 / 9)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_compiled_bssi_matches_the_numpy_formulation(data):
    """Same order as the reference numpy BSSI loop, ties and zero loads included (loads
    drawn from a few values so that equal ratios and equal link loads are common)."""
    from emulation.scheduler.bssi import bssi_order
    n = data.draw(st.integers(1, 12))
    L = data.draw(st.integers(1, 5))
    vals = st.sampled_from([0.0, 0.0, 1.0, 2.0, 3.0, 0.1 + 0.2, 0.3, 7.5])
    loads = np.array(data.draw(st.lists(vals, min_size=n * L, max_size=n * L))).reshape(n, L)
    w = np.array(data.draw(st.lists(st.sampled_from([1.0, 2.0, 0.5]), min_size=n, max_size=n)))
    cap = np.array(data.draw(st.lists(st.sampled_from([1.0, 2.0, 10.0]), min_size=L, max_size=L)))
    np.testing.assert_array_equal(bssi_order(loads, w, cap), ref.bssi_order(loads, w, cap))


@settings(max_examples=200, deadline=None)
@given(net=networks(), data=st.data())
def test_sparse_classes_match_the_numpy_formulation(net, data):
    """The same comparison with 100 unused paths appended, so every class uses few of the
    network's paths and the kernel takes its per-class (sparse) branch."""
    path_links, cap, pid = net
    L, P = len(cap) - 1, path_links.shape[1]
    extra = np.full((100, P), L, dtype=np.int64)
    extra[:, 0] = np.arange(100) % L
    path_links = np.vstack([path_links, extra])
    n = len(pid)
    cls = np.array(data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)))
    got = allocation.priority(pid, path_links, cls, cap, allocation.link_index(path_links, len(cap)))
    want = ref.priority(pid, path_links, cls, cap, ref.link_index(path_links, len(cap)))
    np.testing.assert_array_equal(got, want)


def test_maxmin_default_weight_and_weight_checks():
    """Two paths share link 0 (10 B/s); path 1 also crosses link 1 (4 B/s).
    One flow each: path 1 is held to 4 by link 1, path 0 gets the other 6.
    Weights (2, 1): link 0 is shared by 3 flows; path 1's flow at 10/3 < 4, so all
    three get 10/3."""
    cap = np.array([10.0, 4.0, np.inf])
    paths = np.array([[0, 2], [0, 1]])
    assert allocation.maxmin(paths, cap).tolist() == pytest.approx([6.0, 4.0])
    assert allocation.maxmin(paths, cap, np.array([2, 1])).tolist() == pytest.approx([10 / 3] * 2)
    for bad in (np.array([1, -1]), np.array([1.5, 1]), np.array([1, 1, 1])):
        with pytest.raises(ValueError):
            allocation.maxmin(paths, cap, bad)


def test_madd_with_a_coflow_that_has_nothing_left():
    """Coflow 0 (rank 0) has 0 bytes left, coflow 1 (rank 1) 4 bytes on the same
    10 B/s link: MADD gives coflow 1 its 4 / (4 / 10) = 10 B/s, nothing is left for the
    backfill, so coflow 0 gets 0 (no division by its zero bottleneck time)."""
    cap = np.array([10.0, np.inf])
    paths = np.array([[0, 1]])
    rate = allocation.madd(np.array([0, 0]), paths, np.array([0.0, 4.0]), np.array([0, 1]), cap)
    assert rate.tolist() == [0.0, 10.0]
    # alone, the empty coflow gets the link by the backfill
    assert allocation.madd(np.array([0]), paths, np.array([0.0]), np.array([0]), cap).tolist() == [10.0]


def test_negative_classes_and_ranks_are_rejected():
    cap = np.array([10.0, np.inf])
    paths = np.array([[0, 1]])
    with pytest.raises(ValueError):
        allocation.priority(np.array([0, 0]), paths, np.array([1, -1]), cap)
    with pytest.raises(ValueError):
        allocation.madd(np.array([0, 0]), paths, np.array([1.0, 1.0]), np.array([2, -1]), cap)
    # two flows on one link, classes 0 and 1: strict priority
    assert allocation.priority(np.array([0, 0]), paths, np.array([1, 0]), cap).tolist() == [0.0, 10.0]


@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_compiled_effective_bottleneck_matches_numpy(data):
    """Varys's Gamma through the kernel equals the plain numpy expression, on a
    read-only, non-contiguous slice like the view's coflow_link_bytes."""
    from emulation.view_kernels import max_scaled_rows
    C, L = data.draw(st.integers(1, 8)), data.draw(st.integers(1, 6))
    vals = st.sampled_from([0.0, 1.0, 3.3, 1e9 / 7, 0.1 + 0.2])
    m = np.array(data.draw(st.lists(vals, min_size=C * (L + 1), max_size=C * (L + 1))))
    m = m.reshape(C, L + 1)[:, :L]
    m.setflags(write=False)
    cap = np.array(data.draw(st.lists(st.sampled_from([1e9, 1e10, 2.5e9]), min_size=L, max_size=L)))
    np.testing.assert_array_equal(max_scaled_rows(m, 8.0, cap),
                                  (m * 8.0 / cap[None, :]).max(axis=1))
