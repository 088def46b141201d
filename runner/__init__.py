"""The experiment runner behind ``run_experiments.py`` (the command line).

``runner.config``  which files are a suite, their expansion into runs (each checked with
                   the schema of ``schema``), the hashes that identify a run;
``runner.execute`` traces and lower bounds, one run into its directory, the whole set of
                   runs (process pool or Dask);
``runner.results_dir`` the state of a results directory: runs done or different, labels
                   brought up to date, what killed runners left (removed or put back);
``runner.verify``  ``--verify``: recompute committed fluid runs and compare them.
"""
