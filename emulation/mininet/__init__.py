"""Packet-level backend: Mininet network with HTB strict priority, host agents replaying the
trace over real TCP, a scheduler process running the registry's policies, tcpdump capture
parsed with scapy, and the same records as the fluid backend."""
