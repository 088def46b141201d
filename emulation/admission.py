"""The cluster scheduler of a run whose trials are placed during the run: the queue of
trials waiting for GPUs, each host's free GPUs, each tuning job's running trials, when
each job took the GPUs it holds, each job's runtime estimate, and the placements made.

``Admission`` is owned by ``ClusterState`` (``emulation/state.py``), which enqueues a
stage's jobs when the stage starts, asks ``admit`` for the jobs that start now, and
``release``s a job's GPUs when it ends (or ``hand_over``s them to the same trial's next
job); the same calls in both backends give the same placements. Which waiting trials
start is its admission rule's choice (``emulation/admission_rules.py``; default
``fifo``: strict FIFO across tuning jobs, a trial that does not fit holds back every
trial behind it); where they go is the placement's (``workloads/cluster.py``). Under
every rule a trial whose tuning job is at its ``max_concurrent_trials`` waits without
holding back the others. Random placements draw from a generator seeded by the trace's
seed, so a run is deterministic.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from emulation.admission_rules import AdmissionRule, Fifo
from workloads.cluster import ClusterConfig, place


@dataclass(frozen=True)
class Placement:
    """Where one job runs: host indices and the GPUs it holds on each."""

    hosts: tuple[int, ...]
    gpus: tuple[int, ...]


class Admission:
    """Free GPUs per host, the queue of waiting jobs and each app's running jobs.

    ``rule``: which waiting jobs start (default ``fifo``). ``estimate_s``: each job's
    expected run time once started (``workloads.cluster.runtime_estimates_s``), which
    the ``backfill`` rule needs; None if unknown."""

    def __init__(self, cluster: ClusterConfig, *, num_hosts: int, job_gpus: np.ndarray,
                 job_app: list[str], seed: int | None, rule: AdmissionRule | None = None,
                 estimate_s: np.ndarray | None = None):
        self.cluster = cluster
        self.job_gpus = np.asarray(job_gpus, dtype=np.int64)
        self.job_app = job_app
        self.rule = Fifo() if rule is None else rule
        self.estimate_s = None if estimate_s is None else np.asarray(estimate_s, dtype=float)
        unlimited = int(self.job_gpus.max(initial=1))  # enough for any trial: no limit
        self.free = np.full(num_hosts, cluster.gpus_per_host or unlimited, dtype=np.int64)
        self.unlimited = cluster.gpus_per_host == 0
        self.queue: list[int] = []
        self.running: dict[str, int] = {}
        self.placements: dict[int, Placement] = {}
        self.held_since_s: dict[int, float] = {}  # jobs holding GPUs: since when
        self.rng = np.random.default_rng([0 if seed is None else seed, 0x6C5])

    def enqueue(self, j: int) -> None:
        """Job ``j`` waits for GPUs, behind every job already waiting."""
        self.queue.append(j)

    def admit(self, *, now_s: float = 0.0) -> list[tuple[int, Placement]]:
        """The waiting jobs that start at ``now_s`` under the rule, in queue order, with
        their placements; they leave the queue. Only ``backfill`` reads the time."""
        started = self.rule.admit(self, now_s=now_s)
        gone = {j for j, _ in started}
        self.queue = [j for j in self.queue if j not in gone]
        return started

    def at_cap(self, j: int) -> bool:
        """True if job ``j``'s tuning job runs ``max_concurrent_trials`` trials now."""
        cap = self.cluster.max_concurrent_trials
        return bool(cap) and self.running.get(self.job_app[j], 0) >= cap

    def fits(self, j: int) -> bool:
        """True if job ``j`` fits the free GPUs now (under every placement: as many free
        GPUs in total as it has), without drawing a placement."""
        return int(self.free.sum()) >= int(self.job_gpus[j])

    def try_start(self, j: int, *, now_s: float) -> Placement | None:
        """Place waiting job ``j`` on the free GPUs and take them (at ``now_s``); None,
        and nothing taken, if it does not fit. The caller removes it from the queue."""
        where = place(self.free, gpus=int(self.job_gpus[j]),
                      placement=self.cluster.placement, rng=self.rng)
        if where is None:
            return None
        p = Placement(hosts=tuple(h for h, _ in where), gpus=tuple(g for _, g in where))
        if not self.unlimited:
            self.free[list(p.hosts)] -= p.gpus
        app = self.job_app[j]
        self.running[app] = self.running.get(app, 0) + 1
        self.placements[j] = p
        self.held_since_s[j] = now_s
        return p

    def expected_ends_s(self, *, now_s: float) -> list[tuple[float, int]]:
        """(expected end, GPUs held) of every job holding GPUs, earliest first: when it
        took them plus its estimate, or ``now_s`` if that is past."""
        if self.estimate_s is None:
            raise ValueError("expected ends need each job's runtime estimate (estimate_s)")
        return sorted((max(t + float(self.estimate_s[j]), now_s), sum(self.placements[j].gpus))
                      for j, t in self.held_since_s.items())

    def hand_over(self, j: int, nxt: int, *, now_s: float) -> None:
        """Job ``j`` ended and the same trial's job ``nxt`` goes on at once (at ``now_s``)
        on its GPUs (an ASHA trial told to continue keeps its resources, as in Ray Tune)."""
        self.placements[nxt] = self.placements[j]
        del self.held_since_s[j]
        self.held_since_s[nxt] = now_s

    def release(self, j: int) -> None:
        """Job ``j`` ended: its GPUs are free again."""
        p = self.placements[j]
        if not self.unlimited:
            self.free[list(p.hosts)] += p.gpus
        self.running[self.job_app[j]] -= 1
        del self.held_since_s[j]
