"""Byte counts of ring all-reduce and parameter-server coflows against the formulas."""
import pytest

from workloads.sync import parameter_server, ring_allreduce

M = 553_430_176  # VGG-16 fp32 bytes


@pytest.mark.parametrize("n", range(2, 17))
def test_ring_bytes(n):
    workers = [f"h{i}" for i in range(n)]
    (coflow,) = ring_allreduce(workers, M)
    assert len(coflow.flows) == n
    per = 2 * (n - 1) * M / n
    for i, f in enumerate(coflow.flows):
        assert (f.src, f.dst) == (workers[i], workers[(i + 1) % n])
        assert abs(f.size_bytes - per) <= 0.5
    assert abs(coflow.size_bytes - 2 * (n - 1) * M) <= n * 0.5


def test_ring_single_worker_moves_nothing():
    assert ring_allreduce(["h0"], M) == []


@pytest.mark.parametrize("n", range(2, 17))
@pytest.mark.parametrize("k", range(1, 5))
def test_ps_bytes(n, k):
    workers = [f"w{i}" for i in range(n)]
    servers = [f"s{j}" for j in range(k)]
    push, pull = parameter_server(workers, servers, M)
    assert len(push.flows) == n * k and len(pull.flows) == n * k
    assert all(f.src in workers and f.dst in servers for f in push.flows)
    assert all(f.src in servers and f.dst in workers for f in pull.flows)
    assert all(abs(f.size_bytes - M / k) <= 0.5 for f in push.flows + pull.flows)
    # each server moves n*M/k each way
    for s in servers:
        assert abs(sum(f.size_bytes for f in push.flows if f.dst == s) - n * M / k) <= n
        assert abs(sum(f.size_bytes for f in pull.flows if f.src == s) - n * M / k) <= n


def test_ps_colocated_worker_and_server_skip_local_flows():
    push, pull = parameter_server(["h0", "h1"], ["h1"], 100)
    assert [(f.src, f.dst) for f in push.flows] == [("h0", "h1")]
    assert [(f.src, f.dst) for f in pull.flows] == [("h1", "h0")]
