"""The network under test and its control plane: topologies, policies, fluid and Mininet backends."""
from __future__ import annotations


def mininet_available() -> tuple[bool, str]:
    """Whether packet-level runs can happen here, and if not, why (one line)."""
    from emulation.mininet.net import require_root
    why = require_root()
    return why is None, why or ""
