"""A GPU cluster for the synthetic HPO traces: servers with GPUs, where a trial's workers
go, and the traffic a placed trial's synchronisation puts on the network.

Owns ``ClusterConfig`` (the ``[cluster]`` table of an experiment file), the placements a
cluster scheduler makes (``place``: ``pack``, ``spread``, ``random``) and the
hierarchical synchronisation of a placed trial (``placed_coflows``), and the run time a
user would expect of a trial (``runtime_estimates_s``, for backfilling). The queue that
calls them during a run is ``emulation/admission.py``; the reasons for each rule are in
``docs/design-notes.md``, "A cluster with GPUs".

Every topology host is a server with ``gpus_per_host`` GPUs; a trial of g GPUs holds g
of them from its start to its end. ``gpus_per_host = 0`` is the ablation of a cluster
that cannot exist: every host has as many free GPUs as any trial asks for.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from workloads.config import ConfigError
from workloads.sync import parameter_server, ring_allreduce
from workloads.trace import CoflowSpec, Job

PLACEMENTS = ("pack", "spread", "random")
# the cluster scheduler's admission rules (``emulation/admission_rules.py`` implements
# them, registered under these names)
ADMISSIONS = ("first_fit", "backfill", "fifo")


@dataclass(frozen=True)
class ClusterConfig:
    """The ``[cluster]`` table: GPUs per server, the placement rule, a per-tuning-job cap,
    the admission rule.

    ``max_concurrent_trials`` caps the trials one tuning job runs at once (Ray Tune's
    ``TuneConfig.max_concurrent_trials``); 0: no cap. ``admission``: which waiting trials
    start when GPUs free up: ``first_fit`` (every one that fits, in queue order: Ray
    Tune's trial runner, Kueue's default ``BestEffortFIFO``), ``backfill`` (EASY
    backfilling, Slurm's default) or ``fifo`` (strict: the first that does not fit holds
    back the rest; Kueue's ``StrictFIFO``)."""

    gpus_per_host: int = 8
    placement: Literal["pack", "spread", "random"] = "pack"
    max_concurrent_trials: int = 0
    admission: Literal["first_fit", "backfill", "fifo"] = "first_fit"

    def check(self, where: str = "cluster") -> None:
        if self.gpus_per_host < 0:
            raise ConfigError(f"{where}.gpus_per_host: must be >= 0 (0: unlimited)")
        if self.max_concurrent_trials < 0:
            raise ConfigError(f"{where}.max_concurrent_trials: must be >= 0 (0: no cap)")

    def fits_empty(self, gpus: int, num_hosts: int) -> bool:
        """True if a trial of ``gpus`` GPUs fits the empty cluster under this placement."""
        return self.gpus_per_host == 0 or gpus <= self.gpus_per_host * num_hosts


def nominal_hosts(gpus: int, cluster: ClusterConfig, num_hosts: int) -> int:
    """How many hosts a trial of ``gpus`` GPUs spans on the empty cluster: the fewest that
    hold it under ``pack`` (one on an unlimited cluster), as many as it has workers (up to
    the hosts) otherwise. What a policy is told of a trial's coflows before it is placed
    (FIFO-LM's size threshold)."""
    if cluster.placement == "pack":
        return 1 if cluster.gpus_per_host == 0 else -(-gpus // cluster.gpus_per_host)
    return min(gpus, num_hosts)


def place(free: np.ndarray, *, gpus: int, placement: str,
          rng: np.random.Generator) -> list[tuple[int, int]] | None:
    """Hosts for a trial of ``gpus`` GPUs given each host's free GPUs (``free``), as
    ``(host index, GPUs there)`` sorted by host; None if it does not fit now.

    - ``pack``: fewest hosts, best fit. While the rest does not fit one host, take the
      host with the most free GPUs (lowest index first); then the host whose free GPUs
      exceed the rest by the least. No placement uses fewer hosts.
    - ``spread``: as many hosts as possible: the workers dealt one at a time, round
      robin, over the hosts with a free GPU in a random order; one worker per host when
      there are enough such hosts (the pinned regime experiments' traffic).
    - ``random``: ``gpus`` free GPUs drawn at random among all free GPUs (a fragmented
      cluster).
    """
    free = np.asarray(free, dtype=np.int64)
    if placement == "pack":
        return _pack(free, gpus)
    if placement == "spread":
        if free.sum() < gpus:
            return None
        order = rng.permutation(np.flatnonzero(free > 0))
        dealt = np.zeros(len(free), dtype=np.int64)
        rest = gpus
        while rest:
            for h in order:
                if rest and dealt[h] < free[h]:
                    dealt[h] += 1
                    rest -= 1
        return [(int(h), int(dealt[h])) for h in np.flatnonzero(dealt)]
    if placement == "random":
        avail = np.minimum(free, gpus)
        if avail.sum() < gpus:
            return None
        slots = np.repeat(np.arange(len(free)), avail)
        pick = rng.choice(len(slots), size=gpus, replace=False)
        hosts, counts = np.unique(slots[pick], return_counts=True)
        return [(int(h), int(c)) for h, c in zip(hosts, counts)]
    raise ValueError(f"unknown placement {placement!r}; known: {', '.join(PLACEMENTS)}")


def _pack(free: np.ndarray, gpus: int) -> list[tuple[int, int]] | None:
    if free.sum() < gpus:
        return None
    avail = free.copy()
    rest, taken = gpus, []
    while rest > 0:
        fits = np.flatnonzero(avail >= rest)
        if len(fits):
            h = int(fits[np.argmin(avail[fits])])
            taken.append((h, rest))
            break
        h = int(np.argmax(avail))
        taken.append((h, int(avail[h])))
        rest -= int(avail[h])
        avail[h] = 0
    return sorted(taken)


def placed_coflows(pattern: str, *, hosts: list[str], model_size_bytes: int,
                   ps_servers: int) -> list[CoflowSpec]:
    """The coflows one iteration of a trial placed on ``hosts`` (distinct, one entry per
    host whatever its GPUs) puts on the network. Workers on one host reduce over the
    host's own interconnect first, at no network cost; then:

    - ``ring``: a ring all-reduce across the hosts (each host sends
      ``2(h-1)/h * M`` to the next), hierarchical all-reduce as NCCL runs it;
    - ``ps``: ``min(ps_servers, h)`` parameter-server shards on the first hosts of the
      placement; each host pushes ``M/s`` to every shard on another host, then pulls it.

    A trial on one host puts nothing on the network (an empty list)."""
    if len(hosts) < 2:
        return []
    if pattern == "ring":
        return ring_allreduce(list(hosts), model_size_bytes)
    if pattern == "ps":
        servers = list(hosts[:max(1, min(ps_servers, len(hosts)))])
        return parameter_server(list(hosts), servers, model_size_bytes)
    raise ValueError(f"unknown sync pattern {pattern!r}")


def runtime_estimates_s(jobs: list[Job], *, cluster: ClusterConfig, hosts: tuple[str, ...],
                        nic_rate_bps: dict[str, float]) -> np.ndarray:
    """Each job's expected run time once started, as a user's time limit would be set:
    iterations x (compute per iteration + the uncontended time of one iteration's
    synchronisation on its nominal placement). The nominal placement is the first
    ``nominal_hosts`` of ``hosts``; its coflows (``placed_coflows``) run one after the
    other, each taking its busiest host's bytes sent or received over that host's NIC
    rate (``nic_rate_bps``: bits/s per host name)."""
    sync_s: dict[tuple, float] = {}  # many trials share a shape: each computed once
    out = np.zeros(len(jobs))
    for i, job in enumerate(jobs):
        shape = (job.pattern, job.gpus, job.model_size_bytes, job.ps_servers)
        if shape not in sync_s:
            names = list(hosts[:nominal_hosts(job.gpus, cluster, len(hosts))])
            coflows = placed_coflows(job.pattern, hosts=names,
                                     model_size_bytes=job.model_size_bytes,
                                     ps_servers=job.ps_servers)
            sync_s[shape] = sum(_busiest_host_s(c, nic_rate_bps=nic_rate_bps)
                                for c in coflows)
        out[i] = job.iterations * (job.compute_s + sync_s[shape])
    return out


def _busiest_host_s(coflow: CoflowSpec, *, nic_rate_bps: dict[str, float]) -> float:
    """The uncontended time of ``coflow``: the most any host sends or receives, in
    seconds at that host's NIC rate."""
    sent: dict[str, int] = {}
    received: dict[str, int] = {}
    for f in coflow.flows:
        sent[f.src] = sent.get(f.src, 0) + f.size_bytes
        received[f.dst] = received.get(f.dst, 0) + f.size_bytes
    return max(max(sent.get(h, 0), received.get(h, 0)) * 8.0 / nic_rate_bps[h]
               for h in sent.keys() | received.keys())
