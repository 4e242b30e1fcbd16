"""Configs given as Python values, written as the TOML text the core library reads (docs/PYTHON.md "Configs").

A config dict has the experiment file's sections ({"run": {...}, "learner": {...}, ...}) and keys; a list is a
sweep, exactly as in TOML. Values are bool, int, float (inf and nan too), str, os.PathLike, or lists of these.
"""
from __future__ import annotations

import math
import os
from typing import Any, Mapping

_BARE = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def _key(k: Any, where: str) -> str:
    if not isinstance(k, str) or not k:
        raise TypeError(f"{where}: a key must be a non-empty str (got {k!r})")
    if set(k) <= _BARE:
        return k
    return _string(k)


def _string(s: str) -> str:
    out = ['"']
    for ch in s:
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def value(v: Any, where: str) -> str:
    """One TOML value (a scalar or a list of them); `where` names the key in errors."""
    # bool before int: True is an int in Python.
    if isinstance(v, bool) or type(v).__name__ == "bool_":
        return "true" if v else "false"
    if isinstance(v, str):
        return _string(v)
    if isinstance(v, os.PathLike):
        return _string(os.fspath(v))
    if hasattr(v, "tolist") and getattr(v, "ndim", 1) <= 1:  # NumPy scalars and 1-d arrays
        return value(v.tolist(), where)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)  # the shortest text that reads back as the same double
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(value(x, where) for x in v) + "]"
    raise TypeError(f"{where}: a value must be a bool, int, float, str, path or a list of them "
                    f"(got {type(v).__name__})")


def dumps(config: Mapping[str, Any]) -> str:
    """The TOML text of a config dict: one [section] per top-level key, whose value is a dict of keys."""
    if not isinstance(config, Mapping):
        raise TypeError(f"a config must be a dict of sections (got {type(config).__name__})")
    lines = []
    for section, keys in config.items():
        name = _key(section, "config")
        if not isinstance(keys, Mapping):
            raise TypeError(f"[{section}] must be a dict of keys (got {type(keys).__name__}); "
                            f'e.g. {{"{section}": {{"key": value}}}}')
        lines.append(f"[{name}]")
        for k, v in keys.items():
            lines.append(f"{_key(k, f'[{section}]')} = {value(v, f'[{section}] {k}')}")
        lines.append("")
    return "\n".join(lines)
