"""Pure-data topologies and flow paths."""
import pytest

from emulation.topology import (TopologyConfig, big_switch, build_topology, host_span,
                                leaf_spine)
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


def test_host_span_is_natural_order_and_compact():
    # text order would put h10..h15 before h8, h9
    assert host_span(["h10", "h11", "h12", "h13", "h14", "h15", "h8", "h9"]) == "h8..h15"
    assert host_span(["h3", "h10", "h8", "h9"]) == "h3, h8..h10"
    assert host_span(["h4", "h5"]) == "h4..h5"
    assert host_span(["h7"]) == "h7"
    # 4 parts are all shown; a 5th part: the first three and the 2 hosts left
    assert host_span(["h1", "h3", "h5", "h7"]) == "h1, h3, h5, h7"
    assert host_span(["h9", "h7", "h5", "h3", "h1"]) == "h1, h3, h5 and 2 more"
    # the hosts a part stands for count: h1, h3, h5 shown; h7..h9 (3) and h20 left
    assert host_span(["h1", "h3", "h5", "h7", "h8", "h9", "h20"]) == "h1, h3, h5 and 4 more"
    assert host_span(["worker-b", "h2", "worker-a"]) == "h2, worker-a, worker-b"


SIXTEEN = tuple(f"h{i}" for i in range(16))


def test_missing_hosts_error_lists_them_all_in_order():
    """16 trace hosts on a big switch of 8: h8..h15 are missing, all eight of them."""
    with pytest.raises(ConfigError) as exc:
        build_topology(TopologyConfig(num_hosts=8), SIXTEEN)
    msg = str(exc.value)
    assert msg.startswith("topology.num_hosts = 8: "), msg
    assert "uses hosts h8..h15 (16 hosts)" in msg and "the big_switch with 8 hosts" in msg, msg
    assert "leave topology.num_hosts out" in msg and msg.endswith("at least 16"), msg
    # where the trace's hosts come from, when the caller knows
    with pytest.raises(ConfigError, match=r"h8\.\.h15 \(workload.num_hosts = 16\) that"):
        build_topology(TopologyConfig(num_hosts=8), SIXTEEN, hosts_key="workload.num_hosts = 16")


def test_a_leaf_spines_filler_hosts_do_not_count_as_the_traces():
    """num_hosts 6 at 4 per leaf: 2 leaves, 8 hosts, h6 and h7 only filling leaf l1 up.
    A trace of 8 hosts uses h6, h7: the 6 hosts asked for do not hold it."""
    eight = tuple(f"h{i}" for i in range(8))
    cfg = TopologyConfig(kind="leaf_spine", hosts_per_leaf=4, num_hosts=6)
    with pytest.raises(ConfigError) as exc:
        build_topology(cfg, eight)
    msg = str(exc.value)
    assert msg.startswith("topology.num_hosts = 6: "), msg
    assert "uses hosts h6..h7 (8 hosts)" in msg and "the leaf_spine with 6 hosts" in msg, msg
    assert "leave topology.num_hosts out" in msg and msg.endswith("at least 8"), msg
    assert len(build_topology(cfg, eight[:6]).hosts) == 8  # a 6-host trace fits


def test_missing_hosts_error_for_names_no_host_count_provides():
    # hosts h0, h5: num_hosts 0 = 2 hosts h0, h1; h5 needs 6 hosts
    with pytest.raises(ConfigError) as exc:
        build_topology(TopologyConfig(), ("h0", "h5"))
    msg = str(exc.value)
    assert msg.startswith("topology: ") and "uses hosts h5 (2 hosts)" in msg, msg
    assert "the big_switch with 2 hosts" in msg, msg
    assert msg.endswith("set topology.num_hosts to at least 6"), msg
    with pytest.raises(ConfigError) as exc:
        build_topology(TopologyConfig(), ("h0", "gpu-a", "gpu-b"))
    msg = str(exc.value)
    assert msg.startswith("topology: ") and "uses hosts gpu-a, gpu-b (3 hosts)" in msg, msg
    assert "the big_switch with 3 hosts" in msg and "names its hosts h0, h1, ..." in msg, msg
    assert msg.endswith("name the trace's hosts h0..h2"), msg
    assert "topology.num_hosts" not in msg, msg  # no host count would name them


def test_an_unknown_kind_is_refused_naming_the_kinds():
    from emulation.topology import TopologyConfig
    from workloads.config import ConfigError
    with pytest.raises(ConfigError, match=r'topology.kind: must be one of \["big_switch", "leaf_spine"\], got "torus"'):
        TopologyConfig(kind="torus").check()


def test_leaf_spine_routes_by_hand_and_says_when_it_has_several_paths():
    """Two leaves of two hosts, two spines: h0 -> h1 stays on leaf l0; h0 -> h2 crosses
    l0, the spine FNV-1a of "h0->h2" picks, and l1. Several spines are several paths,
    one is not."""
    from emulation.topology import TOPOLOGIES, TopologyConfig, leaf_spine
    t = leaf_spine(2, 2, 2, 1e9)
    assert [(l.src, l.dst) for l in t.path("h0", "h1")] == [("h0", "l0"), ("l0", "h1")]
    h = 2166136261
    for ch in "h0->h2":
        h = ((h ^ ord(ch)) * 16777619) & 0xFFFFFFFF
    spine = f"sp{h % 2}"
    assert [(l.src, l.dst) for l in t.path("h0", "h2")] == [
        ("h0", "l0"), ("l0", spine), (spine, "l1"), ("l1", "h2")]
    kind = TOPOLOGIES["leaf_spine"]
    assert kind.multipath(TopologyConfig(kind="leaf_spine", num_spines=1)) is None
    assert "2 spines" in kind.multipath(TopologyConfig(kind="leaf_spine", num_spines=2))
    assert TOPOLOGIES["big_switch"].multipath(TopologyConfig()) is None
