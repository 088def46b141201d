"""Wording shared by the summary's sections."""
from __future__ import annotations

import math

import pandas as pd


def cell(v, fmt: str) -> str:
    """A table cell: the formatted number, or '-' when there is none (no NaN in tables)."""
    return "-" if v is None or (isinstance(v, float) and math.isnan(v)) or pd.isna(v) else format(v, fmt)


def count(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and the noun in the number ``n`` asks for: ``1 scenario``, ``2 scenarios``,
    ``1,223 runs`` (``plural``: when it is not ``noun`` + s)."""
    n = int(n)
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


# what the runs behind one ratio are (``analysis.metrics.normalised``'s ``unit``)
UNIT_WORDS = {"seeds": "per seed", "repetitions": "per repetition of one seed",
              "runs": "per seed and repetition"}


def units_by_experiment(table) -> dict[str, list[str]]:
    """The experiments of a ``normalised`` table grouped by what their ratios pair: ``{"per
    seed": [...], "per repetition of one seed": [...]}`` (an experiment whose rows have
    several units counts as ``per seed and repetition``), in order of first appearance."""
    unit = table.groupby("experiment", sort=False)["unit"].agg(
        lambda u: u.iloc[0] if u.nunique() == 1 else "runs")
    groups: dict[str, list[str]] = {}
    for exp, u in unit.items():
        groups.setdefault(UNIT_WORDS.get(u, "per run"), []).append(exp)
    return groups


__all__ = ["count", "UNIT_WORDS", "units_by_experiment"]
