"""Pure-data topologies and flow paths."""
import pytest

from emulation.topology import TopologyConfig, big_switch, build_topology, leaf_spine
from workloads.config import ConfigError, build


def test_big_switch_path():
    t = big_switch(4, 1e9)
    assert [(l.src, l.dst) for l in t.path("h0", "h3")] == [("h0", "s0"), ("s0", "h3")]
    assert len(t.links) == 8 and all(l.rate_bps == 1e9 for l in t.links)


def test_leaf_spine_paths_and_oversubscription():
    t = leaf_spine(num_leaves=2, hosts_per_leaf=4, num_spines=2, link_rate_bps=10e9,
                   oversubscription=4.0)
    same = t.path("h0", "h1")
    assert [(l.src, l.dst) for l in same] == [("h0", "l0"), ("l0", "h1")]
    cross = t.path("h0", "h5")
    assert [l.src for l in cross] == ["h0", "l0", cross[2].src, "l1"]
    assert cross[1].dst in ("sp0", "sp1") and cross[1].dst == cross[2].src
    # 4 hosts x 10G / (2 spines x 5G) = 4:1
    assert cross[1].rate_bps == pytest.approx(5e9)
    assert t.path("h0", "h5") == cross  # deterministic


def test_unknown_host_and_config():
    with pytest.raises(ValueError, match="h9"):
        big_switch(2, 1e9).path("h0", "h9")
    with pytest.raises(ConfigError, match="topology.rate"):
        build(TopologyConfig, {"rate": 1}, "topology")
    with pytest.raises(ConfigError, match="does not have"):
        build_topology(TopologyConfig(num_hosts=2), ("h0", "h1", "h2"))
