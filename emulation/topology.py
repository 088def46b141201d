"""Topologies as data: hosts, switches and directed links with ``rate_bps``, built by
one small class per kind, with the one routing function both backends use.

A ``Topology`` is built once and translated by each backend (the fluid simulator indexes
its links; the Mininet backend builds veths and HTB queues from it). Every physical cable
is two directed links, one per direction, each with its own capacity. A flow's path is
``Topology.path_indices``: its kind's ``route`` (the switches between the hosts).

Kinds (``TOPOLOGIES``, as Mininet's ``Topo`` subclasses; a new one is a ``TopologyKind``
subclass added there):

- ``BigSwitch`` (``big_switch(n, rate)``): n hosts on one non-blocking switch (the coflow
  literature's model): a flow uses its sender's uplink and its receiver's downlink.
- ``LeafSpine`` (``leaf_spine(...)``): racks of hosts on leaf switches, every leaf wired to
  every spine; ``oversubscription`` = (hosts per leaf x host rate) / (spines x uplink
  rate). Paths are host -> leaf -> spine -> leaf -> host with the spine chosen by a
  deterministic hash of (src, dst) (ECMP without randomness); same-rack flows stay on the
  leaf. With several spines two hosts in different racks have several paths
  (``TopologyKind.multipath``).

``build_topology`` turns a ``[topology]`` table into one and owns the error for a trace
naming hosts the topology lacks; ``host_span`` writes a list of host names compactly in
natural order (``h3, h8..h15``) for that error and for the suite runner's notes.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar

from workloads.config import ConfigError, as_toml


@dataclass(frozen=True)
class Link:
    """A directed link ``src -> dst`` with capacity ``rate_bps`` (bits per second)."""

    src: str
    dst: str
    rate_bps: float


@dataclass(frozen=True)
class Topology:
    """Hosts, switches and directed links; ``kind`` and ``params`` say how it was built."""

    kind: str
    hosts: tuple[str, ...]
    switches: tuple[str, ...]
    links: tuple[Link, ...]
    params: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        index = {(l.src, l.dst): i for i, l in enumerate(self.links)}
        object.__setattr__(self, "_index", index)
        host_switch = {}
        for l in self.links:
            if l.src in self.hosts:
                host_switch[l.src] = l.dst
        object.__setattr__(self, "_host_switch", host_switch)

    def link_index(self, src: str, dst: str) -> int:
        return self._index[(src, dst)]

    def host_switch(self, host: str) -> str:
        """The switch ``host`` is wired to."""
        return self._host_switch[host]

    def path(self, src: str, dst: str) -> list[Link]:
        """The directed links a flow from host ``src`` to host ``dst`` crosses, in order."""
        return [self.links[i] for i in self.path_indices(src, dst)]

    def path_indices(self, src: str, dst: str) -> list[int]:
        """Like ``path`` but link indices into ``links``: the hops of its kind's
        ``route``."""
        hs = self._host_switch
        if src not in hs or dst not in hs:
            missing = src if src not in hs else dst
            raise ValueError(f"host {missing!r} is not in the {self.kind} topology")
        hops = (src, *TOPOLOGIES[self.kind].route(self, src, dst), dst)
        ix = self._index
        return [ix[(u, v)] for u, v in zip(hops, hops[1:])]


def _stable_hash(a: str, b: str) -> int:
    h = 2166136261
    for ch in f"{a}->{b}":
        h = ((h ^ ord(ch)) * 16777619) & 0xFFFFFFFF
    return h



def with_rates_scaled(topology: Topology, factor: float) -> Topology:
    """``topology`` with every link's rate times ``factor`` (same hosts, paths, kind)."""
    links = tuple(Link(l.src, l.dst, l.rate_bps * factor) for l in topology.links)
    return Topology(kind=topology.kind, hosts=topology.hosts, switches=topology.switches,
                    links=links, params=dict(topology.params))

def big_switch(num_hosts: int, link_rate_bps: float, host_names: tuple[str, ...] | None = None
               ) -> Topology:
    """``num_hosts`` hosts ``h0..`` on switch ``s0``; every host link ``link_rate_bps`` each way."""
    if num_hosts < 1 or link_rate_bps <= 0:
        raise ValueError("big_switch needs num_hosts >= 1 and link_rate_bps > 0")
    hosts = host_names or tuple(f"h{i}" for i in range(num_hosts))
    links = []
    for h in hosts:
        links += [Link(h, "s0", link_rate_bps), Link("s0", h, link_rate_bps)]
    return Topology("big_switch", tuple(hosts), ("s0",), tuple(links),
                    {"num_hosts": len(hosts), "link_rate_bps": link_rate_bps})


def leaf_spine(num_leaves: int, hosts_per_leaf: int, num_spines: int, link_rate_bps: float,
               oversubscription: float = 1.0) -> Topology:
    """Two-tier leaf-spine; uplink rate = hosts_per_leaf * rate / (spines * oversubscription)."""
    if min(num_leaves, hosts_per_leaf, num_spines) < 1 or link_rate_bps <= 0 or oversubscription <= 0:
        raise ValueError("leaf_spine needs positive sizes, rate and oversubscription")
    uplink = hosts_per_leaf * link_rate_bps / (num_spines * oversubscription)
    hosts, links = [], []
    leaves = [f"l{i}" for i in range(num_leaves)]
    spines = [f"sp{i}" for i in range(num_spines)]
    for li, leaf in enumerate(leaves):
        for j in range(hosts_per_leaf):
            h = f"h{li * hosts_per_leaf + j}"
            hosts.append(h)
            links += [Link(h, leaf, link_rate_bps), Link(leaf, h, link_rate_bps)]
        for sp in spines:
            links += [Link(leaf, sp, uplink), Link(sp, leaf, uplink)]
    return Topology("leaf_spine", tuple(hosts), tuple(leaves + spines), tuple(links),
                    {"num_leaves": num_leaves, "hosts_per_leaf": hosts_per_leaf,
                     "spines": tuple(spines), "link_rate_bps": link_rate_bps,
                     "uplink_rate_bps": uplink, "oversubscription": oversubscription})


class TopologyKind:
    """One kind of topology (as Mininet's ``Topo`` subclasses): how a ``[topology]`` table
    becomes hosts, switches and links (``build``), the switches a flow crosses between
    its hosts (``route``), what gives two hosts several such paths (``multipath``, None if
    nothing does: a backend that forwards by learning, as Linux bridges do, cannot pin a
    flow to one of them), and the facts a run records about it (``facts``)."""

    name: ClassVar[str]
    help: ClassVar[str]

    def build(self, cfg: TopologyConfig, num_hosts: int) -> Topology:
        raise NotImplementedError

    def route(self, topo: Topology, src: str, dst: str) -> tuple[str, ...]:
        raise NotImplementedError

    def multipath(self, cfg: TopologyConfig) -> str | None:
        return None

    def facts(self, topo: Topology) -> dict[str, Any]:
        return dict(topo.params)

    def describe(self, cfg: TopologyConfig) -> str:
        """The kind's own parameters for a run's header line ("" if none)."""
        return ""

    def notes(self, cfg: TopologyConfig, topo: Topology, *, wanted: int,
              source: str) -> list[str]:
        """Notes on what ``topo``, built from ``cfg`` for ``wanted`` hosts (their number
        from ``source``), has that no flow uses."""
        return []


class BigSwitch(TopologyKind):
    name = "big_switch"
    help = "every host on one non-blocking switch"

    def build(self, cfg: TopologyConfig, num_hosts: int) -> Topology:
        return big_switch(num_hosts, cfg.link_rate_bps)

    def route(self, topo: Topology, src: str, dst: str) -> tuple[str, ...]:
        return (topo.host_switch(src),)


class LeafSpine(TopologyKind):
    name = "leaf_spine"
    help = "racks of hosts on leaf switches, every leaf wired to every spine"

    def build(self, cfg: TopologyConfig, num_hosts: int) -> Topology:
        leaves = -(-num_hosts // cfg.hosts_per_leaf)
        return leaf_spine(leaves, cfg.hosts_per_leaf, cfg.num_spines, cfg.link_rate_bps,
                          cfg.oversubscription)

    def route(self, topo: Topology, src: str, dst: str) -> tuple[str, ...]:
        a, b = topo.host_switch(src), topo.host_switch(dst)
        if a == b:
            return (a,)
        spines = topo.params["spines"]
        return (a, spines[_stable_hash(src, dst) % len(spines)], b)

    def multipath(self, cfg: TopologyConfig) -> str | None:
        if cfg.num_spines == 1:
            return None
        return (f"a leaf-spine of {cfg.num_spines} spines (topology.num_spines, --spines) "
                "has one path per spine between hosts in different racks")

    def facts(self, topo: Topology) -> dict[str, Any]:
        """The parameters, with the number of spines instead of their names."""
        facts = {k: v for k, v in topo.params.items() if k != "spines"}
        return {**facts, "num_spines": len(topo.params["spines"])}

    def describe(self, cfg: TopologyConfig) -> str:
        return (f", {cfg.hosts_per_leaf} hosts per leaf, {cfg.num_spines} spines, "
                f"oversubscription {cfg.oversubscription:g}")

    def notes(self, cfg: TopologyConfig, topo: Topology, *, wanted: int,
              source: str) -> list[str]:
        """The hosts added to fill the last leaf (``hosts_per_leaf`` does not divide the
        host count), and a single leaf, whose spines no flow crosses."""
        parts = []
        leaves = topo.params["num_leaves"]
        if len(topo.hosts) > wanted:
            added = list(topo.hosts[wanted:])
            last = topo.switches[leaves - 1]
            parts.append(f"topology.hosts_per_leaf = {cfg.hosts_per_leaf} does not divide the "
                         f"{wanted} hosts ({source}): the leaf_spine has {leaves} "
                         f"{'leaf' if leaves == 1 else 'leaves'}, "
                         f"{len(topo.hosts)} hosts; "
                         + (f"the {len(added)} added hosts {host_span(added)} on leaf {last} "
                            "carry" if len(added) > 1 else f"the added host "
                            f"{host_span(added)} on leaf {last} carries")
                         + f" no traffic, and {last}'s uplinks are sized for "
                         f"{cfg.hosts_per_leaf} hosts like every leaf's")
        if leaves == 1:
            parts.append(f"the leaf_spine has one leaf (topology.hosts_per_leaf = "
                         f"{cfg.hosts_per_leaf} holds all {wanted} hosts): no flow crosses a "
                         "spine, so topology.oversubscription and topology.num_spines change "
                         "nothing")
        return parts


# kind name -> kind (read-only)
TOPOLOGIES = MappingProxyType({k.name: k() for k in (BigSwitch, LeafSpine)})


@dataclass(frozen=True)
class TopologyConfig:
    """The ``[topology]`` table. ``num_hosts`` = 0 takes the trace's host count."""

    kind: str = "big_switch"  # a name in TOPOLOGIES
    num_hosts: int = 0
    link_rate_bps: float = 10e9
    hosts_per_leaf: int = 4
    num_spines: int = 2
    oversubscription: float = 1.0

    def check(self, where: str = "topology") -> None:
        if self.kind not in TOPOLOGIES:
            raise ConfigError(f"{where}.kind: must be one of {as_toml(list(TOPOLOGIES))}, "
                              f"got {as_toml(self.kind)}")
        if self.link_rate_bps <= 0:
            raise ConfigError(f"{where}.link_rate_bps: must be > 0")
        if self.num_hosts < 0:
            raise ConfigError(f"{where}.num_hosts: must be >= 0")
        if self.oversubscription <= 0:
            raise ConfigError(f"{where}.oversubscription: must be > 0")
        for key in ("hosts_per_leaf", "num_spines"):
            if getattr(self, key) < 1:
                raise ConfigError(f"{where}.{key}: must be >= 1, got {getattr(self, key)}")


def build_topology(cfg: TopologyConfig, trace_hosts: tuple[str, ...], *,
                   hosts_key: str | None = None) -> Topology:
    """The topology ``cfg`` describes, checked to hold every host the trace names
    (``trace_hosts``) among its first ``num_hosts`` (the hosts a leaf-spine adds to fill
    its last leaf carry no traffic). ConfigError if not, naming ``topology.num_hosts`` when set, the
    missing hosts (``host_span``), ``hosts_key`` (where the trace's hosts come from, e.g.
    ``workload.num_hosts = 16``; default: their count) and the fix. A caller that knows
    where ``cfg.num_hosts`` was set puts that in front (``mine.toml: topology.num_hosts =
    8: ...``)."""
    n = cfg.num_hosts or len(trace_hosts)
    topo = TOPOLOGIES[cfg.kind].build(cfg, n)
    have = set(topo.hosts[:n])  # a leaf-spine's filler hosts past n are not the trace's
    missing = [h for h in trace_hosts if h not in have]
    if missing:
        raise ConfigError(_missing_hosts_message(
            cfg, n, trace_hosts, missing, hosts_key=hosts_key or f"{len(trace_hosts)} hosts"))
    return topo


def _missing_hosts_message(cfg: TopologyConfig, n: int, trace_hosts: tuple[str, ...],
                           missing: list[str], *, hosts_key: str) -> str:
    """``build_topology``'s error: which hosts are missing (of the ``n`` hosts asked for),
    and the fix."""
    what = (f"the trace uses hosts {host_span(missing)} ({hosts_key}) that the {cfg.kind} "
            f"with {n} hosts does not have")
    head = f"topology.num_hosts = {cfg.num_hosts}: " if cfg.num_hosts else "topology: "
    index = [_host_index(h) for h in missing]
    if None in index:  # names no num_hosts can provide
        return (f"{head}{what}; a topology names its hosts h0, h1, ...: name the trace's "
                f"hosts h0..h{len(trace_hosts) - 1}")
    needed = max(index) + 1
    if cfg.num_hosts and needed <= len(trace_hosts):
        return (f"{head}{what}; leave topology.num_hosts out (0 = as many hosts as the "
                f"trace) or set it to at least {needed}")
    return f"{head}{what}; set topology.num_hosts to at least {needed}"


def _host_index(name: str) -> int | None:
    """``i`` for a host named ``h<i>`` (the topologies' names), else None."""
    return int(name[1:]) if name[:1] == "h" and name[1:].isdigit() else None


def _natural_key(name: str) -> list:
    """Sort key putting ``h9`` before ``h10``: the name's digit runs compare as numbers."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


HOST_SPAN_MAX_PARTS = 4  # host_span: more parts than this end in "and N more"


def host_span(hosts) -> str:
    """Host names compactly in natural order: runs of consecutive ``h<i>`` as ``h8..h15``,
    the rest one by one (``h3, h5, h8..h15``); past ``HOST_SPAN_MAX_PARTS`` parts, the
    first three and how many hosts are left (``h1, h3, h5 and 4 more``)."""
    names = sorted(set(hosts), key=_natural_key)
    runs: list[list[str]] = []
    for name in names:
        i = _host_index(name)
        last = runs[-1][-1] if runs else None
        j = _host_index(last) if last is not None else None
        if i is not None and j is not None and i == j + 1:
            runs[-1].append(name)
        else:
            runs.append([name])
    parts: list[tuple[str, int]] = []  # (text, hosts it stands for)
    for run in runs:
        if len(run) >= 2:
            parts.append((f"{run[0]}..{run[-1]}", len(run)))
        else:
            parts += [(name, 1) for name in run]
    if len(parts) > HOST_SPAN_MAX_PARTS:
        left = sum(count for _, count in parts[3:])
        return ", ".join(text for text, _ in parts[:3]) + f" and {left} more"
    return ", ".join(text for text, _ in parts)


def add_topology_args(ap, *, hosts_per_leaf: int, spines: int, oversubscription: float) -> None:
    """The backends' shared command-line options for the topology (not the link rate)."""
    kinds = "; ".join(f"{k.name}: {k.help}" for k in TOPOLOGIES.values())
    ap.add_argument("--topology", choices=list(TOPOLOGIES), default="big_switch",
                    help=f"{kinds} (default %(default)s)")
    ap.add_argument("--hosts-per-leaf", type=int, default=hosts_per_leaf, metavar="N",
                    help="leaf-spine: hosts per leaf switch (default %(default)s)")
    ap.add_argument("--spines", type=int, default=spines, metavar="N",
                    help="leaf-spine: spine switches (default %(default)s)")
    ap.add_argument("--oversubscription", type=float, default=oversubscription, metavar="X",
                    help="leaf-spine: (hosts per leaf x host rate) / (spines x uplink rate); "
                         "1 = non-blocking (default %(default)g)")
