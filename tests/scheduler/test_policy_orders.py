"""Each policy's *order* on a hand-built View that tells it apart from the others.

Views are built by hand (``make_view``), so every expected order is derived here from the
policy's published rule, not read from a run. Sections: Varys (SEBF), FIFO-LM (threshold
and its default), online Sincronia (reorder points), Fair, and, in the clearly marked
last section, the stage-level reconstruction ``beamer-sbssi`` (``docs/design.md``,
section 5.3: stage order by BSSI on stage loads with weights; jobs by longest remaining
critical path; ``beamer-stage-only``: jobs FIFO inside a stage).
"""
import numpy as np
import pytest

from emulation.scheduler import POLICIES, make_policy
from emulation.scheduler.base import _ARRAY_FIELDS as _ALL_FIELDS, View, check_order, classes_from_order, compress_classes


def make_view(*, capacity_bps, coflows, stages=None, jobs=None, now_s=0.0):
    """coflows: list of dicts id, link_bytes, and optionally seq, stage, job, size, sent.
    stages: list of dicts id, link_bytes, weight (default one stage "S" with the coflows'
    bytes). jobs: list of dicts id, stage, cp_s, iters (default one job per coflow)."""
    L = len(capacity_bps)
    n = len(coflows)
    if stages is None:
        stages = [{"id": "S", "link_bytes": np.sum([c["link_bytes"] for c in coflows], axis=0)
                   if n else np.zeros(L)}]
    if jobs is None:
        jobs = [{"id": f"j{k}", "stage": 0} for k in range(n)]
    clb = np.array([c["link_bytes"] for c in coflows], dtype=float).reshape(n, L)
    size = np.array([c.get("size", clb[k].sum()) for k, c in enumerate(coflows)], dtype=float)
    return View(
        now_s=now_s,
        coflow_ids=tuple(c["id"] for c in coflows),
        stage_ids=tuple(s["id"] for s in stages),
        job_ids=tuple(j["id"] for j in jobs),
        capacity_bps=np.asarray(capacity_bps, dtype=float),
        coflow_stage=np.array([c.get("stage", 0) for c in coflows], dtype=np.int64),
        coflow_job=np.array([c.get("job", k) for k, c in enumerate(coflows)], dtype=np.int64),
        coflow_release_s=np.zeros(n),
        coflow_seq=np.array([c.get("seq", k) for k, c in enumerate(coflows)], dtype=np.int64),
        coflow_size_bytes=size,
        coflow_sent_bytes=np.array([c.get("sent", 0.0) for c in coflows], dtype=float),
        coflow_link_bytes=clb,
        stage_weight=np.array([s.get("weight", 1.0) for s in stages], dtype=float),
        stage_start_s=np.zeros(len(stages)),
        stage_link_bytes=np.array([s["link_bytes"] for s in stages], dtype=float).reshape(-1, L),
        stage_followed=np.array([s.get("followed", False) for s in stages], dtype=bool),
        job_stage=np.array([j["stage"] for j in jobs], dtype=np.int64),
        job_remaining_iterations=np.array([j.get("iters", 1) for j in jobs], dtype=np.int64),
        job_critical_path_s=np.array([j.get("cp_s", 0.0) for j in jobs], dtype=float),
        job_link_bytes=np.array([j.get("link_bytes", np.zeros(L)) for j in jobs],
                                dtype=float).reshape(-1, L),
    )


def ids_in_order(view, decision):
    return [view.coflow_ids[i] for i in decision.order]


# --------------------------------------------------------------------------- Varys

def test_varys_smallest_effective_bottleneck_first_with_heterogeneous_links():
    """Link 0: 8 bit/s = 1 B/s; link 1: 80 bit/s = 10 B/s.

    A: 10 B on link 0 -> 10 s; B: 40 B on link 1 -> 4 s; C: 6 B on link 0 + 20 B on
    link 1 -> max(6, 2) = 6 s. SEBF: B, C, A. Largest first would give A, C, B; raw bytes
    without capacities (max over links: A 10, B 40, C 20) A, C, B too."""
    v = make_view(capacity_bps=[8.0, 80.0], coflows=[
        {"id": "A", "link_bytes": [10, 0]},
        {"id": "B", "link_bytes": [0, 40]},
        {"id": "C", "link_bytes": [6, 20]}])
    assert ids_in_order(v, make_policy("varys").decide(v)) == ["B", "C", "A"]


def test_varys_ties_broken_by_arrival_not_index():
    v = make_view(capacity_bps=[8.0, 8.0], coflows=[
        {"id": "late", "link_bytes": [5, 0], "seq": 7},
        {"id": "big", "link_bytes": [9, 0], "seq": 0},
        {"id": "early", "link_bytes": [0, 5], "seq": 3}])
    assert ids_in_order(v, make_policy("varys").decide(v)) == ["early", "late", "big"]


def test_varys_recomputes_on_remaining_bytes():
    # the same two coflows, after A sent most of its bytes: A is now the smaller one
    pol = make_policy("varys")
    v = make_view(capacity_bps=[8.0], coflows=[{"id": "A", "link_bytes": [10]},
                                                {"id": "B", "link_bytes": [4]}])
    assert ids_in_order(v, pol.decide(v)) == ["B", "A"]
    v = make_view(capacity_bps=[8.0], coflows=[{"id": "A", "link_bytes": [3], "sent": 7},
                                                {"id": "B", "link_bytes": [4]}])
    assert ids_in_order(v, pol.decide(v)) == ["A", "B"]
    assert POLICIES["varys"].allocation == "madd"


def test_varys_tie_tolerance_is_relative_to_the_largest_bottleneck():
    """Ties are bottlenecks within 1e-9 of the largest one (float noise), broken by
    arrival. A (1 + 4e-10 s) and B (1 s) tie -> arrival order A, B; C (1 ms) first."""
    v = make_view(capacity_bps=[8.0], coflows=[
        {"id": "A", "link_bytes": [1.0 + 4e-10], "seq": 0},
        {"id": "B", "link_bytes": [1.0], "seq": 1},
        {"id": "C", "link_bytes": [1e-3], "seq": 2}])
    assert ids_in_order(v, make_policy("varys").decide(v)) == ["C", "A", "B"]


def test_varys_orders_microsecond_coflows():
    # 1000 B and 2000 B on 10 Gbit/s links: 0.8 us and 1.6 us; the later, smaller first
    v = make_view(capacity_bps=[10e9], coflows=[{"id": "big", "link_bytes": [2000], "seq": 0},
                                                 {"id": "small", "link_bytes": [1000], "seq": 1}])
    assert ids_in_order(v, make_policy("varys").decide(v)) == ["small", "big"]


@pytest.mark.parametrize("name", sorted(POLICIES))
def test_every_policy_accepts_an_empty_view(name):
    pol = make_policy(name)
    pol.prepare(coflow_sizes_bytes=np.array([4.0, 8.0]))
    v = make_view(capacity_bps=[8.0], coflows=[], stages=[], jobs=[])
    assert pol.decide(v).order.tolist() == []


# --------------------------------------------------------------------------- FIFO-LM

def fifo_view(sent, seq):
    return make_view(capacity_bps=[8.0], coflows=[
        {"id": f"c{k}", "link_bytes": [20], "size": 20, "sent": s, "seq": q}
        for k, (s, q) in enumerate(zip(sent, seq))])


def test_fifo_lm_default_threshold_is_the_90th_percentile_of_coflow_sizes():
    """Sizes 1..10: the 90th percentile with linear interpolation sits at rank
    0.9 * (10 - 1) = 8.1 between 9 and 10: 9 + 0.1 * (10 - 9) = 9.1 bytes."""
    pol = make_policy("fifo_lm")
    pol.prepare(coflow_sizes_bytes=np.arange(1, 11, dtype=float))
    assert pol.heavy_threshold_bytes == pytest.approx(9.1)
    # head (seq 0 = index 1) sent 9.0 <= 9.1: not heavy, successor stays behind
    v = fifo_view(sent=[0.0, 9.0, 0.0], seq=[1, 0, 2])
    d = pol.decide(v)
    assert ids_in_order(v, d) == ["c1", "c0", "c2"]
    assert d.classes.tolist() == [1, 0, 2]
    assert d.wake_on_sent == ((1, pytest.approx(9.1)),)
    # sent 9.15 > 9.1: heavy, successor admitted to class 0; a third one stays FIFO
    v = fifo_view(sent=[0.0, 9.15, 0.0], seq=[1, 0, 2])
    d = pol.decide(v)
    assert d.classes.tolist() == [0, 0, 1]
    assert d.wake_on_sent == ((0, pytest.approx(9.1)),)  # now watching the successor


def test_fifo_lm_heavy_chain_and_explicit_threshold():
    pol = make_policy("fifo_lm", heavy_threshold_bytes=5.0)
    pol.prepare(coflow_sizes_bytes=np.array([100.0, 200.0]))  # explicit threshold kept
    assert pol.heavy_threshold_bytes == 5.0
    v = fifo_view(sent=[6.0, 5.5, 1.0, 9.0], seq=[0, 1, 2, 3])
    d = pol.decide(v)
    # c0 and c1 heavy -> c2 admitted; c3 next in FIFO (its own sent bytes do not matter)
    assert d.classes.tolist() == [0, 0, 0, 1]
    assert d.wake_on_sent == ((2, 5.0),)
    # all heavy: everybody in class 0, nothing to watch
    d = pol.decide(fifo_view(sent=[6.0, 6.0, 6.0], seq=[0, 1, 2]))
    assert d.classes.tolist() == [0, 0, 0] and d.wake_on_sent == ()


def test_fifo_lm_threshold_is_strictly_greater():
    pol = make_policy("fifo_lm", heavy_threshold_bytes=5.0)
    d = pol.decide(fifo_view(sent=[5.0, 0.0], seq=[0, 1]))
    assert d.classes.tolist() == [0, 1]
    # exactly at the threshold: not heavy yet, so the policy must be woken later
    assert d.wake_on_sent == ((0, 5.0),)


def test_fifo_lm_single_coflow_gets_class_and_wake_up():
    pol = make_policy("fifo_lm", heavy_threshold_bytes=5.0)
    d = pol.decide(fifo_view(sent=[1.0], seq=[0]))
    assert d.order.tolist() == [0] and d.classes.tolist() == [0]
    assert d.wake_on_sent == ((0, 5.0),)


# --------------------------------------------------------------------------- Sincronia

def test_sincronia_reorders_only_when_the_active_set_changes():
    """One link (1 B/s). A 10 B, B 5 B: BSSI with unit weights = smallest first: B, A.
    Then A's remainder drops to 1 B (same set): the order stays B, A, although a fresh
    BSSI would now put A first. C (3 B) arrives: recomputed on remaining bytes: A, C, B."""
    pol = make_policy("sincronia")
    v = make_view(capacity_bps=[8.0], coflows=[{"id": "A", "link_bytes": [10]},
                                                {"id": "B", "link_bytes": [5]}])
    assert ids_in_order(v, pol.decide(v)) == ["B", "A"]
    v = make_view(capacity_bps=[8.0], coflows=[{"id": "A", "link_bytes": [1], "sent": 9},
                                                {"id": "B", "link_bytes": [5]}])
    assert ids_in_order(v, pol.decide(v)) == ["B", "A"]
    v = make_view(capacity_bps=[8.0], coflows=[
        {"id": "A", "link_bytes": [1], "sent": 9, "seq": 0},
        {"id": "B", "link_bytes": [5], "seq": 1},
        {"id": "C", "link_bytes": [3], "seq": 2}])
    assert ids_in_order(v, pol.decide(v)) == ["A", "C", "B"]
    # B completes: the set changes, C (3 B) vs A (1 B): A, C
    v = make_view(capacity_bps=[8.0], coflows=[{"id": "A", "link_bytes": [0.5], "seq": 0},
                                                {"id": "C", "link_bytes": [3], "seq": 2}])
    assert ids_in_order(v, pol.decide(v)) == ["A", "C"]


def test_sincronia_uses_capacity_and_ties_go_to_the_earlier_arrival():
    # link 0 1 B/s, link 1 10 B/s: A = 4 B on link 0 (4 s), B = 30 B on link 1 (3 s).
    # BSSI picks the busiest link in time (link 0: 4 s > 3 s) and puts A last -> B, A;
    # in raw bytes link 1 (30) would look busiest and B would go last.
    pol = make_policy("sincronia")
    v = make_view(capacity_bps=[8.0, 80.0], coflows=[{"id": "A", "link_bytes": [4, 0]},
                                                      {"id": "B", "link_bytes": [0, 30]}])
    assert ids_in_order(v, pol.decide(v)) == ["B", "A"]
    # equal coflows: the earlier arrival (smaller seq) first, whatever the index
    pol = make_policy("sincronia")
    v = make_view(capacity_bps=[8.0], coflows=[{"id": "X", "link_bytes": [5], "seq": 4},
                                                {"id": "Y", "link_bytes": [5], "seq": 2}])
    assert ids_in_order(v, pol.decide(v)) == ["Y", "X"]


# --------------------------------------------------------------------------- Fair

def test_fair_puts_everything_in_one_class():
    v = make_view(capacity_bps=[8.0], coflows=[{"id": "A", "link_bytes": [10], "seq": 2},
                                                {"id": "B", "link_bytes": [1], "seq": 1}])
    d = make_policy("fair").decide(v)
    assert d.classes.tolist() == [0, 0]
    assert ids_in_order(v, d) == ["B", "A"]


# --------------------------------------------------------------------------- classes

def test_rank_to_class_mapping():
    order = np.array([2, 0, 3, 1])  # coflow 2 first, then 0, 3, 1
    assert classes_from_order(order, 8).tolist() == [1, 3, 0, 2]
    assert classes_from_order(order, 2).tolist() == [1, 1, 0, 1]
    assert classes_from_order(order, 0).tolist() == [1, 3, 0, 2]
    assert compress_classes(np.array([5, 0, 9, 5]), 8).tolist() == [1, 0, 2, 1]
    assert compress_classes(np.array([5, 0, 9, 5]), 2).tolist() == [1, 0, 1, 1]
    assert compress_classes(np.array([3, 3]), 8).tolist() == [0, 0]
    with pytest.raises(ValueError):
        compress_classes(np.array([-1, 0]), 8)


def test_k1_and_unlimited_class_mappings():
    order = np.array([2, 0, 1])
    assert classes_from_order(order, 1).tolist() == [0, 0, 0]
    # K = 0 keeps the policy's own classes unchanged (each its own class)
    assert compress_classes(np.array([5, 0, 9, 5]), 0).tolist() == [5, 0, 9, 5]
    assert compress_classes(np.array([7]), 8).tolist() == [0]


def test_check_order_rejects_non_permutations():
    assert check_order(np.array([1, 0, 2]), 3).tolist() == [1, 0, 2]
    for bad, n in (([0, 0, 1], 3), ([0, 1], 3), ([0, 1, 2, 3], 3), ([1], 0), ([0, 1, 3], 3)):
        with pytest.raises(ValueError):
            check_order(np.array(bad, dtype=np.int64), n)
    assert check_order(np.zeros(0, dtype=np.int64), 0).tolist() == []


def test_view_fields_are_lazy_cached_read_only_and_checked():
    calls = []

    def loads():
        calls.append(1)
        return np.array([[1.0]])

    v = make_view(capacity_bps=[8.0], coflows=[{"id": "A", "link_bytes": [1]}])
    v._sources["coflow_link_bytes"] = loads
    assert calls == []  # nothing computed before first use
    assert v.coflow_link_bytes.tolist() == [[1.0]] and v.coflow_link_bytes.tolist() == [[1.0]]
    assert calls == [1]  # computed once, then cached
    with pytest.raises(ValueError):
        v.coflow_link_bytes[0, 0] = 5.0  # read-only
    with pytest.raises(AttributeError):
        v.no_such_field
    assert not hasattr(v, "no_such_field") and v.num_coflows == 1
    fields = dict(now_s=0.0, coflow_ids=(), stage_ids=(), job_ids=())
    with pytest.raises(TypeError, match="unknown"):
        View(**fields, bogus=1, **{k: np.zeros(0) for k in _ALL_FIELDS})
    with pytest.raises(TypeError, match="missing"):
        View(**fields, **{k: np.zeros(0) for k in _ALL_FIELDS[1:]})


# =========================================================================== BEAMER
# Stage-level reconstruction ``beamer-sbssi`` (docs/design.md, section 5.3): stage order
# by BSSI on the stages' remaining bytes with their weights; inside a stage, jobs by
# longest remaining critical path; ``BeamerStageOnly``: jobs in FIFO (trace) order inside a
# stage. These tests import the classes directly so they keep testing the reconstruction
# whatever the registry calls it.
# ===========================================================================
from emulation.scheduler.beamer import BeamerSBSSI as Beamer, BeamerStageOnly  # noqa: E402


def two_stage_view(weights, cp=(3.0, 10.0, 1.0)):
    """Stage S0: jobs j0, j1 (one coflow each), 10 B on link 0 in total;
    stage S1: job j2, 5 B on link 0. Link 0 is 1 B/s."""
    return make_view(
        capacity_bps=[8.0, 8.0],
        coflows=[{"id": "c0", "link_bytes": [4, 0], "stage": 0, "job": 0, "seq": 0},
                 {"id": "c1", "link_bytes": [6, 0], "stage": 0, "job": 1, "seq": 1},
                 {"id": "c2", "link_bytes": [5, 0], "stage": 1, "job": 2, "seq": 2}],
        stages=[{"id": "S0", "link_bytes": [10, 0], "weight": weights[0]},
                {"id": "S1", "link_bytes": [5, 0], "weight": weights[1]}],
        jobs=[{"id": "j0", "stage": 0, "cp_s": cp[0]}, {"id": "j1", "stage": 0, "cp_s": cp[1]},
              {"id": "j2", "stage": 1, "cp_s": cp[2]}])


def test_beamer_stage_order_smallest_stage_then_longest_critical_path():
    # unit weights, one link: smallest stage first (S1: 5 < S0: 10); in S0, j1 (cp 10)
    # before j0 (cp 3)
    v = two_stage_view(weights=(1.0, 1.0))
    assert ids_in_order(v, Beamer().decide(v)) == ["c2", "c1", "c0"]


def test_beamer_honours_stage_weights():
    # Smith's ratios w/p: S0 4/10 = 0.4 > S1 1/5 = 0.2 -> S0 first
    v = two_stage_view(weights=(4.0, 1.0))
    assert ids_in_order(v, Beamer().decide(v)) == ["c1", "c0", "c2"]
    # S0 weight 1.5: 0.15 < 0.2 -> S1 still first
    v = two_stage_view(weights=(1.5, 1.0))
    assert ids_in_order(v, Beamer().decide(v)) == ["c2", "c1", "c0"]


def test_beamer_stage_only_keeps_jobs_fifo_inside_a_stage():
    v = two_stage_view(weights=(1.0, 1.0))
    assert ids_in_order(v, BeamerStageOnly().decide(v)) == ["c2", "c0", "c1"]
    v = two_stage_view(weights=(4.0, 1.0))
    assert ids_in_order(v, BeamerStageOnly().decide(v)) == ["c0", "c1", "c2"]


def test_beamer_stage_load_not_coflow_load_decides():
    """A stage's in-flight coflow may be small while the stage has much left (future
    iterations): S0's coflow is 1 B but the stage has 20 B left; S1's coflow is 5 B and
    that is all. Stage order S1, S0 (5 < 20), although Sincronia would put c0 first."""
    v = make_view(
        capacity_bps=[8.0],
        coflows=[{"id": "c0", "link_bytes": [1], "stage": 0, "job": 0, "seq": 0},
                 {"id": "c1", "link_bytes": [5], "stage": 1, "job": 1, "seq": 1}],
        stages=[{"id": "S0", "link_bytes": [20]}, {"id": "S1", "link_bytes": [5]}],
        jobs=[{"id": "j0", "stage": 0, "cp_s": 20.0}, {"id": "j1", "stage": 1, "cp_s": 5.0}])
    assert ids_in_order(v, Beamer().decide(v)) == ["c1", "c0"]
    assert ids_in_order(v, make_policy("sincronia").decide(v)) == ["c0", "c1"]


def test_beamer_uses_capacity_for_the_stage_order():
    # S0: 4 B on a 1 B/s link (4 s); S1: 30 B on a 10 B/s link (3 s) plus 1 B on link 0:
    # in time link 0 carries 5 s (bottleneck): S0 has the smaller weight/time ratio -> last
    v = make_view(
        capacity_bps=[8.0, 80.0],
        coflows=[{"id": "c0", "link_bytes": [4, 0], "stage": 0, "job": 0},
                 {"id": "c1", "link_bytes": [1, 30], "stage": 1, "job": 1}],
        stages=[{"id": "S0", "link_bytes": [4, 0]}, {"id": "S1", "link_bytes": [1, 30]}],
        jobs=[{"id": "j0", "stage": 0}, {"id": "j1", "stage": 1}])
    assert ids_in_order(v, Beamer().decide(v)) == ["c1", "c0"]


def test_beamer_coflows_of_one_job_in_release_order_and_empty_view():
    v = make_view(
        capacity_bps=[8.0],
        coflows=[{"id": "late", "link_bytes": [1], "stage": 0, "job": 0, "seq": 5},
                 {"id": "early", "link_bytes": [9], "stage": 0, "job": 0, "seq": 2}],
        stages=[{"id": "S0", "link_bytes": [10]}], jobs=[{"id": "j0", "stage": 0}])
    assert ids_in_order(v, Beamer().decide(v)) == ["early", "late"]
    empty = make_view(capacity_bps=[8.0], coflows=[], stages=[], jobs=[])
    assert Beamer().decide(empty).order.tolist() == []
