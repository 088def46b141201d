"""The backends' registry: what the config schema refuses, and that no code outside a
backend's package and the registry compares a backend's name."""
import ast
from pathlib import Path

import pytest

from emulation.backends import BACKENDS, EXACT, PACKET_LEVEL, backend
from schema.experiment import ExperimentSection
from tests.conftest import REPO
from workloads.config import ConfigError, build


def test_a_backend_the_registry_lacks_is_refused_naming_the_registered_ones():
    with pytest.raises(ConfigError, match=r'experiment.backend: must be one of '
                                          r'\["fluid", "mininet"\], got "ns3"'):
        build(ExperimentSection, {"name": "x", "backend": "ns3"}, "experiment")
    with pytest.raises(ValueError, match="unknown backend 'ns3'; known: fluid, mininet"):
        backend("ns3")


def test_limits_come_from_the_backend():
    """The packet level takes 1..8 classes and only each policy's own reallocation; the
    fluid backend any number of classes and one repetition (it is exact)."""
    build(ExperimentSection, {"name": "x", "priority_classes": 20}, "experiment")
    with pytest.raises(ConfigError, match="the mininet backend needs 1..8"):
        build(ExperimentSection, {"name": "x", "backend": "mininet", "priority_classes": 9},
              "experiment")
    with pytest.raises(ConfigError, match="realloc \"flow\" applies to fluid runs only"):
        build(ExperimentSection, {"name": "x", "backend": "mininet", "realloc": "flow"},
              "experiment")
    with pytest.raises(ConfigError, match="repetitions need backend = 'mininet'"):
        build(ExperimentSection, {"name": "x", "repetitions": 2}, "experiment")
    assert EXACT == {"fluid"} and PACKET_LEVEL == {"mininet"}


def _compared_names(path: Path) -> list[int]:
    """Lines of ``path`` where a registered backend's name is compared (==, !=, in)."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Compare):
            parts = [node.left, *node.comparators]
            if any(isinstance(p, ast.Constant) and p.value in BACKENDS for p in parts):
                lines.append(node.lineno)
    return lines


def test_no_backend_name_is_compared_outside_its_package_and_the_registry():
    own = {REPO / "emulation" / name for name in BACKENDS} | {REPO / "emulation" / "backends.py"}
    files = [p for d in ("runner", "schema", "analysis", "workloads", "emulation", "benchmarks")
             for p in (REPO / d).rglob("*.py")
             if not any(p == o or o in p.parents for o in own)]
    found = {str(p.relative_to(REPO)): ln for p in [*files, REPO / "run_experiments.py"]
             if (ln := _compared_names(p))}
    assert found == {}
