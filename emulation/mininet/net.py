"""Build a Mininet network from a pure-data ``Topology``; tear it down on every exit path.

Switches are ``LinuxBridge`` (the kernel of the 2-core shared machine the backend is built
for has no Open vSwitch: ``zcat /proc/config.gz | grep OPENVSWITCH``), no controller; every
link is a veth pair. Every egress (each switch port and each host NIC) gets the HTB strict-priority
queues of ``qos.py`` at the link's ``rate_bps`` (times the run's rate scale). Offloads
(TSO/GSO/GRO) are switched off so HTB and the capture see wire-sized packets; links use
9000-byte jumbo frames so headers cost 0.7% of the rate and the packet rate stays low.
Hosts use a 5 ms minimum retransmission timeout, TCP without timestamps and a 2 MB
initial receive buffer (``TCP_RMEM``), set in their own namespaces.

Names carry a per-run prefix (``b<4 hex>``, claimed in the registry of ``leftovers.py``, so
two runs on one machine cannot clash): bridges and the switch-side veth ends live in the
root namespace. Hosts get 10.0.0.1.. in order.
The network is never attached to a real interface; only the run's own PIDs are killed.
Each network is registered while it exists (``leftovers.py``), so that what a process
killed outright leaves is cleared by the next run.
"""
from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from emulation.mininet.leftovers import claim, remove_links, unregister
from emulation.mininet.qos import htb_commands
from emulation.topology import TOPOLOGIES, Topology, TopologyConfig

MTU_BYTES = 9000  # jumbo frames: 99.3% payload efficiency (vs 95.6% at 1500), 6x fewer packets
TCP_RMEM = "4096 2097152 6291456"  # hosts' TCP receive buffer: min, initial, max (bytes)


def require_root() -> str | None:
    """None if packet-level runs can start here, else a one-line reason."""
    if os.geteuid() != 0:
        return "the Mininet backend needs root (network namespaces, veth, tc)"
    for tool in ("mnexec", "tc", "ip", "brctl", "ifconfig", "ethtool"):
        if shutil.which(tool) is None:
            return f"'{tool}' is not installed (run scripts/setup.sh as root)"
    try:
        import mininet.net  # noqa: F401
    except ImportError:
        return "the mininet Python package is missing (run scripts/setup.sh)"
    return None


def unbuildable(topo_cfg: TopologyConfig) -> str | None:
    """Why this backend cannot build ``topo_cfg`` faithfully, or None. Its switches are
    Linux bridges without spanning tree or per-flow paths: several paths between two
    hosts would be a bridging loop, and no flow would follow the path the fluid twin
    routes it over (``TopologyKind.multipath``)."""
    why = TOPOLOGIES[topo_cfg.kind].multipath(topo_cfg)
    if why is None:
        return None
    return (f"{why}: the packet-level backend builds one path between two hosts (its "
            "bridges would loop); use a topology with one path (1 spine here), or the "
            "fluid backend")


@dataclass
class EmulatedNet:
    """A started Mininet network plus the maps from topology names to Mininet nodes."""

    net: object
    prefix: str
    hosts: dict[str, object]
    ips: dict[str, str]
    switch_ports: list[str] = field(default_factory=list)
    stopped: bool = False
    entry: Path | None = None  # its registry entry (``leftovers.claim``)
    dirs: tuple[str, ...] = ()  # the caller's directories registered with it

    def host(self, name: str):
        return self.hosts[name]

    def receiver_ports(self) -> dict[str, str]:
        """Each host's switch-side interface -> the host's address (where a capture sees
        the packets the host receives)."""
        ports = {}
        for h, node in self.hosts.items():
            intf = node.intfList()[0]
            peer = intf.link.intf2 if intf.link.intf1 is intf else intf.link.intf1
            ports[peer.name] = self.ips[h]
        return ports

    def stop(self) -> None:
        """Stop the network (idempotent): bridges, veths and host shells go away."""
        if self.stopped:
            return
        self.stopped = True
        try:
            self.net.stop()
        finally:
            remove_links(self.prefix)
            for d in self.dirs:
                shutil.rmtree(d, ignore_errors=True)
            if self.entry is not None:
                unregister(self.entry)


def host_address(i: int) -> str:
    """The emulated address of the network's ``i``-th host (topology order)."""
    return f"10.0.{(i + 1) // 250}.{(i + 1) % 250 + 1}"


def build_net(topo: Topology, *, num_classes: int, dirs: tuple[str, ...] = ()) -> EmulatedNet:
    """Create and start the network; on any failure everything created is removed. The
    network (and ``dirs``, socket directories its caller made, removed with it by
    ``EmulatedNet.stop``) is registered first, so that the next run clears it should this
    process be killed outright (``leftovers``)."""
    from mininet.link import Link
    from mininet.log import setLogLevel
    from mininet.net import Mininet
    from mininet.node import Host
    from mininet.nodelib import LinuxBridge
    setLogLevel("error")
    prefix, entry = claim(dirs=dirs)
    net = None
    hosts, ips, sw = {}, {}, {}
    try:
        net = Mininet(controller=None, switch=LinuxBridge, host=Host, link=Link,
                      autoSetMacs=True, autoStaticArp=True, build=False, waitConnected=False)
        for i, h in enumerate(topo.hosts):
            ip = host_address(i)
            hosts[h] = net.addHost(f"{prefix}{h}", ip=f"{ip}/16")
            ips[h] = ip
        for s in topo.switches:
            sw[s] = net.addSwitch(f"{prefix}{s}")
        node = {**hosts, **sw}
        rate = {(l.src, l.dst): l.rate_bps for l in topo.links}
        done = set()
        for l in topo.links:
            key = frozenset((l.src, l.dst))
            if key in done:
                continue
            done.add(key)
            net.addLink(node[l.src], node[l.dst])
        net.build()
        net.start()
        switch_ports = []
        for (a, b), r in rate.items():
            na, nb = node[a], node[b]
            intf = na.connectionsTo(nb)[0][0]
            _shape(na, intf.name, r, num_classes)
            if a in sw:
                switch_ports.append(intf.name)
        for name, h in hosts.items():
            h.cmd("ip link set lo up")
            # a flow starved by strict priority backs off its retransmission timer; a 5 ms
            # floor (Linux default 200 ms) keeps it from idling long after it is promoted
            dev = h.intfList()[0].name
            h.cmd(f"ip route replace 10.0.0.0/16 dev {dev} src {ips[name]} rto_min 5ms")
            # no TCP timestamps (this host's namespace only): a demoted flow's segments wait
            # in a lower class while newer copies overtake them, and PAWS then discards the
            # late original of a segment the receiver still needs; without timestamps the
            # receiver's buffer autotuning lags, so it starts at 2 MB (docs/testbed.md, row 32)
            h.cmd(f"sysctl -qw net.ipv4.tcp_timestamps=0 'net.ipv4.tcp_rmem={TCP_RMEM}'")
        return EmulatedNet(net=net, prefix=prefix, hosts=hosts, ips=ips, switch_ports=switch_ports,
                           entry=entry, dirs=tuple(dirs))
    except BaseException:
        try:
            if net is not None:
                net.stop()
        finally:
            remove_links(prefix)
            unregister(entry)
            raise


def _shape(node, dev: str, rate_bps: float, num_classes: int) -> None:
    node.cmd(f"ip link set dev {dev} mtu {MTU_BYTES}")
    node.cmd(f"ethtool -K {dev} tso off gso off gro off >/dev/null 2>&1")
    for c in htb_commands(dev, rate_bps, num_classes):
        out = node.cmd(f"tc {c}")
        if out.strip() and not c.startswith("qdisc del") and "RTNETLINK" in out:
            raise RuntimeError(f"tc {c} on {node.name}: {out.strip()}")
