"""The view's stage loads (compiled, sparse) equal the dense numpy formulation, bit for
bit, at every decision of HPO runs (jobs in flight, computing, done)."""
import numpy as np
import pytest

from emulation.fluid.simulator import FluidSimulator
from emulation.scheduler import make_policy
from emulation.topology import leaf_spine
from workloads.config import build
from workloads.generator import WorkloadConfig, generate


def dense_stage_link_bytes(st):
    """The view's stage loads in plain numpy, the dense formulation the kernel must match
    bit for bit (per job: whole remaining iterations, templates after the in-flight one,
    the in-flight coflow's remaining bytes)."""
    cids = np.fromiter(st.active_coflows, dtype=np.int64, count=len(st.active_coflows))
    stages = np.fromiter(st.active_stages, dtype=np.int64, count=len(st.active_stages))
    s_local = {int(s): i for i, s in enumerate(stages)}
    jobs = np.array([j for s in stages for j in st.stage_jobs[s] if not st.job_done[j]],
                    dtype=np.int64)
    c_local = np.full(len(st.c_job), -1, dtype=np.int64)
    c_local[cids] = np.arange(len(cids))
    L = st.L
    clb = np.zeros((len(cids), L + 1))
    for i in range(len(st.a_cf)):
        for l in st.path_links[st.a_pid[i]]:
            clb[c_local[st.a_cf[i]], l] += st.a_rem[i]
    clb = clb[:, :L]
    ph = st.job_phase[jobs]
    full = st.job_iters[jobs] - st.job_iter[jobs] - (ph >= 0)
    m = full[:, None] * st.job_iter_lb[jobs]
    inflight = np.flatnonzero(ph >= 0)
    if len(inflight):
        jj = jobs[inflight]
        m[inflight] += st.tmpl_after_lb[st.job_t0[jj] + ph[inflight]]
        cur = c_local[st.job_coflow[jj]]
        ok = cur >= 0
        m[inflight[ok]] += clb[cur[ok]]
    out = np.zeros((len(stages), L))
    if len(jobs):
        np.add.at(out, np.array([s_local[int(s)] for s in st.job_stage[jobs]]), m)
    return out


class Checking:
    """Wraps a policy; compares the two formulations at every decision."""

    def __init__(self, inner, sim_ref):
        self.inner, self.sim_ref, self.checked = inner, sim_ref, 0
        self.name, self.allocation = inner.name, inner.allocation

    def prepare(self, **kw):
        self.inner.prepare(**kw)

    def decide(self, view):
        want = dense_stage_link_bytes(self.sim_ref[0].state)
        np.testing.assert_array_equal(view.stage_link_bytes, want)
        self.checked += 1
        return self.inner.decide(view)


@pytest.mark.parametrize("pattern", ["ring", "ps"])
def test_stage_loads_match_dense_formulation(pattern):
    wl = {"seed": 3, "num_apps": 3, "algorithm": "hyperband", "max_resource": 9,
          "num_hosts": 16, "sync_pattern": pattern, "arrival_rate_per_s": 0.5,
          "iterations_per_unit": 2, "gpu_mix": {"2": 1, "4": 1}}
    trace = generate(build(WorkloadConfig, wl, "workload"))
    ref = [None]
    pol = Checking(make_policy("beamer"), ref)
    sim = FluidSimulator(trace, leaf_spine(4, 4, 2, 10e9, 2.0), pol)
    ref[0] = sim
    sim.run()
    assert pol.checked > 20
