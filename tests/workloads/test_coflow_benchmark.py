"""The public FB2010 coflow-benchmark trace and malformed copies of it."""
import subprocess

import pytest

from tests.conftest import PYTHON, REPO
from workloads import coflow_benchmark
from workloads.trace import TraceError


def _independent_total_bytes(path):
    total_mb = 0.0
    lines = path.read_text().split("\n")
    for ln in lines[1:]:
        tok = ln.split()
        if not tok:
            continue
        m = int(tok[2])
        for entry in tok[4 + m:]:
            total_mb += float(entry.split(":")[1])
    return round(total_mb * 2 ** 20)


def test_fb_trace_loads(fb_trace_path):
    t = coflow_benchmark.load(fb_trace_path)
    assert len(t.hosts) == 150
    assert len(t.apps) == 526
    s = t.summary()
    assert s["coflows"] == 526
    assert s["flows"] == 706_397
    assert s["total_bytes"] == _independent_total_bytes(fb_trace_path)
    # first coflow: id 1, arrival 0 ms, mapper 22, reducer 65 with 1.0 MB
    (f,) = t.apps[0].stages[0].jobs[0].coflows[0].flows
    assert (f.src, f.dst, f.size_bytes) == ("h22", "h65", 2 ** 20)
    assert t.apps[1].arrival_s == pytest.approx(10.833)


def _mutate(src, tmp_path, fn):
    lines = src.read_text().split("\n")
    fn(lines)
    p = tmp_path / "bad.txt"
    p.write_text("\n".join(lines))
    return p


@pytest.mark.parametrize("mutation,line,needle", [
    (lambda L: L.__delitem__(slice(300, None)), 300, "promises 526 coflows"),
    (lambda L: L.__setitem__(2, L[2].replace("140:48.0", "140:abc")), 3, "bad reducer"),
    (lambda L: L.__setitem__(3, "3 13122 2 66"), 4, "expected"),
    (lambda L: L.__setitem__(1, "1 0 1 999 1 65:1.0"), 2, "bad port"),
    (lambda L: L.__setitem__(5, L[5].rsplit(" ", 1)[0]), 6, "num_reducers"),
    # 1e-7 MB = 0.1 byte: rounds to an empty coflow, which would never complete
    (lambda L: L.__setitem__(1, "1 0 1 22 1 65:0.0000001"), 2, "no byte to send"),
])
def test_malformed_copy_fails_with_line_number(fb_trace_path, tmp_path, mutation, line, needle):
    p = _mutate(fb_trace_path, tmp_path, mutation)
    with pytest.raises(TraceError, match=f"bad.txt:{line}: .*{needle}"):
        coflow_benchmark.load(p)
    r = subprocess.run([PYTHON, "-m", "workloads", "validate", str(p)], cwd=REPO,
                       capture_output=True, text=True)
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and f":{line}:" in r.stderr and "Traceback" not in r.stderr


def test_bytes_split_over_mappers_by_hand(tmp_path):
    """A reducer's bytes split evenly over its mappers, the remainder one byte each to
    the first ones; a mapper whose share is 0 bytes sends no flow."""
    import gc
    from workloads.trace import Flow
    mb = 2 ** -20  # one byte, exactly
    p = tmp_path / "split.txt"
    p.write_text(f"4 2\n1 0 3 0 1 2 1 3:{4 * mb!r}\n2 5 3 0 1 2 1 3:{2 * mb!r}\n")
    was_enabled = gc.isenabled()
    t = coflow_benchmark.load(p)
    assert gc.isenabled() == was_enabled
    flows = [a.stages[0].jobs[0].coflows[0].flows for a in t.apps]
    assert flows[0] == (Flow("h0", "h3", 2), Flow("h1", "h3", 1), Flow("h2", "h3", 1))
    assert flows[1] == (Flow("h0", "h3", 1), Flow("h1", "h3", 1))
    assert all(type(f) is Flow and f.size_bytes == f[2] for fs in flows for f in fs)
