"""Variants table for docs/beamer.md from research/data/*.json: per variant and training
scenario the mean over seeds of avg SCT / online Sincronia's on the same trace, and the
worst p99 SCT / fair's.

    .venv/bin/python research/table.py research/data/*.json
    .venv/bin/python research/table.py --regimes research/data/regime_*.json   # tuner regimes
"""
from __future__ import annotations

import json
import sys

import pandas as pd


def load(files: list[str]) -> pd.DataFrame:
    rows = [{k: v for k, v in r.items() if k != "stages"} for f in files for r in json.load(open(f))]
    return pd.DataFrame(rows).drop_duplicates(["scen", "seed", "policy"], keep="last")


CONGESTION = ["base", "ps", "slow", "tiresias", "ls2", "rate25"]


def markdown(df: pd.DataFrame, ref: str = "sincronia", scenarios: list[str] = CONGESTION) -> str:
    avg = df.pivot_table(index=["scen", "seed"], columns="policy", values="avg")
    ratio = avg.div(avg[ref], axis=0)
    by_scen = ratio.groupby(level=0).mean()
    p99 = df.pivot_table(index=["scen", "seed"], columns="policy", values="p99")
    p99r = p99.div(p99["fair"], axis=0).max() if "fair" in p99 else None
    scens = [s for s in scenarios if s in by_scen.index]
    lines = ["| variant | " + " | ".join(scens) + " | mean (runs) | worst p99 / fair |",
             "|---|" + "---|" * (len(scens) + 2)]
    for pol in sorted(ratio.columns, key=lambda p: ratio[p].mean()):
        cells = [f"{by_scen.loc[s, pol]:.3f}" if pd.notna(by_scen.loc[s, pol]) else "-" for s in scens]
        n = int(ratio[pol].notna().sum())
        lines.append(f"| `{pol}` | " + " | ".join(cells) + f" | {ratio[pol].mean():.3f} ({n}) | "
                     + (f"{p99r[pol]:.2f}" if p99r is not None else "-") + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    args = sys.argv[1:]
    if args and args[0] == "--regimes":
        from lab import REGIMES
        print(markdown(load(args[1:]), scenarios=REGIMES))
    else:
        print(markdown(load(args)))
