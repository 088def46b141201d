"""Config values and keys ``run_experiments.py`` checks before any run: a bad value named
with the sweep point that makes it (or none, when every point has it), leaf-spine counts
below one, keys no tuner reads, values listed twice, two files making the same runs, and
values a tenant inherits."""
import subprocess

import pytest

from tests.conftest import PYTHON, REPO
from tests.runner.test_runner_checks import runner, write


@pytest.mark.parametrize("key,values,message", [
    ("workload.arrival_rate_per_s", "[1.0, -2.0]",
     "workload.arrival_rate_per_s: must be > 0 at the sweep point arrival_rate_per_s=-2"),
    ("experiment.priority_classes", "[8, -1]",
     "experiment.priority_classes: must be >= 0 at the sweep point priority_classes=-1"),
    ("topology.oversubscription", "[1.0, 0.0]",
     "topology.oversubscription: must be > 0 at the sweep point oversubscription=0"),
])
def test_a_bad_value_from_a_sweep_names_its_sweep_point(tmp_path, key, values, message):
    """The first point is valid, the second is not: the error says which point."""
    from runner.config import load_experiment
    from workloads.config import ConfigError
    cfg = write(tmp_path, extra=f'[sweep]\n"{key}" = {values}\n')
    with pytest.raises(ConfigError) as exc:
        load_experiment(cfg, full=False)
    assert str(exc.value) == f"{cfg}: {message}"


def test_a_bad_value_the_sweep_does_not_touch_names_no_sweep_point(tmp_path):
    """num_apps = 0 is bad at both points of a sweep over the arrival rate: the error names
    the key alone, not the first point (which would suggest the point matters)."""
    from runner.config import load_experiment
    from workloads.config import ConfigError
    cfg = write(tmp_path, workload="arrival_rate_per_s = 1.0",
                extra='[sweep]\n"workload.arrival_rate_per_s" = [0.5, 2.0]\n')
    cfg.write_text(cfg.read_text().replace("num_apps = 2", "num_apps = 0"))
    with pytest.raises(ConfigError) as exc:
        load_experiment(cfg, full=False)
    assert str(exc.value) == f"{cfg}: workload.num_apps: must be >= 1"
    # the same key bad at one point only: named by that point
    cfg.write_text(cfg.read_text().replace("num_apps = 0", "num_apps = 2").replace(
        '"workload.arrival_rate_per_s" = [0.5, 2.0]', '"workload.num_apps" = [2, 0]'))
    with pytest.raises(ConfigError) as exc:
        load_experiment(cfg, full=False)
    assert str(exc.value) == f"{cfg}: workload.num_apps: must be >= 1 at the sweep point num_apps=0"
    # the swept key bad at every point (or a sweep of one value): still named by the point
    for values, point in (("[0, -1]", "num_apps=0"), ("[0]", "num_apps=0")):
        cfg.write_text(cfg.read_text().replace('"workload.num_apps" = [2, 0]', f'"workload.num_apps" = {values}')
                       .replace('"workload.num_apps" = [0, -1]', f'"workload.num_apps" = {values}'))
        with pytest.raises(ConfigError) as exc:
            load_experiment(cfg, full=False)
        assert str(exc.value) == f"{cfg}: workload.num_apps: must be >= 1 at the sweep point {point}"


@pytest.mark.parametrize("table,line,key,values,message", [
    ("workload", "arrival_rate_per_s = -3.0", "workload.arrival_rate_per_s", "[1.0, 2.0]",
     "workload.arrival_rate_per_s: must be > 0"),
    ("experiment", "priority_classes = -1", "experiment.priority_classes", "[4, 8]",
     "experiment.priority_classes: must be >= 0"),
    ("topology", 'oversubscription = "2"', "topology.oversubscription", "[1.0, 2.0]",
     'topology.oversubscription: must be a number, got "2"'),
])
def test_a_bad_file_value_that_the_sweep_replaces_is_still_an_error(
        tmp_path, table, line, key, values, message):
    """Every sweep point replaces the file's value, which is out of range or mistyped:
    the error names the key, what is wrong, and that the sweep replaces it; a good file
    value under the same sweep loads."""
    from runner.config import load_experiment
    from workloads.config import ConfigError
    fill = {"experiment": "", "workload": "", "topology": ""}
    cfg = write(tmp_path, **{**fill, table: line}, extra=f'[sweep]\n"{key}" = {values}\n')
    with pytest.raises(ConfigError) as exc:
        load_experiment(cfg, full=False)
    assert str(exc.value).startswith(f"{cfg}: {message}")
    assert str(exc.value).endswith(f"(the file's value of {key}, which [sweep] replaces at "
                                   "every point: fix it or leave it out)")
    good = line.split(" = ")[0] + " = " + values.strip("[]").split(", ")[0]
    cfg = write(tmp_path, **{**fill, table: good}, extra=f'[sweep]\n"{key}" = {values}\n')
    assert len(load_experiment(cfg, full=False)) == 2


def test_file_values_valid_together_pass_though_each_fails_beside_the_sweeps_others(tmp_path):
    """The file's num_hosts = 16 and gpu_mix 8-GPU trials go together; the sweep replaces
    both (4 or 6 hosts, 2- or 4-GPU trials). Put back alone beside a swept num_hosts of 4
    or 6, the file's 8-GPU mix cannot fit, but the file's own pair is valid: no error, the
    4 sweep points load."""
    from runner.config import load_experiment
    cfg = tmp_path / "pair.toml"
    cfg.write_text('[experiment]\nname = "pair"\npolicies = ["fair"]\nseeds = [1]\n'
                   '[workload]\nnum_apps = 2\nmax_resource = 3\nnum_hosts = 16\n'
                   'gpu_mix = { "8" = 1.0 }\n'
                   '[sweep]\n"workload.num_hosts" = [4, 6]\n'
                   '"workload.gpu_mix" = [{ "2" = 1.0 }, { "4" = 1.0 }]\n')
    assert len(load_experiment(cfg, full=False)) == 4


@pytest.mark.parametrize("key", ["hosts_per_leaf", "num_spines"])
def test_a_leaf_spine_count_below_one_names_its_key(tmp_path, key):
    from runner.config import load_experiment
    from workloads.config import ConfigError
    cfg = write(tmp_path, topology=f'kind = "leaf_spine"\n{key} = 0')
    with pytest.raises(ConfigError) as exc:
        load_experiment(cfg, full=False)
    assert str(exc.value) == f"{cfg}: topology.{key}: must be >= 1, got 0"


# --- [workload] keys no tuner reads ---

SHA_READS = 'algorithm = "sha" reads only sha_num_configs, sha_min_resource, eta, resume_promoted'


@pytest.mark.slow
def test_another_tuners_key_is_an_error_in_the_runner_and_the_workload_cli(tmp_path):
    cfg, out = write(tmp_path, wl_hosts=8, workload='algorithm = "sha"\nasha_num_trials = 27'), \
        tmp_path / "res"
    cfg.write_text(cfg.read_text().replace("max_resource = 3\n", ""))
    r = runner("--config", cfg, "--out", out, "--dry-run")
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1 and not out.exists(), r.stderr
    [err] = r.stderr.splitlines()
    assert err.startswith(f"error: {cfg}: set but not read: workload.asha_num_trials "), err
    assert SHA_READS in err and "remove it" in err, err
    assert "TUNER_KEYS in workloads/generator.py" in err, err
    r = subprocess.run([PYTHON, "-m", "workloads", "generate", str(cfg), "-o",
                        str(tmp_path / "t.json")], cwd=REPO, capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.splitlines() == [err]  # the runner's line
    assert not (tmp_path / "t.json").exists()


def test_unread_workload_keys():
    """Each case derived from TUNER_KEYS: hyperband (the default) reads max_resource and
    eta; random reads neither; in a mix a [workload] key counts as read if some tenant
    reads it without setting it."""
    from workloads.generator import unread_workload_keys as unread
    assert unread({"max_resource": 9, "eta": 3}) == {}
    assert unread({"algorithm": "random", "max_resource": 9, "random_budget": 3.0}) == {
        "workload.max_resource": 'algorithm = "random" reads only random_num_trials, random_budget'}
    assert unread({"algorithm": "sha", "resume_promoted": True, "sha_min_resource": 2.0}) == {}
    assert unread({"algorithm": "asha", "resume_promoted": True}) == {
        "workload.resume_promoted": 'algorithm = "asha" reads only asha_num_trials, asha_grace, '
                                    'max_resource, eta'}
    mix = {"algorithm": "mix", "max_resource": 9, "eta": 3, "sha_num_configs": 9,
           "tenants": [{"algorithm": "random", "eta": 2},
                       {"algorithm": "sha", "eta": 3, "sha_num_configs": 27},
                       {"algorithm": "asha"}]}
    assert unread(mix) == {
        "workload.tenants[0].eta": 'algorithm = "random" reads only random_num_trials, random_budget',
        "workload.sha_num_configs": "every tenant that reads it sets its own"}
    mix["tenants"] = [{"algorithm": "random"}]
    assert unread(mix) == {"workload.max_resource": "no tenant's algorithm reads it",
                           "workload.eta": "no tenant's algorithm reads it",
                           "workload.sha_num_configs": "no tenant's algorithm reads it"}
    assert unread({"ps_servers": 2}) == {
        "workload.ps_servers": 'sync_pattern = "ring" has no parameter servers'}
    assert unread({"ps_servers": 2, "sync_pattern": "ps"}) == {}


@pytest.mark.parametrize("workload,sweep,needle", [
    # read at the asha point of the sweep: fine
    ('algorithm = "sha"\nasha_num_trials = 9', '"workload.algorithm" = ["sha", "asha"]', None),
    # the swept key itself is read at no point
    ('algorithm = "sha"', '"workload.asha_num_trials" = [9, 27]',
     f"set but not read at any sweep point: workload.asha_num_trials ({SHA_READS})"),
    ("ps_servers = 2", '"workload.sync_pattern" = ["ring", "ps"]', None),
    ('algorithm = "mix"\ntenants = [{ algorithm = "random", eta = 2 }]', "",
     "set but not read: workload.max_resource (no tenant's algorithm reads it); "
     'workload.tenants[0].eta (algorithm = "random" reads only random_num_trials, '
     "random_budget); remove them"),
])
def test_keys_read_at_some_sweep_point_are_fine(tmp_path, workload, sweep, needle):
    from runner.config import load_experiment
    from workloads.config import ConfigError
    cfg = write(tmp_path, wl_hosts=8, workload=workload,
                extra=f"[sweep]\n{sweep}\n" if sweep else "")
    if "max_resource" in workload or "sha" in workload:
        cfg.write_text(cfg.read_text().replace("max_resource = 3\n", ""))
    if needle is None:
        assert load_experiment(cfg, full=False)
    else:
        with pytest.raises(ConfigError) as exc:
            load_experiment(cfg, full=False)
        assert needle in str(exc.value), str(exc.value)


@pytest.mark.slow
def test_every_committed_experiment_sets_only_keys_it_reads():
    from runner.config import load_experiment
    for path in sorted((REPO / "experiments").rglob("*.toml")):  # both suites
        for full in (False, True):
            assert load_experiment(path, full=full), path


@pytest.mark.parametrize("edit,message", [
    (("seeds = [1]", "seeds = [1, 2, 1]"), "experiment.seeds: 1 listed twice"),
    (('policies = ["fair"]', 'policies = ["fair", "beamer", "fair"]'),
     'experiment.policies: "fair" listed twice'),
    (("", '[sweep]\n"workload.num_apps" = [2, 3, 2]\n'),
     "[sweep]: 'workload.num_apps' lists 2 twice"),
    (("", '[sweep]\n"workload.models" = [{ vgg16 = 1.0 }, { vgg16 = 1.0 }, { "a.b" = inf }]\n'),
     "[sweep]: 'workload.models' lists { vgg16 = 1.0 } twice"),
])
def test_a_value_listed_twice_is_named_with_its_file_and_key(tmp_path, edit, message):
    from runner.config import collect_specs
    from workloads.config import ConfigError
    cfg = write(tmp_path)
    old, new = edit
    cfg.write_text(cfg.read_text().replace(old, new, 1) if old else cfg.read_text() + new)
    with pytest.raises(ConfigError) as exc:
        collect_specs([cfg], full=False, backend="fluid")
    assert str(exc.value).startswith(str(cfg)) and str(exc.value).endswith(message)


def test_two_files_making_the_same_runs_are_both_named(tmp_path):
    from runner.config import collect_specs
    from workloads.config import ConfigError
    a = write(tmp_path)
    b = tmp_path / "two.toml"
    b.write_text(a.read_text())
    with pytest.raises(ConfigError) as exc:
        collect_specs([a, b], full=False, backend="fluid")
    msg = str(exc.value)
    assert msg.startswith(f"{a} and {b}: ") and "the run one/policy=fair,seed=1" in msg, msg
    assert msg.endswith("give each file its own [experiment] name"), msg
    with pytest.raises(ConfigError) as exc:
        collect_specs([a, a], full=False, backend="fluid")
    assert str(exc.value) == f"{a}: given twice"


def test_a_bad_value_a_tenant_inherits_is_named_where_it_is_written():
    from workloads.config import ConfigError, build
    from workloads.generator import WorkloadConfig, check_trial_sizes
    table = {"algorithm": "mix", "num_hosts": 16, "gpu_mix": {"2": 1.0, "32": 1.0},
             "tenants": [{"algorithm": "sha", "weight": 1.0}]}
    with pytest.raises(ConfigError) as exc:
        check_trial_sizes(build(WorkloadConfig, table, "workload"), None)
    assert str(exc.value) == "workload.gpu_mix.32: needs 32 hosts but num_hosts = 16"
    table = {**table, "gpu_mix": {"2": 1.0}, "tenants": [{"algorithm": "sha", "weight": 1.0,
                                                         "eta": 1}]}
    with pytest.raises(ConfigError) as exc:  # a tenant's own bad value: named in the tenant
        build(WorkloadConfig, table, "workload")
    assert str(exc.value) == "workload.tenants[0].eta: must be >= 2"


@pytest.mark.parametrize("table", ["sweep", "full"])
def test_a_misspelled_sweep_or_full_key_is_named_as_such(tmp_path, table):
    """A [sweep] or [full] key that its table does not have is the file's mistake, not
    one sweep point's: the error names the table and the key, and lists the known keys;
    a [full] key is checked without --full too."""
    from runner.config import load_experiment
    from workloads.config import ConfigError
    values = "[0.5, 2.0]" if table == "sweep" else "0.5"
    cfg = write(tmp_path, extra=f'[{table}]\n"workload.arival_rate_per_s" = {values}\n')
    for full in (True, False):
        with pytest.raises(ConfigError) as exc:
            load_experiment(cfg, full=full)
        msg = str(exc.value)
        assert msg.startswith(f"{cfg} [{table}]: unknown key 'workload.arival_rate_per_s' "
                              "(known workload keys: algorithm, arrival_rate_per_s, "), msg
        assert "sweep point" not in msg


def test_a_swept_number_is_the_same_run_however_it_is_written(tmp_path):
    """`oversubscription = [1, 2]` and `[1.0, 2.0]` (a float key) make the same runs: same
    names, params recorded as the floats the topology holds, same config hashes; an
    integer key (priority classes) keeps its integers."""
    from runner.config import load_experiment
    topo = 'kind = "leaf_spine"\nhosts_per_leaf = 4'
    specs = {}
    for values in ("[1, 2]", "[1.0, 2.0]"):
        cfg = write(tmp_path, wl_hosts=8, topology=topo,
                    extra=f'[sweep]\n"topology.oversubscription" = {values}\n'
                          '"experiment.priority_classes" = [2, 8]\n')
        specs[values] = load_experiment(cfg, full=False)
    ints, floats = specs["[1, 2]"], specs["[1.0, 2.0]"]
    assert [s.name for s in ints] == [s.name for s in floats] and len(ints) == 4
    assert [s.config_hash for s in ints] == [s.config_hash for s in floats]
    for s in ints:
        assert type(s.params["topology.oversubscription"]) is float
        assert type(s.params["experiment.priority_classes"]) is int


@pytest.mark.parametrize("line,message", [
    ("random_num_trials = true", "workload.random_num_trials: must be an integer, got true"),
    ('sync_pattern = "rings"', 'workload.sync_pattern: must be one of ["ring", "ps"], got "rings"'),
    ('iterations_per_unit = [2, "x"]',
     'workload.iterations_per_unit: must be an integer, got [2, "x"]'),
    ('models = "vgg16"', 'workload.models: must be a table, got "vgg16"'),
])
def test_a_wrong_value_is_quoted_as_the_file_writes_it(tmp_path, line, message):
    """Type errors show the offending value in TOML's spelling (``true``, double quotes),
    not Python's (``True``, single quotes)."""
    from runner.config import load_experiment
    from workloads.config import ConfigError
    cfg = write(tmp_path, experiment="", workload=line, topology="")
    with pytest.raises(ConfigError) as exc:
        load_experiment(cfg, full=False)
    assert str(exc.value).endswith(message), str(exc.value)


@pytest.mark.slow
def test_as_toml_reads_back_as_the_same_value():
    """Whatever a TOML file can hold (strings with quotes, backslashes and control
    characters, keys that need quotes, nested tables and lists, dates, inf), ``as_toml``
    spells it so that TOML's own parser reads back the same value."""
    import datetime
    import math
    import tomllib

    from hypothesis import given, settings, strategies as st

    from workloads.config import as_toml
    scalars = (st.booleans() | st.integers(-2**63, 2**63 - 1) | st.text()
               | st.floats(allow_nan=False) | st.dates())
    values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                          | st.dictionaries(st.text(max_size=5), inner, max_size=4),
                          max_leaves=12)

    @settings(max_examples=300, deadline=None)
    @given(values)
    def reads_back(value):
        assert tomllib.loads(f"x = {as_toml(value)}")["x"] == value

    reads_back()
    assert as_toml(True) == "true" and as_toml("ring") == '"ring"'
    assert as_toml({"a.b": 1}) == '{ "a.b" = 1 }' and as_toml({}) == "{}"
    assert math.isinf(tomllib.loads(f"x = {as_toml(-math.inf)}")["x"])
    assert as_toml(datetime.date(2020, 1, 2)) == "2020-01-02"


def test_a_bad_full_value_fails_without_full_too(tmp_path):
    """A [full] value the table refuses (num_apps = 0; the file's own num_apps = 2 is fine)
    fails before the default runs, named as the --full value it is, not only when --full
    is given."""
    from runner.config import load_experiment
    from workloads.config import ConfigError
    cfg = write(tmp_path, extra='[full]\n"workload.num_apps" = 0\n')
    for full in (False, True):
        with pytest.raises(ConfigError) as exc:
            load_experiment(cfg, full=full)
        assert str(exc.value) == f"{cfg}: workload.num_apps: must be >= 1 with --full"


def test_a_full_value_the_sweep_replaces_is_an_error(tmp_path):
    """[full] and [sweep] both set arrival_rate_per_s: the sweep's values replace [full]'s
    at every point, so --full would silently not use it."""
    from runner.config import load_experiment
    from workloads.config import ConfigError
    cfg = write(tmp_path, extra='[sweep]\n"workload.arrival_rate_per_s" = [0.5, 2.0]\n'
                                '[full]\n"workload.arrival_rate_per_s" = 4.0\n')
    with pytest.raises(ConfigError) as exc:
        load_experiment(cfg, full=False)
    msg = str(exc.value)
    assert msg.startswith(f"{cfg}: [full] sets workload.arrival_rate_per_s, which [sweep] "
                          "replaces"), msg
    assert "--full would not use it" in msg and msg.endswith("remove it from one of them"), msg


@pytest.mark.parametrize("line", ["full = 3", 'sweep = "x"'])
def test_a_table_written_as_a_value_is_named(tmp_path, line):
    from runner.config import load_experiment
    from workloads.config import ConfigError
    cfg = write(tmp_path)
    cfg.write_text(line + "\n" + cfg.read_text())
    key, _, value = line.partition(" = ")
    with pytest.raises(ConfigError) as exc:
        load_experiment(cfg, full=False)
    assert str(exc.value) == f"{cfg}: '{key}' must be a table ([{key}]), got {value}"


def test_cdf_all_beside_an_experiment_is_refused():
    """'all' already names every experiment: with another name beside it the request is
    ambiguous, so both the runner and the analysis refuse it."""
    import pandas as pd
    from analysis.report import cdf_experiments
    r = runner("--dry-run", "--cdf", "all", "pattern")
    assert r.returncode == 2
    assert r.stderr.strip().endswith("error: --cdf all pattern: 'all' draws every experiment; "
                                     "give it alone or name the experiments")
    runs = pd.DataFrame({"experiment": ["pattern", "scale"]})
    with pytest.raises(ValueError, match="'all' draws every experiment"):
        cdf_experiments(runs, ["pattern", "all"])
    assert cdf_experiments(runs, ["all"]) == ["pattern", "scale"]
