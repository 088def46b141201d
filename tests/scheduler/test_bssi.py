"""BSSI (emulation/scheduler/bssi.py) against independent derivations.

- One link: Smith's rule (sort by weight / processing time, largest first) is optimal for
  weighted completion time on a single machine (Smith 1956); BSSI must reach its cost.
- Several links: BSSI is the primal-dual algorithm of Mastrolilli, Queyranne, Schulz,
  Svensson & Uhan (2010) for concurrent open shop, a 2-approximation of the weighted sum
  of completion times; checked against the brute-force optimal permutation, with
  heterogeneous link capacities (load = bytes / capacity).
- Hand-run cases where the weight-scaling step, the bottleneck choice and the capacity
  normalisation each change the order.
"""
import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from emulation.scheduler.bssi import bssi_order


def open_shop_cost(order, loads_bytes, weights, capacity=None):
    """Weighted completion time of a permutation schedule: item k ends when its last
    operation ends, at the prefix sum of processing times on each link it uses."""
    p = np.asarray(loads_bytes, dtype=float)
    if capacity is not None:
        p = p / np.asarray(capacity, dtype=float)[None, :]
    prefix = np.zeros(p.shape[1])
    cost = 0.0
    for k in order:
        prefix = prefix + p[k]
        used = p[k] > 0
        cost += weights[k] * (prefix[used].max() if used.any() else 0.0)
    return cost


def brute_force_best(loads, weights, capacity=None):
    n = len(loads)
    return min(open_shop_cost(perm, loads, weights, capacity)
               for perm in itertools.permutations(range(n)))


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_single_link_matches_smiths_rule(data):
    n = data.draw(st.integers(1, 7))
    sizes = np.array(data.draw(st.lists(st.integers(1, 50), min_size=n, max_size=n)), float)
    weights = np.array(data.draw(st.lists(st.integers(1, 9), min_size=n, max_size=n)), float)
    cap = np.array([data.draw(st.sampled_from([1.0, 3.0, 10.0]))])
    loads = sizes[:, None]
    order = bssi_order(loads, weights, cap)
    assert sorted(order.tolist()) == list(range(n))
    smith = sorted(range(n), key=lambda k: -weights[k] / sizes[k])
    assert open_shop_cost(order, loads, weights, cap) == pytest.approx(
        open_shop_cost(smith, loads, weights, cap), rel=1e-12)


@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_multi_link_within_twice_the_brute_force_optimum(data):
    n = data.draw(st.integers(2, 5))
    L = data.draw(st.integers(2, 3))
    loads = np.array([[data.draw(st.sampled_from([0, 0, 1, 2, 5, 9, 20])) for _ in range(L)]
                      for _ in range(n)], dtype=float)
    for k in range(n):  # every item loads at least one link
        if not loads[k].any():
            loads[k, data.draw(st.integers(0, L - 1))] = data.draw(st.integers(1, 20))
    weights = np.array([data.draw(st.sampled_from([1.0, 2.0, 5.0])) for _ in range(n)])
    cap = np.array([data.draw(st.sampled_from([1.0, 2.0, 10.0])) for _ in range(L)])
    order = bssi_order(loads, weights, cap)
    assert sorted(order.tolist()) == list(range(n))
    best = brute_force_best(loads, weights, cap)
    assert open_shop_cost(order, loads, weights, cap) <= 2 * best * (1 + 1e-9)


def test_weight_scaling_step_by_hand():
    """a = (3, 0), b = (2, 2), c = (0, 3), unit weights.

    Step 1: both links carry 5; the first (link 0) is the bottleneck; ratios w/x: a 1/3,
    b 1/2 -> a goes last; scale: w_b = 1 - (1/3)*2 = 1/3, w_c = 1.
    Step 2: link 1 carries 5 > 2; ratios b (1/3)/2 = 1/6, c 1/3 -> b goes last. Order c, b, a.
    Without the scaling step b's ratio would stay 1/2 and c would go last (b, c, a).
    """
    loads = np.array([[3.0, 0.0], [2.0, 2.0], [0.0, 3.0]])
    assert bssi_order(loads, np.ones(3)).tolist() == [2, 1, 0]


def test_weight_scaling_decides_a_tie_of_the_unscaled_weights():
    """b = (1, 1), a = (1, 0), c = (0, 2) (indices 0, 1, 2), unit weights.

    Link loads (2, 3): link 1 is the bottleneck; ratios b 1/1, c 1/2 -> c last; scale
    w_b = 1 - (1/2)*1 = 1/2. Next link 0 (2 > 1): ratios b (1/2)/1, a 1/1 -> b last.
    Order a, b, c = [1, 0, 2]. Unscaled, b and a would tie at 1 and the larger index (a)
    would go last: [0, 1, 2]. Both cost 6, the brute-force optimum."""
    loads = np.array([[1.0, 1.0], [1.0, 0.0], [0.0, 2.0]])
    order = bssi_order(loads, np.ones(3))
    assert order.tolist() == [1, 0, 2]
    assert open_shop_cost(order, loads, np.ones(3)) == brute_force_best(loads, np.ones(3)) == 6


def test_capacity_normalisation_changes_the_bottleneck():
    """Capacities (1, 10) bytes/s; a = 4 B on link 0; b = 1 B on link 0 + 30 B on link 1.

    In time: link 0 carries 4 + 1 = 5 s, link 1 3 s -> link 0 is the bottleneck; ratios
    a 1/4, b 1/1 -> a last: order b, a (cost 3 + 5 = 8; a, b costs 4 + 5 = 9). In raw bytes
    link 1 (30) would look busiest and b would go last.
    """
    loads = np.array([[4.0, 0.0], [1.0, 30.0]])
    cap = np.array([1.0, 10.0])
    assert bssi_order(loads, np.ones(2), cap).tolist() == [1, 0]
    assert brute_force_best(loads, np.ones(2), cap) == pytest.approx(8.0)
    assert bssi_order(loads, np.ones(2)).tolist() == [0, 1]  # bytes only: the other order


def test_weights_break_smallest_first():
    # one link, sizes 2 and 6: unit weights -> small first; weight 4 on the big one:
    # Smith's ratios 4/6 > 1/2 -> big first
    loads = np.array([[2.0], [6.0]])
    assert bssi_order(loads, np.array([1.0, 1.0])).tolist() == [0, 1]
    assert bssi_order(loads, np.array([1.0, 4.0])).tolist() == [1, 0]
    # weight 2 gives 2/6 < 1/2: still small first
    assert bssi_order(loads, np.array([1.0, 2.0])).tolist() == [0, 1]


def test_unloaded_items_come_first_in_index_order_and_empty_input():
    # an item with no load finishes at once (Smith's ratio w/0 = inf): it goes first;
    # the loaded ones follow smallest first (1 B before 4 B)
    loads = np.array([[0.0, 0.0], [4.0, 0.0], [0.0, 0.0], [1.0, 0.0]])
    assert bssi_order(loads, np.ones(4)).tolist() == [0, 2, 3, 1]
    assert bssi_order(np.zeros((0, 2)), np.zeros(0)).tolist() == []


def test_an_item_without_load_on_the_bottleneck_is_not_put_last():
    """a = (0.5, 0), b = (0, 0.4): link 0 (0.5) is the bottleneck; only a loads it, so a
    goes last (b's ratio w / 0 is infinite): order b, a."""
    loads = np.array([[0.5, 0.0], [0.0, 0.4]])
    assert bssi_order(loads, np.ones(2)).tolist() == [1, 0]


def test_float_residue_on_an_emptied_link_terminates():
    """0.1 + 0.2 + 0.3 minus the three loads leaves ~3e-17 on the link (not 0); with an
    unloaded item still unordered the residue must not be taken for load. Smith's rule
    on one link: the unloaded item d, then a (0.1), b (0.2), c (0.3)."""
    assert (0.1 + 0.2 + 0.3) - 0.3 - 0.2 - 0.1 > 0  # the residue this case relies on
    loads = np.array([[0.1], [0.2], [0.3], [0.0]])
    assert bssi_order(loads, np.ones(4)).tolist() == [3, 0, 1, 2]


def test_bottleneck_moves_once_an_item_is_ordered():
    """a = (3, 0), b = (1, 0), c = (0, 2.5), unit weights. Link 0 (4) is the bottleneck:
    ratios a 1/3, b 1 -> a last; w_b = 1 - (1/3)*1 = 2/3. Without a, link 0 carries 1 and
    link 1 2.5: link 1 is now the bottleneck -> c last. Order b, c, a."""
    loads = np.array([[3.0, 0.0], [1.0, 0.0], [0.0, 2.5]])
    assert bssi_order(loads, np.ones(3)).tolist() == [1, 2, 0]
