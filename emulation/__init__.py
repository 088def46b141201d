"""The network under test and its control plane: topologies, policies, fluid and Mininet backends."""
