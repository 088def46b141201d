"""The committed results hold each configuration's records once: no two run directories of
results/ with records of their own have the same content key (what records depend on),
and every directory without records names, in run.json ``same_run_as``, one that has them
and the same content key."""
from collections import defaultdict

from emulation import store
from runner.config import content_key
from runner.results_dir import committed_runs
from runner.verify import spec_from_record
from tests.conftest import REPO

RESULTS = REPO / "results"


def _fluid_runs():
    return [d for d in committed_runs(RESULTS)
            if store.read_json(d / "run_config.json")["backend"] == "fluid"]


def test_no_two_run_directories_hold_one_configuration():
    holders = defaultdict(list)
    for d in _fluid_runs():
        if store.has(d / "stages.csv"):
            holders[content_key(spec_from_record(d))].append(d.relative_to(RESULTS).as_posix())
    twice = {k: v for k, v in holders.items() if len(v) > 1}
    assert not twice, list(twice.values())[:3]
    assert len(holders) > 1000  # the suite's fluid runs were read


def test_every_shared_run_names_a_holder_of_its_configuration():
    shared = [d for d in _fluid_runs() if not store.has(d / "stages.csv")]
    assert shared  # the suite has scenarios that coincide (e.g. cong-* base points)
    for d in shared:
        run = store.read_json(d / "run.json")
        src = RESULTS / run["same_run_as"]
        assert store.has(src / "stages.csv"), d
        assert content_key(spec_from_record(d)) == content_key(spec_from_record(src)), d
        assert not store.has(d / "coflows.csv") and not store.has(d / "trials.csv"), d
