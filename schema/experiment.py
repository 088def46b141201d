"""The ``[experiment]`` table of an experiment TOML and the tables such a file may hold.

Owns ``TABLES`` (every table an experiment file may have), ``SWEPT_TABLES`` (those a
``[sweep]`` key names) and ``ExperimentSection`` (the ``[experiment]``
table, its values checked when it is built: policies of the registry, seeds, classes,
the backend's limits (the backends' registry, ``emulation/backends.py``), a calibration for the packet-aware fluid model). The other
tables' schemas are their owners' (``workloads.generator.WorkloadConfig``,
``workloads.cluster.ClusterConfig``, ``emulation.topology.TopologyConfig``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from emulation.backends import BACKENDS, DEFAULT_BACKEND, EXACT
from workloads.config import ConfigError, as_toml

TABLES = ("experiment", "workload", "topology", "cluster", "sweep", "full")
SWEPT_TABLES = ("experiment", "workload", "topology", "cluster")  # what [sweep] keys name


@dataclass(frozen=True)
class ExperimentSection:
    """The ``[experiment]`` table."""

    name: str
    description: str = ""
    backend: str = DEFAULT_BACKEND  # a name in the backends' registry
    # None (the key left out): every registered policy, in registry order (resolved
    # when the runner expands the file into runs: ``runner.config.registered_policies``)
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
    # packet level at rate_scale / time_scale (emulation/packet_model.py); a
    # packet-level run writes both twins either way
    fluid_model: Literal["ideal", "packet-aware"] = "ideal"

    def check(self, where: str = "experiment") -> None:
        from emulation.scheduler import POLICIES
        if self.backend not in BACKENDS:
            raise ConfigError(f"{where}.backend: must be one of {as_toml(list(BACKENDS))}, "
                              f"got {as_toml(self.backend)}")
        info = BACKENDS[self.backend]
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
        if info.own_realloc_only and self.realloc != "policy":
            raise ConfigError(f"{where}.realloc: the {info.name} backend runs each policy at "
                              f"its published events (its twin: realloc \"policy\"); "
                              f"realloc {as_toml(self.realloc)} applies to fluid runs only")
        top = info.max_priority_classes
        if top is not None and not 1 <= self.priority_classes <= top:
            raise ConfigError(f"{where}.priority_classes: the {info.name} backend needs 1..{top}")
        if not (self.rate_scale > 0 and self.time_scale > 0):  # NaN fails too
            raise ConfigError(f"{where}.rate_scale/time_scale: must be > 0")
        if self.repetitions < 1:
            raise ConfigError(f"{where}.repetitions: must be >= 1")
        if info.exact and self.repetitions != 1:
            inexact = " or ".join(repr(b) for b in BACKENDS if b not in EXACT)
            raise ConfigError(f"{where}.repetitions: the {info.name} backend is deterministic; "
                              f"repetitions need backend = {inexact}")
        if self.fluid_model == "packet-aware":
            # the calibration file's reader (it imports nothing of the simulator)
            from emulation.packet_model import CALIBRATION_PATH, calibration_key, load_costs
            if info.packet_level:
                raise ConfigError(f"{where}.fluid_model: a packet-level run writes both "
                                  "fluid twins (twin/, twin_packet/); the key is for fluid runs")
            if load_costs(rate_scale=self.rate_scale, time_scale=self.time_scale) is None:
                raise ConfigError(
                    f"{where}.fluid_model: no calibration for "
                    f"{calibration_key(rate_scale=self.rate_scale, time_scale=self.time_scale)} "
                    f"in {CALIBRATION_PATH.name} (benchmarks/packet_costs.py makes one)")
