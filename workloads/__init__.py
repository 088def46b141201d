"""What traffic exists: DL models, HPO stage generators, sync coflows, trace format and I/O."""
