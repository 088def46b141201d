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


def test_grouped_weighted_rows_by_hand():
    from emulation.view_kernels import grouped_weighted_rows
    group = np.array([1, 0, 1])
    X = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    w = np.array([2.0, 1.0, 3.0])
    # group 0: row 1 x 1; group 1: row 0 x 2 + row 2 x 3; group 2: nothing
    assert grouped_weighted_rows(group, X, w, 3).tolist() == [[3.0, 4.0], [17.0, 22.0],
                                                               [0.0, 0.0]]
    assert grouped_weighted_rows(group[:0], X[:0], w[:0], 2).tolist() == [[0.0, 0.0],
                                                                        [0.0, 0.0]]


def test_grouped_weighted_rows_is_add_at_bit_for_bit():
    """The numpy formulation (``np.add.at`` on zeros), on rows of very different
    magnitudes so that the order of the additions shows in the last digits."""
    from emulation.view_kernels import grouped_weighted_rows
    rng = np.random.default_rng(7)
    for _ in range(200):
        n, L, S = rng.integers(0, 30), rng.integers(1, 20), rng.integers(1, 8)
        group = rng.integers(0, S, n)
        X = rng.random((n, L)) * 10.0 ** rng.uniform(-3, 12, (n, 1))
        w = rng.integers(1, 50, n).astype(float)
        ref = np.zeros((S, L))
        np.add.at(ref, group, X * w[:, None])
        assert np.array_equal(grouped_weighted_rows(group, X, w, S), ref)
