"""Error bars on a linear axis of a ratio or a time: a 95% t-interval from few values can
reach below 0, which such a quantity cannot. Every figure with intervals (normalised bars,
the sweep's ratio panel, the regime bars, the reproduction bars, the paired points)
starts its axis at 0 then, draws the interval down to the axis, ends it there in a marker
and says so in its title; the figure's CSV keeps the interval as computed. A title also
says when an interval comes from 2 values. Expected values are worked out by hand."""
import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from analysis import plots  # noqa: E402

NAN = float("nan")


@pytest.fixture
def drawn(monkeypatch):
    """Every figure a plotting function draws, with its data, before it is saved."""
    figs = []
    monkeypatch.setattr(plots, "_save", lambda fig, out, stem, data: figs.append((fig, data)) or [])
    for mod in ("analysis.regimes", "analysis.paired"):
        monkeypatch.setattr(f"{mod}._save", lambda fig, out, stem, data: figs.append((fig, data)) or [])
    yield figs
    plt.close("all")


def segments(ax) -> list[np.ndarray]:
    return [seg for coll in ax.collections if hasattr(coll, "get_segments")
            for seg in coll.get_segments() if len(seg)]


def cut_markers(ax) -> list:
    return [ln for ln in ax.get_lines() if ln.get_marker() == plots.CUT_MARKER]


def test_linear_axis_bottom():
    # a lower end below 0: the axis starts at 0
    assert plots.linear_axis_bottom([0.5, -0.2, NAN]) == 0.0
    # every end at or above 0 (or none): the axis as matplotlib scales it
    assert plots.linear_axis_bottom([0.1, 0.0, NAN]) is None
    assert plots.linear_axis_bottom([]) is None


def test_interval_ends_cut_at_zero():
    low, high, cut = plots.interval_ends([1.2, 1.6, 1.0], [1.5, 0.4, NAN], 0.0)
    # 1.2 +- 1.5: -0.3 -> drawn at 0, cut; 1.6 +- 0.4: 1.2..2.0 whole; no interval: NaN
    assert low[0] == 0.0 and high[0] == pytest.approx(2.7)
    assert low[1] == pytest.approx(1.2) and high[1] == pytest.approx(2.0)
    assert math.isnan(low[2]) and cut.tolist() == [True, False, False]


def test_few_values_note():
    assert plots._interval_note([3, 3]) == "error bars: 95% CI of the mean over 3 seeds (t)"
    # t(0.975, 1) = 12.706: the note says it
    note = plots._interval_note([2, 3])
    assert note.startswith("error bars: 95% CI of the mean over 2-3 seeds (t)\n")
    assert "from 2 seeds (fewer than 3)" in note and "\u00b112.7 standard errors" in note


def norm_table() -> pd.DataFrame:
    """One scenario: sincronia 1.2 +- 1.5 over 2 seeds reaches -0.3; fair 1.6 +- 0.4 and
    varys 0.9 +- 0.1 are whole. Tallest end 2.7 / median bar 1.1 < 3: a linear axis."""
    rows = [("beamer", 1.0, 0.0, 2), ("sincronia", 1.2, 1.5, 2), ("fair", 1.6, 0.4, 3),
            ("varys", 0.9, 0.1, 3)]
    return pd.DataFrame([{"experiment": "e", "scenario": "x=1", "policy": p, "ratio_mean": m,
                          "ratio_ci95": h, "seeds": n, "unit": "seeds"} for p, m, h, n in rows])


def test_normalised_bars_linear_axis_starts_at_zero_and_marks_the_cut(drawn, tmp_path):
    plots.normalised_bars(norm_table(), "e", "beamer", tmp_path)
    fig, data = drawn[0]
    ax = fig.axes[0]
    assert ax.get_yscale() == "linear" and ax.get_ylim()[0] == 0.0
    markers = cut_markers(ax)
    assert len(markers) == 1 and markers[0].get_ydata().tolist() == [0.0]
    assert markers[0].get_clip_on() is False
    segs = segments(ax)
    assert min(float(np.min(s[:, 1])) for s in segs) >= 0.0  # nothing under the axis
    for lo, hi in ((0.0, 2.7), (1.2, 2.0), (0.8, 1.0)):  # sincronia cut, fair, varys whole
        assert any(np.allclose(sorted(s[:, 1]), [lo, hi]) for s in segs), (lo, hi)
    title = ax.get_title()
    assert plots.CUT_NOTE_LINEAR in title and "from 2 seeds (fewer than 3)" in title
    assert data.set_index("policy").loc["sincronia", "ci95"] == 1.5  # as computed


def test_normalised_bars_linear_axis_without_a_cut_has_no_marker(drawn, tmp_path):
    norm = norm_table()
    norm.loc[norm["policy"] == "sincronia", "ratio_ci95"] = 0.5  # 0.7..1.7
    plots.normalised_bars(norm, "e", "beamer", tmp_path)
    ax = drawn[0][0].axes[0]
    assert ax.get_ylim()[0] == 0.0  # bars start at 0 anyway
    assert not cut_markers(ax) and plots.CUT_NOTE_LINEAR not in ax.get_title()


def test_sweep_ratio_panel_starts_at_zero_and_marks_the_cut(drawn, tmp_path):
    # two seeds at x = 1 and 2; sincronia's ratios per seed: x=1: 1.5 and 0.5 -> mean 1.0,
    # sd 0.7071, half-width 12.706 x 0.7071 / sqrt 2 = 6.353 -> -5.35..7.35 (cut at 0);
    # x=2: 1.1 and 1.3 -> 1.2 +- 12.706 x 0.1414 / sqrt 2 = 1.2 +- 1.2706 -> cut at 0 too
    from analysis.metrics import normalised
    rows = []
    for x, ratios in ((1, (1.5, 0.5)), (2, (1.1, 1.3))):
        for seed, r in zip((1, 2), ratios):
            for pol, v in (("beamer", 10.0), ("sincronia", 10.0 * r)):
                rows.append({"experiment": "e", "scenario": f"x={x}", "policy": pol,
                             "workload_seed": seed, "avg_sct_s": v, "param:w.x": str(x)})
    runs = pd.DataFrame(rows)
    norm = normalised(runs)
    plots.sweep_lines(runs, norm, "e", "w.x", "x", "beamer", tmp_path)
    fig, data = drawn[0]
    a2 = fig.axes[1]
    assert a2.get_ylim()[0] == 0.0
    markers = cut_markers(a2)
    assert sorted(float(y) for m in markers for y in m.get_ydata()) == [0.0, 0.0]
    assert min(float(np.min(s[:, 1])) for s in segments(a2)) >= 0.0
    assert plots.CUT_NOTE_LINEAR in a2.get_title() and "fewer than 3" in a2.get_title()
    s = data[data["policy"] == "sincronia"].set_index("x")
    assert s.loc[1, "ratio_ci95"] == pytest.approx(12.7062 * 0.70711 / 2 ** 0.5, rel=1e-4)
    assert [a.get_xlabel() for a in fig.axes] == ["x", "x"] and a2.get_xscale() == "linear"
    plots.sweep_lines(runs, norm, "e", "w.x", "x", "beamer", tmp_path, log_x=True)
    fig = drawn[1][0]  # a log axis says so in its label
    assert [a.get_xscale() for a in fig.axes] == ["log", "log"]
    assert [a.get_xlabel() for a in fig.axes] == ["x, log scale", "x, log scale"]


def test_regime_bars_mark_an_interval_below_zero(drawn, tmp_path):
    from analysis.regimes import regimes_figure
    table = pd.DataFrame([
        {"regime": "random", "policy": "sincronia", "avg_ratio_mean": 0.5, "avg_ratio_ci95": 0.8,
         "runs": 2},
        {"regime": "random", "policy": "fair", "avg_ratio_mean": 0.9, "avg_ratio_ci95": 0.05,
         "runs": 2}])
    regimes_figure(table, "beamer", tmp_path)
    ax = drawn[0][0].axes[0]
    # lowest end 0.5 - 0.8 = -0.3: bottom max(0, min(0.7, -0.35)) = 0
    assert ax.get_ylim()[0] == 0.0
    assert [m.get_ydata().tolist() for m in cut_markers(ax)] == [[0.0]]
    assert plots.CUT_NOTE_LINEAR in ax.get_title()
    assert any(np.allclose(sorted(s[:, 1]), [0.85, 0.95]) for s in segments(ax))


def test_reproduction_bars_mark_an_interval_below_zero(drawn, tmp_path):
    row = {"experiment": "t", "scenario": "all", "policy": "beamer", "runs": 2,
           "avg_ratio": 1.1, "avg_ratio_ci95": 1.5, "stage_ratio_median": 1.0,
           "stage_ratio_median_ci95": 0.1, "stage_ratio_p95": 1.2, "stage_ratio_p95_ci95": 0.2}
    plots.reproduction(pd.DataFrame([row]), tmp_path)
    fig, _ = drawn[0]
    ax = fig.axes[0]
    assert ax.get_ylim()[0] == 0.0
    assert [m.get_ydata().tolist() for m in cut_markers(ax)] == [[0.0]]  # 1.1 - 1.5 < 0
    assert plots.CUT_NOTE_LINEAR in fig._suptitle.get_text()
    assert "from 2 repetitions (fewer than 3)" in fig._suptitle.get_text()


def test_paired_points_mark_an_interval_below_zero(drawn, tmp_path):
    from analysis.paired import paired_figure
    pr = pd.DataFrame([{"experiment": "t", "reference": "beamer", "policy": "sincronia",
                        "ratio_mean": 0.9, "t95_low": -0.2, "t95_high": 2.0, "twin_ratio": 0.88,
                        "repetitions": 3}])
    paired_figure(pr, tmp_path)
    fig, _ = drawn[0]
    ax = fig.axes[0]
    assert ax.get_ylim()[0] == 0.0
    assert [m.get_ydata().tolist() for m in cut_markers(ax)] == [[0.0]]
    assert any(np.allclose(sorted(s[:, 1]), [0.0, 2.0]) for s in segments(ax))
    assert plots.CUT_NOTE_LINEAR in fig._suptitle.get_text()
