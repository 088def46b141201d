"""Instance names (``emulation/ids.py``) and the compiled trace's path and link tables
(``emulation/compiled_trace.py``), against values written out by hand."""
from __future__ import annotations

import numpy as np
import pytest

from emulation.compiled_trace import compile_trace
from emulation.ids import flow_id, flow_ids, parse_flow_id
from emulation.topology import big_switch
from tests.helpers import tiny_trace


def test_flow_ids_names_each_pair():
    assert flow_ids(["a0/j/i0/c0", "a1/j/i2/c1", "a0/j/i0/c0"], [3, 0, 12]) == [
        "a0/j/i0/c0/f3", "a1/j/i2/c1/f0", "a0/j/i0/c0/f12"]
    assert flow_ids([], []) == []
    # the same names as one at a time, and they parse back
    names = flow_ids(["x/i1/c0"] * 3, [2, 0, 1])
    assert names == [flow_id("x/i1/c0", i) for i in (2, 0, 1)]
    assert [parse_flow_id(n) for n in names] == [("x/i1/c0", 2), ("x/i1/c0", 0), ("x/i1/c0", 1)]


def test_flow_ids_rejects_bad_input():
    with pytest.raises(ValueError, match="2 coflow names for 1 flow indices"):
        flow_ids(["a", "b"], [0])
    with pytest.raises(ValueError, match="flow index -1"):
        flow_ids(["a"], [-1])


def test_paths_numbered_by_first_appearance_and_template_link_bytes():
    # big switch of 3 hosts: links (h0,s0)=0, (s0,h0)=1, (h1,s0)=2, (s0,h1)=3, (h2,s0)=4, (s0,h2)=5
    topo = big_switch(3, 8e9)
    trace = tiny_trace([{"id": "a", "stages": [{"id": "s", "jobs": [
        {"id": "j0", "coflows": [[(1, 0, 10), (0, 1, 20)], [(1, 0, 30)]]},
        {"id": "j1", "coflows": [[(2, 0, 40), (0, 1, 50), (1, 2, 60)]]}]}]}], hosts=3)
    ct = compile_trace(trace, topo)
    # pairs in trace order: (1,0) (0,1) (1,0) (2,0) (0,1) (1,2) -> paths 0 1 0 2 1 3
    assert ct.tf_pid.tolist() == [0, 1, 0, 2, 1, 3]
    assert ct.path_links.tolist() == [[2, 1], [0, 3], [4, 1], [2, 5]]
    assert ct.tf_src == ["h1", "h0", "h1", "h2", "h0", "h1"]
    assert ct.tf_dst == ["h0", "h1", "h0", "h0", "h1", "h2"]
    assert ct.t_f0.tolist() == [0, 2, 3] and ct.t_f1.tolist() == [2, 3, 6]
    # bytes per template on each link: template 0 = 10 (h1->h0) + 20 (h0->h1)
    expect = np.zeros((3, 6))
    expect[0, [2, 1]] += 10
    expect[0, [0, 3]] += 20
    expect[1, [2, 1]] += 30
    expect[2, [4, 1]] += 40
    expect[2, [0, 3]] += 50
    expect[2, [2, 5]] += 60
    assert np.array_equal(ct.tmpl_lb, expect)
    assert ct.tmpl_size.tolist() == [30.0, 30.0, 150.0]
    # 1 GB/s links; a template's uncontended time is its busiest link's bytes / 1e9 B/s:
    # template 2 carries 40 (h2 up, h0 down), 50 (h0 up, h1 down), 60 (h1 up, h2 down)
    assert ct.tmpl_sync_s.tolist() == [20 / 1e9, 30 / 1e9, 60 / 1e9]
