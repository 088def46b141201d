"""The lower bound kept between runs (``emulation.scheduler.lower_bound_cache``): a hit
gives the freshly computed value bit for bit, and whatever the bound depends on (the
trace file's bytes, the topology, the release setting, the code) changes the key."""
import json

import pytest

from emulation.scheduler import lower_bound_cache as lbc
from emulation.scheduler.lower_bound import lower_bound
from emulation.topology import big_switch
from emulation.records import file_sha256
from tests.helpers import tiny_trace
from workloads import trace as trace_mod


def two_apps(size_bytes: int):
    """Two one-stage apps sharing host h1's downlink (the LP has two items)."""
    return tiny_trace([
        {"id": "a", "stages": [{"id": "a/s", "jobs": [
            {"id": "a/j", "coflows": [[(0, 1, size_bytes)]]}]}]},
        {"id": "b", "arrival_s": 0.1, "stages": [{"id": "b/s", "jobs": [
            {"id": "b/j", "coflows": [[(2, 1, 3 * size_bytes), (3, 2, size_bytes)]]}]}]}])


def saved(tmp_path, trace, name):
    p = tmp_path / name
    trace_mod.save(trace, p)
    return p, trace_mod.load(p)


TOPO = big_switch(4, 8e6)  # 1 MB/s per link


def bound(path, trace, cache_dir, topo=TOPO, **kw):
    return lbc.cached_lower_bound(trace, topo, trace_sha256=file_sha256(path),
                                  cache_dir=cache_dir, **kw)


def test_hit_equals_a_fresh_computation(tmp_path):
    path, t = saved(tmp_path, two_apps(10 ** 6), "t.json")
    fresh = lower_bound(t, TOPO).avg_sct_s
    first = bound(path, t, tmp_path / "cache")
    assert (first.hit, first.stored) == (False, True) and first.path.exists()
    second = bound(path, t, tmp_path / "cache")
    assert second.hit and second.path == first.path
    assert first.avg_sct_s == fresh and second.avg_sct_s == fresh  # bit for bit
    assert json.loads(first.path.read_text())["inputs"]["trace_sha256"] == file_sha256(path)


def test_a_hit_is_read_not_recomputed(tmp_path):
    """The entry's value is what a hit returns (a planted value comes back)."""
    path, t = saved(tmp_path, two_apps(10 ** 6), "t.json")
    entry_path = bound(path, t, tmp_path / "cache").path
    entry = json.loads(entry_path.read_text())
    entry["avg_sct_s"] = 123.25
    entry_path.write_text(json.dumps(entry))
    assert bound(path, t, tmp_path / "cache").avg_sct_s == 123.25


def test_a_changed_trace_misses(tmp_path):
    path, t = saved(tmp_path, two_apps(10 ** 6), "t.json")
    old = bound(path, t, tmp_path / "cache").avg_sct_s
    path2, t2 = saved(tmp_path, two_apps(2 * 10 ** 6), "t2.json")
    new = bound(path2, t2, tmp_path / "cache")
    assert not new.hit and new.avg_sct_s == lower_bound(t2, TOPO).avg_sct_s != old
    assert len(list((tmp_path / "cache").glob("*.json"))) == 2


@pytest.mark.parametrize("change", ["link rate", "host names", "release at zero",
                                    "max rounds", "code"])
def test_what_the_bound_depends_on_is_in_the_key(tmp_path, monkeypatch, change):
    path, t = saved(tmp_path, two_apps(10 ** 6), "t.json")
    assert not bound(path, t, tmp_path / "cache").hit
    kw, topo = {}, TOPO
    if change == "link rate":
        topo = big_switch(4, 16e6)
    elif change == "host names":
        topo = big_switch(4, 8e6, host_names=("h3", "h2", "h1", "h0"))  # links in another order
    elif change == "release at zero":
        kw = {"release_at_zero": True}
    elif change == "max rounds":
        kw = {"max_rounds": 3}
    else:
        monkeypatch.setattr(lbc, "sources_sha256", lambda: "0" * 64)
    again = bound(path, t, tmp_path / "cache", topo=topo, **kw)
    assert not again.hit
    assert again.avg_sct_s == lower_bound(t, topo, **kw).avg_sct_s


def test_malformed_or_foreign_entries_are_recomputed(tmp_path):
    path, t = saved(tmp_path, two_apps(10 ** 6), "t.json")
    fresh = lower_bound(t, TOPO).avg_sct_s
    entry_path = bound(path, t, tmp_path / "cache").path
    for text in ("{not json", json.dumps({"avg_sct_s": 1.0}), json.dumps([1, 2])):
        entry_path.write_text(text)
        again = bound(path, t, tmp_path / "cache")
        assert not again.hit and again.avg_sct_s == fresh
        assert json.loads(entry_path.read_text())["avg_sct_s"] == fresh  # rewritten


def test_an_unwritable_directory_still_gives_the_bound(tmp_path):
    path, t = saved(tmp_path, two_apps(10 ** 6), "t.json")
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    got = bound(path, t, blocker / "cache")
    assert (got.hit, got.stored) == (False, False)
    assert got.avg_sct_s == lower_bound(t, TOPO).avg_sct_s


def test_cache_directory_comes_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("BEAMER_CACHE_DIR", str(tmp_path / "b"))
    assert lbc.lower_bound_cache_dir() == tmp_path / "b" / "lower-bound"
    monkeypatch.delenv("BEAMER_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert lbc.lower_bound_cache_dir() == tmp_path / "x" / "beamer-artifact" / "lower-bound"
