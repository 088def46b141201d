"""Figures a reader understands without the code: one style per policy (distinct, the same
in every figure whatever else ran), a log axis where one bar dwarfs the rest, error bars
that say what they are and never come from one value; and the committed figures were made
by this code (each has its data CSV)."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

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


def test_log_axis_only_where_one_bar_dwarfs_the_rest():
    fig, ax = plt.subplots()
    v = np.array([1.0, 1.0, 1.05, 7.0, 2.5])
    assert plots._maybe_log_y(ax, v, v) and ax.get_yscale() == "log"
    fig, ax = plt.subplots()
    v = np.array([1.0, 1.1, 1.3, 1.2])
    assert not plots._maybe_log_y(ax, v, v) and ax.get_yscale() == "linear"
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
        for ci in ("ci95", "ratio_ci95"):
            if ci in df and "runs" in df:
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
