"""The policy interface: a read-only ``View`` of the active state in, a ``Decision`` out.

Backends (fluid simulator, Mininet scheduler process) build a ``View`` at every event
(stage start/end, coflow release/completion, flow completion, policy wake-up) and call
``policy.decide(view)``. A policy returns a total order of the view's active coflows
(indices into the coflow arrays, highest priority first), optionally its own priority
classes, and optionally byte thresholds at which it wants to be asked again (FIFO-LM).
Policies never see backend internals; one policy class serves both backends.

Arrays of the view are numpy, read-only, aligned by index:

- links ``L``: ``capacity_bps``.
- coflows ``C``: ``coflow_ids``, ``coflow_stage`` / ``coflow_job`` (indices into the
  stage / job arrays), ``coflow_release_s``, ``coflow_seq`` (global release order),
  ``coflow_size_bytes``, ``coflow_sent_bytes``, ``coflow_link_bytes`` (C x L remaining
  bytes that still have to cross each link).
- stages ``S``: ``stage_ids``, ``stage_weight``, ``stage_start_s``, ``stage_link_bytes``
  (S x L: bytes every remaining iteration of every job of the stage still puts on each
  link, the in-flight coflow's remainder included: ``R_s`` of ``beamer-sbssi``),
  ``stage_followed`` (bool: the tuner's plan certainly starts another stage of the same
  tuning job when this one completes, as the next rung of SHA / Hyperband; what a tuner
  knows in advance, not which trials survive: ``workloads.hpo.planned_successors``).
- jobs ``J``: ``job_ids``, ``job_stage``, ``job_remaining_iterations``,
  ``job_critical_path_s`` (remaining iterations x (compute + uncontended sync time)),
  ``job_link_bytes`` (J x L: bytes every remaining iteration of the job still puts on each
  link; summed over a stage's jobs it is ``stage_link_bytes``).

Expensive arrays may be given as zero-argument callables; they are computed on first use.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

DEFAULT_PRIORITY_CLASSES = 8

_ARRAY_FIELDS = (
    "capacity_bps", "coflow_stage", "coflow_job", "coflow_release_s", "coflow_seq",
    "coflow_size_bytes", "coflow_sent_bytes", "coflow_link_bytes", "stage_weight", "stage_followed",
    "stage_start_s", "stage_link_bytes", "job_stage", "job_remaining_iterations",
    "job_critical_path_s", "job_link_bytes",
)


class View:
    """Read-only snapshot of the active state, valid for one ``decide`` call."""

    def __init__(self, *, now_s: float, coflow_ids: tuple[str, ...], stage_ids: tuple[str, ...],
                 job_ids: tuple[str, ...], **arrays: Any):
        unknown = set(arrays) - set(_ARRAY_FIELDS)
        if unknown:
            raise TypeError(f"View got unknown fields {sorted(unknown)}")
        missing = set(_ARRAY_FIELDS) - set(arrays)
        if missing:
            raise TypeError(f"View is missing fields {sorted(missing)}")
        self.now_s = now_s
        self.coflow_ids = coflow_ids
        self.stage_ids = stage_ids
        self.job_ids = job_ids
        self._sources = arrays
        self._cache: dict[str, np.ndarray] = {}

    def __getattr__(self, name: str) -> np.ndarray:
        sources = self.__dict__.get("_sources")
        if sources is None or name not in sources:
            raise AttributeError(name)
        cache = self.__dict__["_cache"]
        if name not in cache:
            src = sources[name]
            arr = np.asarray(src() if callable(src) else src)
            arr = arr.view()
            arr.setflags(write=False)
            cache[name] = arr
        return cache[name]

    @property
    def num_coflows(self) -> int:
        return len(self.coflow_ids)


@dataclass(frozen=True)
class Decision:
    """A policy's answer.

    ``order``: permutation of ``range(view.num_coflows)``, highest priority first.
    ``classes``: per coflow (indexed like the view, not like ``order``) its priority class,
    0 = highest; ``None`` lets the backend map rank i to class min(i, K-1).
    ``wake_on_sent``: ``(coflow index, sent_bytes)`` pairs; the backend asks again once
    that coflow has sent that many bytes.
    """

    order: np.ndarray
    classes: np.ndarray | None = None
    wake_on_sent: tuple[tuple[int, float], ...] = field(default_factory=tuple)


class Policy:
    """Base class. Subclasses set ``name`` and implement ``decide``.

    ``allocation`` tells the fluid backend how to turn the order into rates:
    ``"priority"`` (strict priority across classes, max-min fair inside one) or
    ``"madd"`` (Varys: each coflow in order at the rate that finishes all its flows
    together, then leftover capacity shared max-min). The packet backend enforces the
    order through priority classes either way.

    ``default_realloc`` is when the policy, as published, recomputes its decision: at
    coflow-level events (``"coflow"``: a coflow is released or completes, a stage starts
    or ends, a requested wake-up; a centralised coflow scheduler such as Varys or
    Sincronia) or at every flow completion too (``"flow"``: rates follow the transport
    instantly, e.g. per-flow fair sharing). The Mininet scheduler process asks a
    ``"coflow"`` policy only at coflow-level events. ``realloc_mode()`` turns it into the
    fluid reallocation mode of a run given no mode (``run_fluid(realloc=None)``, the fluid
    CLI's and the suite's default ``policy``, every packet-level run's twin); run.json
    records the mode used. A policy that declares none gets ``"flow"`` and
    ``declared_realloc()`` is None: the fluid CLI says the policy declares no published
    mode instead of naming one.

    ``same_decision_at_flow_completions`` is a promise: ``decide`` returns the same
    classes (no wake-ups) whenever the active coflows, stages and jobs are the same,
    whatever bytes have been sent. The fluid engine then reuses the last decision at
    events that only complete flows (rates recomputed in compiled code, the same
    arithmetic as asking again); ``tests/fluid/test_flow_events.py`` checks the records match.
    """

    name: ClassVar[str] = ""
    allocation: ClassVar[str] = "priority"
    default_realloc: ClassVar[str] = "flow"
    same_decision_at_flow_completions: ClassVar[bool] = False

    @classmethod
    def declared_realloc(cls) -> str | None:
        """The published reallocation the policy declares: ``default_realloc`` as set by
        its class or by a policy it derives from (``beamer-coflow`` takes Sincronia's), or
        None when only this base class sets it."""
        for klass in cls.__mro__:
            if klass is Policy:
                return None
            if "default_realloc" in vars(klass):
                return vars(klass)["default_realloc"]
        return None

    @classmethod
    def realloc_mode(cls) -> str:
        """The fluid reallocation mode that runs the policy as the packet backend enforces
        it: decisions at its published events, rates as switch queues and TCP give them. A
        priority policy deciding at coflow-level events gets ``"queues"`` (its classes
        re-share the rates at every flow completion); a MADD policy keeps its published
        mode (Varys: rates held between coflow events, as its agents pace them); a
        per-flow policy gets ``"flow"``."""
        if cls.allocation == "priority" and cls.default_realloc == "coflow":
            return "queues"
        return cls.default_realloc

    @classmethod
    def resolve_realloc(cls, mode: str | None) -> str:
        """The mode a run asked for ``mode`` uses: ``realloc_mode()`` for None or
        ``"policy"`` (the default of the CLIs and the suite), else ``mode`` itself."""
        return cls.realloc_mode() if mode in (None, "policy") else mode

    def prepare(self, *, coflow_sizes_bytes: np.ndarray) -> None:
        """Called once per run with trace-wide facts before the first event."""

    def decide(self, view: View) -> Decision:
        raise NotImplementedError


def classes_from_order(order: np.ndarray, num_classes: int) -> np.ndarray:
    """Class of each coflow (indexed like the view): rank i -> min(i, K-1); K = 0 -> rank."""
    order = np.asarray(order, dtype=np.int64)
    ranks = np.empty_like(order)
    ranks[order] = np.arange(len(order))
    if num_classes <= 0:
        return ranks
    return np.minimum(ranks, num_classes - 1)


def compress_classes(classes: np.ndarray, num_classes: int) -> np.ndarray:
    """Map policy-chosen classes onto K classes keeping their order (K = 0: unchanged)."""
    classes = np.asarray(classes, dtype=np.int64)
    if len(classes) and classes.min() < 0:
        raise ValueError(f"priority classes must be >= 0, got {classes.min()}")
    if num_classes <= 0:
        return classes
    if len(classes) == 0 or classes.min() == classes.max():
        return np.zeros(len(classes), dtype=np.int64)
    _, dense = np.unique(classes, return_inverse=True)
    return np.minimum(dense, num_classes - 1)


def decision_classes(decision: Decision, *, num_coflows: int,
                     num_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """(order, class per coflow indexed like the view) of a ``decision`` checked against
    the view's ``num_coflows``: the
    policy's own classes mapped onto ``num_classes`` keeping their order, else rank i ->
    min(i, K-1). The one mapping both backends use."""
    order = check_order(decision.order, num_coflows)
    if decision.classes is not None:
        return order, compress_classes(np.asarray(decision.classes), num_classes)
    return order, classes_from_order(order, num_classes)


def check_order(order: np.ndarray, n: int) -> np.ndarray:
    """Raise if ``order`` is not a permutation of range(n)."""
    order = np.asarray(order, dtype=np.int64)
    if order.shape != (n,) or (n and not np.array_equal(np.sort(order), np.arange(n))):
        raise ValueError(f"policy order is not a permutation of {n} coflows: {order[:10]}")
    return order
