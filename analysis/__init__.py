"""Reads only record files under a results directory: metrics, seaborn figures, summary."""
