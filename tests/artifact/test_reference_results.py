"""CHANGE DETECTOR (golden master), not a correctness check: example runs compared with
the committed reference results (results/), plus the FB trace run.

The expected values here are the code's own earlier output, re-baselined whenever the
results are regenerated: a failure says "the numbers changed", not "the numbers are
wrong". Correctness is checked by the behavioural tests (test_bssi, test_view,
test_policy_orders, test_lower_bound, test_fluid_*). Numeric columns are compared with a
relative tolerance (``REL_TOL``): a rounding-level change (summation order, a library
update) passes with a warning that shows its size; a larger one fails with a short table
of the mismatching cells instead of a wall of CSV diff.
"""
import warnings

import numpy as np
import pandas as pd
import pytest

from emulation.fluid.simulator import FluidSimulator
from emulation.scheduler import POLICIES, make_policy
from emulation.topology import big_switch
from runner.config import load_experiment
from runner.execute import execute, prepare_trace
from tests.conftest import REPO
from workloads import coflow_benchmark
from emulation import store

RESULTS = REPO / "results"


def reference_specs():
    specs = load_experiment(REPO / "experiments" / "pinned_hosts" / "pattern.toml", full=False)
    return [s for s in specs if s.seed == 1 and s.params["workload.sync_pattern"] == "ps"]


REL_TOL = 1e-9
ABS_TOL = 1e-12


def compare_csv(new_path, ref_path, key: str, *, rel_tol=REL_TOL, abs_tol=ABS_TOL,
                max_shown: int = 8) -> str:
    """'' if the two CSVs hold the same rows (by ``key``) and strings, and numbers within
    tolerance; else a readable report. Warns (RoundingChange) on sub-tolerance changes."""
    new, ref = store.read_table(new_path), store.read_table(ref_path)
    name = ref_path.name
    if list(new.columns) != list(ref.columns):
        return f"{name}: columns changed: {list(ref.columns)} -> {list(new.columns)}"
    if new[key].tolist() != ref[key].tolist():
        gone = sorted(set(ref[key]) - set(new[key]))[:max_shown]
        added = sorted(set(new[key]) - set(ref[key]))[:max_shown]
        return (f"{name}: rows changed ({len(ref)} -> {len(new)}); missing {gone}, new {added}"
                if gone or added else f"{name}: row order changed")
    problems, worst = [], 0.0
    for col in ref.columns:
        a, b = new[col], ref[col]
        if pd.api.types.is_numeric_dtype(b) and pd.api.types.is_numeric_dtype(a):
            x, y = a.to_numpy(float), b.to_numpy(float)
            both_nan = np.isnan(x) & np.isnan(y)
            diff = np.where(both_nan, 0.0, np.abs(x - y))
            diff = np.where(np.isnan(diff), np.inf, diff)
            scale = np.maximum(np.abs(y), 1e-300)
            bad = diff > abs_tol + rel_tol * np.abs(y)
            with np.errstate(invalid="ignore"):
                worst = max(worst, float(np.max(diff / scale, initial=0.0)))
            for i in np.flatnonzero(bad):
                problems.append(f"  {ref[key].iloc[i]} {col}: {float(y[i])!r} -> {float(x[i])!r} "
                                f"(rel {diff[i] / scale[i]:.2e})")
        elif a.astype(str).tolist() != b.astype(str).tolist():
            i = int(np.flatnonzero(a.astype(str).to_numpy() != b.astype(str).to_numpy())[0])
            problems.append(f"  {ref[key].iloc[i]} {col}: {b.iloc[i]!r} -> {a.iloc[i]!r}")
    if problems:
        return (f"{name}: {len(problems)} cells differ beyond rel {rel_tol:g} (largest rel "
                f"change {worst:.2e}):\n" + "\n".join(problems[:max_shown])
                + ("\n  ..." if len(problems) > max_shown else ""))
    if worst > 0:
        warnings.warn(f"{name}: rounding-level change only (largest rel {worst:.2e} <= "
                      f"{rel_tol:g})", RoundingChange)
    return ""


class RoundingChange(UserWarning):
    """Numbers moved by less than the tolerance: a rounding-level change."""


def test_compare_csv_reports_rounding_and_real_changes(tmp_path):
    ref = tmp_path / "ref.csv"
    ref.write_text("stage_id,sct_s,app_id\ns0,1.0,a\ns1,2.5,a\n")
    same = tmp_path / "same.csv"
    same.write_text(ref.read_text())
    assert compare_csv(same, ref, "stage_id") == ""
    rounding = tmp_path / "rounding.csv"
    rounding.write_text("stage_id,sct_s,app_id\ns0,1.0000000000000002,a\ns1,2.5,a\n")
    with pytest.warns(RoundingChange, match="rounding-level"):
        assert compare_csv(rounding, ref, "stage_id") == ""
    real = tmp_path / "real.csv"
    real.write_text("stage_id,sct_s,app_id\ns0,1.0,a\ns1,2.6,b\n")
    msg = compare_csv(real, ref, "stage_id")
    assert "s1 sct_s: 2.5 -> 2.6" in msg and "s1 app_id: 'a' -> 'b'" in msg
    rows = tmp_path / "rows.csv"
    rows.write_text("stage_id,sct_s,app_id\ns0,1.0,a\n")
    assert "missing ['s1']" in compare_csv(rows, ref, "stage_id")


@pytest.mark.parametrize("spec", reference_specs(), ids=lambda s: s.name)
def test_change_detector_rerun_matches_committed_records(spec, tmp_path):
    ref = RESULTS / spec.experiment / spec.name
    if not store.is_run(ref):
        pytest.fail(f"reference run {ref} is not committed")
    assert store.read_json(ref / "run_config.json")["config_hash"] == spec.config_hash
    trace_path, lb_path = prepare_trace(spec, tmp_path)
    run = execute(spec, trace_path, lb_path, str(tmp_path))
    new = tmp_path / spec.experiment / spec.name
    report = "\n".join(filter(None, (
        compare_csv(new / "stages.csv", ref / "stages.csv", "stage_id"),
        compare_csv(new / "coflows.csv", ref / "coflows.csv", "coflow_id"))))
    assert not report, ("CHANGE DETECTOR: results differ from the committed reference "
                        "(re-baseline results/ if the change is intended)\n" + report)
    old = store.read_json(ref / "run.json")
    assert run["trace_sha256"] == old["trace_sha256"]
    for k in ("avg_sct_s", "p95_sct_s", "lower_bound_avg_sct_s"):
        assert run[k] == pytest.approx(old[k], rel=REL_TOL), (k, old[k], run[k])


@pytest.fixture(scope="module")
def fb(fb_trace_path):
    return coflow_benchmark.load(fb_trace_path)


@pytest.mark.slow
def test_fb_trace_runs_under_every_policy(fb):
    """Every policy completes the FB trace (coflow-level reallocation) and delivers every byte."""
    topo = big_switch(150, 1e9)
    total = fb.summary()["total_bytes"]
    avg = {}
    for name in sorted(POLICIES):
        res = FluidSimulator(fb, topo, make_policy(name), realloc="coflow").run()
        assert len(res.coflows) == 526
        assert int(np.sum(res.flows["size_bytes"])) == total
        cct = np.array([c["cct_s"] for c in res.coflows])
        assert np.isfinite(cct).all() and (cct > 0).all()
        avg[name] = float(cct.mean())
    print("\nFB2010 avg CCT (s):", {k: round(v, 2) for k, v in avg.items()})
    # coflow-aware orders beat per-flow fair sharing clearly on this trace
    assert avg["varys"] < avg["fair"] / 1.5
    assert avg["sincronia"] < avg["fair"] / 1.5
    # one coflow per stage: beamer's stage order is Sincronia's coflow order
    assert avg["beamer"] == pytest.approx(avg["sincronia"], rel=1e-9)
