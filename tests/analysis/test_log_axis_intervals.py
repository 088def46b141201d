"""The ratio axis every bar or point figure of ratios shares (normalised bars, regime
points, paired points, reproduction bars): log scale centred on 1, limits from the data
with a margin, plain-ratio ticks, bars from the line at 1. A symmetric 95% t-interval of
a positive ratio can reach 0 or below, which a log axis cannot show: such an interval is
drawn down to the axis, ends there in a marker and the title says so; an interval the
axis can show is drawn as computed (mean +- ci95). Ratios are the reference's avg SCT /
the policy's (< 1: the reference is faster). Expected values are worked out by hand in
each test."""
import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from analysis import plots  # noqa: E402

NAN = float("nan")
MEAN = "avg_sct_ratio_ref_over_policy_mean"
CI = "avg_sct_ratio_ref_over_policy_ci95"


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


def test_ratio_axis_limits_are_centred_on_one():
    # bars 0.94, 0.97, 1: furthest from 1 is 1 / 0.94 = 1.06383; x 1.1 margin = 1.17021
    lo, hi = plots.ratio_axis_limits([0.94, 0.97, 1.0])
    assert hi == pytest.approx(1.17021, rel=1e-5) and lo == pytest.approx(1 / 1.17021, rel=1e-5)
    # an interval bottom 0.4 is furthest (1 / 0.4 = 2.5): k = 2.75; tops count too
    assert plots.ratio_axis_limits([0.5, 1.0, 1.2], [0.4, NAN, 1.1], [0.6, NAN, 1.3]) \
        == pytest.approx((1 / 2.75, 2.75))
    # a value above 1 sets it the same way: 3 -> 3.3 and 1 / 3.3
    assert plots.ratio_axis_limits([3.0, 1.0]) == pytest.approx((1 / 3.3, 3.3))
    # a bottom more than 10 x under the smallest bar (0.02 < 0.5 / 10) and 0 or negative
    # ones are left to the cut marker: 1 / 0.5 = 2 -> 2.2
    assert plots.ratio_axis_limits([0.5, 1.0], [0.02, -1.0, 0.0]) == pytest.approx((1 / 2.2, 2.2))
    # everything within 1%: the axis still reaches 1.05 x 1.1 = 1.155 each way
    assert plots.ratio_axis_limits([0.99, 1.0]) == pytest.approx((1 / 1.155, 1.155))


def test_ratio_ticks_are_plain_ratios_spread_over_the_axis():
    # 1/1.155..1.155: log height 2 ln 1.155 = 0.2882, a tick at least 0.2882 / 14 =
    # 0.0206 from another; 0.98 and 1.02 (0.0202 and 0.0198 from 1) are too close to 1,
    # 0.8 and 1.25 outside
    assert plots.RATIO_TICK_ROOM == 14
    assert plots.ratio_ticks(1 / 1.155, 1.155) == [0.9, 0.95, 1, 1.05, 1.1]
    # 1/2.75..2.75: height 2.0232, room 0.1445: 0.9 / 1.1 (0.105 / 0.095 from 1), 0.7
    # (0.134 from 0.8) and 1.4 (0.113 from 1.25) left out
    assert plots.ratio_ticks(1 / 2.75, 2.75) == [0.5, 0.8, 1, 1.25, 2]


def norm_table() -> pd.DataFrame:
    """One scenario, four policies (beamer's avg SCT / the policy's): sincronia's 0.6 +-
    0.9 reaches -0.3; fair 0.25 +- 0.05 and varys 1.2 +- 0.1 are whole."""
    rows = [("beamer", 1.0, 0.0), ("sincronia", 0.6, 0.9), ("fair", 0.25, 0.05),
            ("varys", 1.2, 0.1)]
    return pd.DataFrame([{"experiment": "e", "scenario": "x=1", "reference": "beamer",
                          "policy": p, MEAN: m, CI: h, "seeds": 3, "unit": "seeds"}
                         for p, m, h in rows])


@pytest.fixture
def drawn(monkeypatch):
    """Every figure a plotting function draws, with its data, before it is saved."""
    figs = []
    save = lambda fig, out, stem, data: figs.append((fig, data)) or []  # noqa: E731
    monkeypatch.setattr(plots, "_save", save)
    for mod in ("analysis.regimes", "analysis.paired"):
        monkeypatch.setattr(f"{mod}._save", save)
    yield figs
    plt.close("all")


def segments(ax) -> list[np.ndarray]:
    return [seg for coll in ax.collections if hasattr(coll, "get_segments")
            for seg in coll.get_segments() if len(seg)]


def cut_markers(ax) -> list:
    return [ln for ln in ax.get_lines() if ln.get_marker() == plots.CUT_MARKER]


def test_an_interval_through_zero_is_marked_at_the_log_axis(drawn, tmp_path):
    plots.normalised_bars(norm_table(), "e", "beamer", tmp_path)
    fig, data = drawn[0]
    ax = fig.axes[0]
    assert ax.get_yscale() == "log"
    # furthest from 1: fair's interval bottom 0.2 (1 / 0.2 = 5; sincronia's -0.3 is left
    # to the marker): k = 5 x 1.1 = 5.5, the axis 1/5.5..5.5
    bottom, top = ax.get_ylim()
    assert bottom == pytest.approx(1 / 5.5) and top == pytest.approx(5.5)
    markers = cut_markers(ax)
    assert len(markers) == 1
    assert markers[0].get_ydata().tolist() == pytest.approx([bottom])  # sincronia's, at the axis
    assert markers[0].get_clip_on() is False  # not hidden under the axis line
    assert plots.CUT_NOTE in ax.get_title()
    # no drawn error bar segment reaches under the axis: nothing is left to silent clipping
    segs = segments(ax)
    assert segs and min(float(np.min(s[:, 1])) for s in segs) >= bottom - 1e-12
    # sincronia's segment runs from the axis to the computed upper end 1.5
    assert any(np.allclose(sorted(s[:, 1]), [bottom, 1.5]) for s in segs)
    # fair's and varys' intervals are drawn as computed: 0.2..0.3 and 1.1..1.3
    for lo, hi in ((0.2, 0.3), (1.1, 1.3)):
        assert any(np.allclose(sorted(s[:, 1]), [lo, hi]) for s in segs), (lo, hi)
    # the data beside the figure keeps the interval as computed, and names the reference
    s = data.set_index("policy").loc["sincronia"]
    assert s[MEAN] == 0.6 and s[CI] == 0.9 and s["reference"] == "beamer"


def test_no_marker_where_every_interval_fits(drawn, tmp_path):
    norm = norm_table()
    norm.loc[norm["policy"] == "sincronia", CI] = 0.1  # 0.5..0.7
    plots.normalised_bars(norm, "e", "beamer", tmp_path)
    ax = drawn[0][0].axes[0]
    # still fair's bottom 0.2 furthest: 1/5.5..5.5
    assert ax.get_yscale() == "log" and ax.get_ylim()[0] == pytest.approx(1 / 5.5)
    assert not cut_markers(ax)
    assert plots.CUT_NOTE not in ax.get_title()


def test_ratio_bar_extents_run_from_one_to_the_value():
    low, high = plots.ratio_bar_extents([2.0, 0.5, 1.0, NAN, 1.25, 0.125])
    # 2: up from 1 to 2; 0.5: down from 1 to 0.5; 1: no length (both ends at 1);
    # NaN: no bar; 1.25: 1..1.25; 0.125: 0.125..1
    assert low[[0, 1, 2, 4, 5]].tolist() == [1.0, 0.5, 1.0, 1.0, 0.125]
    assert high[[0, 1, 2, 4, 5]].tolist() == [2.0, 1.0, 1.0, 1.25, 1.0]
    assert math.isnan(low[3]) and math.isnan(high[3])


def test_log_bars_are_drawn_from_one_with_their_values_above(drawn, tmp_path):
    plots.normalised_bars(norm_table(), "e", "beamer", tmp_path)
    ax = drawn[0][0].axes[0]
    # one scenario: one bar per policy, in the policy's bar container
    ends = {c.get_label(): sorted((c[0].get_y(), c[0].get_y() + c[0].get_height()))
            for c in ax.containers if isinstance(c, matplotlib.container.BarContainer)}
    # beamer 1.0: 1..1 (no length); sincronia 0.6 and fair 0.25: down from 1; varys 1.2: up
    assert ends["beamer"] == pytest.approx([1.0, 1.0])
    assert ends["sincronia"] == pytest.approx([0.6, 1.0])
    assert ends["fair"] == pytest.approx([0.25, 1.0])
    assert ends["varys"] == pytest.approx([1.0, 1.2])
    # each value label sits above its bar's upper end and its interval's top: sincronia's
    # (bar 0.6..1, interval up to 1.5) at 1.5 x 1.04, varys' (1..1.2, up to 1.3) at
    # 1.3 x 1.04, fair's (0.25..1, interval 0.2..0.3) at 1 x 1.04
    at = {t.get_text(): t.get_position()[1] for t in ax.texts}
    assert at["0.60"] == pytest.approx(1.5 * plots.LABEL_GAP)
    assert at["1.20"] == pytest.approx(1.3 * plots.LABEL_GAP)
    assert at["0.25"] == pytest.approx(plots.LABEL_GAP)
    assert at["1.00"] == pytest.approx(plots.LABEL_GAP)
    assert "< 1: beamer faster" in ax.get_ylabel()
    assert "beamer's avg SCT / policy's" in ax.get_ylabel()


def _bar_pixels(ax, label: str) -> float:
    (bars,) = [c for c in ax.containers if c.get_label() == label]
    y0, y1 = bars[0].get_y(), bars[0].get_y() + bars[0].get_height()
    return abs(ax.transData.transform((0, y1))[1] - ax.transData.transform((0, y0))[1])


def test_a_few_percent_is_visible_and_faster_reads_as_far_as_slower(drawn, tmp_path):
    """Bars 0.93 and 0.97 (beamer 7% and 3% faster): the axis is 1/1.1828..1.1828
    (1 / 0.93 = 1.0753, x 1.1), so the 0.97 bar spans ln(1/0.97) / (2 ln 1.1828) = 9.1%
    of the axis' height (a linear axis from 0 to about 1.05 would give it 2.9%). Bars 0.5
    and 2 (beamer twice as fast / half as fast) are equally long."""
    rows = [("beamer", 1.0), ("sincronia", 0.97), ("fair", 0.93)]
    norm = pd.DataFrame([{"experiment": "e", "scenario": "x=1", "reference": "beamer",
                          "policy": p, MEAN: m, CI: NAN, "seeds": 1, "unit": "seeds"}
                         for p, m in rows])
    plots.normalised_bars(norm, "e", "beamer", tmp_path)
    ax = drawn[0][0].axes[0]
    height = ax.get_window_extent().height
    assert _bar_pixels(ax, "sincronia") / height == pytest.approx(0.0907, abs=0.002)
    norm = norm.assign(**{MEAN: [1.0, 0.5, 2.0]})
    plots.normalised_bars(norm, "e", "beamer", tmp_path)
    ax = drawn[1][0].axes[0]
    assert _bar_pixels(ax, "sincronia") == pytest.approx(_bar_pixels(ax, "fair"), rel=1e-6)


def test_regime_points_mark_an_interval_below_the_axis(drawn, tmp_path):
    from analysis.regimes import regimes_figure
    table = pd.DataFrame([
        {"regime": "random", "policy": "sincronia", MEAN: 0.5, CI: 0.8, "runs": 2},
        {"regime": "random", "policy": "fair", MEAN: 0.9, CI: 0.05, "runs": 2}])
    regimes_figure(table, "beamer", tmp_path)
    fig, data = drawn[0]
    ax = fig.axes[0]
    # furthest: the point 0.5 (1 / 0.5 = 2; the bottom -0.3 is cut): 1/2.2..2.2
    assert ax.get_yscale() == "log" and ax.get_ylim() == pytest.approx((1 / 2.2, 2.2))
    assert [m.get_ydata().tolist() for m in cut_markers(ax)] == [[pytest.approx(1 / 2.2)]]
    assert plots.CUT_NOTE in ax.get_title()
    assert any(np.allclose(sorted(s[:, 1]), [0.85, 0.95]) for s in segments(ax))
    assert "< 1: beamer faster" in ax.get_ylabel()
    assert data.set_index("policy").loc["fair", MEAN] == 0.9


def test_reproduction_bars_from_one_mark_an_interval_below_the_axis(drawn, tmp_path):
    row = {"experiment": "t", "scenario": "all", "policy": "beamer", "runs": 2,
           "avg_ratio": 1.1, "avg_ratio_ci95": 1.5, "stage_ratio_median": 1.0,
           "stage_ratio_median_ci95": 0.1, "stage_ratio_p95": 1.2, "stage_ratio_p95_ci95": 0.2}
    plots.reproduction(pd.DataFrame([row]), tmp_path)
    fig, data = drawn[0]
    ax = fig.axes[0]
    # furthest: avg's interval top 2.6 (its bottom -0.4 is cut): 1/2.86..2.86
    assert ax.get_yscale() == "log" and ax.get_ylim() == pytest.approx((1 / 2.86, 2.86))
    assert [m.get_ydata().tolist() for m in cut_markers(ax)] == [[pytest.approx(1 / 2.86)]]
    bars = sorted((round(p.get_y(), 9), round(p.get_y() + p.get_height(), 9)) for p in ax.patches
                  if isinstance(p, matplotlib.patches.Rectangle) and p.get_width() < 1)
    assert bars == [(1.0, 1.0), (1.0, 1.1), (1.0, 1.2)]  # median at 1, avg and p95 up from 1
    assert plots.CUT_NOTE in fig._suptitle.get_text()
    assert "from 2 repetitions (fewer than 3)" in fig._suptitle.get_text()
    assert data.set_index("metric").loc["avg_ratio", "emulated_over_twin_mean"] == 1.1


def test_paired_points_mark_an_interval_below_the_axis(drawn, tmp_path):
    from analysis.paired import paired_figure
    pr = pd.DataFrame([{"experiment": "t", "reference": "beamer", "policy": "sincronia",
                        MEAN: 0.9, "t95_low": -0.2, "t95_high": 2.0,
                        "twin_avg_sct_ratio_ref_over_policy": 0.88, "repetitions": 3}])
    paired_figure(pr, tmp_path)
    fig, _ = drawn[0]
    ax = fig.axes[0]
    # furthest: the interval top 2.0: 1/2.2..2.2; the bottom -0.2 is cut
    assert ax.get_yscale() == "log" and ax.get_ylim() == pytest.approx((1 / 2.2, 2.2))
    assert [m.get_ydata().tolist() for m in cut_markers(ax)] == [[pytest.approx(1 / 2.2)]]
    assert any(np.allclose(sorted(s[:, 1]), [1 / 2.2, 2.0]) for s in segments(ax))
    assert plots.CUT_NOTE in fig._suptitle.get_text()
    assert "< 1: beamer faster" in ax.get_ylabel()
