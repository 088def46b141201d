"""Link utilisation over a fluid run, in ten time slices (docs/beamer.md, "Headroom").

    .venv/bin/python research/util.py base 1 sincronia

Prints per slice: share of all link capacity in use, active flows, links carrying at
least one flow, active stages and coflows (time-weighted means between rate changes).
"""
from __future__ import annotations

import sys

import numpy as np

from lab import make
from emulation.fluid.simulator import FluidSimulator
import variants


class Recording(FluidSimulator):
    """The fluid simulator, noting utilisation after every rate change."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.samples: list[tuple[float, ...]] = []

    def _reallocate(self, **kw):
        super()._reallocate(**kw)
        st = self.state
        links = st.path_links[st.a_pid]
        use = np.zeros(st.L + 1)
        np.add.at(use, links.ravel(), np.repeat(st.a_rate, links.shape[1]))
        busy = int((np.bincount(links.ravel(), minlength=st.L + 1)[: st.L] > 0).sum())
        self.samples.append((st.now, use[: st.L].sum() / st.cap[: st.L].sum(), len(st.a_rem),
                             busy, len(st.active_stages), len(st.active_coflows)))


def main(scenario: str, seed: str, policy: str) -> None:
    trace, topo = make(scenario, int(seed))
    sim = Recording(trace, topo, variants.make(policy))
    sim.run()
    lg = np.array(sim.samples)
    t = lg[:, 0]
    dt = np.diff(np.append(t, t[-1]))
    T = t[-1]
    for a in np.linspace(0, T, 11)[:-1]:
        m = (t >= a) & (t < a + T / 10)
        w = dt[m]
        mean = [np.average(lg[m, k], weights=w) if w.sum() > 0 else float("nan") for k in range(1, 6)]
        print(f"[{a:6.0f},{a + T / 10:6.0f}] s  utilisation {mean[0]:.2f}  flows {mean[1]:6.1f}  "
              f"links with flows {mean[2]:5.1f}/{len(topo.links)}  stages {mean[3]:4.1f}  "
              f"coflows {mean[4]:5.1f}")


if __name__ == "__main__":
    main(*sys.argv[1:4])
