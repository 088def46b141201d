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
