"""Tests of the packet-level backend: pure functions without root, and runs on the emulated network (as root)."""
