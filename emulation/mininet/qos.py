"""Strict-priority egress queues with HTB, and the TOS marking that selects them.

Per egress interface: an HTB root at the link rate, one parent class, and K leaf classes
``1:(10+k)`` (k = 0 highest) with a small guaranteed ``rate`` (``MIN_SHARE`` of the link)
and ``ceil`` = link rate and HTB ``prio k``: spare capacity is lent to the lowest ``prio``
first, which is strict priority for traffic above the small guarantees. u32 filters map the IP TOS byte to the
class: class k is TOS ``(k + 1) << 2`` (DSCP k + 1); unmarked traffic falls into the
default class, the lowest priority. Small packets (IP total length < 128 bytes: TCP ACKs,
handshakes) go to the top class so a high-priority flow's ACKs never queue behind bulk
data. The kernel of the 2-core shared machine the backend is built for has HTB, pfifo and
u32, and no prio, netem, fq_codel or sfq qdisc (``zcat /proc/config.gz | grep -E
'NET_SCH_|NET_CLS_U32'``).
"""
from __future__ import annotations

import numpy as np

MAX_CLASSES = 8
# Per-class FIFO depth: 64 jumbo frames = 576 KB, 46 ms at 100 Mbit/s. Deep queues hold
# packets that were enqueued before a class change, which delays strict priority.
QUEUE_PACKETS = 64
# Guaranteed share of every class. Strict priority would starve lower classes completely;
# TCP then backs its retransmission timer off for seconds and idles long after the flow is
# promoted. A small guarantee keeps the ACK clock of starved flows alive (like pFabric's
# probe mode). 0.2% leaves the top class >= 98.6% of the link with all 8 classes busy; a
# 1% guarantee took 4.5% of the port from the top class on the testbed (run.json
# priority_isolation.lower_share) and was no better for fidelity (docs/testbed.md).
MIN_SHARE = 0.002
# Guaranteed share of the control class (ACKs are ~0.5% of the data rate at 9000-byte frames).
CONTROL_SHARE = 0.05
CONTROL_CLASSID = "1:9"
# every class's bucket (burst and cburst, KiB): a class that was idle may send this much
# at once, ahead of its rate
HTB_BURST_KIB = 20


def tos_for_class(k: int) -> int:
    """TOS byte that selects priority class k (0 = highest)."""
    if not 0 <= k < MAX_CLASSES:
        raise ValueError(f"priority class must be 0..{MAX_CLASSES - 1}, got {k}")
    return (k + 1) << 2


def class_of_tos(tos: int) -> int:
    """The priority class a TOS byte of ``tos_for_class`` selects."""
    k = (int(tos) >> 2) - 1
    if not 0 <= k < MAX_CLASSES:
        raise ValueError(f"TOS {tos:#04x} selects no priority class")
    return k


def queue_safe_classes(classes: np.ndarray, previous: list[int | None],
                       num_classes: int) -> np.ndarray:
    """The same strict-priority classes as ``classes`` (one per active coflow; their order
    and grouping kept, so the fluid model of them is unchanged), renumbered within
    0..num_classes-1 so that packets already queued do not hold up a coflow ranked above
    theirs. ``previous``: each coflow's class at the last push (None: a new coflow).

    Packets stay in the class they were sent in. A coflow put into a class where a coflow
    now ranked after it still has packets waits behind them (``docs/testbed.md``, row 30),
    so no coflow takes a class at or below the previous class of one ranked after it; a
    coflow moved up overtakes its own queued packets (reordering), so one that had a
    class keeps it where that is allowed. A new coflow takes the middle of the classes
    left between its neighbours, which keeps room above and below for the next ones.
    With as many groups as classes there is no freedom: the result is ``classes``' own
    dense numbering."""
    classes = np.asarray(classes, dtype=np.int64)
    if len(classes) == 0:
        return classes.copy()
    groups, dense = np.unique(classes, return_inverse=True)
    m = len(groups)
    if m > num_classes:
        raise ValueError(f"{m} classes do not fit in {num_classes}")
    olds = [[previous[i] for i in np.flatnonzero(dense == g) if previous[i] is not None]
            for g in range(m)]
    above = np.full(m, -1, dtype=np.int64)  # the highest previous class of the groups above
    for g in range(1, m):
        above[g] = max([above[g - 1]] + olds[g - 1])
    out = np.empty(m, dtype=np.int64)
    hi = num_classes - 1
    for g in range(m - 1, -1, -1):
        if olds[g]:
            c = min(max(max(olds[g]), g), hi)
        else:
            lo = min(max(g, above[g] + 1), hi)
            c = (lo + hi + 1) // 2
        out[g] = c
        hi = max(min([c] + olds[g]) - 1, g - 1)
    return out[dense]


def htb_commands(dev: str, rate_bps: float, num_classes: int) -> list[str]:
    """tc commands (without the leading 'tc') that set up ``dev``'s egress queues."""
    if not 1 <= num_classes <= MAX_CLASSES:
        raise ValueError(f"num_classes must be 1..{MAX_CLASSES}")
    rate = f"{int(rate_bps)}bit"
    floor = f"{max(8000, int(rate_bps * MIN_SHARE))}bit"
    default = 10 + num_classes - 1
    cmds = [
        f"qdisc del dev {dev} root",
        f"qdisc add dev {dev} root handle 1: htb default {default}",
        f"class add dev {dev} parent 1: classid 1:1 htb rate {rate} ceil {rate} quantum 9014 "
        f"burst {HTB_BURST_KIB}k cburst {HTB_BURST_KIB}k",
    ]
    control = f"{max(8000, int(rate_bps * CONTROL_SHARE))}bit"
    cmds += [
        f"class add dev {dev} parent 1:1 classid {CONTROL_CLASSID} htb rate {control} ceil {rate} "
        f"prio 0 quantum 9014 burst {HTB_BURST_KIB}k cburst {HTB_BURST_KIB}k",
        f"qdisc add dev {dev} parent {CONTROL_CLASSID} handle 9: pfifo limit {QUEUE_PACKETS}",
    ]
    for k in range(num_classes):
        cmds += [
            f"class add dev {dev} parent 1:1 classid 1:{10 + k} htb rate {floor} ceil {rate} "
            f"prio {k} quantum 9014 burst {HTB_BURST_KIB}k cburst {HTB_BURST_KIB}k",
            f"qdisc add dev {dev} parent 1:{10 + k} handle {10 + k}: pfifo limit {QUEUE_PACKETS}",
        ]
    # small packets (ACKs) to the control class first, then one filter per marked class
    cmds.append(f"filter add dev {dev} parent 1: protocol ip prio 1 u32 "
                f"match u16 0x0000 0xff80 at 2 flowid {CONTROL_CLASSID}")
    for k in range(num_classes):
        cmds.append(f"filter add dev {dev} parent 1: protocol ip prio 2 u32 "
                    f"match ip tos {tos_for_class(k):#04x} 0xfc flowid 1:{10 + k}")
    return cmds
