"""flows.csv's writer (``records.write_columns_csv``) gives pandas' ``to_csv`` bytes:
random columns with the values that format or quote differently (NaN, infinities, -0.0,
subnormals, int64 extremes, commas, quotes, line ends, empty strings), and the whole
FB2010 run's flow records."""
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from emulation.records import FLOW_COLUMNS, write_columns_csv, write_records

FLOATS = st.one_of(st.floats(allow_nan=True, allow_infinity=True, width=64),
                   st.sampled_from([0.0, -0.0, 1e16, 1e-5, 1e-4, 9999999999999998.0,
                                    5e-324, 0.1 + 0.2, 123456.789]))
INTS = st.integers(-(2 ** 63), 2 ** 63 - 1)
TEXT = st.one_of(st.text(max_size=6), st.sampled_from(["a,b", 'say "x"', "l1\nl2", "\r",
                                                       "", " pad ", "c1/j0/i0/c0/f3"]))


def pandas_bytes(tmp_path, columns) -> bytes:
    pd.DataFrame(columns).to_csv(tmp_path / "pandas.csv", index=False)
    return (tmp_path / "pandas.csv").read_bytes()


@st.composite
def tables(draw, text=TEXT):
    n = draw(st.integers(0, 12))
    cols = {}
    for i in range(draw(st.integers(2, 5))):
        kind = draw(st.sampled_from(["f", "i", "s"]))
        if kind == "f":
            cols[f"x{i}_s"] = np.array(draw(st.lists(FLOATS, min_size=n, max_size=n)))
        elif kind == "i":
            cols[f"n{i}"] = np.array(draw(st.lists(INTS, min_size=n, max_size=n)),
                                     dtype=np.int64)
        else:
            cols[f"id{i}"] = draw(st.lists(text, min_size=n, max_size=n))
    return cols


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(cols=tables())
def test_same_bytes_as_pandas(tmp_path_factory, cols):
    d = tmp_path_factory.mktemp("csv")
    write_columns_csv(d / "fast.csv", columns=cols)
    assert (d / "fast.csv").read_bytes() == pandas_bytes(d, cols)


@settings(max_examples=50, deadline=None)
@given(cols=tables(text=st.text(alphabet="abc/h01", max_size=6)))
def test_numbers_and_plain_strings_never_reach_pandas(tmp_path_factory, cols):
    """The columns flows.csv has (numbers, ids without commas or quotes) are written
    without pandas (else the fast path would silently not be taken)."""
    d = tmp_path_factory.mktemp("csv")
    expected = pandas_bytes(d, cols)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(pd.DataFrame, "to_csv", lambda *a, **k: pytest.fail("pandas was used"))
        write_columns_csv(d / "fast.csv", columns=cols)
    assert (d / "fast.csv").read_bytes() == expected


def test_other_columns_are_left_to_pandas(tmp_path):
    cols = {"a": [1.5, None, 3], "b": np.array([True, False, True]), "c": ["x", 2, None]}
    write_columns_csv(tmp_path / "fast.csv", columns=cols)
    assert (tmp_path / "fast.csv").read_bytes() == pandas_bytes(tmp_path, cols)


def test_unequal_columns_are_refused(tmp_path):
    with pytest.raises(ValueError, match="unequal lengths"):
        write_columns_csv(tmp_path / "x.csv", columns={"a": np.zeros(2), "b": ["x"]})


def test_flows_csv_can_be_left_out(tmp_path):
    flows = {k: [] for k in FLOW_COLUMNS}
    write_records(tmp_path / "with", stages=[], coflows=[], flows=flows, run={})
    write_records(tmp_path / "without", stages=[], coflows=[], flows=flows, run={},
                  write_flows=False)
    assert (tmp_path / "with" / "flows.csv").read_text().strip() == ",".join(FLOW_COLUMNS)
    assert not (tmp_path / "without" / "flows.csv").exists()
    assert sorted(p.name for p in (tmp_path / "without").iterdir()) == [
        "coflows.csv", "run.json", "stages.csv"]


@pytest.mark.slow
def test_fb_flow_records_same_bytes_as_pandas(fb_trace_path, tmp_path):
    from emulation.fluid.simulator import FluidSimulator
    from emulation.scheduler import make_policy
    from emulation.topology import big_switch
    from workloads import coflow_benchmark
    res = FluidSimulator(coflow_benchmark.load(fb_trace_path), big_switch(150, 1e9),
                         make_policy("varys"), realloc="coflow").run()
    cols = {k: res.flows[k] for k in FLOW_COLUMNS}
    assert len(cols["flow_id"]) == 706_397
    write_columns_csv(tmp_path / "fast.csv", columns=cols)
    assert (tmp_path / "fast.csv").read_bytes() == pandas_bytes(tmp_path, cols)
