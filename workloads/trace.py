"""Trace schema (version 1), in-memory model, JSON save/load and validation.

A trace is ``apps -> stages -> jobs -> per-iteration coflows -> flows``::

    {"format": "beamer-trace", "version": 1, "seed": 7, "endpoints": "hosts",
     "hosts": ["h0", "h1", ...], "meta": {...generator config...},
     "apps": [{"app_id": "a0", "arrival_s": 0.0, "algorithm": "hyperband",
       "stages": [{"stage_id": "a0/b0/r0", "weight": 1.0, "depends_on": [],
         "jobs": [{"job_id": "a0/b0/r0/t3", "trial_id": "a0/b0/t3", "model": "vgg16",
                   "pattern": "ring", "hosts": ["h1", "h4"], "iterations": 3,
                   "compute_s": 0.183,
                   "coflows": [{"flows": [{"src": "h1", "dst": "h4", "size_bytes": 553430176}]}]
         }]}]}]}

Units: seconds (``*_s``) and bytes (``size_bytes``). Each iteration of a job is
``compute_s`` of computation followed by its ``coflows`` in order (ring all-reduce: one
coflow; parameter server: push then pull); the next iteration starts when the last one
finished (BSP). A stage starts at its app's arrival once every stage in ``depends_on``
has completed, and ends when all its jobs have run all their iterations.

A trace with a ``cluster`` (``{"gpus_per_host": 8, "placement": "pack",
"max_concurrent_trials": 0, "admission": "first_fit"}``, ``workloads/cluster.py``; a
``cluster`` without ``admission`` was written before the rule could be chosen and ran
under strict FIFO: it is read as ``"fifo"``) runs its trials on servers with
GPUs: each job says how many GPUs it needs (``gpus``), its model's size
(``model_size_bytes``) and its parameter-server shards (``ps_servers``), and leaves
``hosts`` and ``coflows`` empty; the run places it when GPUs are free and derives its
coflows from the placement. A trace without ``cluster`` is pinned: every job's hosts and
flows are fixed in the file (the FB2010 and imported coflow traces).

``endpoints`` is ``"hosts"`` for HPO traces (a flow's src and dst differ) or ``"ports"``
for traces imported from the coflow-benchmark format, whose endpoints are switch ports
(racks): there a flow may go from a port to itself, crossing its ingress and egress link.

Validation (``validate_dict``) rejects bad input with a ``TraceError`` whose one-line
message names the field and the app/stage/job it sits in (a job's ``hosts`` are among
the trace's, and its flows' ``src`` and ``dst`` among them unless the list is empty, as in
an imported coflow-benchmark trace); a key the schema does not
define is rejected as ``unknown key 'apps[0].stages[1].jobs[0].compute_seconds' (known:
...)``, the config loader's form (``meta`` alone is free-form).
"""
from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

FORMAT = "beamer-trace"
VERSION = 1


class TraceError(ValueError):
    """A trace is malformed; the message is one line naming the offending field."""


class Flow(NamedTuple):
    """One transfer of ``size_bytes`` from host ``src`` to host ``dst``."""

    src: str
    dst: str
    size_bytes: int


@dataclass(frozen=True)
class CoflowSpec:
    """The flows one synchronisation step moves; all must finish before the job goes on."""

    flows: tuple[Flow, ...]

    @property
    def size_bytes(self) -> int:
        return sum(f.size_bytes for f in self.flows)


@dataclass(frozen=True)
class Job:
    """A trial's work inside one stage: ``iterations`` x (compute, then ``coflows`` in order)."""

    job_id: str
    trial_id: str
    model: str
    pattern: str
    hosts: tuple[str, ...]
    iterations: int
    compute_s: float
    coflows: tuple[CoflowSpec, ...]
    # a trial the cluster places during the run (``gpus`` > 0): no hosts and no coflows
    # in the trace; its coflows follow from its placement (``workloads.cluster``)
    gpus: int = 0
    model_size_bytes: int = 0
    ps_servers: int = 0

    @property
    def bytes_per_iteration(self) -> int:
        return sum(c.size_bytes for c in self.coflows)


@dataclass(frozen=True)
class Stage:
    """A rung: a set of jobs that starts after ``depends_on`` and ends with its slowest job."""

    stage_id: str
    app_id: str
    weight: float
    depends_on: tuple[str, ...]
    jobs: tuple[Job, ...]
    # one ASHA segment whose rung the tuner judges during the run (``{"rung": k,
    # "score": s, "eta": e}``, lower score better); a segment of rung k > 0 runs only if
    # the run's ASHA rule lets its trial go on after rung k - 1 (``emulation/tuner.py``)
    asha: dict[str, Any] | None = None


@dataclass(frozen=True)
class App:
    """One tuning experiment: its arrival time and its stages."""

    app_id: str
    arrival_s: float
    algorithm: str
    stages: tuple[Stage, ...]


@dataclass(frozen=True)
class Trace:
    """A whole workload. ``meta`` holds the generator's config (or the source file)."""

    seed: int | None
    endpoints: str
    hosts: tuple[str, ...]
    apps: tuple[App, ...]
    meta: dict[str, Any] = field(default_factory=dict)
    version: int = VERSION
    # the GPU cluster its trials run on (``workloads.cluster.ClusterConfig`` as a dict):
    # set exactly when its jobs are placed during the run
    cluster: dict[str, Any] | None = None

    def stages(self) -> list[Stage]:
        return [s for a in self.apps for s in a.stages]

    def jobs(self) -> list[Job]:
        return [j for s in self.stages() for j in s.jobs]

    def summary(self) -> dict[str, Any]:
        """Counts, total bytes and per-host sent/received bytes over all iterations."""
        sent = {h: 0 for h in self.hosts}
        recv = {h: 0 for h in self.hosts}
        n_coflows = n_flows = total = 0
        for job in self.jobs():
            n_coflows += job.iterations * len(job.coflows)
            for c in job.coflows:
                n_flows += job.iterations * len(c.flows)
                for f in c.flows:
                    b = job.iterations * f.size_bytes
                    total += b
                    sent[f.src] += b
                    recv[f.dst] += b
        return {
            "apps": len(self.apps),
            "stages": len(self.stages()),
            "jobs": len(self.jobs()),
            "coflows": n_coflows,
            "flows": n_flows,
            "total_bytes": total,
            "hosts": len(self.hosts),
            "max_host_sent_bytes": max(sent.values(), default=0),
            "max_host_received_bytes": max(recv.values(), default=0),
            "per_host_sent_bytes": sent,
            "per_host_received_bytes": recv,
        }


# ---------------------------------------------------------------- serialisation

def to_dict(trace: Trace) -> dict[str, Any]:
    """The JSON-able form of ``trace`` (schema above)."""
    out = {
        "format": FORMAT,
        "version": trace.version,
        "seed": trace.seed,
        "endpoints": trace.endpoints,
        "hosts": list(trace.hosts),
        "meta": trace.meta,
        "apps": [
            {
                "app_id": a.app_id,
                "arrival_s": a.arrival_s,
                "algorithm": a.algorithm,
                "stages": [
                    {
                        "stage_id": s.stage_id,
                        "weight": s.weight,
                        "depends_on": list(s.depends_on),
                        **({"asha": dict(s.asha)} if s.asha is not None else {}),
                        "jobs": [
                            {
                                "job_id": j.job_id,
                                "trial_id": j.trial_id,
                                "model": j.model,
                                "pattern": j.pattern,
                                "hosts": list(j.hosts),
                                "iterations": j.iterations,
                                "compute_s": j.compute_s,
                                "coflows": [
                                    {"flows": [{"src": f.src, "dst": f.dst,
                                                "size_bytes": f.size_bytes} for f in c.flows]}
                                    for c in j.coflows
                                ],
                                **({"gpus": j.gpus, "model_size_bytes": j.model_size_bytes,
                                    "ps_servers": j.ps_servers} if j.gpus else {}),
                            }
                            for j in s.jobs
                        ],
                    }
                    for s in a.stages
                ],
            }
            for a in trace.apps
        ],
    }
    if trace.cluster is not None:
        out["cluster"] = dict(trace.cluster)
    return out


def dumps(trace: Trace) -> str:
    """Canonical JSON text (sorted keys, fixed separators): equal traces, equal bytes."""
    return json.dumps(to_dict(trace), sort_keys=True, separators=(",", ":")) + "\n"


def save(trace: Trace, path: str | Path) -> None:
    """Write ``trace`` as canonical JSON."""
    Path(path).write_text(dumps(trace))


def sha256(trace: Trace) -> str:
    """SHA-256 of the canonical JSON: the trace's identity in run records."""
    return hashlib.sha256(dumps(trace).encode()).hexdigest()


def load(path: str | Path) -> Trace:
    """Read and validate a JSON trace; TraceError with a one-line reason, starting with
    the file's path, otherwise."""
    p = Path(path)
    try:
        text = p.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise TraceError(f"{p}: cannot read: {exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TraceError(f"{p}: not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    try:
        return validate_dict(data)
    except TraceError as exc:
        raise TraceError(f"{p}: {exc}") from None


# ---------------------------------------------------------------- validation

def _get(obj: Any, key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if not isinstance(obj, dict):
        raise TraceError(f"{where}: expected an object")
    if key not in obj:
        raise TraceError(f"{where}: missing key '{key}'")
    val = obj[key]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    ok = isinstance(val, kinds) and not (isinstance(val, bool) and bool not in kinds)
    if not ok:
        names = "/".join(k.__name__ for k in kinds)
        raise TraceError(f"{where}: '{key}' must be {names}, got {type(val).__name__} {val!r:.40}")
    return val


def _number(obj: Any, key: str, where: str, *, minimum: float = 0.0) -> float:
    val = float(_get(obj, key, (int, float), where))
    if not math.isfinite(val) or val < minimum:
        raise TraceError(f"{where}: '{key}' must be a finite number >= {minimum:g}, got {val!r}")
    return val


# the keys each object of schema version 1 may hold (``meta`` is free-form)
KEYS = {
    "trace": frozenset({"format", "version", "seed", "endpoints", "hosts", "meta", "apps",
                        "cluster"}),
    "app": frozenset({"app_id", "arrival_s", "algorithm", "stages"}),
    "stage": frozenset({"stage_id", "weight", "depends_on", "jobs", "asha"}),
    "job": frozenset({"job_id", "trial_id", "model", "pattern", "hosts", "iterations",
                      "compute_s", "coflows", "gpus", "model_size_bytes", "ps_servers"}),
    "coflow": frozenset({"flows"}),
    "flow": frozenset({"src", "dst", "size_bytes"}),
}
FLOW_KEYS = KEYS["flow"]


def _known_keys(obj: Any, kind: str, path: str) -> None:
    """TraceError for a key schema version 1 does not define (a misspelt one would
    otherwise pass, or be reported as the right one missing), in the config loader's
    form: ``unknown key 'apps[0].stages[1].jobs[0].compute_seconds' (known: ...)``."""
    if not isinstance(obj, dict):
        return  # reported as "expected an object" where its keys are read
    extra = obj.keys() - KEYS[kind]
    if extra:
        key = sorted(map(str, extra))[0]
        raise TraceError(f"unknown key '{path + '.' if path else ''}{key}' "
                         f"(known: {', '.join(sorted(KEYS[kind]))})")


def validate_dict(data: Any) -> Trace:
    """Check a parsed JSON trace against schema version 1 and build the ``Trace``."""
    if not isinstance(data, dict):
        raise TraceError("trace: top level must be a JSON object")
    _known_keys(data, "trace", "")
    if data.get("format") != FORMAT:
        raise TraceError(f"trace: 'format' must be {FORMAT!r}, got {data.get('format')!r}")
    version = _get(data, "version", int, "trace")
    if version != VERSION:
        raise TraceError(f"trace: unsupported 'version' {version} (this reader knows {VERSION})")
    seed = data.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise TraceError(f"trace: 'seed' must be an integer or null, got {seed!r}")
    endpoints = _get(data, "endpoints", str, "trace")
    if endpoints not in ("hosts", "ports"):
        raise TraceError(f"trace: 'endpoints' must be 'hosts' or 'ports', got {endpoints!r}")
    hosts = _get(data, "hosts", list, "trace")
    if not hosts or not all(isinstance(h, str) and h for h in hosts):
        raise TraceError("trace: 'hosts' must be a non-empty list of names")
    if len(set(hosts)) != len(hosts):
        raise TraceError("trace: 'hosts' has duplicate names")
    meta = data.get("meta", {})
    if not isinstance(meta, dict):
        raise TraceError("trace: 'meta' must be an object")
    cluster = data.get("cluster")
    if cluster is not None:
        cluster = {"admission": "fifo", **cluster}  # see the module: written before the key
        _check_cluster(cluster, len(hosts))
    reader = _AppReader(set(hosts), endpoints, cluster is not None)
    apps = [reader.app(a, ai) for ai, a in enumerate(_get(data, "apps", list, "trace"))]
    if not apps:
        raise TraceError("trace: 'apps' is empty")
    return Trace(seed=seed, endpoints=endpoints, hosts=tuple(hosts), apps=tuple(apps),
                 meta=meta, version=version, cluster=cluster)


class _AppReader:
    """Checks a trace's apps in order and builds them (``validate_dict``): ids unique
    across the trace, ``depends_on`` naming earlier stages, hosts among the trace's."""

    def __init__(self, host_set: set[str], endpoints: str, has_cluster: bool) -> None:
        self.host_set = host_set
        self.endpoints = endpoints
        self.has_cluster = has_cluster
        self.seen_ids: set[str] = set()
        self.stage_ids: set[str] = set()

    def fresh(self, kind: str, ident: str, where: str) -> str:
        """``ident``, once: TraceError if an app, stage or job already has that id."""
        if ident in self.seen_ids:
            raise TraceError(f"{where}: duplicate {kind} id {ident!r}")
        self.seen_ids.add(ident)
        return ident

    def app(self, a: Any, ai: int) -> App:
        """The ``App`` of ``apps[ai]``."""
        where = f"apps[{ai}]"
        _known_keys(a, "app", where)
        app_id = self.fresh("app", _get(a, "app_id", str, where), where)
        where = f"app {app_id}"
        arrival = _number(a, "arrival_s", where)
        algorithm = _get(a, "algorithm", str, where)
        stages = [self.stage(s, app_id, where, f"apps[{ai}].stages[{si}]", si)
                  for si, s in enumerate(_get(a, "stages", list, where))]
        if not stages:
            raise TraceError(f"{where}: 'stages' is empty")
        _check_asha_chains(stages, where)
        return App(app_id, arrival, algorithm, tuple(stages))

    def stage(self, s: Any, app_id: str, where: str, spath: str, si: int) -> Stage:
        """The ``Stage`` ``stages[si]`` of the app ``where`` names, at key path ``spath``."""
        swhere = f"{where} / stages[{si}]"
        _known_keys(s, "stage", spath)
        stage_id = self.fresh("stage", _get(s, "stage_id", str, swhere), swhere)
        swhere = f"{where} / stage {stage_id}"
        weight = _number(s, "weight", swhere)
        deps = _get(s, "depends_on", list, swhere)
        for d in deps:
            if d not in self.stage_ids:
                raise TraceError(f"{swhere}: 'depends_on' names {d!r}, not an earlier stage")
        jobs = [self.job(j, swhere, f"{spath}.jobs[{ji}]", ji)
                for ji, j in enumerate(_get(s, "jobs", list, swhere))]
        if not jobs:
            raise TraceError(f"{swhere}: 'jobs' is empty")
        asha = s.get("asha")
        if asha is not None:
            _check_asha(asha, swhere, self.has_cluster)
        self.stage_ids.add(stage_id)
        return Stage(stage_id, app_id, weight, tuple(deps), tuple(jobs), asha)

    def job(self, j: Any, swhere: str, jpath: str, ji: int) -> Job:
        """The ``Job`` ``jobs[ji]`` of the stage ``swhere`` names, at key path ``jpath``."""
        jwhere = f"{swhere} / jobs[{ji}]"
        _known_keys(j, "job", jpath)
        job_id = self.fresh("job", _get(j, "job_id", str, jwhere), jwhere)
        jwhere = f"{swhere} / job {job_id}"
        jhosts = _get(j, "hosts", list, jwhere)
        for h in jhosts:
            if h not in self.host_set:
                raise TraceError(f"{jwhere}: 'hosts' names unknown host {h!r}")
        iterations = _get(j, "iterations", int, jwhere)
        if iterations < 1:
            raise TraceError(f"{jwhere}: 'iterations' must be >= 1, got {iterations}")
        coflows = [self.coflow(c, f"{jpath}.coflows[{ci}]", f"{jwhere} / coflows[{ci}]", jhosts)
                   for ci, c in enumerate(_get(j, "coflows", list, jwhere))]
        gpus = _get(j, "gpus", int, jwhere) if "gpus" in j else 0
        if gpus < 0 or (gpus > 0) != self.has_cluster:
            raise TraceError(f"{jwhere}: 'gpus' must be > 0 exactly when the trace "
                             f"has a 'cluster', got {gpus}")
        if gpus and (jhosts or coflows):
            raise TraceError(f"{jwhere}: a job with 'gpus' is placed during the run: "
                             "its 'hosts' and 'coflows' must be empty")
        placed = {k: _get(j, k, int, jwhere) for k in ("model_size_bytes", "ps_servers")
                  if gpus}
        return Job(
            job_id=job_id,
            trial_id=_get(j, "trial_id", str, jwhere),
            model=_get(j, "model", str, jwhere),
            pattern=_get(j, "pattern", str, jwhere),
            hosts=tuple(jhosts),
            iterations=iterations,
            compute_s=_number(j, "compute_s", jwhere),
            coflows=tuple(coflows),
            gpus=gpus,
            **placed,
        )

    def coflow(self, c: Any, cpath: str, cwhere: str, jhosts: list[str]) -> CoflowSpec:
        """The ``CoflowSpec`` at key path ``cpath`` of a job on ``jhosts`` (its flows'
        ends among them unless the list is empty)."""
        _known_keys(c, "coflow", cpath)
        host_set, job_hosts, ports = self.host_set, set(jhosts), self.endpoints == "ports"
        flows = []
        for fi, f in enumerate(_get(c, "flows", list, cwhere)):
            fwhere = f"{cwhere} / flows[{fi}]"
            if isinstance(f, dict) and not f.keys() <= FLOW_KEYS:  # (fast path)
                _known_keys(f, "flow", f"{cpath}.flows[{fi}]")
            src = _get(f, "src", str, fwhere)
            dst = _get(f, "dst", str, fwhere)
            size = _get(f, "size_bytes", int, fwhere)
            for key, h in (("src", src), ("dst", dst)):
                if h not in host_set:
                    raise TraceError(f"{fwhere}: '{key}' is unknown host {h!r}")
                if job_hosts and h not in job_hosts:
                    raise TraceError(f"{fwhere}: '{key}' {h!r} is not one of the "
                                     f"job's 'hosts' {jhosts}")
            if src == dst and not ports:
                raise TraceError(f"{fwhere}: 'src' and 'dst' are the same host {src!r}")
            if size <= 0:
                raise TraceError(f"{fwhere}: 'size_bytes' must be > 0, got {size}")
            flows.append(Flow(src, dst, size))
        if not flows:
            raise TraceError(f"{cwhere}: 'flows' is empty")
        return CoflowSpec(tuple(flows))


def _check_asha(asha: Any, where: str, has_cluster: bool) -> None:
    """TraceError unless ``asha`` is ``{"rung": int >= 0, "score": number, "eta": int >= 2}``
    in a trace with a cluster."""
    if not has_cluster:
        raise TraceError(f"{where}: 'asha' (decided during the run) needs a trace 'cluster'")
    if not isinstance(asha, dict) or set(asha) != {"rung", "score", "eta"}:
        raise TraceError(f"{where}: 'asha' must be an object with rung, score and eta")
    if _get(asha, "rung", int, where) < 0 or _get(asha, "eta", int, where) < 2:
        raise TraceError(f"{where}: 'asha' needs rung >= 0 and eta >= 2")
    _get(asha, "score", (int, float), where)


def _check_asha_chains(stages: list[Stage], where: str) -> None:
    """TraceError unless each ASHA segment is one job, and each past rung 0 depends on
    exactly its trial's segment of the rung before (what the run's rule gates)."""
    by_id = {s.stage_id: s for s in stages}
    for s in stages:
        if s.asha is None:
            continue
        if len(s.jobs) != 1:
            raise TraceError(f"{where} / stage {s.stage_id}: an 'asha' segment has one job")
        prev = [by_id.get(d) for d in s.depends_on]
        if s.asha["rung"] > 0 and not (
                len(prev) == 1 and prev[0] is not None and prev[0].asha is not None
                and prev[0].asha["rung"] == s.asha["rung"] - 1
                and prev[0].jobs[0].trial_id == s.jobs[0].trial_id):
            raise TraceError(f"{where} / stage {s.stage_id}: an 'asha' segment of rung "
                             f"{s.asha['rung']} depends on exactly its trial's segment of "
                             f"rung {s.asha['rung'] - 1}")


def _check_cluster(cluster: Any, num_hosts: int) -> None:
    """TraceError unless ``cluster`` is a valid ``[cluster]`` table (``workloads.cluster``)."""
    from workloads.cluster import ClusterConfig
    from workloads.config import ConfigError, build
    if not isinstance(cluster, dict):
        raise TraceError("trace: 'cluster' must be an object")
    try:
        build(ClusterConfig, cluster, "cluster")
    except ConfigError as exc:
        raise TraceError(f"trace: {exc}") from None
