"""The record format of a results directory: loose runs and packed experiments.

A run is written *loose*, as a directory ``<results>/<experiment>/<run>/`` holding
``run.json``, ``run_config.json`` and its CSV tables (``stages.csv``, ``coflows.csv``, ...;
a packet-level run also its fluid twins' under ``twin/`` and ``twin_packet/``, its capture
tables and its scheduler's and agents' logs). ``pack`` moves an experiment's loose runs into
one columnar (Parquet) file per record kind, beside the experiment's ``traces/``:

- ``runs.parquet``: one row per run and *part* (``""`` the run itself, ``"twin"``,
  ``"twin_packet"``): ``run``, ``part``, ``run_json`` (run.json's text, exactly),
  ``run_config`` (run_config.json's text; the run's own part only), ``tables`` (JSON: each
  packed table's columns and their pandas dtypes, so a table reads back as its CSV did),
  then run.json's scalars as columns, for reading with pandas directly;
- ``<kind>.parquet`` (``stages``, ``coflows``, ``trials``, ``apps``, ``decisions``, and a
  packet-level run's capture tables): every run's rows of ``<kind>.csv``, with ``run`` and
  ``part`` first, rows in their CSV order, runs sorted by name and part;
- ``files.parquet``: any other text file of a run (a packet-level run's scheduler log and
  configuration): ``run``, ``path`` (inside the run's directory), ``text``;
- ``index.csv``: one line per run (run, backend, policy, seed, config_hash, git_sha,
  avg_sct_s), for people; the Parquet files are the record.

What is not packed stays in the run's directory, which then holds no run.json: binary files
(packet captures) and ``flows.csv`` (neither is committed; see ``.gitignore``).

Readers pass the path a loose file has or would have
(``<results>/<experiment>/<run>/twin/stages.csv``): ``read_text``, ``read_json``,
``read_table`` and ``has`` find it loose first, else in the experiment's pack, so no caller
needs to know which; ``run_dirs`` lists the runs of both kinds, ``is_run`` tells one.
Values are kept exactly: pandas 3 parses a CSV's floats correctly rounded, and
each table's columns and dtypes are restored on reading. ``unpack`` writes a packed run
back as a loose directory (to change it: the next ``pack`` takes the loose one).

A pack's files are replaced one by one (each atomically); the loose runs are removed only
after all are written (renamed to ``.packed-<run>-<pid>`` first, then deleted), so a pack
interrupted at any point leaves every run readable, and the next ``pack`` finishes it.
"""
from __future__ import annotations

import io
import json
import os
import shutil
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

RUNS_FILE = "runs.parquet"
FILES_FILE = "files.parquet"
INDEX_FILE = "index.csv"
SUFFIX = ".parquet"
# files a run keeps loose (never committed: large per-flow rows, packet captures)
KEPT_LOOSE_NAMES = ("flows.csv",)
KEPT_LOOSE_SUFFIXES = (".pcap", ".pcapng")
INDEX_COLUMNS = ("run", "backend", "policy", "seed", "config_hash", "git_sha", "avg_sct_s")
PACKED_PREFIX = ".packed-"


def read_csv(path: str | Path | io.StringIO) -> pd.DataFrame:
    """A CSV table, every float exactly as written (pandas 3 parses floats correctly rounded)."""
    return pd.read_csv(path)


# --- where a path lies --------------------------------------------------------------------

@dataclass(frozen=True)
class _Where:
    """A path inside an experiment's directory: ``exp_dir``, ``run`` (the run's directory
    name), ``part`` (the folder inside it, "" for the run itself) and ``name`` (the file's
    name; "" for a directory)."""

    exp_dir: Path
    run: str
    part: str
    name: str


def _where(path: Path, *, is_dir: bool) -> _Where | None:
    """Where ``path`` (a run's directory, a part's, or a file in either) lies, taking the
    nearest ancestor holding ``runs.parquet`` as the experiment; None if none does."""
    path = Path(path)
    parts = path.parts
    for i in range(len(parts) - 1, 0, -1):
        exp = Path(*parts[:i])
        if (exp / RUNS_FILE).is_file() and i < len(parts):
            inner = parts[i:]
            if is_dir:
                return _Where(exp, inner[0], "/".join(inner[1:]), "")
            if len(inner) < 2:
                return None
            return _Where(exp, inner[0], "/".join(inner[1:-1]), inner[-1])
    return None


# --- reading a pack -----------------------------------------------------------------------

def _stamp(path: Path) -> tuple[str, int, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return str(path), st.st_mtime_ns, st.st_size, st.st_ino


@dataclass(frozen=True)
class _Runs:
    """An experiment's ``runs.parquet`` and ``files.parquet``, indexed."""

    rows: dict[tuple[str, str], dict[str, Any]]  # (run, part) -> run_json, run_config, tables
    files: dict[tuple[str, str], str]  # (run, path) -> text


@lru_cache(maxsize=64)
def _load_runs(stamp: tuple[str, int, int, int], files_stamp) -> _Runs:
    import pyarrow.parquet as pq
    t = pq.read_table(stamp[0], columns=["run", "part", "run_json", "run_config", "tables"])
    rows = {}
    for r in t.to_pylist():
        rows[(r["run"], r["part"])] = {"run_json": r["run_json"], "run_config": r["run_config"],
                                       "tables": json.loads(r["tables"] or "{}")}
    files = {}
    if files_stamp is not None:
        for r in pq.read_table(files_stamp[0]).to_pylist():
            files[(r["run"], r["path"])] = r["text"]
    return _Runs(rows, files)


def _runs_of(exp_dir: Path) -> _Runs | None:
    stamp = _stamp(exp_dir / RUNS_FILE)
    if stamp is None:
        return None
    return _load_runs(stamp, _stamp(exp_dir / FILES_FILE))


@dataclass(frozen=True)
class _Table:
    """One kind's Parquet file of an experiment: its columns (numpy arrays, or pandas
    arrays for text), their dtypes, and each (run, part)'s rows as (first row, count)."""

    columns: dict[str, Any]
    dtypes: dict[str, str]
    slices: dict[tuple[str, str], tuple[int, int]]


@lru_cache(maxsize=16)
def _load_table(stamp: tuple[str, int, int, int]) -> _Table:
    import pyarrow as pa
    import pyarrow.parquet as pq
    exact = {pa.int64(): pd.Int64Dtype(), pa.bool_(): pd.BooleanDtype()}  # nulls, no float
    df = pq.read_table(stamp[0]).to_pandas(types_mapper=exact.get)
    for c in df.columns:  # no gap: plain numpy integers and bools, as a CSV reads them
        if str(df[c].dtype) in ("Int64", "boolean") and not df[c].isna().any():
            df[c] = df[c].to_numpy(dtype="int64" if str(df[c].dtype) == "Int64" else bool)
    slices: dict[tuple[str, str], tuple[int, int]] = {}
    for i, key in enumerate(zip(df["run"].tolist(), df["part"].tolist())):
        first, n = slices.get(key, (i, 0))
        slices[key] = (first, n + 1)
    cols = {c: (df[c].to_numpy() if isinstance(df[c].dtype, np.dtype) else df[c].array)
            for c in df.columns}
    return _Table(cols, {c: str(t) for c, t in df.dtypes.items()}, slices)


def _column(values: Any, have: str, want: str) -> Any:
    """A packed column's slice as the dtype its run's CSV read as."""
    if have == want:
        return values
    col = pd.Series(values, copy=False)
    if want == "bool" and have not in ("bool", "boolean"):  # text beside other types
        col = col.map({"True": True, "False": False, True: True, False: False})
    return col.astype(want)


def _packed_row(w: _Where) -> dict[str, Any] | None:
    runs = _runs_of(w.exp_dir)
    return None if runs is None else runs.rows.get((w.run, w.part))


def _packed_text(path: Path) -> str | None:
    w = _where(path, is_dir=False)
    if w is None:
        return None
    row = _packed_row(w)
    if w.name == "run.json":
        return None if row is None else row["run_json"]
    if w.name == "run_config.json":
        return None if row is None else row["run_config"]
    runs = _runs_of(w.exp_dir)
    return runs.files.get((w.run, "/".join(p for p in (w.part, w.name) if p)))


def _packed_table(path: Path, columns: list[str] | None = None) -> pd.DataFrame | None:
    w = _where(path, is_dir=False)
    if w is None or not w.name.endswith(".csv"):
        return None
    row = _packed_row(w)
    kind = w.name[:-len(".csv")]
    if row is None or kind not in row["tables"]:
        return None
    spec = row["tables"][kind]
    stamp = _stamp(w.exp_dir / f"{kind}{SUFFIX}")
    if stamp is None:
        raise FileNotFoundError(f"{w.exp_dir / (kind + SUFFIX)} is missing: the pack of "
                                f"{w.exp_dir.name} lists {kind} tables in {RUNS_FILE}")
    tab = _load_table(stamp)
    first, n = tab.slices.get((w.run, w.part), (0, 0))
    wanted = spec["columns"] if columns is None else columns
    missing = [c for c in wanted if c not in spec["columns"]]
    if missing:
        raise KeyError(f"{path}: no column {missing[0]!r}")
    dtypes = dict(zip(spec["columns"], spec["dtypes"]))
    return pd.DataFrame({c: _column(tab.columns[c][first:first + n], tab.dtypes[c], dtypes[c])
                         for c in wanted}, copy=False)


# --- the readers' API ---------------------------------------------------------------------

def read_text(path: str | Path) -> str:
    """A run's file's text, loose or packed; FileNotFoundError if neither holds it."""
    path = Path(path)
    try:
        return path.read_text()
    except FileNotFoundError:
        text = _packed_text(path)
        if text is None:
            raise
        return text


def read_json(path: str | Path) -> Any:
    """A run's JSON file (run.json, run_config.json, ...), loose or packed."""
    return json.loads(read_text(path))


def read_table(path: str | Path, *, columns: list[str] | None = None) -> pd.DataFrame:
    """A run's CSV table (``.../stages.csv``), loose or packed, floats exact (``read_csv``);
    ``columns``: only these, in this order (KeyError if one is missing). FileNotFoundError
    if neither form holds the table."""
    path = Path(path)
    if path.is_file():
        df = read_csv(path)
        return df if columns is None else df[list(columns)]
    df = _packed_table(path, columns)
    if df is None:
        raise FileNotFoundError(f"no records {path}")
    return df


def has(path: str | Path) -> bool:
    """True if a run's file (``.../stages.csv``, ``.../twin/run.json``) exists, loose or
    packed."""
    path = Path(path)
    if path.is_file():
        return True
    w = _where(path, is_dir=False)
    if w is None:
        return False
    if w.name.endswith(".csv"):
        row = _packed_row(w)
        return row is not None and w.name[:-len(".csv")] in row["tables"]
    return _packed_text(path) is not None


def is_loose(run_dir: str | Path) -> bool:
    """True if ``run_dir`` is a loose run's directory (it holds run.json)."""
    return (Path(run_dir) / "run.json").is_file()


def is_run(run_dir: str | Path) -> bool:
    """True if ``run_dir`` names a run (or a part of one: ``.../twin``), loose or packed."""
    return has(Path(run_dir) / "run.json")


def packed_runs(exp_dir: Path, *, with_config: bool = False) -> list[str]:
    """The names of the runs packed in an experiment's directory, sorted (``with_config``:
    only those with a run_config.json, i.e. made by the runner)."""
    runs = _runs_of(Path(exp_dir))
    if runs is None:
        return []
    return sorted(r for (r, part), row in runs.rows.items()
                  if part == "" and (row["run_config"] is not None or not with_config))


def run_dirs(results: str | Path, *, marker: str = "run.json") -> list[Path]:
    """Every run directory of a results tree, loose (``<exp>/<run>/<marker>``) or packed
    (``<exp>/runs.parquet``), sorted; names starting with ``.`` (runs being written or
    replaced) are not runs. ``marker="run_config.json"``: loose runs that the runner
    finished (it writes that file last)."""
    results = Path(results)
    found = {p.parent for p in results.glob(f"*/*/{marker}")
             if not p.parent.name.startswith(".")}
    for rf in results.glob(f"*/{RUNS_FILE}"):
        found.update(rf.parent / name for name in
                     packed_runs(rf.parent, with_config=marker == "run_config.json"))
    return sorted(found)


# --- packing ------------------------------------------------------------------------------

def loose_runs(exp_dir: str | Path) -> list[Path]:
    """An experiment's loose runs (directories holding run.json; not ``.``-prefixed), sorted."""
    return sorted(p.parent for p in Path(exp_dir).glob("*/run.json")
                  if not p.parent.name.startswith("."))


def _kept_loose(rel: str) -> bool:
    name = rel.rsplit("/", 1)[-1]
    return name in KEPT_LOOSE_NAMES or name.endswith(KEPT_LOOSE_SUFFIXES)


@dataclass
class _Collected:
    """What ``pack`` writes: rows of runs.parquet and files.parquet, tables by kind."""

    runs: list[dict[str, Any]]
    files: list[dict[str, Any]]
    tables: dict[str, list[pd.DataFrame]]


def _part_row(rows: dict[str, dict[str, Any]], run: str, part: str) -> dict[str, Any]:
    return rows.setdefault(part, {"run": run, "part": part, "run_json": None,
                                  "run_config": None, "tables": {}})


def _collect_run(run_dir: Path, out: _Collected) -> None:
    """Add a loose run's files to ``out``: CSV tables by kind, run.json and run_config.json
    into its part's row, other text files to the files rows; what is kept loose (and any
    file that is not UTF-8 text) is left out."""
    run = run_dir.name
    rows: dict[str, dict[str, Any]] = {}
    for f in sorted(p for p in run_dir.rglob("*") if p.is_file()):
        rel = f.relative_to(run_dir).as_posix()
        if _kept_loose(rel):
            continue
        part, _, name = rel.rpartition("/")
        if name.endswith(".csv"):
            df = read_csv(f)
            _part_row(rows, run, part)["tables"][name[:-4]] = {
                "columns": [str(c) for c in df.columns],
                "dtypes": [str(t) for t in df.dtypes]}
            out.tables.setdefault(name[:-4], []).append(
                _nullable(df).assign(run=run, part=part)[["run", "part", *df.columns]])
            continue
        try:
            text = f.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        if name == "run.json":
            _part_row(rows, run, part)["run_json"] = text
        elif rel == "run_config.json":
            _part_row(rows, run, part)["run_config"] = text
        else:
            out.files.append({"run": run, "path": rel, "text": text})
    for row in rows.values():
        out.runs.append({**row, "tables": json.dumps(row["tables"], sort_keys=True)})


def _nullable(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with integer and bool columns in pandas' nullable dtypes, so that a run
    without the column (a gap) does not turn them into floats or objects when packed."""
    kinds = {"i": "Int64", "u": "Int64", "b": "boolean"}
    return df.astype({c: kinds[t.kind] for c, t in df.dtypes.items()
                      if isinstance(t, np.dtype) and t.kind in kinds})


def _scalars(run_json: str | None) -> dict[str, Any]:
    """run.json's top-level scalars (for runs.parquet's convenience columns)."""
    if not run_json:
        return {}
    return {k: v for k, v in json.loads(run_json).items()
            if not isinstance(v, (dict, list)) and k not in ("run", "part", "tables")}


def _storable(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with every object column of mixed value types as text (Arrow needs one type
    per column; reading restores each run's dtype)."""
    for col in df.columns:
        if df[col].dtype == object:
            kinds = {type(v) for v in df[col] if v is not None and not (
                isinstance(v, float) and v != v)}
            if len(kinds) > 1:
                df[col] = df[col].map(lambda v: v if v is None or (isinstance(v, float)
                                                                   and v != v) else str(v))
    return df


def _write_parquet(df: pd.DataFrame, path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq
    table = pa.Table.from_pandas(_storable(df.reset_index(drop=True)), preserve_index=False)
    floats = [f.name for f in table.schema if pa.types.is_floating(f.type)]
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:  # floats split by byte, other columns as dictionaries, zstd 19: a sixth smaller
        pq.write_table(table, tmp, compression="zstd", compression_level=19,
                       use_dictionary=[c for c in table.column_names if c not in floats],
                       use_byte_stream_split=floats)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _read_packed(path: Path) -> pd.DataFrame | None:
    import pyarrow as pa
    import pyarrow.parquet as pq
    exact = {pa.int64(): pd.Int64Dtype(), pa.bool_(): pd.BooleanDtype()}
    return pq.read_table(path).to_pandas(types_mapper=exact.get) if path.is_file() else None


def _merged(old: pd.DataFrame | None, new: list[pd.DataFrame], replaced: set[str]
            ) -> pd.DataFrame | None:
    """The packed rows of runs not in ``replaced``, then ``new``, sorted by run and part
    (each part's rows in their order); None if there are none."""
    frames = ([old[~old["run"].isin(replaced)]] if old is not None else []) + new
    frames = [f for f in frames if len(f.columns)]
    if not frames:
        return None
    df = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    return df.sort_values(["run", "part"] if "part" in df else ["run"],
                          kind="stable").reset_index(drop=True)


def pack(exp_dir: str | Path) -> int:
    """Move an experiment's loose runs into its Parquet files (a packed run of the same name
    is replaced); returns how many runs were packed. Files kept loose (``KEPT_LOOSE_*``,
    binary files) stay in the run's directory, without run.json."""
    exp_dir = Path(exp_dir)
    loose = loose_runs(exp_dir)
    if not loose:
        return 0
    got = _Collected([], [], {})
    for d in loose:
        _collect_run(d, got)
    names = {d.name for d in loose}
    runs = _merged(_read_packed(exp_dir / RUNS_FILE),
                   [pd.DataFrame([{**r, **_scalars(r["run_json"])} for r in got.runs])], names)
    own = {Path(RUNS_FILE).stem, Path(FILES_FILE).stem}
    kinds = (set(got.tables) | {p.stem for p in exp_dir.glob(f"*{SUFFIX}")}) - own
    for kind in sorted(kinds):
        df = _merged(_read_packed(exp_dir / f"{kind}{SUFFIX}"), got.tables.get(kind, []), names)
        if df is None:
            (exp_dir / f"{kind}{SUFFIX}").unlink(missing_ok=True)
        else:
            _write_parquet(df, exp_dir / f"{kind}{SUFFIX}")
    files = _merged(_read_packed(exp_dir / FILES_FILE),
                    [pd.DataFrame(got.files, columns=["run", "path", "text"])], names)
    if files is None or files.empty:
        (exp_dir / FILES_FILE).unlink(missing_ok=True)
    else:
        _write_parquet(files, exp_dir / FILES_FILE)
    _write_parquet(runs, exp_dir / RUNS_FILE)
    _write_index(runs, exp_dir / INDEX_FILE)
    for d in loose:
        _remove_packed(d)
    return len(loose)


def rewrite_runs(exp_dir: str | Path, fn) -> int:
    """Rewrite the run.json and run_config.json texts of an experiment's packed runs in
    place: ``fn(run, part, run_json, run_config)`` returns the new pair (None: as it was);
    runs.parquet's scalar columns and index.csv follow. Returns how many rows changed."""
    exp_dir = Path(exp_dir)
    old = _read_packed(exp_dir / RUNS_FILE)
    if old is None:
        return 0
    rows, changed = [], 0
    for r in old[["run", "part", "run_json", "run_config", "tables"]].to_dict("records"):
        new = fn(r["run"], r["part"], r["run_json"], r["run_config"])
        if new is not None and tuple(new) != (r["run_json"], r["run_config"]):
            r["run_json"], r["run_config"] = new
            changed += 1
        rows.append({**r, **_scalars(r["run_json"])})
    if changed:
        runs = pd.DataFrame(rows)
        _write_parquet(runs, exp_dir / RUNS_FILE)
        _write_index(runs, exp_dir / INDEX_FILE)
    return changed


def _write_index(runs: pd.DataFrame, path: Path) -> None:
    own = runs[runs["part"] == ""]
    cols = [c for c in INDEX_COLUMNS if c in own.columns]
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        own[cols].to_csv(tmp, index=False)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _remove_packed(run_dir: Path) -> None:
    """Take a packed loose run's directory out of the way at once (renamed aside), then
    delete it, putting back what stays loose (``KEPT_LOOSE_*``, binary files)."""
    aside = run_dir.with_name(f"{PACKED_PREFIX}{run_dir.name}-{os.getpid()}")
    os.replace(run_dir, aside)
    for f in sorted(p for p in aside.rglob("*") if p.is_file()):
        rel = f.relative_to(aside).as_posix()
        if _kept_loose(rel) or not _is_text(f):
            (run_dir / rel).parent.mkdir(parents=True, exist_ok=True)
            os.replace(f, run_dir / rel)
    shutil.rmtree(aside)


def _is_text(path: Path) -> bool:
    try:
        path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return False
    return True


def unpack(run_dir: str | Path, *, to: str | Path | None = None) -> Path:
    """Write a packed run back as a loose directory (its files as they were packed; a CSV
    table as pandas writes it), so that it can be changed; the next ``pack`` takes the
    loose one. A loose run is left as it is. ``to``: write the run there instead (a copy;
    the run stays as it is). Returns the loose directory."""
    run_dir = Path(run_dir)
    dest = Path(to) if to is not None else run_dir
    if is_loose(run_dir) and to is None:
        return run_dir
    if is_loose(run_dir):
        shutil.copytree(run_dir, dest, ignore=shutil.ignore_patterns(".*"))
        return dest
    w = _where(run_dir, is_dir=True)
    runs = _runs_of(w.exp_dir) if w else None
    if runs is None or (w.run, "") not in runs.rows:
        raise FileNotFoundError(f"no run {run_dir}")
    tmp = dest.with_name(f".tmp-{dest.name}-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    if dest.is_dir():
        shutil.copytree(dest, tmp)
    else:
        tmp.mkdir(parents=True)
    _write_loose(run_dir, w.run, runs, tmp)
    if dest.is_dir():
        shutil.rmtree(dest)
    os.replace(tmp, dest)
    return dest


def _write_loose(run_dir: Path, run: str, runs: _Runs, out: Path) -> None:
    """A packed run's files into the directory ``out``; run_config.json last."""
    for (r, path), text in runs.files.items():
        if r == run:
            (out / path).parent.mkdir(parents=True, exist_ok=True)
            (out / path).write_text(text)
    for (r, part), row in sorted(runs.rows.items()):
        if r != run:
            continue
        (out / part).mkdir(parents=True, exist_ok=True)
        for kind in row["tables"]:
            read_table(run_dir / part / f"{kind}.csv").to_csv(out / part / f"{kind}.csv",
                                                               index=False)
        if row["run_json"] is not None:
            (out / part / "run.json").write_text(row["run_json"])
    if runs.rows[(run, "")]["run_config"] is not None:
        (out / "run_config.json").write_text(runs.rows[(run, "")]["run_config"])


def occupied(run_dir: str | Path) -> bool:
    """True if a run's name is taken in its experiment: packed there, or a loose directory
    holding any file that is not one kept loose beside a pack (``KEPT_LOOSE_*``)."""
    run_dir = Path(run_dir)
    if run_dir.is_dir() and any(not _kept_loose(p.name) for p in run_dir.rglob("*")
                                if p.is_file()):
        return True
    return is_run(run_dir)
