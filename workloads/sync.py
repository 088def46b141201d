"""Data-parallel synchronisation patterns: the coflows one training iteration emits.

- Ring all-reduce over n workers (NVIDIA nccl-tests PERFORMANCE.md): each worker sends
  ``2(n-1)/n * M`` bytes to its ring successor: one coflow of n flows.
- Parameter server with k servers and n workers (BytePS, OSDI'20): push coflow (every
  worker sends ``M/k`` to every server), then pull coflow (every server sends ``M/k``
  to every worker).

Byte counts are rounded to whole bytes (``round``). A flow whose two ends sit on the same
host never touches the network and is left out; a coflow left empty is dropped.
"""
from __future__ import annotations

from workloads.trace import CoflowSpec, Flow

PATTERNS = ("ring", "ps")


def ring_allreduce(workers: list[str], model_bytes: int) -> list[CoflowSpec]:
    """One coflow: worker i sends 2(n-1)/n * M bytes to worker (i+1) mod n."""
    n = len(workers)
    if n < 2:
        return []
    size = round(2 * (n - 1) * model_bytes / n)
    flows = tuple(Flow(workers[i], workers[(i + 1) % n], size)
                  for i in range(n) if workers[i] != workers[(i + 1) % n])
    return [CoflowSpec(flows)] if flows else []


def parameter_server(workers: list[str], servers: list[str], model_bytes: int) -> list[CoflowSpec]:
    """Push coflow (worker -> each server, M/k) then pull coflow (server -> each worker)."""
    k = len(servers)
    if k < 1:
        raise ValueError("parameter_server needs at least one server")
    size = round(model_bytes / k)
    push = tuple(Flow(w, s, size) for w in workers for s in servers if w != s)
    pull = tuple(Flow(s, w, size) for s in servers for w in workers if w != s)
    return [CoflowSpec(c) for c in (push, pull) if c]
