"""The packet-aware fluid model (emulation/packet_model.py): each cost applied by
the engine as derived by hand on one-link traces, the fit from measurements, the
calibration file, and run.json's record of the model."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))

from emulation.packet_model import (PacketCosts, calibration_key, fit_costs,  # noqa: E402
                                          load_costs, save_costs)

SIZE = 153_820_272
D = SIZE * 8 / 10e9  # one flow alone on a 10 Gbit/s link, s
COSTS = PacketCosts(release_latency_s=0.01, rate_efficiency=0.9, wait_resume_s=0.005,
                    preempt_resume_s=0.02)


def _ends(jobs, costs, policy="sincronia"):
    from packet_costs import trace_of
    from emulation.fluid.simulator import FluidSimulator
    from emulation.scheduler import make_policy
    from emulation.topology import TopologyConfig, build_topology
    tr = trace_of(jobs)
    pol = make_policy(policy)
    rec = FluidSimulator(tr, build_topology(TopologyConfig(), tr.hosts), pol,
                         realloc=pol.realloc_mode(), packet_costs=costs).run()
    return {c["coflow_id"]: (c["release_s"], c["end_s"]) for c in rec.coflows}


ONE = (("h0", "h1", SIZE),)


def test_lone_flow_starts_late_and_runs_at_the_efficiency():
    (release, end), = _ends([(0.0, ONE)], COSTS).values()
    assert release == 0.0  # the recorded release is the release, not the first byte
    assert end == pytest.approx(0.01 + D / 0.9, rel=1e-9)
    (_, ideal), = _ends([(0.0, ONE)], None).values()
    assert ideal == pytest.approx(D, rel=1e-9)


def test_flows_waiting_behind_a_class_pay_the_wait_cost_once():
    ends = sorted(e for _, e in _ends([(0.0, ONE)] * 3, COSTS).values())
    first = 0.01 + D / 0.9
    assert ends == pytest.approx([first, first + D / 0.9 + 0.005,
                                  first + 2 * (D / 0.9 + 0.005)], rel=1e-9)


def test_a_demoted_flow_pays_the_preemption_cost():
    ends = _ends([(0.0, ((("h0", "h1", 4 * SIZE)),)), (0.05, ONE)], COSTS)
    # the big flow sends from 0.01 to 0.06 (when the small one joins), the small one
    # then has the link for D / 0.9; the big one's rest, plus its preemption cost
    small_end = 0.06 + D / 0.9
    assert ends["J1/i0/c0"][1] == pytest.approx(small_end, rel=1e-9)
    assert ends["J0/i0/c0"][1] == pytest.approx(
        small_end + (4 * D / 0.9 - 0.05) + 0.02, rel=1e-9)


@pytest.mark.parametrize("stall_after_s, cost_s", [(D / 0.9 - 0.001, 0.02),
                                                   (D / 0.9 + 0.001, 0.0)])
def test_only_a_stop_as_long_as_the_timeout_costs(stall_after_s, cost_s):
    """The big flow is stopped for the small one's D / 0.9: a timeout shorter than that
    fires (the cost is paid), a longer one does not."""
    import dataclasses
    costs = dataclasses.replace(COSTS, stall_after_s=stall_after_s)
    ends = _ends([(0.0, ((("h0", "h1", 4 * SIZE)),)), (0.05, ONE)], costs)
    assert ends["J0/i0/c0"][1] == pytest.approx(
        0.06 + D / 0.9 + (4 * D / 0.9 - 0.05) + cost_s, rel=1e-9)


def test_fair_sharing_pays_no_resume_cost():
    """Two flows sharing a link fairly are never stopped: only latency and efficiency."""
    ends = _ends([(0.0, ONE)] * 2, COSTS, policy="fair")
    assert [e for _, e in ends.values()] == pytest.approx([0.01 + 2 * D / 0.9] * 2, rel=1e-9)


def test_zero_costs_are_the_ideal_model():
    jobs = [(0.0, ((("h0", "h1", 4 * SIZE)),)), (0.05, ONE), (0.07, ONE)]
    assert _ends(jobs, PacketCosts()) == _ends(jobs, None)


def test_fit_takes_medians_and_the_mean_stall_and_clips():
    m = {"start_delay_s": [0.002, 0.004, 0.003], "end_delay_s": [0.001, 0.001, 0.005],
         "lone_duration_ratio": [1.05, 1.04, 1.25], "wait_excess_s": [-0.001, -0.002, 0.01],
         "preempt_excess_s": [0.0, 0.12, 0.0]}
    c = fit_costs(m)
    assert c.release_latency_s == pytest.approx(0.004)
    assert c.rate_efficiency == pytest.approx(1 / 1.05)
    assert c.wait_resume_s == 0.0  # median -0.001: no slower than the model
    assert c.preempt_resume_s == pytest.approx(0.04)  # one stall in three: 0.12 / 3
    assert c.stall_after_s == 0.0  # no shorter stops measured: every stop stalls
    with pytest.raises(ValueError, match="no measurements of wait_excess_s"):
        fit_costs({**m, "wait_excess_s": []})


def test_the_stall_starts_at_the_shortest_stop_that_stalls_half_as_much():
    m = {"start_delay_s": [0.0], "end_delay_s": [0.0], "lone_duration_ratio": [1.0],
         "wait_excess_s": [0.0], "preempt_excess_s": [0.08, 0.0, 0.04],  # mean 0.04
         "stop_s": [0.1, 0.1, 0.05, 0.05, 0.02, 0.02],
         "stop_excess_s": [0.08, 0.0, 0.03, 0.0, 0.0, 0.001]}  # means 0.04, 0.015, 0.0005
    assert fit_costs(m).stall_after_s == 0.1  # 0.015 < 0.02 = half of 0.04
    m["stop_excess_s"][3] = 0.01  # mean at 0.05 now 0.02: half of 0.04
    assert fit_costs(m).stall_after_s == 0.05


def test_costs_reject_impossible_values():
    with pytest.raises(ValueError, match="rate_efficiency"):
        PacketCosts(rate_efficiency=1.2)
    with pytest.raises(ValueError, match="wait_resume_s"):
        PacketCosts(wait_resume_s=-0.1)


def test_calibration_file_round_trip(tmp_path):
    path = tmp_path / "pm.json"
    assert load_costs(rate_scale=0.003, time_scale=2.0, path=path) is None
    save_costs(COSTS, rate_scale=0.003, time_scale=2.0, measurements={"x": [1.0]}, path=path)
    assert load_costs(rate_scale=0.003, time_scale=2.0, path=path, applied=None) == COSTS
    assert load_costs(rate_scale=0.003, time_scale=2.0, path=path,
                      applied=("release_latency_s",)) == PacketCosts(release_latency_s=0.01)
    assert load_costs(rate_scale=0.01, time_scale=2.0, path=path) is None
    data = json.loads(path.read_text())
    data[calibration_key(rate_scale=0.003, time_scale=2.0)]["costs"]["jitter_s"] = 1.0
    path.write_text(json.dumps(data))
    with pytest.raises(Exception, match="unknown cost"):
        load_costs(rate_scale=0.003, time_scale=2.0, path=path)


def test_run_json_records_the_model(tmp_path):
    from packet_costs import trace_of
    from emulation.fluid.run import run_fluid
    from emulation.topology import TopologyConfig, build_topology
    from workloads import trace as trace_mod
    tr = trace_of([(0.0, ONE)])
    path = tmp_path / "t.json"
    trace_mod.save(tr, path)
    topo = build_topology(TopologyConfig(), tr.hosts)
    ideal = run_fluid(trace=tr, trace_path=path, topology=topo, policy="fair",
                      outdir=tmp_path / "ideal")
    packet = run_fluid(trace=tr, trace_path=path, topology=topo, policy="fair",
                       outdir=tmp_path / "packet", packet_costs=COSTS)
    assert "packet_model" not in ideal
    assert packet["packet_model"] == COSTS.as_dict()
    assert packet["avg_sct_s"] == pytest.approx(0.01 + D / 0.9, rel=1e-9)


def _experiment(tmp_path, extra: str) -> Path:
    p = tmp_path / "e.toml"
    p.write_text(f"""[experiment]
name = "pa"
policies = ["fair"]
seeds = [1]
{extra}
[workload]
num_apps = 1
algorithm = "random"
random_num_trials = 2
num_hosts = 4
gpu_mix = {{ "2" = 1.0 }}
""")
    return p


def test_experiment_key_needs_a_calibration_and_records_the_costs(tmp_path, monkeypatch):
    from emulation import packet_model
    from runner.config import load_experiment
    from workloads.config import ConfigError
    monkeypatch.setattr(packet_model, "CALIBRATION_PATH", tmp_path / "none.json")
    with pytest.raises(ConfigError, match="no calibration for rate_scale=0.003,time_scale=2"):
        load_experiment(_experiment(tmp_path, 'fluid_model = "packet-aware"'), full=False)
    cal = tmp_path / "pm.json"
    save_costs(COSTS, rate_scale=0.003, time_scale=2.0, measurements={}, path=cal)
    monkeypatch.setattr(packet_model, "CALIBRATION_PATH", cal)
    spec, = load_experiment(_experiment(tmp_path, 'fluid_model = "packet-aware"'), full=False)
    applied = {k: v for k, v in COSTS.as_dict().items() if k in packet_model.APPLIED}
    assert spec.experiment_cfg["packet_costs"] == {**PacketCosts().as_dict(), **applied}
    ideal, = load_experiment(_experiment(tmp_path, ""), full=False)
    # the default is recorded and leaves the hash of a config without the key as it was
    from runner.config import config_hash
    assert ideal.experiment_cfg["fluid_model"] == "ideal"
    without = {k: v for k, v in ideal.experiment_cfg.items() if k != "fluid_model"}
    assert config_hash({**ideal.config, "experiment_cfg": without}) == ideal.config_hash
    assert spec.config_hash != ideal.config_hash
    with pytest.raises(ConfigError, match="the key is for fluid runs"):
        load_experiment(_experiment(tmp_path, 'fluid_model = "packet-aware"\nbackend = "mininet"'),
                        full=False)


def test_packet_twins_added_to_committed_runs(tmp_path, monkeypatch, capsys):
    """Zero costs: the packet-aware twin is the committed ideal twin, to the byte of its
    avg SCT; the run's own files are untouched, and a second pass writes nothing."""
    import os
    import shutil
    from emulation import packet_model
    from runner import packet_twins
    from emulation import store
    src = REPO / "results" / "testbed-ring"
    run = "policy=fair,seed=63,rep=0"
    dst = tmp_path / "res" / "testbed-ring"
    full = tmp_path / "full" / "testbed-ring"
    shutil.copytree(src, full, ignore=shutil.ignore_patterns("*.pcap"))
    shutil.copytree(full / "traces", dst / "traces")
    os.replace(store.unpack(full / run), dst / run)  # this run alone, loose
    shutil.rmtree(dst / run / "twin_packet")  # as made before its setting was calibrated
    store.pack(dst)
    names = ("run.json", "run_config.json", "stages.csv", "coflows.csv", "stages_capture.csv")

    def own():
        return [store.read_text(dst / run / n) if n.endswith(".json")
                else store.read_table(dst / run / n).to_csv() for n in names]
    before = own()
    cal = tmp_path / "pm.json"
    monkeypatch.setattr(packet_model, "CALIBRATION_PATH", cal)
    assert packet_twins.main([str(tmp_path / "res")]) == 0
    assert "0 packet-aware twins written; 1 run without a calibration" in capsys.readouterr().out
    save_costs(PacketCosts(), rate_scale=0.003, time_scale=2.0, measurements={}, path=cal)
    assert packet_twins.main([str(tmp_path / "res")]) == 0
    twin = store.read_json(dst / run / "twin" / "run.json")
    packet = store.read_json(dst / run / "twin_packet" / "run.json")
    assert packet["avg_sct_s"] == twin["avg_sct_s"]
    assert packet["packet_model"] == PacketCosts().as_dict()
    assert not Path(packet["trace_path"]).is_absolute()
    assert before == own()
    assert not store.is_loose(dst / run)  # packed again
    capsys.readouterr()
    assert packet_twins.main([str(tmp_path / "res")]) == 0
    assert "0 packet-aware twins written; 0 runs" in capsys.readouterr().out
    save_costs(PacketCosts(release_latency_s=0.5), rate_scale=0.003, time_scale=2.0,
               measurements={}, path=cal)
    assert packet_twins.main([str(tmp_path / "res"), "--replace"]) == 0
    assert "1 packet-aware twin written" in capsys.readouterr().out
    again = store.read_json(dst / run / "twin_packet" / "run.json")
    assert again["packet_model"]["release_latency_s"] == 0.5
    assert again["avg_sct_s"] > packet["avg_sct_s"]  # every coflow starts 0.5 s later
    assert sorted(p.name for p in (dst / run).iterdir() if p.name.startswith(".")) == []
