"""The committed results hold each configuration's records once: no two run directories of
results/ with records of their own have the same content key (what records depend on),
and every directory without records names, in run.json ``same_run_as``, one that has them
and the same content key."""
import json
from collections import defaultdict

from runner.config import content_key
from runner.results_dir import committed_runs
from runner.verify import spec_from_record
from tests.conftest import REPO

RESULTS = REPO / "results"


def _fluid_runs():
    return [d for d in committed_runs(RESULTS)
            if json.loads((d / "run_config.json").read_text())["backend"] == "fluid"]


def test_no_two_run_directories_hold_one_configuration():
    holders = defaultdict(list)
    for d in _fluid_runs():
        if (d / "stages.csv").exists():
            holders[content_key(spec_from_record(d))].append(d.relative_to(RESULTS).as_posix())
    twice = {k: v for k, v in holders.items() if len(v) > 1}
    assert not twice, list(twice.values())[:3]
    assert len(holders) > 1000  # the suite's fluid runs were read


def test_every_shared_run_names_a_holder_of_its_configuration():
    shared = [d for d in _fluid_runs() if not (d / "stages.csv").exists()]
    assert shared  # the suite has scenarios that coincide (e.g. cong-* base points)
    for d in shared:
        run = json.loads((d / "run.json").read_text())
        src = RESULTS / run["same_run_as"]
        assert (src / "stages.csv").exists(), d
        assert content_key(spec_from_record(d)) == content_key(spec_from_record(src)), d
        assert sorted(p.name for p in d.iterdir()) == ["run.json", "run_config.json"], d
