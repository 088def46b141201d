"""Tests of the flow-level simulator, its compiled kernels, its command line, the packet-aware model."""
