"""The runs of the experiment suite: which files are a suite, their expansion into runs,
and the hashes that identify a run.

Owns which files of ``experiments/`` are the default suite and which the pinned-hosts
ablation (``SUITES``, ``SKIP_FILES``, ``suite_configs``), the expansion of one file into
``RunSpec``s (``load_experiment``, ``expand_experiment``: sweep points x seeds x
policies x repetitions, each point checked before any run with the schema of
``schema``: ``point_error``, ``check_topology_hosts``, ``check_workload_keys``,
``check_swept_file_values``) and of several into one checked list (``collect_specs``),
the policies a file without ``[experiment] policies`` runs (``registered_policies``:
every policy of the registry; ``SHIPPED_POLICIES``, what such a run records), and the
hashes that identify a run (``RunSpec.config_hash``: its whole config, recorded in its
directory; ``run_key``: the same without the labels of ``COSMETIC_EXPERIMENT_KEYS`` and
the run lists of ``RUN_LIST_EXPERIMENT_KEYS``, what decides whether a directory holds
the run; ``content_key``: what its records depend on). Nothing here runs anything or
writes a file.
"""
from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from emulation.backends import BACKENDS, EXACT
from emulation.records import file_sha256
from schema.experiment import TABLES, ExperimentSection
from schema.point import check_topology_hosts, hosts_source, point_cluster, point_error
from schema.sweep import check_swept_file_values, check_workload_keys, sweep_points
from workloads.config import ConfigError, as_toml, build, load_toml, to_dict, value_label

REPO = Path(__file__).resolve().parent.parent  # experiments/ and data/ live here
SKIP_FILES = frozenset({"default.toml", "testbed.toml", "testbed_random_seeds.toml"})  # in no suite
# The suites by name, each the experiment files of one folder: the default suite runs on
# a cluster with GPUs (or a trace with its own hosts, FB2010); the pinned-hosts ablation
# holds the experiments whose trace fixes each trial worker's host with no GPU capacity
# (a cluster that cannot exist: docs/design-notes.md, "A cluster with GPUs"); the
# validation suite holds the packet-level traces that measure the fluid model's error.
SUITES = {"default": REPO / "experiments", "pinned-hosts": REPO / "experiments" / "pinned_hosts",
          "validation": REPO / "experiments" / "validation"}
def skipped_note(backend: str) -> str:
    """The start of ``collect_specs``' note on a backend that cannot run here."""
    return f"{BACKENDS[backend].label} ({backend}) part skipped"
# The policies the repository ships, in registry order. A run of a file without
# ``[experiment] policies`` records this list as its experiment's ``policies`` (in
# run_config.json and so in its config hash), not the registry it ran with: registering a
# policy adds that policy's runs and leaves every run made before it done.
SHIPPED_POLICIES = ("beamer", "beamer-coflow", "beamer-sbssi", "beamer-stage-only",
                    "sincronia", "fifo_lm", "fair", "varys", "varys-queues")
# [experiment] keys that only label the results (the summary's text, the kind of figure,
# the names of seed groups):
# recorded in run_config.json and in the config hash, but a run whose config differs only
# in them is the same run (``run_key``): it stays done, and the runner rewrites them in
# place. ``name`` is not one: it names the run directories.
COSMETIC_EXPERIMENT_KEYS = ("description", "figure", "seed_sets")
# the lists that say which runs a file holds, recorded like the labels; a run's own policy,
# seed and repetition are fields of its config, so a run stays the same run when a policy,
# a seed or repetitions are added to (or removed from) its file
RUN_LIST_EXPERIMENT_KEYS = ("policies", "seeds", "repetitions")


@dataclass(frozen=True)
class RunSpec:
    """Everything one run needs; ``config_hash`` identifies it on disk."""

    experiment: str
    name: str
    backend: str
    policy: str
    seed: int
    params: dict[str, Any]
    experiment_cfg: dict[str, Any]
    workload: dict[str, Any]
    topology: dict[str, Any]
    trace_path: str = ""
    trace_sha256: str = ""
    repetition: int = 0
    extra: dict[str, Any] = field(default_factory=dict)
    # the [cluster] table (``workloads.cluster.ClusterConfig``) of a file that has one:
    # its trials are placed during the run; empty: a pinned trace
    cluster: dict[str, Any] = field(default_factory=dict)

    @property
    def config(self) -> dict[str, Any]:
        cfg = {"experiment": self.experiment, "backend": self.backend, "policy": self.policy,
               "seed": self.seed, "params": self.params, "experiment_cfg": self.experiment_cfg,
               "workload": self.workload, "topology": self.topology,
               "trace_sha256": self.trace_sha256}
        if self.backend not in EXACT:  # exact runs (one repetition) keep their earlier hashes
            cfg["repetition"] = self.repetition
        if self.cluster:  # a pinned trace's config has no cluster key
            cfg["cluster"] = self.cluster
        return cfg

    @property
    def config_hash(self) -> str:
        """Hash of ``identity(config)`` without the trace file's location: a trace file is
        identified by its content (``trace_sha256``), so moving the repository or the file
        keeps runs done."""
        return config_hash(self.config)

    @property
    def run_key(self) -> str:
        """``run_key`` of this run's config: equal for two configs that differ only in
        ``COSMETIC_EXPERIMENT_KEYS``, ``RUN_LIST_EXPERIMENT_KEYS`` (and the trace file's
        location)."""
        return run_key(self.config)


def config_hash(config: dict[str, Any]) -> str:
    """A run's config hash (``RunSpec.config_hash``) from its config (``RunSpec.config``,
    or a run_config.json as read back, its ``config_hash`` ignored)."""
    cfg = identity({k: v for k, v in config.items() if k != "config_hash"})
    cfg["experiment_cfg"] = {**cfg["experiment_cfg"], "trace": ""}
    return hashlib.sha256(json.dumps(cfg, sort_keys=True).encode()).hexdigest()[:16]


def _field_defaults(cls: type) -> dict[str, Any]:
    """A config dataclass's keys with a default, and that default as a run records it."""
    out = {}
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING:
            out[f.name] = to_dict(f.default)
        elif f.default_factory is not dataclasses.MISSING:
            out[f.name] = to_dict(f.default_factory())
    return out


def _table_classes() -> dict[str, type]:
    """A run config's tables and the dataclass each is built from."""
    from emulation.topology import TopologyConfig
    from workloads.cluster import ClusterConfig
    from workloads.generator import WorkloadConfig
    return {"experiment_cfg": ExperimentSection, "workload": WorkloadConfig,
            "topology": TopologyConfig, "cluster": ClusterConfig}


def identity(config: dict[str, Any]) -> dict[str, Any]:
    """A run's config as its identity is hashed: each table without the keys at their
    default, so that a key added to a table with a default that keeps what runs did before
    leaves every recorded run's identity as it was (run_config.json keeps every key)."""
    out = dict(config)
    for table, cls in _table_classes().items():
        if isinstance(out.get(table), dict):
            defaults = _field_defaults(cls)
            out[table] = {k: v for k, v in out[table].items()
                          if k not in defaults or defaults[k] != v}
    return out


def run_key(config: dict[str, Any]) -> str:
    """What decides whether a run directory holds a run: the hash of a run's config
    (``RunSpec.config``, or a run_config.json as read back, its ``config_hash`` ignored)
    without the trace file's location, the labels of ``COSMETIC_EXPERIMENT_KEYS`` and the
    run lists of ``RUN_LIST_EXPERIMENT_KEYS``."""
    cfg = identity({k: v for k, v in config.items() if k != "config_hash"})
    skip = COSMETIC_EXPERIMENT_KEYS + RUN_LIST_EXPERIMENT_KEYS
    cfg["experiment_cfg"] = {**{k: v for k, v in cfg["experiment_cfg"].items()
                                if k not in skip}, "trace": ""}
    return hashlib.sha256(json.dumps(cfg, sort_keys=True).encode()).hexdigest()[:16]


def content_key(spec: RunSpec) -> str:
    """What a fluid run's records depend on: its config without the experiment's name,
    description, figure, run lists and the swept parameters' labels. Two runs with the same key
    (the congestion family's base point sits in four experiments) give identical records."""
    cfg = identity(spec.config)
    cfg["experiment_cfg"] = {k: v for k, v in cfg["experiment_cfg"].items()
                             if k not in ("name", *COSMETIC_EXPERIMENT_KEYS,
                                          *RUN_LIST_EXPERIMENT_KEYS)}
    for k in ("experiment", "params"):
        cfg.pop(k)
    return hashlib.sha256(json.dumps(cfg, sort_keys=True).encode()).hexdigest()[:16]


def registered_policies() -> tuple[str, ...]:
    """Every policy of ``emulation.scheduler.POLICIES``, in registry order: what a file
    without ``[experiment] policies`` runs."""
    from emulation.scheduler import POLICIES
    return tuple(POLICIES)


def suite_configs(suite: str = "default") -> list[Path]:
    """A suite of ``SUITES``: every ``*.toml`` of its folder except ``SKIP_FILES``, sorted."""
    return sorted(p for p in SUITES[suite].glob("*.toml") if p.name not in SKIP_FILES)


def load_experiment(path: Path, *, full: bool) -> list[RunSpec]:
    """Validate one experiment TOML and expand it into runs (ConfigError names the key)."""
    return expand_experiment(path, full=full)[0]


def expand_experiment(path: Path, *, full: bool) -> tuple[list[RunSpec], list[str]]:
    """``load_experiment``, and one-line notes on the file (``<path>: ...``, each once):
    hosts the trace does not have: a larger ``topology.num_hosts``, or a leaf-spine's last
    leaf filled up (``check_topology_hosts``)."""
    data = _experiment_tables(path)
    if data.get("full") and not full:
        expand_experiment(path, full=True)  # a bad [full] value fails now, not at --full
    specs: list[RunSpec] = []
    notes: list[str] = []
    trace_hosts: dict[str, tuple[str, ...] | ConfigError] = {}  # trace file -> its hosts
    points = sweep_points(path, data, full=full)
    with_full = " with --full" if full and data.get("full") else ""
    for params, tables in points:
        pname = ",".join(f"{k.split('.')[1]}={value_label(v)}" for k, v in params.items())
        _raise_point_error(path, params, pname, tables, points, trace_hosts, with_full)
        at = (f" at the sweep point {pname}" if pname else "") + with_full
        point_specs, note = _point_runs(path, params, pname, tables, trace_hosts, at)
        specs += point_specs
        if note and f"{path}: {note}{at}" not in notes:
            notes.append(f"{path}: {note}{at}")
    check_workload_keys(path, [tables["workload"] for _, tables in points])
    check_swept_file_values(path, data, points, full=full)
    return specs, notes


def _experiment_tables(path: Path) -> dict[str, Any]:
    """The tables of an experiment TOML, each a known table; ConfigError for a key set in
    both ``[full]`` and ``[sweep]`` (``[sweep]`` replaces it at every point)."""
    data = load_toml(path)
    for key in data:
        if key not in TABLES:
            raise ConfigError(f"{path}: unknown key '{key}' (known tables: {', '.join(TABLES)})")
        if not isinstance(data[key], dict):
            raise ConfigError(f"{path}: '{key}' must be a table ([{key}]), got {as_toml(data[key])}")
    dead = sorted(set(data.get("full", {})) & set(data.get("sweep", {})))
    if dead:
        raise ConfigError(f"{path}: [full] sets {', '.join(dead)}, which [sweep] replaces at "
                          "every point, so --full would not use it: remove it from one of them")
    return data


def _raise_point_error(path: Path, params: dict[str, Any], pname: str,
                       tables: dict[str, dict[str, Any]],
                       points: list[tuple[dict[str, Any], dict[str, dict[str, Any]]]],
                       trace_hosts: dict[str, tuple[str, ...] | ConfigError],
                       with_full: str) -> None:
    """ConfigError for the first error of one sweep point (``point_error``), named by its
    sweep point unless it names no swept key and every point has it."""
    error = point_error(path, tables, trace_hosts)
    if error is None:
        return
    at = (f" at the sweep point {pname}" if pname else "") + with_full
    if (pname and not any(re.search(rf"(?<![\w.]){re.escape(k)}(?![\w])", error)
                          for k in params)
            and all(point_error(path, t, trace_hosts) == error for _, t in points)):
        at = with_full
    raise ConfigError(f"{path}: {error}{at}")


def _point_runs(path: Path, params: dict[str, Any], pname: str,
                tables: dict[str, dict[str, Any]],
                trace_hosts: dict[str, tuple[str, ...] | ConfigError], at: str
                ) -> tuple[list[RunSpec], str | None]:
    """The runs of one sweep point whose tables ``point_error`` passed (seeds x
    repetitions x policies), and the note on the topology's hosts the trace does not have
    (``check_topology_hosts``), or None."""
    from emulation.topology import TopologyConfig
    from workloads.generator import WorkloadConfig
    exp = build(ExperimentSection, tables["experiment"], "experiment")
    topo = build(TopologyConfig, tables["topology"], "topology")
    if (why := BACKENDS[exp.backend].refusal(topo)) is not None:
        raise ConfigError(f"{path}: {why}{at}")
    trace_path = trace_sha = ""
    if exp.trace:
        tp = (path.parent / exp.trace).resolve()
        if not tp.exists():
            raise ConfigError(f"{path}: experiment.trace: no such file {tp}")
        trace_path = str(tp)
        trace_sha = file_sha256(tp)
    policies = exp.policies if exp.policies is not None else registered_policies()
    exp_cfg = _recorded_experiment(exp)
    seeds = exp.seeds if not trace_path else exp.seeds[:1]
    wls = [build(WorkloadConfig, {**tables["workload"], "seed": seed}, "workload")
           for seed in seeds]
    hosts = (trace_hosts[trace_path] if trace_path
             else tuple(f"h{i}" for i in range(wls[0].num_hosts)))
    cluster = point_cluster(tables)
    cluster_cfg = to_dict(cluster) if cluster is not None else {}
    params = _canonical_params(params, {"experiment": to_dict(exp), "topology": to_dict(topo),
                                        "workload": to_dict(wls[0]), "cluster": cluster_cfg})
    note = check_topology_hosts(topo, hosts, hosts_key=hosts_source(exp, wls[0], hosts))
    specs = []
    for seed, wl in zip(seeds, wls):
        # a repetition's policies back to back (paired runs, docs/testbed.md)
        for rep, policy in itertools.product(range(exp.repetitions), policies):
            name = (pname + "," if pname else "") + f"policy={policy},seed={seed}"
            if exp.backend not in EXACT:
                name += f",rep={rep}"
            specs.append(RunSpec(experiment=exp.name, name=name, backend=exp.backend,
                                 policy=policy, seed=seed, params=params,
                                 experiment_cfg=exp_cfg, workload=to_dict(wl),
                                 topology=to_dict(topo), trace_path=trace_path,
                                 trace_sha256=trace_sha, repetition=rep,
                                 cluster=cluster_cfg))
    return specs, note


def _recorded_experiment(exp: ExperimentSection) -> dict[str, Any]:
    """The ``[experiment]`` table as a run records and hashes it (``experiment_cfg``)."""
    exp_cfg = to_dict(exp)
    # recorded and hashed: the file's list, or SHIPPED_POLICIES for a file without one
    exp_cfg["policies"] = list(exp.policies if exp.policies is not None else SHIPPED_POLICIES)
    if exp.fluid_model != "ideal":
        # the costs are part of the run: a new calibration makes new runs
        from emulation.packet_model import load_costs
        exp_cfg["packet_costs"] = load_costs(rate_scale=exp.rate_scale,
                                             time_scale=exp.time_scale).as_dict()
    return exp_cfg


def _canonical_params(params: dict[str, Any], built: dict[str, dict[str, Any]]
                      ) -> dict[str, Any]:
    """The swept values as their tables hold them once built (a float key written ``1`` is
    ``1.0``), so that a run's config and hash do not depend on how a number was written;
    a value the build changed in another way (the workload's seed) stays as written."""
    out = {}
    for k, v in params.items():
        table, key = k.split(".", 1)
        have = built.get(table, {}).get(key, v)
        out[k] = have if have == v else v
    return out


def collect_specs(configs: list[Path], *, full: bool, backend: str
                  ) -> tuple[list[RunSpec], list[str], list[str]]:
    """All runs of all configs for the chosen backend(s), notes on what was skipped (the
    results directory's NOTES.md), and notes on the config files (``expand_experiment``;
    printed, not recorded). ConfigError on any bad config (a key, a value, a topology
    short of the trace's hosts), before anything runs."""
    specs, notes, config_notes = [], [], []
    spec_paths: list[Path] = []  # the file each run comes from
    resolved = [Path(p).resolve() for p in configs]
    for p, r in zip(configs, resolved):
        if resolved.count(r) > 1:
            raise ConfigError(f"{p}: given twice")
    for path in configs:
        file_specs, file_notes = expand_experiment(path, full=full)
        config_notes += file_notes
        for s in file_specs:
            if backend != "both" and s.backend != backend:
                continue
            specs.append(s)
            spec_paths.append(path)
    seen: dict[tuple[str, str], Path] = {}
    for s, path in zip(specs, spec_paths):
        key = (s.experiment, s.name)
        if key not in seen:
            seen[key] = path
        elif seen[key] != path:
            raise ConfigError(f"{seen[key]} and {path}: both make the run {s.experiment}/{s.name}: "
                              "give each file its own [experiment] name")
        else:
            raise ConfigError(f"{path}: two of its runs are named {s.experiment}/{s.name} "
                              "(sweep values that are written alike?)")
    for name, info in BACKENDS.items():
        if any(s.backend == name for s in specs) and (why := info.unavailable()):
            notes.append(f"{skipped_note(name)}: {why}")
            specs = [s for s in specs if s.backend != name]
    return specs, notes, config_notes
