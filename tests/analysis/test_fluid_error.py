"""The fluid model's error tables (analysis/fluid_error.py) on a hand-made validation set
whose errors, pair ratios and orders are worked out by hand."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis.fluid_error import (error_targets, experiment_ratios, order_kept, pair_errors,
                                  pair_summary, policy_errors)


def _set() -> pd.DataFrame:
    """Two traces, beamer and sincronia: emulated 1.0 / 1.2 and 2.0 / 2.0; the ideal model
    says 0.9 / 1.2 and 1.8 / 2.2, the packet-aware 1.0 / 1.26 and 2.04 / 2.0."""
    rows = []
    for seed, emu, ideal, pa in ((1, (1.0, 1.2), (0.9, 1.2), (1.0, 1.26)),
                                 (2, (2.0, 2.0), (1.8, 2.2), (2.04, 2.0))):
        for k, pol in enumerate(("beamer", "sincronia")):
            rows.append({"experiment": "validation-x", "workload_seed": seed, "repetition": 0,
                         "policy": pol, "emulated_avg_sct_s": emu[k],
                         "ideal_avg_sct_s": ideal[k], "packet-aware_avg_sct_s": pa[k],
                         "ideal_error": ideal[k] / emu[k] - 1,
                         "packet-aware_error": pa[k] / emu[k] - 1})
    return pd.DataFrame(rows)


def test_policy_errors_by_hand():
    pol = policy_errors(_set()).set_index(["policy", "model"])
    # beamer ideal: 0.9/1.0 - 1 = -0.1 and 1.8/2.0 - 1 = -0.1
    assert pol.at[("beamer", "ideal"), "median_abs_error"] == pytest.approx(0.1)
    assert pol.at[("beamer", "ideal"), "mean_error"] == pytest.approx(-0.1)
    # sincronia ideal: 0 and +0.1 -> median 0.05, max 0.1
    assert pol.at[("sincronia", "ideal"), "median_abs_error"] == pytest.approx(0.05)
    assert pol.at[("sincronia", "ideal"), "max_abs_error"] == pytest.approx(0.1)
    # sincronia packet-aware: 1.26/1.2 - 1 = 0.05 and 0
    assert pol.at[("sincronia", "packet-aware"), "p90_abs_error"] == pytest.approx(0.045)


def test_pair_errors_and_order_by_hand():
    pe = pair_errors(_set())
    assert list(pe["policy"]) == ["beamer", "beamer"] and list(pe["vs"]) == ["sincronia"] * 2
    # trace 1: emulated 1/1.2 = 0.8333, ideal 0.75, packet-aware 1/1.26 = 0.7937
    assert pe["emulated_ratio"].iloc[0] == pytest.approx(1 / 1.2)
    assert pe["ideal_ratio_error"].iloc[0] == pytest.approx(0.75 - 1 / 1.2)
    assert pe["packet-aware_ratio_error"].iloc[0] == pytest.approx(1 / 1.26 - 1 / 1.2)
    # trace 2: emulated 1.0, ideal 1.8/2.2 = 0.818 (separated, wrong order: the emulation
    # has a tie, not beamer ahead), packet-aware 1.02 (not separated)
    assert order_kept(pe, "ideal") == (2, 1)
    assert order_kept(pe, "packet-aware") == (1, 1)
    ps = pair_summary(pe).set_index("model")
    assert ps.at["ideal", "max_abs"] == pytest.approx(abs(1.8 / 2.2 - 1.0))


def test_targets_by_hand():
    er = _set()
    tg = error_targets(policy_errors(er), pair_errors(er)).set_index("model")
    assert tg.at["ideal", "worst_median_abs_error"] == pytest.approx(0.1)
    mae = (abs(0.75 - 1 / 1.2) + abs(1.8 / 2.2 - 1.0)) / 2
    assert tg.at["ideal", "beamer_sincronia_mae"] == pytest.approx(mae)
    assert tg.at["packet-aware", "order_share"] == 1.0
    assert np.isclose(tg.at["ideal", "order_share"], 0.5)


def test_experiment_ratios_by_hand():
    xr = experiment_ratios(pair_errors(_set())).set_index("vs")
    # beamer / sincronia: emulated 1.0/1.2 and 2.0/2.0 -> mean (0.8333 + 1) / 2
    assert xr.at["sincronia", "traces"] == 2
    assert xr.at["sincronia", "emulated_ratio"] == pytest.approx((1 / 1.2 + 1.0) / 2)
    # ideal 0.9/1.2 = 0.75 and 1.8/2.2; packet-aware 1.0/1.26 and 2.04/2.0
    assert xr.at["sincronia", "ideal_ratio"] == pytest.approx((0.75 + 1.8 / 2.2) / 2)
    assert xr.at["sincronia", "packet-aware_ratio"] == pytest.approx((1 / 1.26 + 1.02) / 2)
