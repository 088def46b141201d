"""The README's commands leave the working tree clean: every file or directory a command
of the README writes (``-o``, ``--out``, ``cp``, ``>>``, ``mkdir``) is under the
git-ignored ``runs/``, outside the repository or a placeholder, and where a comment says
``-> runs/X/`` after ``run_experiments.py --config FILE``, that is where the runner puts
the file's runs. Only ``run_experiments.py`` without ``--config`` writes ``results/``,
and no command here names it."""
import re
import shlex
from pathlib import Path

import run_experiments as rx
from tests.conftest import REPO

README = (REPO / "README.md").read_text()
WRITE_FLAGS = ("-o", "--output", "--out")


def sh_lines() -> list[str]:
    """Command lines of the README's ```sh blocks (heredoc bodies left out)."""
    lines = []
    for block in re.findall(r"```sh\n(.*?)```", README, flags=re.S):
        heredoc_end = None
        for line in block.splitlines():
            if heredoc_end is not None:
                if line.strip() == heredoc_end:
                    heredoc_end = None
                continue
            m = re.search(r"<<-?\s*'?(\w+)'?", line)
            if m:
                heredoc_end = m.group(1)
            if line.strip() and not line.lstrip().startswith("#"):
                lines.append(line)
    return lines


def inline_commands() -> list[str]:
    """Inline code spans of the prose and tables that are commands writing somewhere."""
    spans = re.findall(r"`([^`\n]+)`", re.sub(r"```.*?```", "", README, flags=re.S))
    return [s for s in spans if "python" in s and any(f" {f} " in f" {s} " for f in WRITE_FLAGS)]


def written_paths(line: str) -> list[str]:
    """The paths one command line writes: after -o / --output / --out, cp's target, a
    redirection's target, mkdir's arguments; each command of an ``&&`` chain."""
    line = re.sub(r"<<-?\s*'?\w+'?", "", line)  # the heredoc marker (its body is skipped)
    tokens = shlex.split(line, comments=True)
    out, cmd = [], []
    for tok in tokens + ["&&"]:
        if tok in ("&&", ";", "|"):
            if cmd and cmd[0] == "cp":
                out.append(cmd[-1])
            if cmd and cmd[0] == "mkdir":
                out += [t for t in cmd[1:] if not t.startswith("-")]
            cmd = []
            continue
        cmd.append(tok)
        if len(cmd) >= 2 and cmd[-2] in (*WRITE_FLAGS, ">", ">>"):
            out.append(tok)
    return out


def allowed(path: str) -> bool:
    if path.startswith(("$(mktemp", "/")) or path.isupper():  # temporary, absolute, OUT
        return True
    parts = Path(path).parts
    return bool(parts) and parts[0] == "runs"


def test_the_readme_writes_only_under_runs():
    lines = sh_lines() + inline_commands()
    written = [(line, p) for line in lines for p in written_paths(line)]
    # the own-experiment walk-through alone writes the config, the trace and two runs
    assert {p for _, p in written} >= {"runs/mine.toml", "runs/mine.json", "runs/out/beamer",
                                       "runs/out/sincronia"}
    bad = [f"{p!r} in: {line.strip()}" for line, p in written if not allowed(p)]
    assert not bad, "\n".join(bad)
    assert "/runs/" in (REPO / ".gitignore").read_text().splitlines()


def test_written_paths_reads_the_readme_forms():
    """The parser above, on hand-written lines of each form it must see."""
    assert written_paths("mkdir -p runs && cp experiments/default.toml runs/mine.toml   # x") == [
        "runs", "runs/mine.toml"]
    assert written_paths("cat >> mine.toml <<'TOML'") == ["mine.toml"]
    assert written_paths('.venv/bin/python -m emulation.fluid t.json --policy fair '
                         '-o "$(mktemp -d)/fair"') == ["$(mktemp -d)/fair"]
    assert written_paths("python run_experiments.py --config a.toml --out out  # b") == ["out"]
    assert not allowed("mine.json") and not allowed("out/beamer") and not allowed("results")
    assert allowed("runs/out/beamer") and allowed("/tmp/fresh") and allowed("OUT")


def test_the_run_directory_the_readme_names_is_the_runners():
    """``run_experiments.py --config FILE ... # -> DIR/``: DIR is rx.default_out(FILE)."""
    pairs = []
    for line in sh_lines():
        m = re.search(r"run_experiments\.py --config (\S+).*#\s*->\s*(\S+)", line)
        if m:
            pairs.append(m.groups())
    assert ("runs/mine.toml", "runs/mine/") in pairs  # the own-experiment walk-through
    for config, shown in pairs:
        assert rx.default_out([Path(config)], full=False) == REPO / shown.rstrip("/"), config
    prose = " ".join(README.split())
    assert "`run_experiments.py --config runs/mine.toml` writes `runs/mine/`" in prose


def test_the_readmes_own_trace_is_valid_and_runs(tmp_path):
    """The JSON block of step 5 ("A trace of your own") is a complete trace: it validates
    and one fluid run of it ends with its one stage done. By hand: two iterations of 0.1 s
    of compute, each followed by 1 MB over a 10 Gbit/s host link (0.8 ms): SCT 0.2016 s."""
    import json
    from emulation.fluid.simulator import FluidSimulator
    from emulation.scheduler import make_policy
    from emulation.topology import big_switch
    from workloads.trace import validate_dict
    [block] = re.findall(r"```json\n(.*?)```", README, flags=re.S)
    trace = validate_dict(json.loads(block))
    pol = make_policy("beamer")
    rec = FluidSimulator(trace, big_switch(2, 10e9, host_names=trace.hosts), pol,
                         realloc=pol.realloc_mode()).run()
    [stage] = rec.stages
    assert abs(stage["sct_s"] - (2 * 0.1 + 2 * 1e6 * 8 / 10e9)) < 1e-9
