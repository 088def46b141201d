"""Error bars on a linear axis of a ratio or a time: a 95% t-interval from few values can
reach below 0, which such a quantity cannot. The sweep figure's ratio panel (a line
figure; the bar and point figures of ratios are on the ratio axis of
``test_log_axis_intervals``) starts its axis at 0 then, draws the interval down to the
axis, ends it there in a marker and says so in its title; the figure's CSV keeps the
interval as computed. A title also says when an interval comes from 2 values. Expected
values are worked out by hand."""
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


def test_sweep_ratio_panel_starts_at_zero_and_marks_the_cut(drawn, tmp_path):
    # two seeds at x = 1 and 2; beamer's avg SCT / sincronia's per seed: x=1: 1.5 and 0.5
    # -> mean 1.0, sd 0.7071, half-width 12.706 x 0.7071 / sqrt 2 = 6.353 -> -5.35..7.35
    # (cut at 0); x=2: 1.1 and 1.3 -> 1.2 +- 12.706 x 0.1414 / sqrt 2 = 1.2 +- 1.2706 ->
    # cut at 0 too
    from analysis.metrics import reference_ratios
    rows = []
    for x, ratios in ((1, (1.5, 0.5)), (2, (1.1, 1.3))):
        for seed, r in zip((1, 2), ratios):
            for pol, v in (("beamer", 10.0), ("sincronia", 10.0 / r)):
                rows.append({"experiment": "e", "scenario": f"x={x}", "policy": pol,
                             "workload_seed": seed, "avg_sct_s": v, "param:w.x": str(x)})
    runs = pd.DataFrame(rows)
    norm = reference_ratios(runs)
    plots.sweep_lines(runs, norm, "e", "w.x", "x", "beamer", tmp_path)
    fig, data = drawn[0]
    a2 = fig.axes[1]
    assert a2.get_ylim()[0] == 0.0
    markers = cut_markers(a2)
    assert sorted(float(y) for m in markers for y in m.get_ydata()) == [0.0, 0.0]
    assert min(float(np.min(s[:, 1])) for s in segments(a2)) >= 0.0
    assert plots.CUT_NOTE_LINEAR in a2.get_title() and "fewer than 3" in a2.get_title()
    s = data[data["policy"] == "sincronia"].set_index("x")
    assert s.loc[1, "avg_sct_ratio_ref_over_policy_mean"] == pytest.approx(1.0)
    assert s.loc[1, "avg_sct_ratio_ref_over_policy_ci95"] == pytest.approx(
        12.7062 * 0.70711 / 2 ** 0.5, rel=1e-4)
    assert "< 1: beamer faster" in a2.get_ylabel()
    assert [a.get_xlabel() for a in fig.axes] == ["x", "x"] and a2.get_xscale() == "linear"
    plots.sweep_lines(runs, norm, "e", "w.x", "x", "beamer", tmp_path, log_x=True)
    fig = drawn[1][0]  # a log axis says so in its label
    assert [a.get_xscale() for a in fig.axes] == ["log", "log"]
    assert [a.get_xlabel() for a in fig.axes] == ["x, log scale", "x, log scale"]
