"""The ``[sweep]`` and ``[full]`` tables of an experiment TOML: a file's sweep points
(``sweep_points``: the swept values and each point's tables, ``[full]`` applied first
with ``full``) and the checks that look across them: the ``[workload]`` keys no tuner
reads at any point (``check_workload_keys``) and a file's value that ``[sweep]``
replaces everywhere, checked all the same (``check_swept_file_values``).
"""
from __future__ import annotations

import copy
import itertools
import json
from pathlib import Path
from typing import Any

from schema.experiment import SWEPT_TABLES, ExperimentSection
from workloads.config import ConfigError, as_toml, build


def _table_keys(table: str) -> set[str]:
    """The keys one of the experiment / workload / topology / cluster tables may set."""
    import dataclasses

    from emulation.topology import TopologyConfig
    from workloads.cluster import ClusterConfig
    from workloads.generator import WorkloadConfig
    cls = {"experiment": ExperimentSection, "workload": WorkloadConfig,
           "topology": TopologyConfig, "cluster": ClusterConfig}[table]
    return {f.name for f in dataclasses.fields(cls) if f.init}


def _set_dotted(tables: dict[str, Any], key: str, value: Any, where: str) -> None:
    parts = key.split(".")
    if len(parts) != 2 or parts[0] not in SWEPT_TABLES:
        raise ConfigError(f"{where}: key {key!r} must be 'experiment.X', 'workload.X', "
                          "'topology.X' or 'cluster.X'")
    known = _table_keys(parts[0])
    if parts[1] not in known:  # named here, not as if one sweep point were wrong
        raise ConfigError(f"{where}: unknown key '{key}' (known {parts[0]} keys: "
                          f"{', '.join(sorted(known))})")
    tables.setdefault(parts[0], {})[parts[1]] = value


def sweep_points(path: Path, data: dict[str, Any], *, full: bool
                 ) -> list[tuple[dict[str, Any], dict[str, dict[str, Any]]]]:
    """Every sweep point of an experiment file's tables ``data``: (the swept values by
    dotted key, the point's experiment / workload / topology tables as written, with
    ``[full]`` applied first when ``full``; the cluster table when the file has one or
    sweeps one of its keys); one point without a ``[sweep]``."""
    base = {t: dict(data.get(t, {})) for t in ("experiment", "workload", "topology")}
    if "cluster" in data or any(k.startswith("cluster.") for k in
                                (*data.get("sweep", {}), *data.get("full", {}))):
        base["cluster"] = dict(data.get("cluster", {}))
    scratch: dict[str, dict[str, Any]] = {}  # [full]'s keys are named without --full too
    for k, v in data.get("full", {}).items():
        _set_dotted(base if full else scratch, k, v, f"{path} [full]")
    sweep = data.get("sweep", {})
    for k, vals in sweep.items():
        if not isinstance(vals, list) or not vals:
            raise ConfigError(f"{path} [sweep]: '{k}' must be a non-empty list")
        shown = [json.dumps(v, sort_keys=True) for v in vals]
        twice = [v for i, v in enumerate(vals)
                 if shown.count(shown[i]) > 1 and shown.index(shown[i]) == i]
        if twice:
            raise ConfigError(f"{path} [sweep]: '{k}' lists "
                              f"{', '.join(map(as_toml, twice))} twice")
    keys = sorted(sweep)
    points = []
    for combo in itertools.product(*(sweep[k] for k in keys)):
        tables = copy.deepcopy(base)
        for k, v in zip(keys, combo):
            _set_dotted(tables, k, v, f"{path} [sweep]")
        points.append(({k: v for k, v in zip(keys, combo)}, tables))
    return points


def check_swept_file_values(path: Path, data: dict[str, Any],
                            points: list[tuple[dict[str, Any], dict[str, dict[str, Any]]]],
                            *, full: bool) -> None:
    """ConfigError for a value the file sets in ``[experiment]``, ``[workload]`` or
    ``[topology]`` (or in ``[full]`` with ``full``) that ``[sweep]`` replaces at every
    point, when that value is bad with the file's other values of its table and at every
    point (the point's tables with the file's value put back; ``sweep_points``): a
    mistyped or out-of-range value is an error even where no run uses it."""
    from emulation.topology import TopologyConfig
    from workloads.cluster import ClusterConfig
    from workloads.generator import WorkloadConfig
    sections = {"experiment": ExperimentSection, "workload": WorkloadConfig,
                "topology": TopologyConfig, "cluster": ClusterConfig}
    base = {t: dict(data.get(t, {})) for t in sections}
    if full:
        for k, v in data.get("full", {}).items():
            _set_dotted(base, k, v, f"{path} [full]")

    def builds(table: str, values: dict[str, Any]) -> ConfigError | None:
        if table == "workload":
            values = {"seed": 1, **values}
        try:
            build(sections[table], values, table)
        except ConfigError as exc:
            return exc
        return None

    for key in data.get("sweep", {}):
        table, _, name = key.partition(".")
        if name not in base.get(table, {}) or builds(table, base[table]) is None:
            continue  # not set in the file, or valid with the file's own values
        first = None
        for _, tables in points:
            exc = builds(table, {**tables[table], name: base[table][name]})
            if exc is None:
                break
            first = first or exc
        else:
            raise ConfigError(f"{path}: {first} (the file's value of {key}, which [sweep] "
                              "replaces at every point: fix it or leave it out)")


def check_workload_keys(path: Path, workload_tables: list[dict[str, Any]]) -> None:
    """ConfigError naming the ``[workload]`` keys the file sets that no sweep point's trace
    depends on (``workloads.generator.unread_workload_keys``: another tuner's keys,
    ``ps_servers`` without parameter servers). ``workload_tables``: the table of each
    sweep point, as written; a key read at some point is fine."""
    from workloads.generator import unread_workload_keys
    unread = unread_workload_keys(workload_tables[0])
    for table in workload_tables[1:]:
        later = unread_workload_keys(table)
        unread = {k: why for k, why in unread.items() if k in later}
    if unread:
        every = " at any sweep point" if len(workload_tables) > 1 else ""
        raise ConfigError(f"{path}: set but not read{every}: "
                          + "; ".join(f"{k} ({why})" for k, why in unread.items())
                          + f"; remove {'it' if len(unread) == 1 else 'them'} (the keys "
                          "each tuner reads: TUNER_KEYS in workloads/generator.py)")
