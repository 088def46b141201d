"""Seeded synthetic HPO traces: apps arrive, each runs one tuner's stages of trials.

``WorkloadConfig`` is the ``[workload]`` table of an experiment TOML; ``generate(cfg)``
turns it into a ``Trace``. Same config (seed included) -> byte-identical trace.

Modelling choices (``docs/design.md``, section 4.1; their reasons: ``docs/design-notes.md``,
"Workloads"):
- With a cluster (``generate(cfg, cluster=...)``, the ``[cluster]`` table), a trial is
  not placed here: each job carries its GPUs, model size and shards, and the run's
  cluster scheduler places it (``workloads/cluster.py``, ``emulation/admission.py``);
  the same seed then gives the same trials and scores for every cluster. Without one,
  the trace is pinned as below (the pinned experiments).
- Apps arrive as a Poisson process of rate ``arrival_rate_per_s``; the first at t = 0.
- Each app tunes one model (drawn from ``models``) with one trial size (GPUs per trial,
  drawn from ``gpu_mix``, default 2, 4 or 8 with equal weight: every app communicates;
  Tiresias' 30/10/10/10 mix of 1/2/4/8 GPUs leaves half the apps silent), and all
  its trials synchronise with ``sync_pattern``. One GPU per host slot: a trial's workers
  (and its parameter servers) sit on distinct hosts, ``spread`` at random or ``packed``
  on consecutive hosts (same rack in a leaf-spine). A trial keeps its hosts when promoted.
- One resource unit (epoch) = ``iterations_per_unit`` synchronisation iterations: real
  epochs have thousands; the compute/communication ratio of one iteration is kept.
- Hyperband: brackets s_max..0 run one after the other; each rung is a stage that starts
  when the previous stage of the app completed. Survivors of a rung are the best
  ``n_{i+1}`` by a seeded random score. ``resume_promoted`` trains only the extra units.
- Random / grid search (``random``): one stage of ``random_num_trials`` trials, each
  trained for ``random_budget`` units, no early stopping (Ray Tune's default FIFO
  scheduler): the stage is the whole tuning job.
- SHA: one bracket of ``sha_num_configs`` configs starting at ``sha_min_resource`` units.
- ASHA: a stage is one trial's segment between two rungs (see ``hpo.asha``); it depends on
  the trial's previous segment and on the segment whose result promoted it.
- Mixed tenants (``mix``): each app draws one entry of ``tenants`` (by its ``weight``) and
  runs that tuner with the entry's parameters (unset ones come from ``[workload]``), as a
  shared cluster sees tuners of several kinds at once. The draw comes first in the app's
  random stream, so the other algorithms' traces are unchanged by this option.
"""
from __future__ import annotations

from dataclasses import dataclass, field
import dataclasses
from types import MappingProxyType
from typing import Any, Literal, Mapping

import numpy as np

from workloads import hpo
from workloads.cluster import ClusterConfig
from workloads.models import get_model
from workloads.config import ConfigError, as_toml, to_dict
from workloads.sync import parameter_server, ring_allreduce
from workloads.trace import App, Job, Stage, Trace

NOMINAL_RATE_BPS = 10e9  # used only to resolve ASHA promotion order (contention-free timing)
TUNERS = ("random", "sha", "hyperband", "asha")  # what one app can run; "mix" draws one
# The tuner keys of [workload] (and of a tenant) each tuner reads; another tuner's keys
# change nothing in its trace (``unread_workload_keys``). ``resume_promoted`` matters only
# where a trial is promoted within a bracket (random search has one rung).
TUNER_KEYS = MappingProxyType({
    "random": ("random_num_trials", "random_budget"),
    "sha": ("sha_num_configs", "sha_min_resource", "eta", "resume_promoted"),
    "hyperband": ("max_resource", "eta", "resume_promoted"),
    "asha": ("asha_num_trials", "asha_grace", "max_resource", "eta"),
})


@dataclass(frozen=True)
class Tenant:
    """One entry of ``workload.tenants``: a tuner, how often apps run it, its parameters.

    Parameters left unset (``None``) take the ``[workload]`` value of the same name.
    """

    algorithm: Literal["random", "sha", "hyperband", "asha"]
    weight: float = 1.0
    max_resource: int | None = None
    eta: int | None = None
    random_num_trials: int | None = None
    random_budget: float | None = None
    sha_num_configs: int | None = None
    sha_min_resource: float | None = None
    asha_num_trials: int | None = None
    asha_grace: float | None = None

    def check(self, where: str = "tenant") -> None:
        if self.weight < 0:
            raise ConfigError(f"{where}.weight: must be >= 0")

    def overrides(self) -> dict:
        """The tuner fields this tenant sets (algorithm included)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                if f.name != "weight" and getattr(self, f.name) is not None}


@dataclass(frozen=True)
class WorkloadConfig:
    """Generator parameters; units in names; every field has a sensible default."""

    seed: int = 1
    num_apps: int = 4
    arrival_rate_per_s: float = 0.05
    algorithm: Literal["random", "sha", "hyperband", "asha", "mix"] = "hyperband"
    max_resource: int = 9
    eta: int = 3
    random_num_trials: int = 8
    random_budget: float = 9.0
    sha_num_configs: int = 9
    sha_min_resource: float = 1.0
    asha_num_trials: int = 9
    asha_grace: float = 1.0
    iterations_per_unit: int = 1
    resume_promoted: bool = False
    sync_pattern: Literal["ring", "ps"] = "ring"
    ps_servers: int = 1
    models: dict[str, float] = field(default_factory=lambda: {"resnet50": 1.0, "vgg16": 1.0})
    gpu_mix: dict[str, float] = field(
        default_factory=lambda: {"2": 1.0, "4": 1.0, "8": 1.0})
    num_hosts: int = 16
    placement: Literal["spread", "packed"] = "spread"
    tenants: tuple[Tenant, ...] = ()

    def check(self, where: str = "workload") -> None:
        """Range checks; ConfigError naming the key. Whether each trial size fits the
        hosts depends on the cluster too: ``check_trial_sizes``."""
        def bad(key: str, why: str) -> None:
            raise ConfigError(f"{where}.{key}: {why}")
        if self.num_apps < 1:
            bad("num_apps", "must be >= 1")
        if self.arrival_rate_per_s <= 0:
            bad("arrival_rate_per_s", "must be > 0")
        if self.max_resource < 1:
            bad("max_resource", "must be >= 1")
        if self.eta < 2:
            bad("eta", "must be >= 2")
        if self.iterations_per_unit < 1:
            bad("iterations_per_unit", "must be >= 1")
        if self.ps_servers < 1:
            bad("ps_servers", "must be >= 1")
        if self.sha_num_configs < 1 or self.asha_num_trials < 1:
            bad("sha_num_configs" if self.sha_num_configs < 1 else "asha_num_trials", "must be >= 1")
        if self.random_num_trials < 1:
            bad("random_num_trials", "must be >= 1")
        if self.random_budget <= 0:
            bad("random_budget", "must be > 0")
        if self.algorithm == "mix":
            if not self.tenants:
                bad("tenants", 'algorithm = "mix" needs at least one tenant')
            if sum(t.weight for t in self.tenants) <= 0:
                bad("tenants", "weights sum to 0")
        elif self.tenants:
            bad("tenants", f'is only read with algorithm = "mix" (algorithm = "{self.algorithm}")')
        if not self.models:
            bad("models", "must name at least one model")
        for name, w in self.models.items():
            try:
                m = get_model(name)
            except ValueError as exc:
                bad(f"models.{name}", str(exc))
            if m.compute_s is None:
                bad(f"models.{name}", "has no compute time in the catalogue")
            if w < 0:
                bad(f"models.{name}", "weight must be >= 0")
        if not self.gpu_mix:
            bad("gpu_mix", "must not be empty")
        for k, w in self.gpu_mix.items():
            if not k.isdigit() or int(k) < 1:
                bad(f"gpu_mix.{k}", "keys must be GPU counts >= 1")
            if w < 0:
                bad(f"gpu_mix.{k}", "weight must be >= 0")
        if sum(self.models.values()) <= 0 or sum(self.gpu_mix.values()) <= 0:
            bad("models" if sum(self.models.values()) <= 0 else "gpu_mix", "weights sum to 0")
        # each tenant: the table's values with its own; checked after the table's, so a
        # bad value the tenant inherits is named where it is written
        for i, t in enumerate(self.tenants if self.algorithm == "mix" else ()):
            dataclasses.replace(self, tenants=(), **t.overrides()).check(f"{where}.tenants[{i}]")


def check_trial_sizes(cfg: WorkloadConfig, cluster: ClusterConfig | None,
                      where: str = "workload") -> None:
    """ConfigError naming the ``gpu_mix`` key of a trial size that cannot run: without a
    cluster, one host per worker and per parameter server; with one, the empty cluster."""
    for k, w in cfg.gpu_mix.items():
        if w <= 0:
            continue
        if cluster is None:
            extra = cfg.ps_servers if cfg.sync_pattern == "ps" else 0
            if int(k) + extra > cfg.num_hosts:
                raise ConfigError(f"{where}.gpu_mix.{k}: needs {int(k) + extra} hosts but "
                                  f"num_hosts = {cfg.num_hosts}")
        elif not cluster.fits_empty(int(k), cfg.num_hosts):
            raise ConfigError(f"{where}.gpu_mix.{k}: a trial of {k} GPUs does not fit "
                              f"{cfg.num_hosts} hosts of cluster.gpus_per_host = "
                              f"{cluster.gpus_per_host} (placement \"{cluster.placement}\")")
    for i, t in enumerate(cfg.tenants if cfg.algorithm == "mix" else ()):
        check_trial_sizes(dataclasses.replace(cfg, tenants=(), **t.overrides()), cluster,
                          f"{where}.tenants[{i}]")


def unread_workload_keys(table: Mapping[str, Any], where: str = "workload") -> dict[str, str]:
    """Keys a ``[workload]`` table sets that its trace does not depend on, each with why
    (full name -> reason): a tuner key no tuner of the table reads (``TUNER_KEYS``; with
    ``mix``, a ``[workload]`` key no tenant reads without setting its own, and a tenant's
    key its own tuner does not read), and ``ps_servers`` without ``sync_pattern = "ps"``.
    ``table`` is the table as written: keys left to their defaults are not set."""
    all_keys = {k for keys in TUNER_KEYS.values() for k in keys}

    def reads(algorithm: Any) -> str:
        known = TUNER_KEYS.get(algorithm)
        return (f'algorithm = "{algorithm}" reads only ' + ", ".join(known) if known
                else f"algorithm = {as_toml(algorithm)}")

    algorithm = table.get("algorithm", WorkloadConfig.algorithm)
    unread: dict[str, str] = {}
    if algorithm == "mix":
        tenants = [t for t in table.get("tenants", ()) if isinstance(t, Mapping)]
        for k in table:
            readers = [t for t in tenants if k in TUNER_KEYS.get(t.get("algorithm"), ())]
            if k in all_keys and all(k in t for t in readers):
                unread[f"{where}.{k}"] = ("every tenant that reads it sets its own" if readers
                                          else "no tenant's algorithm reads it")
        for i, t in enumerate(tenants):
            for k in t:
                if k in all_keys and k not in TUNER_KEYS.get(t.get("algorithm"), ()):
                    unread[f"{where}.tenants[{i}].{k}"] = reads(t.get("algorithm"))
    elif algorithm in TUNER_KEYS:
        for k in table:
            if k in all_keys and k not in TUNER_KEYS[algorithm]:
                unread[f"{where}.{k}"] = reads(algorithm)
    pattern = table.get("sync_pattern", WorkloadConfig.sync_pattern)
    if "ps_servers" in table and pattern != "ps":
        unread[f"{where}.ps_servers"] = f'sync_pattern = "{pattern}" has no parameter servers'
    return unread


def _pick(rng: np.random.Generator, weights: dict[str, float]) -> str:
    keys = sorted(weights)
    p = np.array([weights[k] for k in keys], dtype=float)
    return keys[int(rng.choice(len(keys), p=p / p.sum()))]


def _place(rng: np.random.Generator, cfg: WorkloadConfig, n: int) -> list[str]:
    if cfg.placement == "spread":
        idx = rng.choice(cfg.num_hosts, size=n, replace=False)
    else:
        start = int(rng.integers(cfg.num_hosts))
        idx = [(start + i) % cfg.num_hosts for i in range(n)]
    return [f"h{int(i)}" for i in idx]


@dataclass
class _Trial:
    trial_id: str
    hosts: list[str]
    coflows: list
    score: float


class _AppBuilder:
    """Builds one app's stages; holds the app-wide model, trial size and pattern."""

    def __init__(self, cfg: WorkloadConfig, rng: np.random.Generator, app_id: str,
                 placed_at_run_time: bool = False):
        self.cfg, self.rng, self.app_id = cfg, rng, app_id
        self.model = get_model(_pick(rng, cfg.models))
        self.gpus = int(_pick(rng, cfg.gpu_mix))
        self.placed_at_run_time = placed_at_run_time
        self.stages: list[Stage] = []

    def trial(self, trial_id: str) -> _Trial:
        cfg = self.cfg
        if self.placed_at_run_time:
            return _Trial(trial_id, [], [], float(self.rng.random()))
        k = cfg.ps_servers if cfg.sync_pattern == "ps" else 0
        hosts = _place(self.rng, cfg, self.gpus + k)
        workers, servers = hosts[: self.gpus], hosts[self.gpus:]
        if cfg.sync_pattern == "ring":
            coflows = ring_allreduce(workers, self.model.size_bytes)
        else:
            coflows = parameter_server(workers, servers, self.model.size_bytes)
        return _Trial(trial_id, hosts, coflows, float(self.rng.random()))

    def iterations(self, units: float) -> int:
        return max(1, round(units * self.cfg.iterations_per_unit))

    def job(self, stage_id: str, t: _Trial, units: float) -> Job:
        placed = ({"gpus": self.gpus, "model_size_bytes": int(self.model.size_bytes),
                   "ps_servers": self.cfg.ps_servers if self.cfg.sync_pattern == "ps" else 0}
                  if self.placed_at_run_time else {})
        return Job(job_id=f"{stage_id}/{t.trial_id.rsplit('/', 1)[-1]}", trial_id=t.trial_id,
                   model=self.model.name, pattern=self.cfg.sync_pattern, hosts=tuple(t.hosts),
                   iterations=self.iterations(units), compute_s=float(self.model.compute_s),
                   coflows=tuple(t.coflows), **placed)


    def add_stage(self, stage_id: str, deps: list[str], jobs: list[Job],
                  asha: dict | None = None) -> str:
        self.stages.append(Stage(stage_id, self.app_id, 1.0, tuple(deps), tuple(jobs), asha))
        return stage_id

    def bracket(self, tag: str, rungs: list[hpo.Rung], prev: str | None) -> str | None:
        trials = [self.trial(f"{self.app_id}/{tag}t{i}") for i in range(rungs[0].n)]
        done_units = 0.0
        for i, rung in enumerate(rungs):
            keep = set(hpo.survivors({t.trial_id: t.score for t in trials}, rung.n))
            alive = sorted((t for t in trials if t.trial_id in keep),
                           key=lambda t: int(t.trial_id.rsplit("t", 1)[-1]))
            units = rung.r - done_units if self.cfg.resume_promoted else rung.r
            sid = f"{self.app_id}/{tag}r{i}"
            prev = self.add_stage(sid, [prev] if prev else [],
                                  [self.job(sid, t, units) for t in alive])
            done_units = rung.r
            trials = alive
        return prev

    def asha(self) -> None:
        cfg = self.cfg
        trials = [self.trial(f"{self.app_id}/t{i}") for i in range(cfg.asha_num_trials)]
        if self.placed_at_run_time:
            self.asha_segments(trials)
            return
        unit_s = np.array([cfg.iterations_per_unit * (
            self.model.compute_s + sum(c.size_bytes for c in t.coflows) * 8 / NOMINAL_RATE_BPS)
            for t in trials])
        scores = np.array([t.score for t in trials])
        segs = hpo.asha(cfg.asha_num_trials, cfg.asha_grace, cfg.max_resource, cfg.eta,
                        scores, unit_s)
        for seg in segs:
            sid = f"{self.app_id}/t{seg.trial}/r{seg.rung}"
            deps = []
            if seg.rung > 0:
                deps = [f"{self.app_id}/t{seg.trial}/r{seg.rung - 1}"]
                trigger = f"{self.app_id}/t{seg.promoted_by}/r{seg.rung - 1}"
                if trigger not in deps:
                    deps.append(trigger)
            self.add_stage(sid, deps, [self.job(sid, trials[seg.trial], seg.units)])


    def asha_segments(self, trials: list[_Trial]) -> None:
        """Every segment each trial could train, rung by rung, each judged during the run
        (``Stage.asha``): a trial's segment of rung k > 0 runs only if the run's ASHA rule
        lets it go on after rung k - 1."""
        levels = hpo.asha_levels(self.cfg.asha_grace, self.cfg.max_resource, self.cfg.eta)
        for i, t in enumerate(trials):
            prev = None
            for k, level in enumerate(levels):
                sid = f"{self.app_id}/t{i}/r{k}"
                units = level - (levels[k - 1] if k else 0.0)
                prev = self.add_stage(sid, [prev] if prev else [], [self.job(sid, t, units)],
                                      {"rung": k, "score": t.score, "eta": self.cfg.eta})


def _hyperband(b: _AppBuilder) -> None:
    prev = None
    for bi, rungs in enumerate(hpo.hyperband(b.cfg.max_resource, b.cfg.eta)):
        prev = b.bracket(f"b{bi}", rungs, prev)


def _sha(b: _AppBuilder) -> None:
    b.bracket("b0", hpo.successive_halving(b.cfg.sha_num_configs, b.cfg.sha_min_resource,
                                           b.cfg.eta), None)


def _random(b: _AppBuilder) -> None:
    b.bracket("b0", [hpo.Rung(b.cfg.random_num_trials, b.cfg.random_budget)], None)


TUNER_BUILDERS = {"random": _random, "sha": _sha, "hyperband": _hyperband,
                  "asha": _AppBuilder.asha}


def generate(cfg: WorkloadConfig, cluster: ClusterConfig | None = None) -> Trace:
    """Build the trace ``cfg`` describes (deterministic in ``cfg.seed``); with ``cluster``,
    its trials are placed during the run on that cluster (ConfigError if a trial size of
    ``gpu_mix`` cannot fit the empty cluster)."""
    cfg.check()
    if cluster is not None:
        cluster.check()
    check_trial_sizes(cfg, cluster)
    rng = np.random.default_rng(cfg.seed)
    gaps = rng.exponential(1.0 / cfg.arrival_rate_per_s, size=cfg.num_apps)
    arrivals = np.concatenate([[0.0], np.cumsum(gaps[1:])])
    apps = []
    for a in range(cfg.num_apps):
        app_id = f"a{a}"
        app_cfg = cfg
        if cfg.algorithm == "mix":
            w = np.array([t.weight for t in cfg.tenants], dtype=float)
            tenant = cfg.tenants[int(rng.choice(len(w), p=w / w.sum()))]
            app_cfg = dataclasses.replace(cfg, tenants=(), **tenant.overrides())
        b = _AppBuilder(app_cfg, rng, app_id, placed_at_run_time=cluster is not None)
        TUNER_BUILDERS[app_cfg.algorithm](b)
        apps.append(App(app_id, round(float(arrivals[a]), 6), app_cfg.algorithm,
                        tuple(b.stages)))
    return Trace(seed=cfg.seed, endpoints="hosts",
                 hosts=tuple(f"h{i}" for i in range(cfg.num_hosts)), apps=tuple(apps),
                 meta={"generator": "workloads.generator", "workload": to_dict(cfg)},
                 cluster=to_dict(cluster) if cluster is not None else None)
