"""Staged HPO algorithms: Successive Halving, Hyperband brackets and ASHA promotions.

Pure arithmetic, no randomness except ASHA's trial scores (drawn by the caller's RNG).
A *rung* is ``(n_i, r_i)``: ``n_i`` configurations run ``r_i`` resource units (epochs).
Hyperband follows Li et al., JMLR 18(185), 2018, Algorithm 1 (its Table 1 lists the
brackets of R = 81, eta = 3).
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from math import ceil, floor

import numpy as np


@dataclass(frozen=True)
class Rung:
    """``n`` configurations each run ``r`` resource units; the best ``n // eta`` go on."""

    n: int
    r: float


def _int_log(R: int, eta: int) -> int:
    """floor(log_eta(R)) in exact integer arithmetic."""
    s = 0
    while eta ** (s + 1) <= R:
        s += 1
    return s


def successive_halving(n: int, r: float, eta: int, num_rungs: int | None = None) -> list[Rung]:
    """Synchronous SHA: rung i runs floor(n / eta^i) configs for r * eta^i units."""
    if n < 1 or r <= 0 or eta < 2:
        raise ValueError("successive_halving needs n >= 1, r > 0, eta >= 2")
    rungs = []
    i = 0
    while num_rungs is None or i < num_rungs:
        n_i = floor(Fraction(n, eta ** i))
        if n_i < 1:
            break
        rungs.append(Rung(n_i, float(Fraction(r).limit_denominator(10**9) * eta ** i)))
        i += 1
        if num_rungs is None and n_i < eta:
            break
    return rungs


def survivors(scores: dict[str, float], n: int) -> list[str]:
    """The ``n`` best of a rung's results (lower score is better; ties by id): the trials
    that go on after a synchronous rung (SHA, Hyperband)."""
    return sorted(scores, key=lambda t: (scores[t], t))[:n]


def hyperband(R: int, eta: int) -> list[list[Rung]]:
    """All Hyperband brackets s = s_max..0, each a list of rungs (Li et al. 2018, Alg. 1)."""
    if R < 1 or eta < 2:
        raise ValueError("hyperband needs R >= 1 and eta >= 2")
    s_max = _int_log(R, eta)
    brackets = []
    for s in range(s_max, -1, -1):
        n = ceil(Fraction(s_max + 1, s + 1) * eta ** s)  # ceil((B/R) eta^s / (s+1)), B=(s_max+1)R
        r = Fraction(R, eta ** s)
        bracket = [Rung(floor(Fraction(n, eta ** i)), float(r * eta ** i)) for i in range(s + 1)]
        brackets.append(bracket)
    return brackets


@dataclass(frozen=True)
class AshaSegment:
    """Trial ``trial`` trains from rung ``rung`` to ``rung + 1`` (``units`` resource units).

    It may start once the trial finished the previous segment and, for ``rung > 0``, once
    the segment ``(promoted_by, rung - 1)`` finished: the completion that made this trial
    a top-1/rf member of the rung-``rung - 1`` results seen so far (ASHA's promotion rule).
    """

    trial: int
    rung: int
    units: float
    promoted_by: int | None


def asha_levels(grace: float, max_resource: float, rf: int) -> list[float]:
    """ASHA's rungs: the resource levels ``grace * rf^k <= max_resource``."""
    levels = []
    r = float(grace)
    while r <= max_resource + 1e-9:
        levels.append(r)
        r *= rf
    if not levels:
        raise ValueError("asha: grace must be <= max_resource")
    return levels


def asha(num_trials: int, grace: float, max_resource: float, rf: int,
         scores: np.ndarray, nominal_unit_s: np.ndarray) -> list[AshaSegment]:
    """Asynchronous SHA (Li et al., MLSys 2020) resolved under nominal, contention-free timing.

    Rungs are at ``grace * rf^k <= max_resource``. All trials start at once; a trial's
    rung-k result appears at its nominal finish time (``nominal_unit_s[t]`` per unit). When
    a result arrives at rung k, every trial in the top ``floor(m / rf)`` of the ``m``
    rung-k results seen so far that is not yet promoted is promoted to rung k+1; the trial
    whose result triggered it is recorded as ``promoted_by``. Lower score is better.
    """
    if len(scores) != num_trials or len(nominal_unit_s) != num_trials:
        raise ValueError("scores and nominal_unit_s need one entry per trial")
    levels = asha_levels(grace, max_resource, rf)
    segments: list[AshaSegment] = []
    # event = (time, tiebreak, trial, rung reached)
    import heapq
    heap: list[tuple[float, int, int, int]] = []
    counter = 0
    for t in range(num_trials):
        segments.append(AshaSegment(t, 0, levels[0], None))
        heapq.heappush(heap, (levels[0] * nominal_unit_s[t], counter, t, 0))
        counter += 1
    results: dict[int, list[int]] = {k: [] for k in range(len(levels))}
    promoted: set[tuple[int, int]] = set()
    while heap:
        now, _, trial, rung = heapq.heappop(heap)
        if rung + 1 >= len(levels):
            continue
        results[rung].append(trial)
        ranked = sorted(results[rung], key=lambda x: (scores[x], x))
        for cand in ranked[: len(ranked) // rf]:
            if (cand, rung) in promoted:
                continue
            promoted.add((cand, rung))
            units = levels[rung + 1] - levels[rung]
            segments.append(AshaSegment(cand, rung + 1, units, trial))
            done = max(now, 0.0) + units * nominal_unit_s[cand]
            heapq.heappush(heap, (done, counter, cand, rung + 1))
            counter += 1
    return segments


def planned_successors(trace) -> frozenset[str]:
    """Ids of the stages whose completion the tuner's plan certainly follows with another
    stage of the same tuning job: a rung of SHA or Hyperband (the next rung or bracket is
    fixed in advance; only which trials survive depends on results). ASHA's promotions
    depend on results, so no ASHA segment counts; random / grid search has one stage.
    For other apps (e.g. imported coflow traces) every stage some stage depends on counts."""
    out: set[str] = set()
    for app in trace.apps:
        if app.algorithm in ("asha", "random"):
            continue
        for st in app.stages:
            out.update(st.depends_on)
    return frozenset(out)
