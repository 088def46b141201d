"""Figures a reader understands without the code: one style per policy (distinct, the same
in every figure whatever else ran), one axis for every bar or point figure of ratios (log,
centred on 1, the line at 1, the direction in its label), error bars that say what they
are and never come from one value; and the committed figures were made by this code (each
has its data CSV)."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from analysis import plots  # noqa: E402
from analysis.policies import policy_order, registry, styles  # noqa: E402
from tests.conftest import REPO  # noqa: E402


def test_every_registered_policy_has_its_own_style_in_any_subset():
    reg = registry()
    full = styles(reg)
    assert len({s.colour for s in full.values()}) == len(reg)
    assert len({(s.marker, str(s.linestyle)) for s in full.values()}) == len(reg)
    for sub in (reg[-2:], reg[::2], ["fair"]):
        assert {p: styles(sub)[p] for p in sub} == {p: full[p] for p in sub}


def test_policy_order_is_the_registry_then_unknown_names_sorted():
    reg = registry()
    assert policy_order(["zeta", reg[2], "alpha", reg[0], reg[2]]) == [reg[0], reg[2], "alpha", "zeta"]


MEAN = "avg_sct_ratio_ref_over_policy_mean"
CI = "avg_sct_ratio_ref_over_policy_ci95"


def _ratio_figures(monkeypatch, tmp_path) -> dict:
    """The axes of every bar or point figure of ratios, from close ratios (0.9..1.1, which
    a linear axis from 0 would flatten), by stem."""
    from analysis import paired, regimes
    axes = {}
    save = lambda fig, out, stem, data: axes.setdefault(stem, fig.axes[0]) and []  # noqa: E731
    for mod in (plots, regimes, paired):
        monkeypatch.setattr(mod, "_save", save)
    norm = pd.DataFrame([{"experiment": "e", "scenario": "x=1", "reference": "beamer",
                          "policy": p, MEAN: m, CI: 0.02, "seeds": 3, "unit": "seeds"}
                         for p, m in (("beamer", 1.0), ("sincronia", 0.95), ("fair", 0.9))])
    plots.normalised_bars(norm, "e", "beamer", tmp_path)
    regimes.regimes_figure(pd.DataFrame([{"regime": "sha", "policy": "fair", MEAN: 0.9, CI: 0.02,
                                          "runs": 12}]), "beamer", tmp_path)
    paired.paired_figure(pd.DataFrame([{
        "experiment": "tb", "reference": "beamer", "policy": "fair", MEAN: 0.9,
        "t95_low": 0.88, "t95_high": 0.92, "twin_avg_sct_ratio_ref_over_policy": 0.95,
        "repetitions": 3}]), tmp_path)
    plots.reproduction(pd.DataFrame([{
        "experiment": "tb", "scenario": "all", "policy": "fair", "runs": 3, "avg_ratio": 1.1,
        "avg_ratio_ci95": 0.02, "stage_ratio_median": 1.05, "stage_ratio_median_ci95": 0.02,
        "stage_ratio_p95": 1.08, "stage_ratio_p95_ci95": 0.02}]), tmp_path)
    return axes


def test_every_ratio_figure_has_the_ratio_axis(monkeypatch, tmp_path):
    """Log scale, limits 1/k..k (centred on 1), 1 among the plain-number ticks, the black
    dashed line at 1; the policies' ratios say their direction in the axis label."""
    axes = _ratio_figures(monkeypatch, tmp_path)
    assert set(axes) == {"e_normalised_avg_sct", "regime_ratios", "paired_ratios",
                         "reproduction_vs_fluid"}
    for stem, ax in axes.items():
        assert ax.get_yscale() == "log", stem
        lo, hi = ax.get_ylim()
        assert lo * hi == pytest.approx(1.0) and lo < 0.9 and hi > 1.1, stem
        ticks = list(ax.yaxis.get_major_locator().tick_values(lo, hi))
        assert 1 in ticks and all(t in plots.RATIO_TICKS for t in ticks), stem
        labels = [ax.yaxis.get_major_formatter()(t) for t in ticks]
        assert "1" in labels and not any("e" in lb or "^" in lb for lb in labels), stem
        (one,) = [ln for ln in ax.get_lines() if list(ln.get_ydata()) == [1.0, 1.0]]
        assert _rgb(one.get_color()) == (0.0, 0.0, 0.0) and one.get_linestyle() == "--", stem
    for stem in ("e_normalised_avg_sct", "regime_ratios", "paired_ratios"):
        assert "beamer's avg SCT / policy's" in axes[stem].get_ylabel(), stem
        assert "(< 1: beamer faster; log scale)" in axes[stem].get_ylabel(), stem
    assert "(> 1: emulation slower; log scale)" in axes["reproduction_vs_fluid"].get_ylabel()
    plt.close("all")


def test_error_bars_say_what_they_are():
    assert plots._interval_note([3, 3, 3]) == "error bars: 95% CI of the mean over 3 seeds (t)"
    assert plots._interval_note([1, 1]) == "one run per bar: no error bars"
    assert plots._interval_note([1, 3]).endswith("none where a bar is one run")
    assert "2 repetitions" in plots._interval_note([2, 2], what="repetitions")


def test_committed_figures_come_with_their_data_and_no_interval_from_one_run():
    figs = REPO / "results" / "figures"
    pngs = sorted(figs.glob("*.png"))
    assert len(pngs) >= 20
    for png in pngs:
        csv = png.with_suffix(".csv")
        assert csv.exists(), f"{png.name}: no data beside it (regenerate: python -m analysis results)"
        df = pd.read_csv(csv)
        assert "policy" in df and len(df), csv.name
        for ci in (c for c in df.columns if c.endswith("ci95")):
            if "runs" in df:
                assert df.loc[df["runs"] < 2, ci].isna().all(), csv.name
    lb = pd.read_csv(figs / "ratio_to_lower_bound.csv")
    assert set(lb["policy"]) == set(pd.read_csv(REPO / "results" / "tables" / "runs.csv")["policy"])


def _rgb(colour) -> tuple[float, float, float]:
    return matplotlib.colors.to_rgb(colour)


def test_no_policy_is_drawn_grey_or_black_or_with_the_cut_marker():
    """References are black (the reference policy's CDF, the line at 1, y = x) and grey
    marks criteria: every policy colour, the registry's and unknown names' (the palette
    repeats), has a hue (HSV saturation >= 0.25: #949494 has 0) and is not near black
    (value >= 0.3); no policy marker is the marker of a cut interval."""
    names = registry() + [f"user-{i}" for i in range(20)]
    for p, s in styles(names).items():
        h, sat, val = matplotlib.colors.rgb_to_hsv(_rgb(s.colour))
        assert sat >= 0.25 and val >= 0.3, (p, s.colour)
        assert s.marker != plots.CUT_MARKER, p


def test_sct_cdf_reference_black_dashed_each_policy_solid_in_its_colour(monkeypatch, tmp_path):
    figs = []
    monkeypatch.setattr(plots, "_save", lambda fig, out, stem, data: figs.append((fig, stem)) or [])
    pols = registry()
    stages = pd.DataFrame([{"experiment": "e", "scenario": "x=1", "policy": p, "workload_seed": 1,
                            "sct_s": float(v)} for p in pols for v in (1, 2, 4)])
    st = styles(pols)
    plots.sct_cdf(stages, "e", "x=1", "beamer", tmp_path, st, stem="e_sct_cdf_x-1")
    fig, stem = figs[0]
    assert stem == "e_sct_cdf_x-1"
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert len(panels) == len(pols) - 1
    for ax in panels:
        lines = {ln.get_label(): ln for ln in ax.get_lines()}
        ref = lines.pop("beamer")
        assert _rgb(ref.get_color()) == (0.0, 0.0, 0.0) and ref.get_linestyle() == "--"
        (p, ln), = lines.items()
        assert ln.get_color() == st[p].colour and ln.get_linestyle() == "-"
        # the policy's colour is far from the reference's black (RGB distance)
        assert np.linalg.norm(np.subtract(_rgb(ln.get_color()), _rgb(ref.get_color()))) > 0.3, p
    assert "black dashed: beamer" in fig._suptitle.get_text()
    plt.close("all")


def test_sct_cdf_every_column_labels_its_x_axis_and_the_data_names_the_drawn_colours(
        monkeypatch, tmp_path):
    """Seven panels on a 4 x 2 grid: the fourth column has no panel in the last row, so its
    only panel (top row) must carry the x tick labels and the x label itself; every other
    column's bottom panel does. The figure's data records each policy's own colour."""
    saved = []
    monkeypatch.setattr(plots, "_save",
                        lambda fig, out, stem, data: saved.append((fig, data)) or [])
    pols = registry()[:8]  # beamer and seven others
    stages = pd.DataFrame([{"experiment": "e", "scenario": "all", "policy": p, "workload_seed": 1,
                            "sct_s": float(v)} for p in pols for v in (1, 2, 4)])
    st = styles(pols)
    plots.sct_cdf(stages, "e", "all", "beamer", tmp_path, st)
    (fig, data), = saved
    fig.canvas.draw()
    grid = np.array(fig.axes).reshape(2, 4)
    assert [ax.get_visible() for ax in grid[1]] == [True, True, True, False]
    for ax in [*grid[1, :3], grid[0, 3]]:
        assert ax.get_xlabel() == "stage completion time (s, log)"
        assert any(t.get_visible() and t.get_text() for t in ax.get_xticklabels()), ax.get_title()
    for ax in grid[0, :3]:
        assert ax.get_xlabel() == ""
    colours = data.groupby("policy")["colour"].first()
    assert all(colours[p] == st[p].colour for p in pols)
    plt.close("all")


def test_lower_bound_heatmap_colour_bar_label_inside_the_figure(monkeypatch, tmp_path):
    """One experiment (a short map): the colour bar's label fits in the figure's height,
    so the saved image does not end at the label."""
    figs = []
    monkeypatch.setattr(plots, "_save", lambda fig, out, stem, data: figs.append(fig) or [])
    runs = pd.DataFrame([{"experiment": "mine", "policy": p, "avg_sct_over_lb": 1.2 + 0.1 * i}
                         for i, p in enumerate(registry())])
    plots.lb_ratio(runs, tmp_path)
    fig = figs[0]
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    cbar_ax = fig.axes[-1]
    label = cbar_ax.yaxis.label.get_window_extent(renderer)
    assert fig.bbox.y0 <= label.y0 and label.y1 <= fig.bbox.y1
    # and below the title, which is the top of the image
    title = fig.axes[0].title.get_window_extent(renderer)
    assert label.y1 < title.y1
    plt.close("all")


def _contrast_with_white(colour) -> float:
    """WCAG contrast ratio (1.05 / (relative luminance + 0.05))."""
    lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in _rgb(colour)]
    return 1.05 / (0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2] + 0.05)


def test_every_policy_colour_stands_out_on_white():
    """A policy is drawn as a thin line or an open marker on white: every colour of the
    palette has contrast >= MIN_CONTRAST with white. By hand: black 21, white 1; seaborn's
    yellow #ece133 (luminance 0.716) 1.37 and light pink #fbafe4 (0.568) 1.70 would fail."""
    from analysis.policies import _COLOURS, MIN_CONTRAST
    assert _contrast_with_white("#000000") == 21.0 and _contrast_with_white("#ffffff") == 1.0
    assert round(_contrast_with_white("#ece133"), 2) == 1.37
    assert round(_contrast_with_white("#fbafe4"), 2) == 1.70
    for c in _COLOURS:
        assert _contrast_with_white(c) >= MIN_CONTRAST, c
    assert len(set(_COLOURS)) == len(_COLOURS)


def _lab(colour: str) -> tuple[float, float, float]:
    """CIELAB (D65) of an sRGB hex colour, from the standard formulas."""
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in _rgb(colour)]
    x = (0.4124 * lin[0] + 0.3576 * lin[1] + 0.1805 * lin[2]) / 0.95047
    y = 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]
    z = (0.0193 * lin[0] + 0.1192 * lin[1] + 0.9505 * lin[2]) / 1.08883
    f = [v ** (1 / 3) if v > 0.008856 else 7.787 * v + 16 / 116 for v in (x, y, z)]
    return 116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])


def _delta_e(a: str, b: str) -> float:
    return sum((u - v) ** 2 for u, v in zip(_lab(a), _lab(b))) ** 0.5


def test_a_policy_added_to_the_registry_gets_a_colour_apart_from_every_other():
    """A user's new policy is drawn beside the registry's and beside black reference
    lines: its colour (the first after theirs) is at least 35 CIELAB units (CIE76) from
    each of theirs and has a CIELAB lightness of at least 35 (navy #001c7f, 17.3, would
    read as black next to a reference curve). By hand: pure red is L 53.24, a 80.09,
    b 67.20; #e7298a is 37.2 from Sincronia's orchid #cc78bc."""
    from analysis.policies import MIN_LIGHTNESS, registry, styles
    assert [round(v, 1) for v in _lab("#ff0000")] == [53.2, 80.1, 67.2]
    assert round(_lab("#001c7f")[0], 1) == 17.3 < MIN_LIGHTNESS == 35.0
    assert 37.0 < _delta_e("#e7298a", "#cc78bc") < 37.5
    reg = registry()
    st = styles([*reg, "my-policy"])
    new = st["my-policy"].colour
    assert new not in {st[p].colour for p in reg}
    assert min(_delta_e(new, st[p].colour) for p in reg) >= 35, new
    assert _lab(new)[0] >= MIN_LIGHTNESS and _delta_e(new, "#000000") >= 35, new


def test_light_colours_come_first_after_the_registry_each_furthest_from_those_before():
    """The palette's order after the registry's eight, checked by brute force: among the
    colours left, light ones (lightness >= MIN_LIGHTNESS) before dark ones, and within
    each group the one whose nearest colour so far (black and grey counted) is furthest."""
    from analysis.policies import _COLOURS, MIN_LIGHTNESS, registry
    n = len(registry())
    chosen = [*_COLOURS[:n], "#000000", "#808080"]
    rest = list(_COLOURS[n:])
    while rest:
        light = [c for c in rest if _lab(c)[0] >= MIN_LIGHTNESS] or rest
        pick = max(light, key=lambda c: min(_delta_e(c, o) for o in chosen))
        assert _COLOURS[len(chosen) - 2] == pick, (len(chosen) - 2, pick)
        chosen.append(pick)
        rest.remove(pick)


def _line_at_one(ax):
    lines = [ln for ln in ax.get_lines() if list(ln.get_ydata()) == [1.0, 1.0]]
    assert len(lines) == 1
    return lines[0]


def test_regime_ratios_are_points_with_intervals_and_a_dashed_line_at_one(monkeypatch, tmp_path):
    """A ratio's bar from an axis that does not start at 0 overstates differences: the
    regime figure draws points (each policy's marker and colour) with their intervals, and
    the line at 1 black and dashed."""
    from analysis import regimes
    figs = []
    monkeypatch.setattr(regimes, "_save", lambda fig, out, stem, data: figs.append(fig) or [])
    table = pd.DataFrame([{"regime": r, "policy": p, MEAN: m, CI: 0.05,
                           "runs": 12} for r in ("random", "sha")
                          for p, m in (("sincronia", 0.82), ("fair", 0.52))])
    regimes.regimes_figure(table, "beamer", tmp_path)
    ax = figs[0].axes[0]
    from matplotlib.container import BarContainer
    assert not any(isinstance(c, BarContainer) for c in ax.containers) and not ax.patches
    ref = _line_at_one(ax)
    assert _rgb(ref.get_color()) == (0.0, 0.0, 0.0) and ref.get_linestyle() == "--"
    st = styles(["sincronia", "fair"])
    for p in ("sincronia", "fair"):
        (pts,) = [ln for ln in ax.get_lines() if ln.get_label() == f"/ {p}"]
        assert pts.get_marker() == st[p].marker and pts.get_color() == st[p].colour
        assert pts.get_linestyle() == "None" and list(pts.get_ydata()) == [
            0.82 if p == "sincronia" else 0.52] * 2
    # the axis is scaled to the points, not from 0: the lowest interval end is 0.47, so
    # the ratio axis is 1/k..k with k = 1.1 / 0.47
    assert ax.get_ylim() == pytest.approx((0.47 / 1.1, 1.1 / 0.47))
    plt.close("all")


def test_paired_figure_legend_is_neutral_and_line_at_one_dashed(monkeypatch, tmp_path):
    from analysis import paired
    figs = []
    monkeypatch.setattr(paired, "_save", lambda fig, out, stem, data: figs.append(fig) or [])
    pr = pd.DataFrame([{"experiment": "tb", "reference": "beamer", "policy": p,
                        MEAN: m, "t95_low": m - 0.05, "t95_high": m + 0.05,
                        "twin_avg_sct_ratio_ref_over_policy": m, "repetitions": 3}
                       for p, m in (("beamer-sbssi", 1.03), ("sincronia", 0.9))])
    paired.paired_figure(pr, tmp_path)
    ax = figs[0].axes[0]
    ref = _line_at_one(ax)
    assert _rgb(ref.get_color()) == (0.0, 0.0, 0.0) and ref.get_linestyle() == "--"
    legend = ax.get_legend()
    labels = [t.get_text() for t in legend.get_texts()]
    assert labels == ["emulated (mean, 95% t-interval)", "fluid twin"]
    # black, no policy's colour (the policy of each point is its tick label)
    colours = {_rgb(s.colour) for s in styles(registry()).values()}
    for h in legend.legend_handles:
        assert _rgb(h.get_markeredgecolor()) == (0.0, 0.0, 0.0), h.get_label()
        assert _rgb(h.get_markeredgecolor()) not in colours
    plt.close("all")


def test_value_labels_clear_the_error_bars(monkeypatch):
    """On the ratio axis each bar's value is printed above its bar and above its interval:
    no label's box meets an error bar (its line or its cap)."""
    figs = []
    monkeypatch.setattr(plots, "_save", lambda fig, out, stem, data: figs.append(fig) or [])
    means = (1.0, 1.1, 1.0, 1.22, 1.17, 1.97, 2.5, 1.1)
    cis = (0.0, 0.2, 0.03, 0.15, 0.25, 0.6, 1.2, 0.2)
    pols = registry()[:len(means)]
    norm = pd.DataFrame([{"experiment": "e", "scenario": f"rate={r},pattern=ring", "policy": p,
                          MEAN: m * (1 + 0.02 * i), CI: c, "seeds": 3,
                          "unit": "seeds"}
                         for i, r in enumerate((0.5, 100, 200, 300))
                         for p, m, c in zip(pols, means, cis)])
    plots.normalised_bars(norm, "e", "beamer", None)
    fig = figs[0]
    ax = fig.axes[0]
    assert ax.get_yscale() == "log" and len(ax.texts) == 4 * len(pols)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    cap = 2.0 * fig.dpi / 72  # capsize in pixels
    boxes = []
    for coll in ax.collections:  # the error bars' vertical lines
        for seg in coll.get_segments():
            (x0, y0), (x1, y1) = ax.transData.transform(seg)
            boxes.append(matplotlib.transforms.Bbox([[min(x0, x1) - cap, min(y0, y1)],
                                                     [max(x0, x1) + cap, max(y0, y1)]]))
    assert len(boxes) >= 4 * (len(pols) - 1)
    for t in ax.texts:
        tb = t.get_window_extent(renderer)
        assert not any(tb.overlaps(b) for b in boxes), t.get_text()
        assert tb.y1 <= ax.get_window_extent(renderer).y1  # inside the axes
    plt.close("all")
