"""The network under test and its control plane: topologies, policies, the one event loop,
the backends' registry (``emulation/backends.py``) and the fluid and Mininet backends."""
