"""The experiment TOML schema and its expansion into runs.

Owns the tables of an experiment file (``TABLES``: ``[experiment]`` =
``ExperimentSection``, ``[workload]``, ``[topology]``, ``[sweep]``, ``[full]``), which
files of ``experiments/`` are the default suite and which the pinned-hosts ablation
(``SUITES``, ``SKIP_FILES``, ``suite_configs``), the
expansion of one file into ``RunSpec``s (``load_experiment``: sweep points x seeds x
policies x repetitions, a trace file named by ``[experiment] trace`` validated whole
as a run loads it (``trace_file_hosts``), each point's topology checked to hold every
host of its trace, with a note on hosts no flow uses: ``check_topology_hosts``, ``expand_experiment``;
the ``[workload]`` keys no tuner reads at any point: ``sweep_points``,
``check_workload_keys``; a file's value that ``[sweep]`` replaces everywhere, checked
all the same: ``check_swept_file_values``) and of several into one checked list (``collect_specs``), the
policies a file without ``[experiment] policies`` runs (``registered_policies``: every
policy of the registry), and the hashes that identify a run (``RunSpec.config_hash``:
its whole config, recorded in its directory; ``run_key``: the same without the labels of
``COSMETIC_EXPERIMENT_KEYS`` and the run lists of ``RUN_LIST_EXPERIMENT_KEYS``, what
decides whether a directory holds the run;
``content_key``: what its records depend on). Nothing here runs anything or writes a
file; the CLIs of ``workloads`` and ``emulation.fluid`` import the schema from here to
validate a config.
"""
from __future__ import annotations

import copy
import hashlib
import itertools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from emulation.records import file_sha256
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
TABLES = ("experiment", "workload", "topology", "cluster", "sweep", "full")
SWEPT_TABLES = ("experiment", "workload", "topology", "cluster")  # what [sweep] keys name
BACKENDS = ("fluid", "mininet")
MININET_SKIPPED = "packet-level (Mininet) part skipped"  # the start of collect_specs' note
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
class ExperimentSection:
    """The ``[experiment]`` table."""

    name: str
    description: str = ""
    backend: Literal["fluid", "mininet"] = "fluid"
    # None (the key left out): every registered policy, in registry order
    # (``registered_policies``, resolved when the file is expanded into runs)
    policies: tuple[str, ...] | None = None
    seeds: tuple[int, ...] = (1, 2, 3)
    # names for groups of seeds, reported apart by the analysis (e.g. validation = seeds
    # looked at while a policy was chosen, evaluation = seeds no choice looked at); a label
    seed_sets: dict[str, tuple[int, ...]] | None = None
    priority_classes: int = 8
    release_at_zero: bool = False
    # "policy" (the default): each policy as the packet backend runs it, decisions at its
    # published events and rates as switch queues give them (Policy.realloc_mode);
    # ablations: "flow" (every policy asked and rates recomputed at every flow
    # completion), "coflow" (both at coflow-level events only), "queues" (decisions at
    # coflow-level events, rates at every flow completion)
    realloc: Literal["flow", "coflow", "queues", "policy"] = "policy"
    trace: str = ""
    figure: Literal["bars", "line"] = "bars"
    rate_scale: float = 0.003
    time_scale: float = 2.0
    repetitions: int = 1
    # fluid runs: "ideal" (the default) or "packet-aware", the costs calibrated for the
    # packet level at rate_scale / time_scale (emulation/fluid/packet_model.py); a
    # packet-level run writes both twins either way
    fluid_model: Literal["ideal", "packet-aware"] = "ideal"

    def check(self, where: str = "experiment") -> None:
        from emulation.scheduler import POLICIES
        for p in self.policies or ():
            if p not in POLICIES:
                raise ConfigError(f"{where}.policies: unknown policy {as_toml(p)}; known: {', '.join(POLICIES)}")
        if self.policies == () or not self.seeds:
            raise ConfigError(f"{where}: policies and seeds must not be empty")
        for key, values in (("policies", self.policies or ()), ("seeds", self.seeds)):
            twice = sorted({v for v in values if list(values).count(v) > 1})
            if twice:
                raise ConfigError(f"{where}.{key}: {', '.join(map(as_toml, twice))} listed twice")
        named = [seed for seeds in (self.seed_sets or {}).values() for seed in seeds]
        twice = sorted({seed for seed in named if named.count(seed) > 1})
        if twice:
            raise ConfigError(f"{where}.seed_sets: seed {as_toml(twice[0])} is in two sets")
        if self.priority_classes < 0:
            raise ConfigError(f"{where}.priority_classes: must be >= 0")
        if self.backend == "mininet" and self.realloc != "policy":
            raise ConfigError(f"{where}.realloc: the mininet backend runs each policy at its "
                              f"published events (its twin: realloc \"policy\"); "
                              f"realloc {as_toml(self.realloc)} applies to fluid runs only")
        if self.backend == "mininet" and not 1 <= self.priority_classes <= 8:
            raise ConfigError(f"{where}.priority_classes: the mininet backend needs 1..8")
        if not (self.rate_scale > 0 and self.time_scale > 0):  # NaN fails too
            raise ConfigError(f"{where}.rate_scale/time_scale: must be > 0")
        if self.repetitions < 1:
            raise ConfigError(f"{where}.repetitions: must be >= 1")
        if self.backend == "fluid" and self.repetitions != 1:
            raise ConfigError(f"{where}.repetitions: the fluid backend is deterministic; "
                              "repetitions need backend = 'mininet'")
        if self.fluid_model == "packet-aware":
            from emulation.fluid.packet_model import CALIBRATION_PATH, calibration_key, load_costs
            if self.backend == "mininet":
                raise ConfigError(f"{where}.fluid_model: a packet-level run writes both "
                                  "fluid twins (twin/, twin_packet/); the key is for fluid runs")
            if load_costs(rate_scale=self.rate_scale, time_scale=self.time_scale) is None:
                raise ConfigError(
                    f"{where}.fluid_model: no calibration for "
                    f"{calibration_key(rate_scale=self.rate_scale, time_scale=self.time_scale)} "
                    f"in {CALIBRATION_PATH.name} (benchmarks/packet_costs.py makes one)")


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
        if self.backend == "mininet":  # fluid runs (one repetition) keep their earlier hashes
            cfg["repetition"] = self.repetition
        if self.cluster:  # a pinned trace's config has no cluster key
            cfg["cluster"] = self.cluster
        return cfg

    @property
    def config_hash(self) -> str:
        """Hash of ``config`` without the trace file's location: a trace file is identified
        by its content (``trace_sha256``), so moving the repository or the file keeps runs done."""
        cfg = {**self.config, "experiment_cfg": {**self.experiment_cfg, "trace": ""}}
        return hashlib.sha256(json.dumps(cfg, sort_keys=True).encode()).hexdigest()[:16]

    @property
    def run_key(self) -> str:
        """``run_key`` of this run's config: equal for two configs that differ only in
        ``COSMETIC_EXPERIMENT_KEYS``, ``RUN_LIST_EXPERIMENT_KEYS`` (and the trace file's
        location)."""
        return run_key(self.config)


def run_key(config: dict[str, Any]) -> str:
    """What decides whether a run directory holds a run: the hash of a run's config
    (``RunSpec.config``, or a run_config.json as read back, its ``config_hash`` ignored)
    without the trace file's location, the labels of ``COSMETIC_EXPERIMENT_KEYS`` and the
    run lists of ``RUN_LIST_EXPERIMENT_KEYS``."""
    cfg = {k: v for k, v in config.items() if k != "config_hash"}
    skip = COSMETIC_EXPERIMENT_KEYS + RUN_LIST_EXPERIMENT_KEYS
    cfg["experiment_cfg"] = {**{k: v for k, v in cfg["experiment_cfg"].items()
                                if k not in skip}, "trace": ""}
    return hashlib.sha256(json.dumps(cfg, sort_keys=True).encode()).hexdigest()[:16]


def content_key(spec: RunSpec) -> str:
    """What a fluid run's records depend on: its config without the experiment's name,
    description, figure, run lists and the swept parameters' labels. Two runs with the same key
    (the congestion family's base point sits in four experiments) give identical records."""
    cfg = dict(spec.config)
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


def trace_file_hosts(path: Path, key: str = "experiment.trace") -> tuple[str, ...]:
    """The hosts of a trace file, validated whole as a run loads it
    (``coflow_benchmark.load_any``: a JSON trace's ``hosts``, a coflow-benchmark file's
    ports ``h0..``; FB2010's 706,397 flows in about 0.3 s). ConfigError naming ``key``
    (the TOML key that names the file) and the trace's problem (``TraceError``'s line,
    which names the file) if it is not a valid trace."""
    from workloads import coflow_benchmark
    from workloads.trace import TraceError
    try:
        return coflow_benchmark.load_any(path).hosts
    except TraceError as exc:
        raise ConfigError(f"{key}: {exc}") from None


def check_topology_hosts(topo: Any, trace_hosts: tuple[str, ...], *, hosts_key: str
                         ) -> str | None:
    """Check before any run that the topology ``topo`` (a ``TopologyConfig``) holds every
    host of the trace (``trace_hosts``; ``hosts_key`` says where their number comes from,
    e.g. ``workload.num_hosts = 16``): ConfigError naming ``topology.num_hosts`` if not.
    Returns a one-line note naming the topology's hosts the trace does not have (no flow
    can use them), else None: those of a ``topology.num_hosts`` larger than the trace's
    host count, and those a leaf-spine adds to fill its last leaf (``hosts_per_leaf`` does
    not divide the host count); and a leaf-spine of one leaf, whose spines no flow crosses."""
    from emulation.topology import build_topology, host_span
    wanted = topo.num_hosts or len(trace_hosts)
    built = build_topology(topo, trace_hosts, hosts_key=hosts_key)
    parts = []
    used = set(trace_hosts)
    unused = [h for h in built.hosts[:wanted] if h not in used]
    if unused:
        parts.append(f"topology.num_hosts = {topo.num_hosts} is more than the trace's host "
                     f"count ({hosts_key}): "
                     + (f"the {len(unused)} hosts {host_span(unused)}, not in the trace, carry"
                        if len(unused) > 1 else f"the host {host_span(unused)}, not in the "
                        "trace, carries")
                     + " no traffic")
    if len(built.hosts) > wanted:
        added = list(built.hosts[wanted:])
        leaves = built.params["num_leaves"]
        last = built.switches[leaves - 1]
        source = f"topology.num_hosts = {topo.num_hosts}" if topo.num_hosts else hosts_key
        parts.append(f"topology.hosts_per_leaf = {topo.hosts_per_leaf} does not divide the "
                     f"{wanted} hosts ({source}): the leaf_spine has {leaves} "
                     f"{'leaf' if leaves == 1 else 'leaves'}, "
                     f"{len(built.hosts)} hosts; "
                     + (f"the {len(added)} added hosts {host_span(added)} on leaf {last} carry"
                        if len(added) > 1 else f"the added host {host_span(added)} on leaf "
                        f"{last} carries")
                     + f" no traffic, and {last}'s uplinks are sized for "
                     f"{topo.hosts_per_leaf} hosts like every leaf's")
    if topo.kind == "leaf_spine" and built.params["num_leaves"] == 1:
        parts.append(f"the leaf_spine has one leaf (topology.hosts_per_leaf = "
                     f"{topo.hosts_per_leaf} holds all {wanted} hosts): no flow crosses a "
                     "spine, so topology.oversubscription and topology.num_spines change "
                     "nothing")
    return "; ".join(parts) or None


def _hosts_key(exp: Any, workload: Any, hosts: tuple[str, ...]) -> str:
    """How a host-count message names where the trace's hosts come from."""
    if exp.trace:
        return f"experiment.trace {exp.trace}: {len(hosts)} hosts"
    return f"workload.num_hosts = {workload.num_hosts}"


def point_error(path: Path, tables: dict[str, dict[str, Any]],
                trace_hosts: dict[str, tuple[str, ...] | ConfigError]) -> str | None:
    """The first error of one sweep point's tables (as ``ConfigError`` words it, without
    the file's path), or None: ``[experiment]`` and ``[topology]`` values, ``[workload]``
    under each seed, the trace file (validated whole: ``trace_file_hosts``) and the
    topology's hosts against the trace's (``trace_hosts`` caches each trace file's hosts,
    or its error, by resolved path: one load per file; a missing trace file is left to
    the caller)."""
    from emulation.topology import TopologyConfig
    from workloads.generator import WorkloadConfig, check_trial_sizes
    try:
        exp = build(ExperimentSection, tables["experiment"], "experiment")
        topo = build(TopologyConfig, tables["topology"], "topology")
        cluster = point_cluster(tables)
        if exp.trace and not (path.parent / exp.trace).resolve().exists():
            return None
        if exp.trace and cluster is not None:
            raise ConfigError("[cluster]: places the trials of generated traces; "
                              "experiment.trace names a pinned trace file")
        workload = [build(WorkloadConfig, {**tables["workload"], "seed": seed}, "workload")
                    for seed in (exp.seeds[:1] if exp.trace else exp.seeds)][0]
        if not exp.trace:
            check_trial_sizes(workload, cluster)
        if exp.trace:
            tp = (path.parent / exp.trace).resolve()
            if str(tp) not in trace_hosts:
                try:
                    trace_hosts[str(tp)] = trace_file_hosts(
                        tp, key=f"experiment.trace = {as_toml(exp.trace)}")
                except ConfigError as exc:
                    trace_hosts[str(tp)] = exc
            hosts = trace_hosts[str(tp)]
            if isinstance(hosts, ConfigError):
                raise hosts
        else:
            hosts = tuple(f"h{i}" for i in range(workload.num_hosts))  # the generator's names
        check_topology_hosts(topo, hosts, hosts_key=_hosts_key(exp, workload, hosts))
    except ConfigError as exc:
        return str(exc)
    return None


def point_cluster(tables: dict[str, dict[str, Any]]) -> Any:
    """The ``ClusterConfig`` of one sweep point's tables, or None for a file without a
    ``[cluster]`` table (pinned traces)."""
    from workloads.cluster import ClusterConfig
    if "cluster" not in tables:
        return None
    return build(ClusterConfig, tables["cluster"], "cluster")


def load_experiment(path: Path, *, full: bool) -> list[RunSpec]:
    """Validate one experiment TOML and expand it into runs (ConfigError names the key)."""
    return expand_experiment(path, full=full)[0]


def expand_experiment(path: Path, *, full: bool) -> tuple[list[RunSpec], list[str]]:
    """``load_experiment``, and one-line notes on the file (``<path>: ...``, each once):
    hosts the trace does not have: a larger ``topology.num_hosts``, or a leaf-spine's last
    leaf filled up (``check_topology_hosts``)."""
    from emulation.topology import TopologyConfig
    from workloads.generator import WorkloadConfig
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
    if data.get("full") and not full:
        expand_experiment(path, full=True)  # a bad [full] value fails now, not at --full
    specs: list[RunSpec] = []
    notes: list[str] = []
    trace_hosts: dict[str, tuple[str, ...] | ConfigError] = {}  # trace file -> its hosts
    points = sweep_points(path, data, full=full)
    for params, tables in points:
        pname = ",".join(f"{k.split('.')[1]}={value_label(v)}" for k, v in params.items())
        at = "".join([f" at the sweep point {pname}" if pname else "",
                      " with --full" if full and data.get("full") else ""])
        error = point_error(path, tables, trace_hosts)
        if error is not None:
            # named by its sweep point unless it names no swept key and every point has it
            if (pname and not any(re.search(rf"(?<![\w.]){re.escape(k)}(?![\w])", error)
                                  for k in params)
                    and all(point_error(path, t, trace_hosts) == error for _, t in points)):
                at = " with --full" if full and data.get("full") else ""
            raise ConfigError(f"{path}: {error}{at}")
        exp = build(ExperimentSection, tables["experiment"], "experiment")
        topo = build(TopologyConfig, tables["topology"], "topology")
        if exp.backend == "mininet":
            from emulation.mininet.net import unbuildable
            if (why := unbuildable(topo)) is not None:
                raise ConfigError(f"{path}: {why}{at}")
        trace_path = trace_sha = ""
        if exp.trace:
            tp = (path.parent / exp.trace).resolve()
            if not tp.exists():
                raise ConfigError(f"{path}: experiment.trace: no such file {tp}")
            trace_path = str(tp)
            trace_sha = file_sha256(tp)
        policies = exp.policies if exp.policies is not None else registered_policies()
        exp_cfg = to_dict(exp)
        # recorded and hashed: the file's list, or SHIPPED_POLICIES for a file without one
        exp_cfg["policies"] = list(exp.policies if exp.policies is not None else SHIPPED_POLICIES)
        if exp.backend == "fluid":
            del exp_cfg["repetitions"]  # always 1; keeps the fluid runs' config hashes
        if exp.fluid_model == "ideal":
            del exp_cfg["fluid_model"]  # the default; keeps the runs' config hashes
        else:  # the costs are part of the run: a new calibration makes new runs
            from emulation.fluid.packet_model import load_costs
            exp_cfg["packet_costs"] = load_costs(rate_scale=exp.rate_scale,
                                                 time_scale=exp.time_scale).as_dict()
        seeds = exp.seeds if not trace_path else exp.seeds[:1]
        wls = [build(WorkloadConfig, {**tables["workload"], "seed": seed}, "workload")
               for seed in seeds]
        hosts = (trace_hosts[trace_path] if trace_path
                 else tuple(f"h{i}" for i in range(wls[0].num_hosts)))
        cluster = point_cluster(tables)
        cluster_cfg = to_dict(cluster) if cluster is not None else {}
        params = _canonical_params(params, {"experiment": to_dict(exp), "topology": to_dict(topo),
                                            "workload": to_dict(wls[0]), "cluster": cluster_cfg})
        note = check_topology_hosts(topo, hosts, hosts_key=_hosts_key(exp, wls[0], hosts))
        if note and f"{path}: {note}{at}" not in notes:
            notes.append(f"{path}: {note}{at}")
        for seed, wl in zip(seeds, wls):
            # a repetition's policies back to back (paired runs, docs/testbed.md)
            for rep, policy in itertools.product(range(exp.repetitions), policies):
                name = (pname + "," if pname else "") + f"policy={policy},seed={seed}"
                if exp.backend == "mininet":
                    name += f",rep={rep}"
                specs.append(RunSpec(experiment=exp.name, name=name, backend=exp.backend,
                                     policy=policy, seed=seed, params=params,
                                     experiment_cfg=exp_cfg, workload=to_dict(wl),
                                     topology=to_dict(topo), trace_path=trace_path,
                                     trace_sha256=trace_sha, repetition=rep,
                                     cluster=cluster_cfg))
    check_workload_keys(path, [tables["workload"] for _, tables in points])
    check_swept_file_values(path, data, points, full=full)
    return specs, notes


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
    mininet = [s for s in specs if s.backend == "mininet"]
    if mininet:
        from emulation import mininet_available
        ok, why = mininet_available()
        if not ok:
            notes.append(f"{MININET_SKIPPED}: {why}")
            specs = [s for s in specs if s.backend != "mininet"]
    return specs, notes, config_notes
