"""Tests of run_experiments.py and its library: configs into runs, results directories, --verify."""
