"""A real all-reduce (jax's CPU collectives, gloo over TCP) on the emulated hosts,
measured from the switch ports' capture, against what the packet backend replays for the
same collective (workloads/sync.py): derived by hand, a ring all-reduce of B bytes over n
ranks carries 2(n-1)/n x B over each of n ring links, each host sending to one peer and
receiving from another, and nothing finishes before the busiest link has carried its
bytes at the link rate, less what the link's queues let through at once ahead of the rate
(their buckets, ``qos.HTB_BURST_KIB``: one run fell 0.15 ms, about 560 bytes, short of
the bound without them).

Needs root and the optional jax (requirements-collective.txt, which scripts/setup.sh
installs); skips, saying so, without either.
"""
import importlib.util
import os

import pytest

from tests.mininet.test_mininet import no_leftovers  # noqa: F401  (autouse: nothing left behind)

pytestmark = [
    pytest.mark.mininet,
    pytest.mark.skipif(os.geteuid() != 0, reason="Mininet tests need root: not root here, skipped"),
    pytest.mark.skipif(importlib.util.find_spec("jax") is None,
                       reason="jax is not installed (requirements-collective.txt): skipped"),
]

HOSTS = ("h0", "h1", "h2", "h3")
RATE_BPS = 30e6
B = 615_281  # ResNet-50's fp32 gradients (102,546,848 bytes) x 0.006, the testbed's scale


@pytest.fixture(scope="module")
def alone(tmp_path_factory):
    from emulation.mininet.collective import run_real_allreduce
    return run_real_allreduce(hosts=HOSTS, size_bytes=B, link_rate_bps=RATE_BPS,
                              outdir=tmp_path_factory.mktemp("alone"))


def test_every_rank_gets_the_sum(alone):
    assert len(alone["ranks"]) == len(HOSTS)
    assert all(r["sum_ok"] and r["size_bytes"] == B - B % 4 for r in alone["ranks"])


def test_the_real_collective_is_a_ring_carrying_the_replayed_bytes(alone):
    n = len(HOSTS)
    ring = 2 * (n - 1) / n * B
    bulk = {pair: b for pair, b in alone["pair_bytes"].items() if b > 0.1 * ring}
    senders = sorted(p.split("->")[0] for p in bulk)
    receivers = sorted(p.split("->")[1] for p in bulk)
    assert senders == receivers == sorted(HOSTS), alone["pair_bytes"]
    for pair, b in bulk.items():
        assert b == pytest.approx(ring, rel=0.10), (pair, b, ring)


def _ahead_of_rate_bytes(classes: int) -> int:
    """What a link's queues may send at once ahead of the rate: the bucket of the link's
    root class and of each class in use (HTB_BURST_KIB each)."""
    from emulation.mininet.qos import HTB_BURST_KIB
    return (1 + classes) * HTB_BURST_KIB * 1024


def test_no_ring_finishes_before_its_links_carry_it(alone):
    ring = 1.5 * B
    assert alone["completion_s"] >= (ring - _ahead_of_rate_bytes(1)) * 8 / RATE_BPS
    assert alone["completion_s"] < 3 * ring * 8 / RATE_BPS  # and not absurdly late


def test_a_competing_flow_in_the_highest_class_goes_first(tmp_path, alone):
    """A flow of about B/2 bytes (300 KiB) from h0 to h1 in class 0: on h0's uplink (and
    h1's downlink) the collective's bytes wait behind it, so it ends no earlier than
    1.5 B + 300 KiB at the link rate (less what the root's and the two classes' buckets
    let through at once), and later than alone."""
    from emulation.mininet.collective import Competitor, run_real_allreduce
    rec = run_real_allreduce(hosts=HOSTS, size_bytes=B, link_rate_bps=RATE_BPS,
                             outdir=tmp_path, competitor=Competitor("h0", "h1", 300 * 1024))
    assert rec["competitor"]["bytes"] == 300 * 1024
    assert rec["completion_s"] >= (1.5 * B + 300 * 1024 - _ahead_of_rate_bytes(2)) * 8 / RATE_BPS
    assert rec["completion_s"] > alone["completion_s"]
