"""Reader for the public coflow-benchmark trace format (coflow/coflow-benchmark, FB2010).

Format (text, whitespace separated)::

    <num_ports> <num_coflows>
    <coflow_id> <arrival_ms> <num_mappers> <mapper_port ...> <num_reducers> <reducer_port:MB ...>

Ports are integers in ``[0, num_ports)``; arrival in milliseconds; each reducer's shuffle
size is in MB with **MB = 2^20 bytes**, received evenly from every mapper (the byte
remainder of the division goes one byte each to the first mappers, so a reducer's flows
add up to exactly ``MB * 2^20``).

Each coflow becomes one app with one stage holding one job of one iteration with no
compute, released at its arrival time. Endpoints are ports (``endpoints = "ports"``),
mapped to hosts ``h<port>`` of a big switch; a mapper and reducer on the same port give a
flow that crosses that port's ingress and egress link. Any malformed line (a coflow
whose bytes all round to 0 included) raises ``TraceError`` naming the file and line
number.
"""
from __future__ import annotations

import gc
from itertools import repeat
from pathlib import Path
from typing import NoReturn

from workloads.trace import App, CoflowSpec, Flow, Job, Stage, Trace, TraceError

MB_BYTES = 2 ** 20


def looks_like(path: str | Path) -> bool:
    """True if the file's first line is two integers (the benchmark header)."""
    try:
        with open(path, "rb") as fh:
            head = fh.readline(200).split()
    except OSError:
        return False
    return len(head) == 2 and all(t.isdigit() for t in head)


def load(path: str | Path) -> Trace:
    """Parse a coflow-benchmark file into a ``Trace`` (see module docstring).

    The garbage collector is paused while parsing (and restored after): the parse makes
    no reference cycles, and its collections, which the 706,397 new flows of FB2010
    trigger over and over, took 0.6-1.0 s of a 1 s parse in a process that has imported
    the simulator."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _parse(Path(path))
    finally:
        if enabled:
            gc.enable()


def _parse(p: Path) -> Trace:
    """The ``Trace`` of the coflow-benchmark file ``p``."""
    try:
        lines = p.read_text().splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise TraceError(f"{p}: cannot read: {exc}") from None
    hosts, body = _header(p, lines)
    seen: set[str] = set()
    apps = [_coflow_app(p, lineno, ln, hosts, seen) for lineno, ln in body]
    return Trace(seed=None, endpoints="ports", hosts=hosts, apps=tuple(apps),
                 meta={"source": str(p.name), "format": "coflow-benchmark",
                       "mb_bytes": MB_BYTES})


def _fail(p: Path, lineno: int, why: str) -> NoReturn:
    raise TraceError(f"{p}:{lineno}: {why}")


def _header(p: Path, lines: list[str]) -> tuple[tuple[str, ...], list[tuple[int, str]]]:
    """The hosts of the header's ports (``h0..``) and the coflow lines (line number,
    text), as many as the header promises."""
    if not lines:
        _fail(p, 1, "empty file, expected '<num_ports> <num_coflows>'")
    head = lines[0].split()
    if len(head) != 2 or not all(t.isdigit() for t in head):
        _fail(p, 1, "header must be '<num_ports> <num_coflows>'")
    num_ports, num_coflows = int(head[0]), int(head[1])
    if num_ports < 1:
        _fail(p, 1, "num_ports must be >= 1")
    hosts = tuple(f"h{i}" for i in range(num_ports))
    body = [(i + 2, ln) for i, ln in enumerate(lines[1:]) if ln.strip()]
    if len(body) != num_coflows:
        _fail(p, len(lines) if len(body) < num_coflows else body[num_coflows][0],
              f"header promises {num_coflows} coflows, file has {len(body)}"
              + (" (truncated?)" if len(body) < num_coflows else ""))
    return hosts, body


def _port(p: Path, tok: str, lineno: int, num_ports: int) -> int:
    if not tok.isdigit() or int(tok) >= num_ports:
        _fail(p, lineno, f"bad port {tok!r} (ports are 0..{num_ports - 1})")
    return int(tok)


def _coflow_app(p: Path, lineno: int, ln: str, hosts: tuple[str, ...], seen: set[str]) -> App:
    """The app of one coflow line (its id added to ``seen``, the ids before it)."""
    tok = ln.split()
    try:
        cid, arrival_ms, n_map = tok[0], float(tok[1]), int(tok[2])
        mapper_toks = tok[3: 3 + n_map]
        n_red = int(tok[3 + n_map])
        reducers = tok[4 + n_map:]
    except (IndexError, ValueError):
        _fail(p, lineno, "expected '<id> <arrival_ms> <num_mappers> <mappers...> "
                         "<num_reducers> <reducer:MB ...>'")
    mappers = [_port(p, t, lineno, len(hosts)) for t in mapper_toks]
    if cid in seen:
        _fail(p, lineno, f"duplicate coflow id {cid}")
    seen.add(cid)
    if n_map < 1 or len(mappers) != n_map:
        _fail(p, lineno, f"num_mappers {n_map} does not match the mapper list")
    if n_red < 1 or len(reducers) != n_red:
        _fail(p, lineno, f"num_reducers {n_red} does not match {len(reducers)} reducer entries")
    if arrival_ms < 0:
        _fail(p, lineno, f"negative arrival time {arrival_ms}")
    flows = _shuffle_flows(p, lineno, [hosts[m] for m in mappers], reducers, hosts)
    if not flows:  # every reducer's MB rounds to 0 bytes: a coflow that never ends
        _fail(p, lineno, f"coflow {cid} has no byte to send (its reducers' MB round to "
                         "0 bytes)")
    app_id = f"c{cid}"
    job = Job(job_id=f"{app_id}/j0", trial_id=f"{app_id}/j0", model="shuffle",
              pattern="shuffle", hosts=(), iterations=1, compute_s=0.0,
              coflows=(CoflowSpec(tuple(flows)),))
    stage = Stage(f"{app_id}/s0", app_id, 1.0, (), (job,))
    return App(app_id, arrival_ms / 1000.0, "coflow-benchmark", (stage,))


def _shuffle_flows(p: Path, lineno: int, srcs: list[str], reducers: list[str],
                   hosts: tuple[str, ...]) -> list[Flow]:
    """The flows of one coflow: each reducer entry's MB split evenly over the mappers
    ``srcs`` (see the module docstring)."""
    n_map = len(srcs)
    flows: list[Flow] = []
    for r in reducers:
        dst_tok, sep, mb_tok = r.partition(":")
        try:
            mb = float(mb_tok)
        except ValueError:
            mb = -1.0
        if not sep or mb <= 0:
            _fail(p, lineno, f"bad reducer entry {r!r}, expected '<port>:<MB>' with MB > 0")
        dst = hosts[_port(p, dst_tok, lineno, len(hosts))]
        total = round(mb * MB_BYTES)
        base, rem = divmod(total, n_map)
        # mapper i sends base + 1 bytes if i < rem, else base; a flow of 0 bytes is
        # left out (then only the first rem mappers send, one byte each)
        sizes = [base + 1] * rem + [base] * ((n_map if base else rem) - rem)
        # Flow(src, dst, size) for each, built in C (706,397 flows on FB2010)
        flows.extend(map(tuple.__new__, repeat(Flow), zip(srcs, repeat(dst), sizes)))
    return flows


def load_any(path: str | Path) -> Trace:
    """Load a JSON trace or a coflow-benchmark text file, whichever ``path`` is."""
    from workloads import trace as trace_mod
    return load(path) if looks_like(path) else trace_mod.load(path)
