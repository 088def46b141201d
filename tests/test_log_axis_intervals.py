"""Error bars on a log axis: a symmetric 95% t-interval of a positive ratio can reach 0 or
below, which a log axis cannot show. The bar chart draws such an interval down to the axis,
ends it there in a marker and says so in its title; an interval the axis can show is drawn
as computed (mean +- ci95), and the axis reaches down to show positive ends. Expected
values are worked out by hand in each test."""
import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from analysis import plots  # noqa: E402

NAN = float("nan")


def test_interval_ends_on_a_log_axis_cut_at_its_bottom():
    means = [2.0, 0.5, 1.0, 3.0, 1.25]
    half = [0.5, 0.7, NAN, 2.9, 0.75]
    low, high, cut = plots.interval_ends(means, half, bottom=0.5)
    # 2 +- 0.5: [1.5, 2.5], whole; 0.5 +- 0.7: lower end -0.2 -> drawn at 0.5, cut;
    # no interval: NaN, not cut; 3 +- 2.9: lower end 0.1 < 0.5 -> cut; 1.25 +- 0.75:
    # lower end 0.5 is the bottom itself (exact in binary), drawn whole
    assert low[0] == pytest.approx(1.5) and high[0] == pytest.approx(2.5)
    assert low[1] == pytest.approx(0.5) and high[1] == pytest.approx(1.2)
    assert math.isnan(low[2]) and math.isnan(high[2])
    assert low[3] == pytest.approx(0.5) and high[3] == pytest.approx(5.9)
    assert low[4] == 0.5 and high[4] == 2.0
    assert cut.tolist() == [False, True, False, True, False]


def test_interval_ends_on_a_linear_axis_are_as_computed():
    low, high, cut = plots.interval_ends([0.5, 2.0], [0.7, 0.5])
    assert low[0] == pytest.approx(-0.2) and high[0] == pytest.approx(1.2)
    assert low[1] == pytest.approx(1.5) and not cut.any()


def test_log_axis_bottom():
    # bars 1, 1, 7, 2.5: 0.8 (below the line at 1) is under 0.9 x 1
    assert plots.log_axis_bottom([1.0, 1.0, 7.0, 2.5]) == pytest.approx(0.8)
    # positive ends above 0.8 leave it there; 0 and negative ends are ignored
    assert plots.log_axis_bottom([1.0, 7.0], [0.85, 5.0, 0.0, -0.3]) == pytest.approx(0.8)
    # an end at 0.5 pulls it to 0.9 x 0.5 = 0.45
    assert plots.log_axis_bottom([1.0, 7.0], [0.5, 6.0]) == pytest.approx(0.45)
    # an end at 0.02: 0.018 is more than 10 x below the smallest bar (1): 0.1
    assert plots.log_axis_bottom([1.0, 7.0], [0.02]) == pytest.approx(0.1)
    # smallest bar 0.6: 0.9 x 0.6 = 0.54
    assert plots.log_axis_bottom([0.6, 1.0, 8.0]) == pytest.approx(0.54)


def norm_table() -> pd.DataFrame:
    """One scenario, four policies: fair's 8.0 dwarfs the median bar (1.1) -> log axis;
    sincronia's 0.6 +- 0.9 reaches -0.3; varys' 1.2 +- 0.1 is whole."""
    rows = [("beamer", 1.0, 0.0), ("sincronia", 0.6, 0.9), ("fair", 8.0, 1.0), ("varys", 1.2, 0.1)]
    return pd.DataFrame([{"experiment": "e", "scenario": "x=1", "policy": p, "ratio_mean": m,
                          "ratio_ci95": h, "seeds": 3, "unit": "seeds"} for p, m, h in rows])


@pytest.fixture
def drawn(monkeypatch, tmp_path):
    """The figure normalised_bars draws, before it is saved and closed."""
    figs = []
    monkeypatch.setattr(plots, "_save", lambda fig, out, stem, data: figs.append((fig, data)) or [])
    plots.normalised_bars(norm_table(), "e", "beamer", tmp_path)
    yield figs[0]
    plt.close("all")


def test_an_interval_through_zero_is_marked_at_the_log_axis(drawn):
    fig, data = drawn
    ax = fig.axes[0]
    assert ax.get_yscale() == "log"
    # axis bottom: smallest bar 0.6 -> 0.54; positive lower ends 7.0 and 1.1 are above it
    bottom = ax.get_ylim()[0]
    assert bottom == pytest.approx(0.54)
    markers = [ln for ln in ax.get_lines() if ln.get_marker() == plots.CUT_MARKER]
    assert len(markers) == 1
    assert markers[0].get_ydata().tolist() == pytest.approx([bottom])  # sincronia's bar, at the axis
    assert markers[0].get_clip_on() is False  # not hidden under the axis line
    assert plots.CUT_NOTE in ax.get_title()
    # no drawn error bar segment reaches under the axis: nothing is left to silent clipping
    segments = [seg for coll in ax.collections if hasattr(coll, "get_segments")
                for seg in coll.get_segments() if len(seg)]
    assert segments and min(float(np.min(s[:, 1])) for s in segments) >= bottom - 1e-12
    # sincronia's segment runs from the axis to the computed upper end 1.5
    assert any(np.allclose(sorted(s[:, 1]), [bottom, 1.5]) for s in segments)
    # fair's and varys' intervals are drawn as computed: 7..9 and 1.1..1.3
    for lo, hi in ((7.0, 9.0), (1.1, 1.3)):
        assert any(np.allclose(sorted(s[:, 1]), [lo, hi]) for s in segments), (lo, hi)
    # the data beside the figure keeps the interval as computed
    s = data.set_index("policy").loc["sincronia"]
    assert s["ratio_mean"] == 0.6 and s["ci95"] == 0.9


def test_no_marker_where_every_interval_fits(monkeypatch, tmp_path):
    figs = []
    monkeypatch.setattr(plots, "_save", lambda fig, out, stem, data: figs.append(fig) or [])
    norm = norm_table()
    norm.loc[norm["policy"] == "sincronia", "ratio_ci95"] = 0.1  # 0.5..0.7, above 0.9 x 0.5
    plots.normalised_bars(norm, "e", "beamer", tmp_path)
    ax = figs[0].axes[0]
    assert ax.get_yscale() == "log" and ax.get_ylim()[0] == pytest.approx(0.45)
    assert not [ln for ln in ax.get_lines() if ln.get_marker() == plots.CUT_MARKER]
    assert plots.CUT_NOTE not in ax.get_title()
    plt.close("all")


def test_ratio_bar_extents_run_from_one_to_the_value():
    low, high = plots.ratio_bar_extents([2.0, 0.5, 1.0, NAN, 1.25, 0.125])
    # 2: up from 1 to 2; 0.5: down from 1 to 0.5; 1: no length (both ends at 1);
    # NaN: no bar; 1.25: 1..1.25; 0.125: 0.125..1
    assert low[[0, 1, 2, 4, 5]].tolist() == [1.0, 0.5, 1.0, 1.0, 0.125]
    assert high[[0, 1, 2, 4, 5]].tolist() == [2.0, 1.0, 1.0, 1.25, 1.0]
    assert math.isnan(low[3]) and math.isnan(high[3])


def test_log_bars_are_drawn_from_one_and_the_axis_shows_every_end(drawn):
    fig, _ = drawn
    ax = fig.axes[0]
    # one scenario: one bar per policy, in the policy's bar container
    ends = {c.get_label(): sorted((c[0].get_y(), c[0].get_y() + c[0].get_height()))
            for c in ax.containers if isinstance(c, matplotlib.container.BarContainer)}
    # beamer 1.0: 1..1 (no length); sincronia 0.6: down from 1; fair 8.0 and varys 1.2: up
    assert ends["beamer"] == pytest.approx([1.0, 1.0])
    assert ends["sincronia"] == pytest.approx([0.6, 1.0])
    assert ends["fair"] == pytest.approx([1.0, 8.0])
    assert ends["varys"] == pytest.approx([1.0, 1.2])
    lo, hi = ax.get_ylim()
    assert lo == pytest.approx(0.54) and hi >= 9.0 * 1.3  # fair's interval top 9, x 1.3
    # each value label sits above its bar's upper end and its interval's top: sincronia's
    # (bar 0.6..1, interval up to 1.5) at 1.5 x 1.04, varys' (1..1.2, up to 1.3) at 1.3 x 1.04
    at = {t.get_text(): t.get_position()[1] for t in ax.texts}
    assert at["0.60"] == pytest.approx(1.5 * plots.LABEL_GAP)
    assert at["1.20"] == pytest.approx(1.3 * plots.LABEL_GAP)
    assert at["1.00"] == pytest.approx(1.0 * plots.LABEL_GAP)


def test_a_bar_down_from_one_has_its_label_above_one(monkeypatch, tmp_path):
    figs = []
    monkeypatch.setattr(plots, "_save", lambda fig, out, stem, data: figs.append(fig) or [])
    norm = norm_table()
    norm.loc[norm["policy"] == "sincronia", "ratio_ci95"] = 0.05  # 0.55..0.65: under 1
    plots.normalised_bars(norm, "e", "beamer", tmp_path)
    ax = figs[0].axes[0]
    at = {t.get_text(): t.get_position()[1] for t in ax.texts}
    # the bar runs 0.6..1 and its interval ends at 0.65: the label starts at 1 x 1.04
    assert at["0.60"] == pytest.approx(plots.LABEL_GAP)
    plt.close("all")


def test_a_log_axis_of_ratios_all_under_one_still_shows_one():
    fig, ax = plt.subplots()
    v = np.array([0.1, 0.1, 0.5])  # 0.5 / median 0.1 = 5 > 3: log axis
    assert plots._maybe_log_y(ax, v, v)
    # bottom 0.9 x 0.1 = 0.09 (under 0.8); top: 1 x 1.3 (1 is above every bar end, 0.5)
    assert ax.get_ylim() == pytest.approx((0.09, 1.3))
    plt.close("all")
