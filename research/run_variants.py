"""Re-run one named set of variants on the training scenarios into research/data/SET.json.

    .venv/bin/python research/run_variants.py crit_alpha          # ~36 fluid runs
    .venv/bin/python research/table.py research/data/*.json       # the docs/beamer.md table

Each set is what one round of the search tried (docs/beamer.md, "Variants").
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from lab import HERE, REGIMES, grid
from workloads.cli import ArgumentParser  # one-line usage errors

SETS = {  # name -> (candidates [(policy, params)], scenarios)
    "baselines": ([(p, {}) for p in ("beamer-sbssi", "sincronia", "fair", "fifo_lm", "varys")],
                  ["base", "ps", "slow", "tiresias", "ls2", "rate25"]),
    "app_srpt": ([("x-app-srpt", {"down": k}) for k in ("oracle", "cp", "bytes")]
                 + [("x-app-srpt", {"down": "oracle", "jobs": True})], ["base", "ps", "slow"]),
    "stage_bssi_downstream": ([("x-sbssi-down", {"dl": True, "how": h})
                               for h in ("oracle", "scale", "uniform")]
                              + [("x-sbssi-down", {"dl": True, "how": "oracle", "cp_link": True})],
                              ["base", "ps", "slow"]),
    "crit_alpha": ([("x-crit", {"down": "cp", "alpha": a}) for a in (0.0, 0.5, 1.0)],
                   ["base", "ps", "slow"]),
    "crit_params": ([("x-crit", {"slack_w": 0.01}), ("x-crit", {"slack_w": 0.3}),
                     ("x-crit", {"beta": 1.0}), ("x-crit", {"beta": 4.0})], ["base", "ps", "slow"]),
    "ablation": ([("x-crit", {"slack_w": 1.0}), ("beamer", {})], ["base", "ps", "slow"]),
    "online": ([("x-crit", {"online": True})], ["base", "ps", "slow"]),
    # tuner regimes (random search, ASHA, SHA, mixed tenants), docs/beamer.md "Regimes"
    "regime_baselines": ([(p, {}) for p in ("sincronia", "fair", "beamer-coflow", "beamer-sbssi",
                                            "varys")], REGIMES),
    "regime_stage_level": ([("x-crit-stage", {}), ("x-crit-stage", {"loads": "all"}),
                            ("x-job-bssi", {}), ("x-wspt", {})],
                           ["rs8", "asha", "sha", "mix", "base", "rs8burst"]),
    "regime_hybrid": ([("x-hybrid", {"chain": True}), ("x-hybrid", {"chain": True, "free": "wspt"}),
                       ("x-hybrid", {"chain": True, "mode": "first"}),
                       ("x-hybrid", {"chain": True, "online": True}),
                       ("x-hybrid", {"chain": True, "free": "wspt-stage"})], REGIMES),
    "regime_free_order": ([("x-hybrid", {"chain": True, "free": f, "online": True, **extra})
                           for f, extra in (("wspt", {}), ("split", {}), ("split", {"single": True}),
                                            ("sbssi-active", {}), ("sbssi-cur", {}))]
                          + [("x-wspt", {"gamma": g}) for g in (0.5, 2.0)], REGIMES),
    "regime_final": ([("beamer", {})], REGIMES),
    "regime_estimate": ([("x-beamer-est", {"est": e}) for e in ("inflight", "scaled", "max-scaled", "full", "max")],
                        REGIMES),
    "regime_sticky": ([("x-beamer-sticky", {"keep": k}) for k in (0.0, 0.1, 0.25, 0.5, 1.0, 2.0)],
                      REGIMES),
    "regime_estimate_whole": ([("x-beamer-est", {"est": e}) for e in ("whole", "rest")], REGIMES),
}


def main(argv=None) -> int:
    ap = ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("set", choices=sorted(SETS))
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args(argv)
    pols, scens = SETS[args.set]
    res = grid(pols, scens, jobs=args.jobs)
    out = HERE / "data" / f"{args.set}.json"
    out.write_text(json.dumps(res))
    print(f"wrote {out} ({len(res)} runs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
