"""Seaborn / matplotlib figures from record tables.

Each figure is saved as PNG and PDF, and the numbers it draws as ``<stem>.csv`` beside
them (one row per drawn bar, point or line, with the policy and its colour), so every
figure can be checked without reading the picture. Policies come from the data, in
registry order (``analysis.policies``), with one colour, marker and line style per policy
name across all figures; no policy colour is grey or black, and reference lines (the
reference policy's CDF, the line at 1, y = x) are black and dashed.

Every ratio of one policy to another is the reference policy's over the other's (< 1:
the reference is faster), and the axis label says so (``ratio_label``). Every bar or point
figure of ratios (the normalised avg SCT bars here, the regime and paired figures of
``analysis.regimes`` and ``analysis.paired``, the reproduction bars) has one y axis, the
ratio axis (``ratio_axis``): log scale centred on 1 (limits 1/k..k from the data with a
margin, ``ratio_axis_limits``), plain-ratio ticks (``ratio_ticks``: 0.5, 0.8, 0.9, 1,
1.1, 1.25, 2 ...) and the line at 1; there a ratio bar runs from the line at 1 to its
value, up above 1 and down below it (``ratio_bar_extents``: its length is the ratio's
distance from 1 whatever the limits), and each normalised bar's value is printed above
the bar and its interval (``label_bar_values``), the axis widened about 1 to hold the
labels. The sweep figure's ratio panel is a line figure on a linear axis.

Every error bar says in the figure what it is; none is drawn from a single value, and the
title says when an interval comes from 2 values (t multiplier 12.7: very wide). An
interval whose lower end the axis cannot show (a symmetric t-interval of a positive
ratio can reach 0 or below) is drawn down to the axis and ends there in ``CUT_MARKER``,
with a note in the title, never cut silently (``interval_ends``, ``draw_intervals``); a
linear axis of a ratio or a time starts at 0 whenever an interval reaches below 0. The
figure's CSV keeps every interval as computed. Every file ``_save`` writes is recorded
(``analysis.load.note_written``), so that the report can remove the figures it no longer
draws.
"""
from __future__ import annotations

from pathlib import Path

import matplotlib.ticker  # binds matplotlib too

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from analysis.load import note_written  # noqa: E402
from analysis.metrics import AVG_SCT_RATIO  # noqa: E402
from analysis.policies import Style, policy_order, styles as policy_styles  # noqa: E402

# a ratio axis (log scale, centred on 1) reaches RATIO_MARGIN times beyond the value or
# interval end furthest from 1, and at least MIN_RATIO_REACH x RATIO_MARGIN
RATIO_MARGIN = 1.1
MIN_RATIO_REACH = 1.05
# it reaches at most this many times below its smallest value for an interval's lower end;
# an end under the axis is drawn at the axis with CUT_MARKER
LOG_AXIS_DEPTH = 10.0
# its ticks: plain ratios, most important first (pairs about symmetric around 1); a tick
# nearer than 1 / RATIO_TICK_ROOM of the axis' (log) height to one kept before is left out
RATIO_TICKS = (1, 0.5, 2, 0.1, 10, 0.8, 1.25, 0.9, 1.1, 0.2, 5, 0.95, 1.05, 0.7, 1.4, 0.3, 3,
               0.01, 100, 0.05, 20, 0.02, 50, 0.98, 1.02)
RATIO_TICK_ROOM = 14
CUT_MARKER = "v"
CUT_NOTE = "\u25bc: interval reaches below the axis (lower end <= 0 or under it)"
CUT_NOTE_LINEAR = "\u25bc: interval reaches below 0 (drawn down to the axis at 0)"
# an interval from fewer values than this gets a note in the title (from 2 values the
# t-interval's half-width is 12.7 standard errors)
FEW_VALUES = 3
REFERENCE_COLOUR = "black"  # the reference policy's curve in the SCT CDF figures


def _save(fig, out: Path, stem: str, data: pd.DataFrame) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for ext, meta in (("png", {"Software": None}), ("pdf", {"CreationDate": None, "Producer": None})):
        p = out / f"{stem}.{ext}"
        fig.savefig(p, dpi=150, bbox_inches="tight", metadata=meta)  # byte-stable reruns
        paths.append(note_written(p))
    plt.close(fig)
    data.to_csv(out / f"{stem}.csv", index=False)
    note_written(out / f"{stem}.csv")
    return paths


def _styles(policies, styles: dict[str, Style] | None) -> dict[str, Style]:
    if styles is None:
        return policy_styles(policies)
    missing = [p for p in policy_order(policies) if p not in styles]
    return {**styles, **policy_styles(missing)} if missing else styles


def _scenario_axis(scenarios: list[str]) -> tuple[list[str], str]:
    """Tick labels and axis label: ``key=value`` scenarios of one common key show the
    values on the ticks and the key as the label."""
    parts = [s.split("=", 1) for s in scenarios]
    if scenarios and all(len(p) == 2 and "," not in s for p, s in zip(parts, scenarios)) \
            and len({p[0] for p in parts}) == 1:
        return [p[1] for p in parts], parts[0][0]
    return scenarios, "scenario"


def _interval_note(counts, what: str = "seeds", mark: str = "bar") -> str:
    """What the error bars of a chart are, from the number of values behind each bar."""
    counts = [int(c) for c in counts if pd.notna(c)]
    if not counts or max(counts) < 2:
        return f"one run per {mark}: no error bars"
    n = f"{min(counts)}" if min(counts) == max(counts) else f"{min(counts)}-{max(counts)}"
    none = f", none where a {mark} is one run" if min(counts) < 2 else ""
    note = f"error bars: 95% CI of the mean over {n} {what} (t){none}"
    few = sorted({c for c in counts if 2 <= c < FEW_VALUES})
    if few:
        from scipy import stats
        t = ", ".join(f"{stats.t.ppf(0.975, c - 1):.1f}" for c in few)
        note += (f"\nfrom {' or '.join(map(str, few))} {what} (fewer than {FEW_VALUES}) an "
                 f"interval is \u00b1{t} standard errors: very wide")
    return note


def _positive(values) -> np.ndarray:
    v = np.asarray([] if values is None else values, dtype=float)
    return v[np.isfinite(v) & (v > 0)]


def ratio_axis_limits(values, lows=None, highs=None) -> tuple[float, float]:
    """Limits of a ratio axis (log scale, centred on 1): ``1 / k`` and ``k``, with ``k``
    ``RATIO_MARGIN`` times the furthest factor from 1 among the values, the interval tops
    ``highs`` and the positive interval bottoms ``lows`` at most ``LOG_AXIS_DEPTH`` times
    below the smallest value (ends under the axis, 0 or negative ones included, are drawn
    at it: ``interval_ends``); ``k`` is at least ``MIN_RATIO_REACH`` x ``RATIO_MARGIN``."""
    v = _positive(values)
    lo = _positive(lows)
    if len(v):
        lo = lo[lo >= v.min() / LOG_AXIS_DEPTH]
    ends = np.concatenate([v, _positive(highs), lo])
    reach = float(np.exp(np.abs(np.log(ends)).max())) if len(ends) else 1.0
    k = max(MIN_RATIO_REACH, reach) * RATIO_MARGIN
    return 1.0 / k, k


def ratio_ticks(bottom: float, top: float) -> list[float]:
    """Ticks of a ratio axis from ``bottom`` to ``top``: plain ratios of ``RATIO_TICKS``
    in its order, each one kept where it is at least 1 / ``RATIO_TICK_ROOM`` of the axis'
    (log) height from every tick kept before it."""
    room = np.log(top / bottom) / RATIO_TICK_ROOM
    kept: list[float] = []
    for t in RATIO_TICKS:
        if bottom <= t <= top and all(abs(np.log(t / k)) >= room for k in kept):
            kept.append(t)
    return sorted(kept)


def _ratio_ticks(ax) -> None:
    ax.yaxis.set_major_locator(matplotlib.ticker.FixedLocator(ratio_ticks(*ax.get_ylim())))
    ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda y, _: f"{y:g}"))
    ax.yaxis.set_minor_locator(matplotlib.ticker.NullLocator())


def ratio_axis(ax, values, lows=None, highs=None) -> float:
    """Make ``ax``'s y axis a ratio axis: log scale, limits centred on 1 from the data
    (``ratio_axis_limits``), plain-ratio ticks (``ratio_ticks``) with light grid lines, and
    the line at 1 black and dashed, under the bars and points. Returns its lower limit,
    where ``interval_ends`` cuts an interval."""
    ax.set_yscale("log")
    ax.set_ylim(*ratio_axis_limits(values, lows, highs))
    _ratio_ticks(ax)
    ax.set_axisbelow(True)  # grid lines under everything, the line at 1 over them
    ax.grid(axis="y", color="0.9")
    ax.axhline(1.0, color="black", lw=0.8, ls="--", zorder=1.8)
    return ax.get_ylim()[0]


def ratio_label(reference: str, what: str = "avg SCT") -> str:
    """Axis label of a ratio axis of the reference against each other policy, with the
    direction: ``beamer's avg SCT / policy's`` and ``(< 1: beamer faster; log scale)``."""
    return f"{reference}'s {what} / policy's\n(< 1: {reference} faster; log scale)"


def interval_ends(means, half_widths, bottom: float | None = None
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ends of each error bar as drawn: (low, high, cut). The interval is mean +-
    half-width; a lower end under the axis' lower limit ``bottom`` (a ratio axis':
    ``ratio_axis``, 0 or negative ends included; a linear axis': 0, from
    ``linear_axis_bottom``) is drawn at ``bottom`` and ``cut`` is True there (the figure
    marks it). ``bottom`` None (an axis that shows every end): every interval as
    computed. A NaN half-width (no interval) gives NaN ends, not cut."""
    m = np.asarray(means, dtype=float)
    h = np.asarray(half_widths, dtype=float)
    low, high = m - h, m + h
    cut = np.zeros(len(m), dtype=bool)
    if bottom is not None:
        cut = np.isfinite(low) & (low < bottom)
        low = np.where(cut, bottom, low)
    return low, high, cut


def linear_axis_bottom(lows) -> float | None:
    """Lower limit of a linear axis of a positive quantity (a ratio, a time): 0 when an
    interval end of ``lows`` is below 0 (that end is drawn at the axis: ``interval_ends``),
    else None (the axis as matplotlib scales it, which shows every end)."""
    lows = np.asarray(lows, dtype=float)
    return 0.0 if (np.isfinite(lows) & (lows < 0)).any() else None


def draw_intervals(ax, x, mid, low, high, cut, colour: str = "black", capsize: float = 2.0,
                   lw: float = 1.0, zorder: float = 3) -> None:
    """Error bars at ``x`` around ``mid`` from ``low`` to ``high`` (as ``interval_ends``
    gives them). Where ``cut``, the bar runs from the axis (``low``) up to ``high`` with a
    cap at the top only and ends at the axis in ``CUT_MARKER`` (not clipped, so it stays
    visible on the axis line); NaN ends: nothing drawn."""
    x, mid, low, high = (np.asarray(a, dtype=float) for a in (x, mid, low, high))
    cut = np.asarray(cut, dtype=bool)
    ok = np.isfinite(low) & np.isfinite(high) & np.isfinite(mid)
    whole, part = ok & ~cut, ok & cut
    if whole.any():
        ax.errorbar(x[whole], mid[whole], yerr=[mid[whole] - low[whole], high[whole] - mid[whole]],
                    fmt="none", ecolor=colour, elinewidth=lw, capsize=capsize, zorder=zorder)
    if part.any():  # down to the axis, no cap there: the marker says the interval goes on
        ax.vlines(x[part], low[part], high[part], colors=colour, lw=lw, zorder=zorder)
        ax.plot(x[part], high[part], ls="none", marker="_", ms=2 * capsize, mew=lw, color=colour,
                zorder=zorder)
        ax.plot(x[part], low[part], ls="none", marker=CUT_MARKER, ms=6, color=colour,
                clip_on=False, zorder=zorder + 2)


def ratio_bar_extents(values, baseline: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper end of each ratio bar as drawn on a log axis: from ``baseline`` (1:
    the policy as fast as the reference) to the bar's value, up for a value above it, down
    for one below, none for one equal to it (both ends at 1); a NaN value: NaN ends (no
    bar). A bar is drawn from its lower end with height upper - lower."""
    v = np.asarray(values, dtype=float)
    ok = np.isfinite(v)
    low = np.where(ok, np.minimum(v, baseline), np.nan)
    high = np.where(ok, np.maximum(v, baseline), np.nan)
    return low, high


LABEL_GAP = 1.04  # a value label starts this factor above its bar or its interval's top


def label_bar_values(ax, x, values, bar_tops, highs, rotate: bool) -> None:
    """Print each bar's value (``values``, at ``x``) above the bar's upper end
    (``bar_tops``: 1 for a bar drawn down from 1) and above its interval's top (``highs``,
    NaN: none), so that a label never crosses a bar's end or an interval; then widen the
    ratio axis, still centred on 1, until every label is inside the axes."""
    texts = []
    for xi, v, t, h in zip(x, values, bar_tops, highs):
        if pd.notna(v):
            texts.append(ax.text(xi, np.nanmax([v, t, h]) * LABEL_GAP, f"{v:.2f}", ha="center",
                                 va="bottom", fontsize=7, rotation=90 if rotate else 0))
    if not texts:
        return
    fig = ax.figure
    for _ in range(6):  # the limits move the labels' extents a little: settle in a few steps
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        top = max(t.get_window_extent(renderer).y1 for t in texts)
        top_data = ax.transData.inverted().transform((0, top))[1]
        hi = ax.get_ylim()[1]
        if top_data <= hi:
            break
        ax.set_ylim(1.0 / (top_data * 1.05), top_data * 1.05)
    _ratio_ticks(ax)


def _ratio_bar_data(d: pd.DataFrame, experiment: str, reference: str, scen: list[str],
                    pols: list[str], st: dict[str, Style]) -> pd.DataFrame:
    """One row per bar (policies in order, then scenarios): the reference's avg SCT / the
    policy's with its 95% interval half-width (none from one run, none for the reference
    itself: 1 by definition), the number of runs and the policy's colour."""
    mean, ci = f"{AVG_SCT_RATIO}_mean", f"{AVG_SCT_RATIO}_ci95"
    rows = []
    for p in pols:
        row = d[d["policy"] == p].set_index("scenario").reindex(scen)
        err = row[ci].where((row["seeds"] >= 2) & (p != reference))
        for s, m, e, n in zip(scen, row[mean], err, row["seeds"]):
            rows.append({"experiment": experiment, "scenario": s, "reference": reference,
                         "policy": p, mean: m, ci: e, "runs": n, "colour": st[p].colour})
    return pd.DataFrame(rows)


def _bar_scenarios(d: pd.DataFrame) -> tuple[list[str], list[str], str]:
    """The scenarios of a bar figure, their tick labels and the x label: ``key=value``
    scenarios of one numeric key in the order of their values, others as they come."""
    scen = list(dict.fromkeys(d["scenario"]))
    ticks, xlabel = _scenario_axis(scen)
    num = pd.to_numeric(pd.Series(ticks), errors="coerce")
    if xlabel != "scenario" and num.notna().all():
        order = np.argsort(num.to_numpy(), kind="stable")
        scen, ticks = [scen[i] for i in order], [ticks[i] for i in order]
    return scen, ticks, xlabel


def normalised_bars(norm: pd.DataFrame, experiment: str, reference: str, out: Path,
                    styles: dict[str, Style] | None = None, note: str | None = None,
                    backend: str | None = None) -> list[Path]:
    """Bars: the reference's avg SCT / each policy's (``analysis.metrics.reference_ratios``:
    same trace, per run, then averaged; < 1: the reference is faster) per policy and
    scenario, on a ratio axis (``ratio_axis``: log, centred on 1), each bar from the line
    at 1 to its value with the value printed above it; 95% t-interval over runs where there
    are two or more. An interval reaching below the axis ends there in ``CUT_MARKER`` (the
    title says so; the CSV keeps the interval as computed). ``note``: one more line for the
    title; ``backend``: named after the experiment in the title (e.g. "packet level")."""
    d = norm[norm["experiment"] == experiment]
    pols = policy_order(d["policy"])
    st = _styles(pols, styles)
    scen, ticks, xlabel = _bar_scenarios(d)
    fig, ax = plt.subplots(figsize=(max(5.5, 1.3 * len(scen) * max(1, len(pols) / 5) + 3), 3.8))
    width = 0.8 / len(pols)
    xs = {p: np.arange(len(scen)) + (i - (len(pols) - 1) / 2) * width for i, p in enumerate(pols)}
    data = _ratio_bar_data(d, experiment, reference, scen, pols, st)
    means = data[f"{AVG_SCT_RATIO}_mean"].to_numpy(float)
    half = data[f"{AVG_SCT_RATIO}_ci95"].to_numpy(float)
    ratio_axis(ax, means, means - half, means + half)
    bar_low, bar_high = ratio_bar_extents(means)
    for p in pols:
        at = (data["policy"] == p).to_numpy()  # this policy's rows, in scenario order
        # an edge in the bar's colour keeps a bar at 1 (no length) visible
        ax.bar(xs[p], bar_high[at] - bar_low[at], width, bottom=bar_low[at], label=p,
               color=st[p].colour, edgecolor=st[p].colour, linewidth=1.5, zorder=2)
    x = np.concatenate([xs[p] for p in pols])  # data's row order
    label_bar_values(ax, x, means, bar_high, means + half, rotate=len(pols) * len(scen) > 10)
    low, high, cut = interval_ends(means, half, ax.get_ylim()[0])
    draw_intervals(ax, x, means, low, high, cut)
    long = max(len(t) for t in ticks) > 14
    ax.set_xticks(np.arange(len(scen)), ticks, rotation=20 if long else 0,
                  ha="right" if long else "center", fontsize=8 if long else 9)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ratio_label(reference))
    unit = d["unit"].iloc[0] if "unit" in d and d["unit"].nunique() == 1 else "runs"
    what = f"{experiment} ({backend})" if backend else experiment
    ax.set_title(f"{what}: {reference} against each policy, avg SCT\n"
                 f"mean of per-{unit[:-1]} ratios; {_interval_note(data['runs'], what=unit)}"
                 + (f"\n{CUT_NOTE}" if cut.any() else "")
                 + (f"\n{note}" if note else ""), fontsize=10)
    ax.legend(title="policy", fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return _save(fig, out, f"{experiment}_normalised_avg_sct", data)


def _dodge(x: np.ndarray, i: int, n: int, log_x: bool, span: float) -> np.ndarray:
    """Shift series ``i`` of ``n`` sideways so that error bars of equal points stay apart."""
    off = (i - (n - 1) / 2) / max(n, 1)
    if log_x:
        return x * 2.0 ** (0.25 * off)
    return x + 0.03 * span * off


def sweep_lines(runs: pd.DataFrame, norm: pd.DataFrame, experiment: str, param: str,
                xlabel: str, reference: str, out: Path, log_x: bool = False,
                styles: dict[str, Style] | None = None) -> list[Path]:
    """Left: mean avg SCT (s) vs a swept parameter per policy. Right: the reference's avg
    SCT / each policy's on the same trace (``norm``: ``analysis.metrics.reference_ratios``;
    < 1: the reference is faster), mean over seeds with 95% t-intervals (seeds are
    different traces, so the spread is meaningful for the ratio only); where one reaches
    below 0 the axis starts at 0 and the interval ends there in ``CUT_MARKER``. Points of
    one x are shifted slightly apart; each policy has its own marker and dash."""
    d = runs[runs["experiment"] == experiment].copy()
    d["x"] = pd.to_numeric(d[f"param:{param}"])
    short = param.split(".")[-1]
    n = norm[norm["experiment"] == experiment].copy()
    n["x"] = pd.to_numeric(n["scenario"].str.split("=").str[-1])
    order = policy_order(d["policy"])
    st = _styles(order, styles)
    xs = np.sort(d["x"].unique())
    span = float(xs.max() - xs.min()) or 1.0
    seeds = int(d.groupby(["x", "policy"])["workload_seed"].nunique().max())
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4.0))
    rows = []
    mean, ci = f"{AVG_SCT_RATIO}_mean", f"{AVG_SCT_RATIO}_ci95"
    for i, p in enumerate(order):
        s = st[p]
        g = d[d["policy"] == p].groupby("x")["avg_sct_s"].agg(["mean", "size"])
        a1.plot(_dodge(g.index.to_numpy(float), i, len(order), log_x, span), g["mean"],
                marker=s.marker, ls=s.linestyle, color=s.colour, label=p, ms=5, lw=1.4)
        h = n[n["policy"] == p].sort_values("x")
        err = h[ci].where((h["seeds"] >= 2) & (p != reference))
        for x, m, r, e, k in zip(h["x"], g.reindex(h["x"])["mean"], h[mean], err, h["seeds"]):
            rows.append({"experiment": experiment, "x": x, "reference": reference, "policy": p,
                         "avg_sct_s_mean": m, mean: r, ci: e, "runs": k, "colour": s.colour,
                         "_dx": _dodge(np.array([float(x)]), i, len(order), log_x, span)[0]})
    data = pd.DataFrame(rows)
    if len(data):
        means, half = data[mean].to_numpy(float), data[ci].to_numpy(float)
        bottom = linear_axis_bottom(means - half)
        low, high, cut = interval_ends(means, half, bottom)
    else:
        bottom, cut = None, np.zeros(0, dtype=bool)
    for p in order:
        s = st[p]
        at = (data["policy"] == p).to_numpy() if len(data) else np.zeros(0, dtype=bool)
        if not at.any():
            continue
        a2.plot(data.loc[at, "_dx"], means[at], marker=s.marker, ls=s.linestyle, color=s.colour,
                ms=5, lw=1.4, label=p)
        draw_intervals(a2, data.loc[at, "_dx"], means[at], low[at], high[at], cut[at],
                       colour=s.colour)
    if bottom is not None:
        a2.set_ylim(bottom=bottom)
    data = data.drop(columns="_dx", errors="ignore")
    for ax in (a1, a2):
        if log_x:
            ax.set_xscale("log", base=2)
        ax.set_xticks(xs, [f"{v:g}" for v in xs])
        ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
        ax.set_xlabel(f"{xlabel}, log scale" if log_x else xlabel)
        ax.grid(axis="y", color="0.9", zorder=0)
    a1.set_ylabel("average stage completion time (s)")
    a1.set_title(f"{experiment}: avg SCT vs {short}\n" + (
        f"mean of {seeds} seeds (different traces: no error bars)" if seeds > 1 else
        "one seed"), fontsize=10)
    a2.axhline(1.0, color="black", lw=0.8, ls="--")
    a2.set_ylabel(f"{reference}'s avg SCT / policy's\n(< 1: {reference} faster)")
    a2.set_title(f"{reference} against each policy, mean of per-seed ratios\n"
                 f"{_interval_note(data['runs'] if len(data) else [], mark='point')}"
                 + (f"\n{CUT_NOTE_LINEAR}" if cut.any() else ""), fontsize=10)
    a2.legend(title="policy", fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    return _save(fig, out, f"{experiment}_avg_sct_vs_{short}", data)


class PlainLogFormatter(matplotlib.ticker.LogFormatter):
    """A log axis's tick labels as plain numbers (``%g``: 0.3, 2, 50)."""

    def _num_to_string(self, x, vmin, vmax):
        return f"{x:g}"


def sct_cdf(stages: pd.DataFrame, experiment: str, scenario: str, reference: str, out: Path,
            styles: dict[str, Style] | None = None, stem: str | None = None) -> list[Path]:
    """Empirical CDF of SCT (all stages of every seed of one scenario): one panel per
    policy, its curve solid in its colour over the reference policy's CDF (black, dashed),
    so that curves which nearly coincide are still each visible. Saved as ``stem``
    (default ``<experiment>_sct_cdf``)."""
    d = stages[(stages["experiment"] == experiment) & (stages["scenario"] == scenario)]
    order = policy_order(d["policy"])
    st = _styles(order, styles)
    others = [p for p in order if p != reference] or order
    ncols = min(4, len(others))
    nrows = -(-len(others) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.3 * ncols + 0.6, 2.7 * nrows + 0.9),
                             sharex=True, sharey=True, squeeze=False)
    curves, rows = {}, []
    for p in order:
        x = np.sort(d.loc[d["policy"] == p, "sct_s"].to_numpy(float))
        curves[p] = (x, np.arange(1, len(x) + 1) / len(x))
        colour = st[p].colour  # the policy's colour, the same in every figure's data
        rows += [{"experiment": experiment, "scenario": scenario, "policy": p, "sct_s": a,
                  "cdf": b, "colour": colour} for a, b in zip(*curves[p])]
    for ax, p in zip(axes.flat, others):
        if p != reference and reference in curves:
            ax.step(*curves[reference], where="post", color=REFERENCE_COLOUR, ls="--", lw=1.2,
                    label=reference, zorder=3)
        ax.step(*curves[p], where="post", color=st[p].colour, ls="-", lw=1.8, label=p, zorder=2)
        ax.set_xscale("log")
        # plain numbers (0.3, 2, 5), not 3x10^0 or 3e-01; minor ticks labelled only on an
        # axis that spans less than a decade (matplotlib's own rule)
        ax.xaxis.set_major_formatter(PlainLogFormatter())
        ax.xaxis.set_minor_formatter(PlainLogFormatter(labelOnlyBase=False))
        ax.set_ylim(0, 1.02)
        ax.grid(color="0.92")
        ax.set_title(p if p == reference else f"{p} vs {reference}", fontsize=9)
        ax.legend(fontsize=7, loc="best")
    for ax in axes.flat[len(others):]:
        ax.set_visible(False)
    # the lowest panel of each column carries the x axis (above an empty slot of the last
    # row too, where the shared axis would otherwise leave it unlabelled)
    for c in range(ncols):
        bottom = axes[min(nrows - 1, (len(others) - 1 - c) // ncols), c]
        bottom.xaxis.set_tick_params(which="both", labelbottom=True)
        bottom.set_xlabel("stage completion time (s, log)")
    for ax in axes[:, 0]:
        ax.set_ylabel("fraction of stages")
    seeds = d["workload_seed"].nunique() if "workload_seed" in d else 1
    fig.suptitle(f"SCT CDF: {experiment} {scenario}, all stages of {seeds} "
                 f"seed{'s' if seeds != 1 else ''}; black dashed: {reference}", fontsize=10)
    fig.tight_layout()
    return _save(fig, out, stem or f"{experiment}_sct_cdf", pd.DataFrame(rows))


def lb_ratio(runs: pd.DataFrame, out: Path, styles: dict[str, Style] | None = None) -> list[Path]:
    """Heat map: avg SCT / lower bound per experiment (rows) and policy (columns), mean over
    the experiment's runs (scenarios x seeds), the number in every cell; colour on a log
    scale so that one large cell does not wash out the rest."""
    import seaborn as sns
    from matplotlib.colors import LogNorm
    order = policy_order(runs["policy"])
    st = _styles(order, styles)
    g = runs.groupby(["experiment", "policy"])["avg_sct_over_lb"].agg(["mean", "size"])
    mean = g["mean"].unstack("policy").reindex(columns=order)
    exps = list(mean.index)
    # at least 3.2 in tall: the colour bar's label (two lines) fits beside a one-row map
    fig, ax = plt.subplots(figsize=(1.0 * len(order) + 3.5, max(3.2, 0.42 * len(exps) + 1.8)))
    vmax = float(np.nanmax(mean.to_numpy())) if mean.size else 2.0
    sns.heatmap(mean, annot=True, fmt=".2f", cmap="rocket_r", ax=ax, linewidths=0.5,
                linecolor="white", annot_kws={"fontsize": 8},
                norm=LogNorm(vmin=1.0, vmax=max(vmax, 1.01)),
                cbar_kws={"label": "avg SCT / lower bound\n(log colour scale)"})
    ax.set_xticklabels(order, rotation=30, ha="right", fontsize=9)
    mesh = ax.collections[0]
    for t in ax.texts:  # black or white, whichever contrasts more with the cell (WCAG)
        r, g_, b, _ = mesh.cmap(mesh.norm(float(t.get_text())))
        lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in (r, g_, b)]
        lum = 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]
        t.set_color("black" if (lum + 0.05) / 0.05 >= 1.05 / (lum + 0.05) else "white")
    cbar = mesh.colorbar
    cticks = [t for t in (1, 1.25, 1.5, 2, 3, 5, 10, 20, 50, 100) if t <= max(vmax, 1.01)]
    cbar.set_ticks(cticks, labels=[f"{t:g}" for t in cticks])
    cbar.ax.yaxis.set_minor_locator(matplotlib.ticker.NullLocator())
    ax.set_yticklabels(exps, rotation=0, fontsize=9)
    ax.set_xlabel("policy")
    ax.set_ylabel("experiment")
    ax.set_title("Distance from the provable lower bound (1 = at the bound)\nmean over each "
                 "experiment's runs (scenarios x seeds); blank: no runs", fontsize=10)
    data = g.reset_index().rename(columns={"mean": "avg_sct_over_lb_mean", "size": "runs"})
    data = data.assign(_r=data["policy"].map(order.index)).sort_values(
        ["experiment", "_r"], kind="stable").drop(columns="_r")
    data["colour"] = data["policy"].map(lambda p: st[p].colour)
    return _save(fig, out, "ratio_to_lower_bound", data)


def emulation_vs_fluid(pairs: pd.DataFrame, out: Path,
                       styles: dict[str, Style] | None = None) -> list[Path]:
    """Scatter: per-stage SCT in the packet-level run vs its fluid twin, y = x line."""
    order = policy_order(pairs["policy"])
    st = _styles(order, styles)
    fig, ax = plt.subplots(figsize=(5.5, 4.2))
    for p in order:
        d = pairs[pairs["policy"] == p]
        ax.scatter(d["sct_fluid_s"], d["sct_mininet_s"], color=st[p].colour, marker=st[p].marker,
                   s=22, alpha=0.8, label=p, edgecolors="none")
    hi = float(max(pairs["sct_fluid_s"].max(), pairs["sct_mininet_s"].max())) * 1.05
    ax.plot([0, hi], [0, hi], color="black", lw=0.8, ls="--", label="y = x")
    ax.set_xlim(0, hi)
    ax.set_ylim(0, hi)
    ax.set_xlabel("stage completion time, fluid twin (trace s)")
    ax.set_ylabel("stage completion time, Mininet (trace s)")
    ax.set_title("Packet-level emulation vs fluid simulation\none point per stage of every "
                 "packet-level run", fontsize=10)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    data = pairs.copy()
    data["colour"] = data["policy"].map(lambda p: st[p].colour)
    return _save(fig, out, "emulation_vs_fluid", data)


REPRODUCTION_METRICS = (("avg_ratio", "avg SCT", "#4c72b0", ""),
                        ("stage_ratio_median", "stage SCT, median", "#dd8452", "//"),
                        ("stage_ratio_p95", "stage SCT, p95", "#55a868", ".."))


def _reproduction_data(summary: pd.DataFrame, panels: list) -> pd.DataFrame:
    """One row per drawn bar: experiment, scenario, policy, metric, the emulated / twin
    ratio's mean over runs and 95% interval half-width (``emulated_over_twin_mean``,
    ``emulated_over_twin_ci95``: none from one run), runs; per panel the metrics, each
    over the policies in order."""
    rows = []
    for exp, scen in panels:
        d = summary[(summary["experiment"] == exp) & (summary["scenario"] == scen)]
        d = d.set_index("policy").reindex(policy_order(d["policy"]))
        for col, *_ in REPRODUCTION_METRICS:
            err = d[f"{col}_ci95"].where(d["runs"] >= 2)
            rows += [{"experiment": exp, "scenario": scen, "policy": p, "metric": col,
                      "emulated_over_twin_mean": v, "emulated_over_twin_ci95": e, "runs": n}
                     for p, v, e, n in zip(d.index, d[col], err, d["runs"])]
    return pd.DataFrame(rows)


def reproduction(summary: pd.DataFrame, out: Path) -> list[Path]:
    """Per packet-level experiment (one panel each): emulated / fluid-twin ratio per policy of
    avg SCT and of the per-stage SCT ratio's median and p95 (> 1: the emulation slower),
    mean over repetitions with 95% t-interval error bars where there are two or more, as
    bars from the line at 1 on a ratio axis shared by the panels (``ratio_axis``: log,
    centred on 1; an interval reaching below it ends there in ``CUT_MARKER``); the shaded
    band is the +-15% criterion for the median."""
    panels = list(dict.fromkeys(zip(summary["experiment"], summary["scenario"])))
    data = _reproduction_data(summary, panels)
    means = data["emulated_over_twin_mean"].to_numpy(float)
    half = data["emulated_over_twin_ci95"].to_numpy(float)
    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 4.0), squeeze=False,
                             sharey=True)
    any_cut = False
    width = 0.8 / len(REPRODUCTION_METRICS)
    for ax, (exp, scen) in zip(axes[0], panels):
        bottom = ratio_axis(ax, means, means - half, means + half)
        ax.axhspan(0.85, 1.15, color="0.9", zorder=0)
        here = (data["experiment"] == exp) & (data["scenario"] == scen)
        pols = list(dict.fromkeys(data.loc[here, "policy"]))
        for i, (col, label, colour, hatch) in enumerate(REPRODUCTION_METRICS):
            at = (here & (data["metric"] == col)).to_numpy()
            x = np.arange(len(pols)) + (i - (len(REPRODUCTION_METRICS) - 1) / 2) * width
            lo, hi = ratio_bar_extents(means[at])
            ax.bar(x, hi - lo, width, bottom=lo, label=label, color=colour, hatch=hatch,
                   edgecolor="white", zorder=2)
            low, high, cut = interval_ends(means[at], half[at], bottom)
            draw_intervals(ax, x, means[at], low, high, cut)
            any_cut |= bool(cut.any())
        ax.set_xticks(np.arange(len(pols)), pols, rotation=35, ha="right", fontsize=8)
        ax.set_title(f"{exp}" + ("" if scen == "all" else f" ({scen})"), fontsize=10)
    axes[0][0].set_ylabel("emulated / fluid twin\n(> 1: emulation slower; log scale)")
    axes[0][-1].legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    note = _interval_note(data["runs"], what="repetitions").replace("per bar", "per policy")
    fig.suptitle(f"Packet level vs fluid twin, mean over repetitions; {note}; grey band: "
                 "1 ± 15%" + (f"\n{CUT_NOTE}" if any_cut else ""), fontsize=10)
    fig.tight_layout()
    return _save(fig, out, "reproduction_vs_fluid", data)
