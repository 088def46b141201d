"""Tests of what both backends share: the cluster state, the view, topologies, records, names, the backends' registry, admission and ASHA during a run."""
