"""The packet-aware fluid model: what a packet network adds to each flow, as four costs
the fluid engine applies (``PacketCosts``), their calibration from micro-benchmarks
(``fit_costs``) and the saved calibrations (``data/packet_model.json``:
``load_costs``, ``save_costs``).

The costs, in trace seconds (docs/testbed.md, "The packet-aware fluid model"):

- ``release_latency_s``: a released coflow's flows send their first byte this long after
  the release, and its end is seen this much later too (the two are one sum: the engine
  starts the flows that much later, the link free meanwhile);
- ``rate_efficiency``: the share of a link's rate a flow's payload gets (headers,
  acknowledgements, the lower classes' guarantees; at most 1: a queue's burst allowance,
  which lets a lone flow's first bytes through ahead of the rate, is not a rate);
- ``wait_resume_s``: a flow held at rate 0 by a higher class from its release sends
  this much later once served, as if it had ``wait_resume_s`` x its path's rate more bytes;
- ``preempt_resume_s``: the same for a flow that had sent bytes when a decision stopped
  it (a demotion and a later promotion), if it stayed stopped for ``stall_after_s`` or
  longer: a stopped sender's retransmission timer, stretched by the queueing delay
  before the stop, fires only so long after its last acknowledgement, and a shorter stop
  leaves it nothing to recover from (docs/testbed.md, "The packet-aware fluid model").

Each cost is charged when the flow is served again, once per stop.
"""
from __future__ import annotations

import dataclasses
import json
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workloads.config import ConfigError

# the costs the model applies (its form, chosen on the committed testbed runs, never on
# the validation set: docs/testbed.md, "The packet-aware fluid model"); the others are
# measured and saved but left at their ideal value
APPLIED = ("release_latency_s", "rate_efficiency", "wait_resume_s")
CALIBRATION_PATH = Path(__file__).resolve().parents[1] / "data" / "packet_model.json"


@dataclass(frozen=True)
class PacketCosts:
    """The per-flow costs of one emulated link rate (trace seconds; see the module)."""

    release_latency_s: float = 0.0
    rate_efficiency: float = 1.0
    wait_resume_s: float = 0.0
    preempt_resume_s: float = 0.0
    stall_after_s: float = 0.0

    def __post_init__(self) -> None:
        if not 0.0 < self.rate_efficiency <= 1.0:
            raise ValueError(f"rate_efficiency must be in (0, 1], got {self.rate_efficiency}")
        for name in ("release_latency_s", "wait_resume_s", "preempt_resume_s",
                     "stall_after_s"):
            if not getattr(self, name) >= 0.0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")

    def as_dict(self) -> dict[str, float]:
        return dataclasses.asdict(self)


def calibration_key(*, rate_scale: float, time_scale: float) -> str:
    """The key of one emulated setting in the calibration file."""
    return f"rate_scale={rate_scale:g},time_scale={time_scale:g}"


def load_costs(*, rate_scale: float, time_scale: float, path: Path | None = None,
               applied: tuple[str, ...] | None = APPLIED) -> PacketCosts | None:
    """The saved costs of one emulated setting (from ``path``, default
    ``CALIBRATION_PATH``) that the model applies (``applied``; None: every measured
    cost), or None if it was never calibrated."""
    path = CALIBRATION_PATH if path is None else path
    if not path.exists():
        return None
    entry = json.loads(path.read_text()).get(
        calibration_key(rate_scale=rate_scale, time_scale=time_scale))
    if entry is None:
        return None
    known = {f.name for f in dataclasses.fields(PacketCosts)}
    unknown = set(entry["costs"]) - known
    if unknown:
        raise ConfigError(f"{path}: unknown cost(s) {', '.join(sorted(unknown))}")
    keep = known if applied is None else set(applied)
    return PacketCosts(**{k: v for k, v in entry["costs"].items() if k in keep})


def save_costs(costs: PacketCosts, *, rate_scale: float, time_scale: float,
               measurements: dict[str, Any], path: Path | None = None) -> None:
    """Store ``costs`` and the measurements they came from under the setting's key (in
    ``path``, default ``CALIBRATION_PATH``)."""
    path = CALIBRATION_PATH if path is None else path
    data = json.loads(path.read_text()) if path.exists() else {}
    data[calibration_key(rate_scale=rate_scale, time_scale=time_scale)] = {
        "rate_scale": rate_scale, "time_scale": time_scale, "costs": costs.as_dict(),
        "measurements": measurements}
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")


def fit_costs(m: dict[str, list[float]]) -> PacketCosts:
    """The costs from micro-benchmark measurements (lists over repetitions, trace s):

    - ``start_delay_s``: first payload byte - release, per flow of a lone flow or coflow;
    - ``end_delay_s``: a coflow's recorded end - its last payload byte;
    - ``lone_duration_ratio``: a lone flow's last - first byte, over its size / link rate;
    - ``wait_excess_s``: per flow that waited behind others on its path, its end minus
      the end of the one before it, minus a lone flow's first-to-last-byte time;
    - ``preempt_excess_s``: a demoted flow's end minus its end in the fluid model with
      the costs above (release latency and rate efficiency) applied;
    - ``stop_s``, ``stop_excess_s`` (optional, paired): the same excess for stops of
      several lengths; ``stall_after_s`` is the shortest stop whose mean excess is at
      least half the mean ``preempt_excess_s`` (0 without them: every stop stalls).

    Medians, so that one disturbed repetition does not move a cost, except the demoted
    flow's excess: a retransmission timeout stalls it in some repetitions and not in
    others, and the model charges the expected stall, the mean. A negative excess (the
    packet level no slower than the model) gives a cost of 0."""
    need = ("start_delay_s", "end_delay_s", "lone_duration_ratio", "wait_excess_s",
            "preempt_excess_s")
    missing = [k for k in need if not m.get(k)]
    if missing:
        raise ValueError(f"no measurements of {', '.join(missing)}")
    med = {k: statistics.median(m[k]) for k in need}
    return PacketCosts(
        release_latency_s=max(0.0, med["start_delay_s"] + med["end_delay_s"]),
        rate_efficiency=min(1.0, 1.0 / med["lone_duration_ratio"]),
        wait_resume_s=max(0.0, med["wait_excess_s"]),
        preempt_resume_s=max(0.0, statistics.fmean(m["preempt_excess_s"])),
        stall_after_s=_stall_onset_s(m.get("stop_s", []), m.get("stop_excess_s", []),
                                     statistics.fmean(m["preempt_excess_s"])))


def _stall_onset_s(stops_s: list[float], excess_s: list[float], full_s: float) -> float:
    """The shortest stop whose mean excess is at least half ``full_s`` (0 if none)."""
    by_stop: dict[float, list[float]] = {}
    for d, e in zip(stops_s, excess_s):
        by_stop.setdefault(d, []).append(e)
    stalled = [d for d, e in by_stop.items() if statistics.fmean(e) >= 0.5 * full_s]
    return min(stalled, default=0.0)
