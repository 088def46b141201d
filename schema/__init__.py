"""The schema of an experiment TOML, shared by the suite runner (``run_experiments.py``,
``runner``) and the single-run command lines (``python -m workloads``, ``python -m
emulation.fluid``, ``python -m emulation.mininet``).

``schema.experiment``  the tables a file may hold (``TABLES``) and the ``[experiment]``
                       table (``ExperimentSection``, its values checked when built);
``schema.sweep``       ``[sweep]`` and ``[full]``: a file's sweep points, the
                       ``[workload]`` keys no tuner reads, swept-over file values checked;
``schema.point``       one sweep point checked before any run: its first error, its
                       ``[cluster]``, the topology's hosts against the trace's;
``schema.cli``         ``--config FILE`` of the single-run command lines: their defaults,
                       the keys a run applies, which value wins.

Nothing here runs anything or writes a file; it imports no runner, backend or analysis
module (the policy registry, ``emulation.topology`` and the packet-aware model's
calibration reader only to check values).
"""
