"""Packet-level backend: Mininet network with HTB strict priority, host agents replaying the
trace over real TCP, a scheduler process running the registry's policies, tcpdump capture
(pcap files framed by offset, pcapng by scapy's raw readers, header fields unpacked with
``struct``: ``capture.frames`` and ``capture.read_port``), and the same records as the fluid
backend."""
