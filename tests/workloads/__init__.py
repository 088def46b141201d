"""Tests of the workload generator, tuners, sync coflows, trace format and its readers, the workload command line."""
