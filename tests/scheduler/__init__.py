"""Tests of the policies, BSSI and the lower bound."""
