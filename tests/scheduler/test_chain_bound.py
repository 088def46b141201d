"""The chain LP of the lower bound: an app whose stages form one chain is one LP item.

Hand case (one link, capacity 8 B/s = 1 byte-second unit of 8 bytes): app A is a chain of
two stages of one 8-byte flow each (1 s alone each), app B one stage of one 16-byte flow
(2 s), both released at 0 on the same link. Schedules: A1, A2, B -> SCTs 1, 1, 4 (sum 6);
B, A1, A2 -> 2, 3, 1 (sum 6); A1, B, A2 -> 1, 3, 3 (sum 7); sharing is no better (work is
conserved on one link and the last stage ends at 4). Optimum mean 6/3 = 2.
Stage LP alone: items A1 (p=1) and B (p=2): min E_A1 + E_B s.t. E_A1 >= 1, E_B >= 2,
1 E_A1 + 2 E_B >= (3^2 + 1 + 4) / 2 = 7 -> E_A1 = 1, E_B = 3: 4 - 0, plus A2's own 1 s
-> 5, mean 5/3. Chain LP: items A (p=2, E_A >= 2) and B (p=2, E_B >= 2),
2 E_A + 2 E_B >= (4^2 + 4 + 4) / 2 = 12 -> E_A + E_B >= 6: mean 2, tight.
"""
import numpy as np
import pytest

from emulation.fluid.simulator import FluidSimulator
from emulation.scheduler import POLICIES, make_policy
from emulation.scheduler.lower_bound import lower_bound
from emulation.topology import big_switch
from tests.helpers import tiny_trace

TOPO = big_switch(2, 64.0)  # 8 bytes/s


def chain_trace():
    one = lambda jid, b: {"id": jid, "coflows": [[(0, 1, b)]]}  # noqa: E731
    return tiny_trace([
        {"id": "A", "stages": [{"id": "A1", "jobs": [one("A1j", 8)]},
                               {"id": "A2", "deps": ["A1"], "jobs": [one("A2j", 8)]}]},
        {"id": "B", "stages": [{"id": "B1", "jobs": [one("B1j", 16)]}]},
    ], hosts=2)


def test_chain_lp_is_tight_on_the_hand_case():
    lb = lower_bound(chain_trace(), TOPO)
    assert lb.method == "chain-lp+per-stage"
    assert lb.avg_sct_s == pytest.approx(2.0, rel=1e-9)


def every_policy_at_or_above(trace, lb_s):
    """Every registered policy's avg SCT on ``trace`` is at least the bound ``lb_s``."""
    for name in POLICIES:
        rec = FluidSimulator(trace, TOPO, make_policy(name)).run()
        assert np.mean([s["sct_s"] for s in rec.stages]) >= lb_s * (1 - 1e-9), name


def test_every_policy_at_or_above_the_chain_bound():
    t = chain_trace()
    every_policy_at_or_above(t, lower_bound(t, TOPO).avg_sct_s)


def test_chain_lp_with_a_non_chain_app_by_hand():
    """App A: chain A1 -> A2 (1 byte each, 1 s); app C is not a chain: C1 and C2 (2 bytes
    each) free, C3 (1 byte) depends on both. One link of 1 byte/s, everything at t = 0.
    Chain LP: items A (p = 2, E >= 2), C1, C2 (p = 2, E >= 2); C3 adds its own 1 s. All
    p equal: Queyranne on the three gives sum E >= (6^2 + 3 * 4) / (2 * 2) = 12 (each pair
    >= 6 holds at E = 4, 4, 4): 12 + 1 = 13, mean 13/5 = 2.6. Stage LP: items A1 (p 1), C1,
    C2 (p 2): min E_A1 + E_C1 + E_C2 s.t. E_A1 + 2 E_C1 + 2 E_C2 >= (25 + 9) / 2 = 17,
    E_C1 + E_C2 >= 6, E_A1 + 2 E_Ci >= 7: E_A1 = 1, E_C1 = E_C2 = 4 -> 9, plus A2 and C3's
    own 2 + 1 = 3 -> 11, mean 2.2. The order A1, A2, C1, C2, C3 achieves 1, 1, 4, 6, 1 =
    13: the chain LP is tight."""
    one = lambda jid, b: {"id": jid, "coflows": [[(0, 1, b)]]}  # noqa: E731
    t = tiny_trace([
        {"id": "A", "stages": [{"id": "A1", "jobs": [one("A1j", 8)]},
                               {"id": "A2", "deps": ["A1"], "jobs": [one("A2j", 8)]}]},
        {"id": "C", "stages": [{"id": "C1", "jobs": [one("C1j", 16)]},
                               {"id": "C2", "jobs": [one("C2j", 16)]},
                               {"id": "C3", "deps": ["C1", "C2"], "jobs": [one("C3j", 8)]}]},
    ], hosts=2)
    lb = lower_bound(t, TOPO)
    assert lb.method == "chain-lp+per-stage"
    assert lb.avg_sct_s == pytest.approx(2.6, rel=1e-9)
    every_policy_at_or_above(t, lb.avg_sct_s)


def test_chain_lp_lower_bound_of_the_chain_binds():
    """App A: chain of two stages, each 1 s of compute then 1 byte (B = 2 s each, so
    E_A >= 4); app B: one 4-byte stage (E_B >= 4). One link of 1 byte/s. Chain LP:
    min E_A + E_B s.t. 2 E_A + 4 E_B >= (6^2 + 4 + 16) / 2 = 28, E_A >= 4, E_B >= 4:
    E_A = 4 (binding), E_B = 5 -> 9, mean 9/3 = 3. Stage LP: A1 (p 1, E >= 2), B (p 4):
    E_A1 + 4 E_B >= 21 -> E_A1 = 2, E_B = 4.75 -> 6.75, plus A2's 2 -> 8.75 < 9."""
    t = tiny_trace([
        {"id": "A", "stages": [
            {"id": "A1", "jobs": [{"id": "A1j", "compute_s": 1.0, "coflows": [[(0, 1, 8)]]}]},
            {"id": "A2", "deps": ["A1"],
             "jobs": [{"id": "A2j", "compute_s": 1.0, "coflows": [[(0, 1, 8)]]}]}]},
        {"id": "B", "stages": [{"id": "B1", "jobs": [{"id": "B1j", "coflows": [[(0, 1, 32)]]}]}]},
    ], hosts=2)
    lb = lower_bound(t, TOPO)
    assert lb.method == "chain-lp+per-stage"
    assert lb.avg_sct_s == pytest.approx(3.0, rel=1e-9)
    every_policy_at_or_above(t, lb.avg_sct_s)
