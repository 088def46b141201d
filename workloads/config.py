"""Strict configuration loading: TOML tables -> frozen dataclasses, unknown keys rejected.

``build(cls, table, where)`` turns a mapping into dataclass ``cls``; a key the dataclass
does not declare, a missing required key, or a value of the wrong type raises
``ConfigError`` whose message names the full key (``workload.arrival_rate_per_s``).
"""
from __future__ import annotations

import dataclasses
import datetime
import re
import tomllib
import types
import typing
from pathlib import Path
from typing import Any, Mapping


class ConfigError(ValueError):
    """A configuration value is missing, unknown or of the wrong type."""


def load_toml(path: str | Path) -> dict[str, Any]:
    """Read a TOML file; ConfigError (with the parser's position) on bad syntax."""
    p = Path(path)
    try:
        with p.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise ConfigError(f"{p}: no such file") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{p}: not valid TOML: {exc}") from None


def as_toml(value: Any) -> str:
    """``value`` as a TOML file spells it (``true``, ``"ring"``, ``[1, 2]``,
    ``{ a = 1, "b.c" = 2 }``), for error messages about what a user wrote."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + "".join(_TOML_ESCAPES.get(c) or (c if c >= " " and c != "\x7f"
                                                      else f"\\u{ord(c):04x}")
                             for c in value) + '"'
    if isinstance(value, Mapping):
        if not value:
            return "{}"
        return "{ " + ", ".join(
            f"{k if _BARE_KEY.fullmatch(str(k)) else as_toml(str(k))} = {as_toml(v)}"
            for k, v in value.items()) + " }"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(as_toml(v) for v in value) + "]"
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    return repr(value)


_TOML_ESCAPES = types.MappingProxyType({"\\": "\\\\", '"': '\\"', "\b": "\\b", "\t": "\\t",
                                        "\n": "\\n", "\f": "\\f", "\r": "\\r"})
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def _check_type(value: Any, tp: Any, key: str) -> Any:
    origin = typing.get_origin(tp)
    if tp is Any:
        return value
    if origin in (typing.Union, types.UnionType):
        errors = []
        for arg in typing.get_args(tp):
            if arg is type(None):
                if value is None:
                    return None
                continue
            try:
                return _check_type(value, arg, key)
            except ConfigError as exc:
                errors.append(str(exc))
        raise ConfigError(errors[0] if errors else f"{key}: bad value {as_toml(value)}")
    if origin is typing.Literal:
        allowed = typing.get_args(tp)
        if value not in allowed:
            raise ConfigError(f"{key}: must be one of {as_toml(list(allowed))}, got {as_toml(value)}")
        return value
    if origin in (tuple, list):
        if not isinstance(value, (list, tuple)):
            raise ConfigError(f"{key}: must be a list, got {as_toml(value)}")
        (arg, *_rest) = typing.get_args(tp) or (Any,)
        return tuple(_check_type(v, arg, f"{key}[{i}]") for i, v in enumerate(value))
    if origin is dict or tp is dict:
        if not isinstance(value, Mapping):
            raise ConfigError(f"{key}: must be a table, got {as_toml(value)}")
        kt, vt = typing.get_args(tp) or (Any, Any)
        return {_check_type(k, kt, f"{key}.{k}"): _check_type(v, vt, f"{key}.{k}")
                for k, v in value.items()}
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{key}: must be a number, got {as_toml(value)}")
        return float(value)
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{key}: must be an integer, got {as_toml(value)}")
        return value
    if tp is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{key}: must be true or false, got {as_toml(value)}")
        return value
    if tp is str:
        if not isinstance(value, str):
            raise ConfigError(f"{key}: must be a string, got {as_toml(value)}")
        return value
    if dataclasses.is_dataclass(tp):
        return build(tp, value, key)
    raise TypeError(f"unsupported config type {tp!r} for {key}")


def build(cls: type, table: Mapping[str, Any] | None, where: str) -> Any:
    """Instantiate dataclass ``cls`` from ``table``; ConfigError names any bad key."""
    table = {} if table is None else table
    if not isinstance(table, Mapping):
        raise ConfigError(f"{where}: must be a table, got {as_toml(table)}")
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    for key in table:
        if key not in fields:
            raise ConfigError(f"unknown key '{where}.{key}' (known: {', '.join(sorted(fields))})")
    kwargs = {}
    for name, f in fields.items():
        if name in table:
            kwargs[name] = _check_type(table[name], hints[name], f"{where}.{name}")
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise ConfigError(f"missing key '{where}.{name}'")
    obj = cls(**kwargs)
    check = getattr(obj, "check", None)
    if check is not None:
        check(where)
    return obj


def to_dict(obj: Any) -> Any:
    """Dataclass -> plain JSON/TOML-able dict (tuples become lists)."""
    if dataclasses.is_dataclass(obj):
        return {f.name: to_dict(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, (list, tuple)):
        return [to_dict(v) for v in obj]
    if isinstance(obj, dict):
        return {str(k): to_dict(v) for k, v in obj.items()}
    return obj


def value_label(v: Any) -> str:
    """Short text for a config value in run names and tables (tables: their keys joined)."""
    if isinstance(v, Mapping):
        return "+".join(sorted(v))
    if isinstance(v, (list, tuple)):
        return "+".join(map(str, v))
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)
