"""Admission rules: which of the trials waiting for GPUs start now, behind one interface,
and their registry.

A rule owns no state of its own: ``admit(adm, now_s=...)`` reads the ``Admission``
(``emulation/admission.py``: its queue, free GPUs, caps, placements and each job's
runtime estimate), starts jobs through ``Admission.try_start`` (which places and commits)
in queue order, and returns those it started; the ``Admission`` then drops them from its
queue. A trial whose tuning job is at ``max_concurrent_trials`` waits under every rule
without holding back the others.

- ``fifo``: strict FIFO; the first trial that does not fit holds back every trial behind
  it (Kueue's ``StrictFIFO``; a FIFO queue of placement groups). No ``place`` call is made
  for a trial behind it.
- ``first_fit``: every waiting trial that fits starts, in queue order (Ray Tune's trial
  runner starts any pending trial whose resources are free; Kueue's ``BestEffortFIFO``).
- ``backfill``: EASY backfilling (Slurm's ``sched/backfill``): the first trial that does
  not fit gets a reservation at the earliest expected end of the running jobs that frees
  enough GPUs (``reservation``); a later trial that fits starts now only if it is
  expected to end by then or uses no more than the GPUs the reservation leaves over.

``ADMISSION_RULES`` maps a rule's name to its class; ``make_admission_rule(name)`` builds
one. ``docs/design-notes.md``, "A cluster with GPUs", says what each stands for.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from emulation.admission import Admission, Placement

Started = list[tuple[int, "Placement"]]


class AdmissionRule:
    """Starts the waiting jobs of an ``Admission`` that start now, in queue order."""

    name: ClassVar[str] = ""

    def admit(self, adm: Admission, *, now_s: float) -> Started:
        """The jobs started at ``now_s`` (each already committed by ``adm.try_start``)
        with their placements, in queue order."""
        raise NotImplementedError


def _in_queue_order(adm: Admission, *, now_s: float, stop_at_misfit: bool) -> Started:
    """Start the waiting jobs that fit, in queue order (a job at its tuning job's cap is
    passed over); ``stop_at_misfit``: none after the first that does not fit."""
    started = []
    for j in adm.queue:
        if adm.at_cap(j):
            continue
        p = adm.try_start(j, now_s=now_s)
        if p is not None:
            started.append((j, p))
        elif stop_at_misfit:
            break
    return started


class Fifo(AdmissionRule):
    """Strict FIFO: stop at the first trial that does not fit."""

    name = "fifo"

    def admit(self, adm: Admission, *, now_s: float) -> Started:
        return _in_queue_order(adm, now_s=now_s, stop_at_misfit=True)


class FirstFit(AdmissionRule):
    """Every waiting trial that fits now starts; those that do not fit hold back none."""

    name = "first_fit"

    def admit(self, adm: Admission, *, now_s: float) -> Started:
        return _in_queue_order(adm, now_s=now_s, stop_at_misfit=False)


class Backfill(AdmissionRule):
    """EASY backfilling: FIFO up to the first trial that does not fit (the head), which
    gets a reservation; a later trial that fits starts if it is expected to end by the
    reservation, or if its GPUs fit in what the reservation leaves over."""

    name = "backfill"

    def admit(self, adm: Admission, *, now_s: float) -> Started:
        if adm.estimate_s is None:
            raise ValueError("the backfill rule needs each job's runtime estimate "
                             "(Admission estimate_s)")
        started, head = [], None
        for j in adm.queue:
            if adm.at_cap(j):
                continue
            p = adm.try_start(j, now_s=now_s)
            if p is None:
                head = j
                break
            started.append((j, p))
        if head is not None:
            started += _backfill(adm, head=head, now_s=now_s)
        return started


def _backfill(adm: Admission, *, head: int, now_s: float) -> Started:
    """The trials behind ``head`` that start now without delaying its reservation."""
    shadow_s, extra_gpus = reservation(adm, gpus=int(adm.job_gpus[head]), now_s=now_s)
    started = []
    for j in adm.queue[adm.queue.index(head) + 1:]:
        gpus = int(adm.job_gpus[j])
        in_time = now_s + float(adm.estimate_s[j]) <= shadow_s
        if adm.at_cap(j) or not adm.fits(j) or not (in_time or gpus <= extra_gpus):
            continue
        p = adm.try_start(j, now_s=now_s)
        if p is None:  # unreachable: a trial that fits in total has a placement
            continue
        if not in_time:
            extra_gpus -= gpus
        started.append((j, p))
    return started


def reservation(adm: Admission, *, gpus: int, now_s: float) -> tuple[float, int]:
    """The head's reservation for ``gpus`` GPUs: the earliest expected end of a running
    job at which the free GPUs (free now plus those of the jobs expected to have ended
    by then) reach ``gpus`` (the shadow time), and the free GPUs then beyond ``gpus``
    (the extra GPUs). ``(inf, 0)`` if they never do."""
    ends = adm.expected_ends_s(now_s=now_s)
    free = int(adm.free.sum())
    for i, (end_s, held) in enumerate(ends):
        free += held
        last_at_this_time = i + 1 == len(ends) or ends[i + 1][0] > end_s
        if last_at_this_time and free >= gpus:
            return end_s, free - gpus
    return math.inf, 0


ADMISSION_RULES: dict[str, type[AdmissionRule]] = {
    cls.name: cls for cls in (FirstFit, Backfill, Fifo)
}


def make_admission_rule(name: str) -> AdmissionRule:
    """A rule instance; ValueError naming the known rules for a bad name."""
    try:
        cls = ADMISSION_RULES[name]
    except KeyError:
        raise ValueError(f"unknown admission rule {name!r}; "
                         f"known: {', '.join(ADMISSION_RULES)}") from None
    return cls()


__all__ = ["ADMISSION_RULES", "AdmissionRule", "Backfill", "FirstFit", "Fifo",
           "make_admission_rule", "reservation"]
