"""The cluster scheduler of a run whose trials are placed during the run: a FIFO queue of
trials waiting for GPUs, each host's free GPUs, each tuning job's running trials, and
the placements it made.

``Admission`` is owned by ``ClusterState`` (``emulation/state.py``), which enqueues a
stage's jobs when the stage starts, asks ``admit`` for the jobs that start now, and
``release``s a job's GPUs when it ends; the same calls in both backends give the same
placements. The rules (``workloads/cluster.py``): strict FIFO across tuning jobs (a
trial that does not fit holds back every trial behind it, as a FIFO queue of placement
groups does), except that a trial whose tuning job is at its ``max_concurrent_trials``
waits without holding back the others. Random placements draw from a generator seeded
by the trace's seed, so a run is deterministic.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from workloads.cluster import ClusterConfig, place


@dataclass(frozen=True)
class Placement:
    """Where one job runs: host indices and the GPUs it holds on each."""

    hosts: tuple[int, ...]
    gpus: tuple[int, ...]


class Admission:
    """Free GPUs per host, the queue of waiting jobs and each app's running jobs."""

    def __init__(self, cluster: ClusterConfig, *, num_hosts: int, job_gpus: np.ndarray,
                 job_app: list[str], seed: int | None):
        self.cluster = cluster
        self.job_gpus = np.asarray(job_gpus, dtype=np.int64)
        self.job_app = job_app
        unlimited = int(self.job_gpus.max(initial=1))  # enough for any trial: no limit
        self.free = np.full(num_hosts, cluster.gpus_per_host or unlimited, dtype=np.int64)
        self.unlimited = cluster.gpus_per_host == 0
        self.queue: list[int] = []
        self.running: dict[str, int] = {}
        self.placements: dict[int, Placement] = {}
        self.rng = np.random.default_rng([0 if seed is None else seed, 0x6C5])

    def enqueue(self, j: int) -> None:
        """Job ``j`` waits for GPUs, behind every job already waiting."""
        self.queue.append(j)

    def admit(self) -> list[tuple[int, Placement]]:
        """The waiting jobs that start now, in queue order, with their placements."""
        cap = self.cluster.max_concurrent_trials
        started, kept = [], []
        blocked = False
        for j in self.queue:
            app = self.job_app[j]
            if blocked or (cap and self.running.get(app, 0) >= cap):
                kept.append(j)
                continue
            where = place(self.free, gpus=int(self.job_gpus[j]),
                          placement=self.cluster.placement, rng=self.rng)
            if where is None:
                blocked = True
                kept.append(j)
                continue
            p = Placement(hosts=tuple(h for h, _ in where), gpus=tuple(g for _, g in where))
            if not self.unlimited:
                self.free[list(p.hosts)] -= p.gpus
            self.running[app] = self.running.get(app, 0) + 1
            self.placements[j] = p
            started.append((j, p))
        self.queue = kept
        return started

    def hand_over(self, j: int, nxt: int) -> None:
        """Job ``j`` ended and the same trial's job ``nxt`` goes on at once on its GPUs
        (an ASHA trial told to continue keeps its resources, as in Ray Tune)."""
        self.placements[nxt] = self.placements[j]

    def release(self, j: int) -> None:
        """Job ``j`` ended: its GPUs are free again."""
        p = self.placements[j]
        if not self.unlimited:
            self.free[list(p.hosts)] += p.gpus
        self.running[self.job_app[j]] -= 1
