"""The packet-level command line's --config (an experiment TOML): the file's [topology]
and [experiment] priority_classes / rate_scale / time_scale apply, options given win,
the suite's packet-level checks hold (realloc "policy", 1..8 classes), and a bad file
fails with one line before the trace is read or root is checked. Both command lines name
a bad topology option as it was given."""
import subprocess

import pytest

from emulation.mininet import __main__ as cli
from tests.conftest import PYTHON, REPO


def settings(tmp_path, text, *argv):
    cfg = tmp_path / "mine.toml"
    cfg.write_text(text)
    args, given = cli.parse_given(cli.build_parser(), ["t.json", "--policy", "fair", "-o", "o",
                                                        "--config", str(cfg), *argv],
                                  (*cli.TOPOLOGY_FLAGS, "priority_classes", "rate_scale",
                                   "time_scale"))
    return cli.settings(args, given)


FILE = """
[experiment]
name = "mine"
policies = ["beamer", "fair"]
priority_classes = 4
rate_scale = 0.01
time_scale = 3.0

[workload]
num_apps = 2

[topology]
kind = "leaf_spine"
hosts_per_leaf = 2
num_spines = 1
link_rate_bps = 1e9
"""


def test_the_files_topology_and_scales_apply(tmp_path):
    topo, opts, notes = settings(tmp_path, FILE)
    assert (topo.kind, topo.hosts_per_leaf, topo.num_spines, topo.link_rate_bps) == (
        "leaf_spine", 2, 1, 1e9)
    assert opts == {"priority_classes": 4, "rate_scale": 0.01, "time_scale": 3.0,
                    "realloc": "policy"}
    [note] = notes
    assert note.startswith(f"note: {tmp_path / 'mine.toml'}: applied ") and "\n" not in note
    applied, _, unused = note.partition("not used by a packet-level run: ")
    assert unused, note
    for key in ("[topology]", "experiment.priority_classes", "experiment.rate_scale",
                "experiment.time_scale"):
        assert key in applied, (key, note)
    # what reads each key the packet level leaves unused
    assert "[workload] (the generator's: python -m workloads generate)" in unused, note
    assert "experiment.policies (the suite runner's: run_experiments.py)" in unused, note


def test_options_given_override_the_file(tmp_path):
    topo, opts, _ = settings(tmp_path, FILE, "--rate-scale", "0.02", "--priority-classes", "8",
                             "--topology", "big_switch", "--link-rate-bps", "10e9")
    assert (topo.kind, topo.link_rate_bps) == ("big_switch", 10e9)
    assert (opts["rate_scale"], opts["priority_classes"], opts["time_scale"]) == (0.02, 8, 3.0)


def test_without_a_file_the_defaults_are_the_suites(tmp_path):
    args, given = cli.parse_given(cli.build_parser(), ["t.json", "--policy", "fair", "-o", "o"],
                                  (*cli.TOPOLOGY_FLAGS, "priority_classes", "rate_scale",
                                   "time_scale"))
    topo, opts, notes = cli.settings(args, given)
    assert (topo.kind, topo.link_rate_bps) == ("big_switch", 10e9)
    assert opts == {"priority_classes": 8, "rate_scale": 0.003, "time_scale": 2.0,
                    "realloc": "policy"} and notes == []


@pytest.mark.parametrize("text,message", [
    ('[experiment]\nrealloc = "flow"\n',
     "experiment.realloc: the mininet backend runs each policy at its published events"),
    ("[experiment]\npriority_classes = 0\n",
     "experiment.priority_classes: the mininet backend needs 1..8"),
    ("[experiment]\nrate_scale = 0.0\n", "experiment.rate_scale/time_scale: must be > 0"),
    ("[topology]\nnum_spines = 0\n", "topology.num_spines: must be >= 1, got 0"),
    ("[topology]\nlink_rate = 1e9\n", "unknown key 'topology.link_rate' (known: "),
])
@pytest.mark.slow
def test_a_bad_file_is_one_line_before_anything_runs(tmp_path, text, message):
    cfg = tmp_path / "mine.toml"
    cfg.write_text(text)
    r = subprocess.run([PYTHON, "-m", "emulation.mininet", "missing.json", "--policy", "fair",
                        "--config", str(cfg), "-o", str(tmp_path / "out")],
                       cwd=REPO, capture_output=True, text=True)
    assert r.returncode == 2, r.stderr
    [line] = r.stderr.strip().splitlines()
    assert line.startswith(f"error: {cfg}: ") and message in line, line
    assert not (tmp_path / "out").exists()



@pytest.mark.parametrize("module", ["emulation.fluid", "emulation.mininet"])
@pytest.mark.parametrize("argv,line", [
    (["--topology", "leaf_spine", "--spines", "0"], "error: --spines: must be >= 1, got 0"),
    (["--oversubscription", "-1"], "error: --oversubscription: must be > 0"),
])
@pytest.mark.slow
def test_a_bad_topology_option_is_named_as_given(tmp_path, module, argv, line):
    """Both command lines name the option, not the [topology] key it sets."""
    r = subprocess.run([PYTHON, "-m", module, "missing.json", "--policy", "fair", *argv,
                        "-o", str(tmp_path / "out")], cwd=REPO, capture_output=True, text=True)
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [line]


def test_an_option_given_overrides_a_file_value_the_packet_level_cannot_run(tmp_path):
    """priority_classes = 0 (unlimited: fine for a fluid suite) with --priority-classes 4:
    the option wins, so the run is valid; without it, the file's value is the error."""
    _, opts, _ = settings(tmp_path, "[experiment]\npriority_classes = 0\n",
                          "--priority-classes", "4")
    assert opts["priority_classes"] == 4
    with pytest.raises(cli.ConfigError, match="experiment.priority_classes: the mininet "
                                              "backend needs 1..8"):
        settings(tmp_path, "[experiment]\npriority_classes = 0\n")


def test_realloc_is_checked_not_named_as_applied(tmp_path):
    _, opts, notes = settings(tmp_path, '[experiment]\nrealloc = "policy"\n[workload]\n'
                                        "num_apps = 2\n")
    assert opts["realloc"] == "policy"
    [note] = notes
    assert "experiment.realloc" not in note and note.endswith("python -m workloads generate)")


@pytest.mark.parametrize("flag", ["--rate-scale", "--time-scale"])
@pytest.mark.parametrize("value", ["0", "-1", "nan"])
def test_a_scale_option_must_be_positive(tmp_path, flag, value):
    with pytest.raises(cli.ConfigError, match=f"{flag}: must be > 0"):
        args, given = cli.parse_given(cli.build_parser(), ["t.json", "--policy", "fair", "-o",
                                                            "o", flag, value],
                                      (*cli.TOPOLOGY_FLAGS, "priority_classes", "rate_scale",
                                       "time_scale"))
        cli.settings(args, given)


@pytest.mark.slow
def test_a_leaf_spine_of_several_spines_is_refused_in_one_line(tmp_path):
    """The packet-level backend builds one bridged path between two hosts, so a leaf-spine
    of two spines (a bridging loop, no per-flow spine) is refused before any network is
    built, as root or not: from --config, from --spines, and by the runner; one spine is
    accepted."""
    two = FILE.replace("num_spines = 1", "num_spines = 2")
    with pytest.raises(cli.ConfigError, match="a leaf-spine of 2 spines"):
        settings(tmp_path, two)
    with pytest.raises(cli.ConfigError, match="or the fluid backend"):
        settings(tmp_path, FILE, "--spines", "2")
    assert settings(tmp_path, FILE)[0].num_spines == 1
    r = subprocess.run([PYTHON, "-m", "emulation.mininet", "t.json", "--policy", "fair",
                        "--topology", "leaf_spine", "--hosts-per-leaf", "2", "--spines", "2",
                        "-o", str(tmp_path / "out")], cwd=REPO, capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "its bridges would loop" in r.stderr and not (tmp_path / "out").exists()
    cfg = tmp_path / "ls.toml"
    cfg.write_text(two.replace('name = "mine"', 'name = "mine"\nbackend = "mininet"'))
    r = subprocess.run([PYTHON, "run_experiments.py", "--config", str(cfg), "--dry-run"],
                       cwd=REPO, capture_output=True, text=True)
    assert r.returncode == 2 and "a leaf-spine of 2 spines" in r.stderr, r.stderr
