"""The network under test and its control plane: topologies, policies, fluid and Mininet backends."""
from __future__ import annotations


def mininet_available() -> tuple[bool, str]:
    """Whether packet-level runs can happen here, and if not, why (one line)."""
    return False, ("the packet-level backend (emulation/mininet, issue 4) is not built yet; "
                   "only fluid runs are available")
