"""An experiment TOML applied to one run's command line (``python -m emulation.fluid`` and
``python -m emulation.mininet``, ``--config FILE``): the command lines' defaults, the
suite's own (``EXPERIMENT_DEFAULTS``, ``TOPOLOGY_DEFAULTS``), which keys of the file a
single run applies (its ``[topology]`` and some ``[experiment]`` keys, validated with the
suite's own schemas: ``read_config``), a note naming the tables and keys it does not
use, and the order in which values win: the command's defaults < the file < options
given on the command line (``parse_given``, ``TOPOLOGY_FLAGS``, ``merged_topology``,
``topology_config``)."""
from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

from emulation.topology import TopologyConfig
from schema.experiment import TABLES, ExperimentSection
from workloads.config import ConfigError, build, load_toml, to_dict

# the command lines' defaults are the suite's own (one schema): [experiment] and [topology]
EXPERIMENT_DEFAULTS = {f.name: f.default for f in dataclasses.fields(ExperimentSection)
                       if f.default is not dataclasses.MISSING}
TOPOLOGY_DEFAULTS = to_dict(TopologyConfig())
SILENT_EXPERIMENT_KEYS = ("name", "description", "figure")  # labels, nothing to apply
# command-line dest -> [topology] key
TOPOLOGY_FLAGS = {"topology": "kind", "hosts_per_leaf": "hosts_per_leaf",
                  "spines": "num_spines", "oversubscription": "oversubscription",
                  "link_rate_bps": "link_rate_bps"}


class _Unset:
    """Marks an option not given on the command line (so a --config value applies)."""

    def __repr__(self) -> str:
        return "unset"


UNSET = _Unset()


def parse_given(ap: argparse.ArgumentParser, argv: list[str] | None, dests
                ) -> tuple[argparse.Namespace, set[str]]:
    """``ap.parse_args(argv)`` with the options ``dests`` marked unset unless given: the
    parsed options with every default filled in, and the dests given on the command line."""
    args = ap.parse_args(argv, namespace=argparse.Namespace(**{d: UNSET for d in dests}))
    given = {d for d, v in vars(args).items() if v is not UNSET}
    for a in ap._actions:
        if getattr(args, a.dest, None) is UNSET:
            setattr(args, a.dest, a.default)
    return args, given


def _in(path: Path, fn, *args):
    try:
        return fn(*args)
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None


def read_config(path: Path, *, applied: tuple[str, ...], run_kind: str,
                checked: tuple[str, ...] = ()) -> tuple[dict, dict, list[str]]:
    """The keys an experiment TOML sets in [topology] and in [experiment] (those of
    ``applied``, and of ``checked``: returned for the caller to check, neither named as
    applied nor as unused), both validated with the suite's own schemas, and a note naming
    what a ``run_kind`` run ("fluid", "packet-level") does not use. ConfigError on unknown
    tables or keys."""
    data = load_toml(path)
    for key in data:
        if key not in TABLES:
            raise ConfigError(f"{path}: unknown key '{key}' (known tables: {', '.join(TABLES)})")
    topo = dict(data.get("topology", {}))
    _in(path, build, TopologyConfig, topo, "topology")
    exp = dict(data.get("experiment", {}))
    _in(path, build, ExperimentSection, {"name": path.stem, **exp}, "experiment")
    unused = []
    if "workload" in data:  # not used here, but a typo in it is still an error
        from workloads.generator import WorkloadConfig
        _in(path, build, WorkloadConfig, dict(data["workload"]), "workload")
        unused.append("[workload] (the generator's: python -m workloads generate)")
    if "cluster" in data:  # checked here too; a trace carries the cluster it was made for
        from workloads.cluster import ClusterConfig
        _in(path, build, ClusterConfig, dict(data["cluster"]), "cluster")
        unused.append("[cluster] (written into the trace by python -m workloads generate; "
                      "a run reads it from the trace)")
    runner = [f"[{t}]" for t in TABLES if t in data and t not in ("topology", "experiment",
                                                                   "workload", "cluster")]
    runner += [f"experiment.{k}" for k in exp
               if k not in applied and k not in checked and k not in SILENT_EXPERIMENT_KEYS]
    if runner:
        unused.append(f"{', '.join(runner)} (the suite runner's: run_experiments.py)")
    notes = []
    if unused:
        used = (["[topology]"] if "topology" in data else []) + [
            f"experiment.{k}" for k in applied if k in exp]
        notes.append(f"note: {path}: "
                     + (f"applied {', '.join(used)}; " if used else "")
                     + f"not used by a {run_kind} run: " + "; ".join(unused))
    return topo, {k: exp[k] for k in (*applied, *checked) if k in exp}, notes


def merged_topology(defaults: dict, file_topo: dict, args: argparse.Namespace,
                    given: set[str]) -> dict:
    """[topology] keys: ``defaults`` < the file's < the options given."""
    topo = {**defaults, **file_topo}
    for dest, key in TOPOLOGY_FLAGS.items():
        if dest in given and getattr(args, dest) is not None:
            topo[key] = getattr(args, dest)
    return topo


def topology_config(topo: dict, given: set[str], source: Path | None = None) -> TopologyConfig:
    """``TopologyConfig`` of the merged [topology] keys; a bad value's ConfigError names
    the option it came from (``--spines 0``) or the file (``source``) that set it."""
    try:
        return build(TopologyConfig, topo, "topology")
    except ConfigError as exc:
        msg = str(exc)
        for dest, key in TOPOLOGY_FLAGS.items():
            if msg.startswith(f"topology.{key}:") and dest in given:
                flag = "--" + dest.replace("_", "-")
                raise ConfigError(f"{flag}: {msg[len(f'topology.{key}:'):].strip()}") from None
        raise ConfigError(f"{source}: {msg}" if source is not None else msg) from None

