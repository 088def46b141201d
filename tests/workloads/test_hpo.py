"""Hyperband / SHA / ASHA arithmetic."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from workloads import hpo

# Li et al. (JMLR 2018), Table 1, R=81 eta=3: bracket s -> [(n_i, r_i)]
TABLE = {
    4: [(81, 1), (27, 3), (9, 9), (3, 27), (1, 81)],
    3: [(34, 3), (11, 9), (3, 27), (1, 81)],
    2: [(15, 9), (5, 27), (1, 81)],
    1: [(8, 27), (2, 81)],
    0: [(5, 81)],
}


def test_hyperband_r81_eta3_matches_table_exactly():
    brackets = hpo.hyperband(81, 3)
    assert len(brackets) == 5
    for s, bracket in zip([4, 3, 2, 1, 0], brackets):
        assert [(r.n, r.r) for r in bracket] == TABLE[s], f"bracket s={s}"


def test_hyperband_r9_eta3():
    got = [[(r.n, r.r) for r in b] for b in hpo.hyperband(9, 3)]
    assert got == [[(9, 1), (3, 3), (1, 9)], [(5, 3), (1, 9)], [(3, 9)]]


def test_successive_halving():
    assert [(r.n, r.r) for r in hpo.successive_halving(27, 1, 3)] == [(27, 1), (9, 3), (3, 9), (1, 27)]
    with pytest.raises(ValueError):
        hpo.successive_halving(0, 1, 3)


@given(st.integers(2, 40), st.sampled_from([2, 3, 4]), st.integers(0, 2**31 - 1))
def test_asha_promotion_invariants(n, rf, seed):
    rng = np.random.default_rng(seed)
    scores = rng.random(n)
    segs = hpo.asha(n, 1.0, 27.0, rf, scores, rng.uniform(0.5, 2.0, n))
    per_rung = {}
    for s in segs:
        per_rung.setdefault(s.rung, []).append(s)
    assert len(per_rung[0]) == n
    for k in sorted(per_rung)[1:]:
        trials = [s.trial for s in per_rung[k]]
        assert len(set(trials)) == len(trials), "a trial is promoted once per rung"
        below = {s.trial for s in per_rung[k - 1]}
        assert set(trials) <= below
        # every trial in the final top floor(m / rf) of the rung below was promoted
        top = sorted(below, key=lambda t: (scores[t], t))[: len(below) // rf]
        assert set(top) <= set(trials)
        assert all(s.promoted_by in below for s in per_rung[k])
    # the best trial climbs every rung (levels 1, rf, rf^2, ... <= 27)
    best = int(np.argmin(scores))
    top_rung = max(k for k in range(10) if rf ** k <= 27)
    if n >= rf ** top_rung:
        assert any(s.trial == best for s in per_rung.get(top_rung, []))
