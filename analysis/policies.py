"""Which policies a report shows, in which order and style, and the reference of its ratios.

Every table and figure takes its policies from the records (never from a fixed list):

- ``policy_order``: the registry order of ``emulation.scheduler.POLICIES`` (a policy added
  there appears in its place), then names the registry does not know (records of a
  policy since removed or renamed) in alphabetical order;
- ``choose_reference``: the policy every ratio is taken against: the one asked for
  (``--reference``), else ``beamer`` when the records have it, else the first policy of
  the records in ``policy_order``;
- ``styles``: one colour, marker and line style per policy name, the same in every
  figure of a report: the registry index picks them (so a policy keeps its colour when
  others are left out of an experiment); unknown names follow the registry's. No
  colour is a grey or black, the colours of the figures' reference lines, and every
  colour stands out on white (``MIN_CONTRAST``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

DEFAULT_REFERENCE = "beamer"

# 19 colours that stay apart: seaborn's "colorblind" palette (the registry's first eight),
# then a deeper pink (the ninth) and a violet, the colours of its "dark" palette and one
# of its own; no greys (hex, so the figure data
# can record them); then they repeat with other markers and dashes. No policy is grey or
# black: figures draw references (the reference policy's CDF, the line at 1, y = x) in
# black and grey bands mark criteria. Every colour is visible as a thin line or an open
# marker on white: contrast with white at least MIN_CONTRAST (WCAG ratio), so
# "colorblind"'s light pink (#fbafe4, 1.70) and yellow (#ece133, 1.37) are replaced by an
# olive (#8c8c00, 3.58, seventh: `fair`) and a deeper pink (#e7298a, 4.13). After the
# registry's nine, a violet (#5500ff: at least 35 CIELAB units from each of them, so a
# policy a user adds stands apart), then the colours with CIELAB lightness of at least MIN_LIGHTNESS (a line
# of theirs stands apart from a black reference line) come first, each the one furthest
# (CIELAB distance) from every colour before it and from black and grey; the dark ones
# last, in the same way.
MIN_CONTRAST = 2.0
MIN_LIGHTNESS = 35.0
_COLOURS = ("#0173b2", "#de8f05", "#029e73", "#d55e00", "#cc78bc", "#ca9161", "#8c8c00",
            "#56b4e9",
            "#e7298a", "#5500ff", "#12711c", "#006374", "#a23582", "#b1400d", "#b8850a",
            "#001c7f", "#592f0d", "#591e71", "#8c0800")
# no "v": a downward triangle marks an interval cut at the axis (analysis.plots.CUT_MARKER)
_MARKERS = ("o", "s", "^", "D", "p", "P", "X", "<", ">", "*")
_DASHES = ("-", "--", "-.", ":", (0, (5, 1, 1, 1, 1, 1)), (0, (10, 3)), (0, (5, 1.5)))


@dataclass(frozen=True)
class Style:
    colour: str
    marker: str
    linestyle: str | tuple


def registry() -> list[str]:
    """The policy names of ``emulation.scheduler.POLICIES``, in its order."""
    from emulation.scheduler import POLICIES
    return list(POLICIES)


def policy_order(policies: Iterable[str]) -> list[str]:
    """The distinct names of ``policies``: registry order, then unknown names sorted."""
    present = {str(p) for p in policies if isinstance(p, str)}
    reg = registry()
    return [p for p in reg if p in present] + sorted(present - set(reg))


def choose_reference(policies: Iterable[str], requested: str | None = None) -> str:
    """The reference policy of the ratios (see the module docstring); ValueError if
    ``requested`` has no runs among ``policies`` or there are no policies at all."""
    order = policy_order(policies)
    if not order:
        raise ValueError("no policies in the records")
    if requested is not None:
        if requested not in order:
            raise ValueError(f"--reference {requested}: no runs of that policy in the records "
                             f"(policies: {', '.join(order)})")
        return requested
    return DEFAULT_REFERENCE if DEFAULT_REFERENCE in order else order[0]


def styles(policies: Iterable[str]) -> dict[str, Style]:
    """Colour, marker and line style per policy name (registry index; unknown names after)."""
    reg = registry()
    order = policy_order(policies)
    unknown = [p for p in order if p not in reg]
    out = {}
    for p in order:
        i = reg.index(p) if p in reg else len(reg) + unknown.index(p)
        out[p] = Style(colour=_COLOURS[i % len(_COLOURS)], marker=_MARKERS[i % len(_MARKERS)],
                       linestyle=_DASHES[i % len(_DASHES)])
    return out


def sort_by_policy(df, keys: Iterable[str] = ("experiment", "scenario")):
    """``df`` with its rows ordered by ``keys`` (first appearance kept) and, within them,
    by ``policy_order`` of its ``policy`` column."""
    if df.empty or "policy" not in df:
        return df
    rank = {p: i for i, p in enumerate(policy_order(df["policy"]))}
    keys = [k for k in keys if k in df]
    first = {k: {v: i for i, v in enumerate(dict.fromkeys(df[k]))} for k in keys}
    sort_cols = [df[k].map(first[k]) for k in keys] + [df["policy"].map(rank)]
    order = sorted(range(len(df)), key=lambda i: tuple(c.iloc[i] for c in sort_cols))
    return df.iloc[order].reset_index(drop=True)


def reference_note(reference: str, requested: str | None) -> str:
    """One sentence for the summary: which policy the ratios are taken against, and why."""
    why = ("set with `--reference`" if requested is not None else
           f"the default: `{DEFAULT_REFERENCE}` when the records have it, else the first "
           "policy in the registry order; change it with `--reference NAME`")
    return f"Reference policy of every ratio (`{reference}` / other, < 1: `{reference}` faster): `{reference}` ({why})."


__all__ = ["DEFAULT_REFERENCE", "Style", "registry", "policy_order", "choose_reference",
           "styles", "sort_by_policy", "reference_note"]
