"""Checks at the parse boundary: what TOML and the unit parser accept but the simulator cannot.

TOML happily holds ``nan``, ``inf``, integers of any size and arrays nested a thousand
deep; the unit parser turns ``"1e999ms"`` into an integer of a thousand digits. None of
them is a scenario, and each would otherwise surface far away from the file (a JSON
"number out of range at column 1688" from the simulator's config parser, a Python
``RecursionError``). These checks run where the file becomes data and where the data
becomes a validated :class:`Scenario`, and name the field:

* :func:`check_data` on the raw TOML table: nesting depth, finite floats, integers within
  64 bits, at most :data:`MAX_FLOWS` flows after ``count``;
* :func:`check_model` on the validated scenario: every integer the simulator receives
  fits its 64-bit fields (times in ns, rates in bit/s, sizes in bytes), every float is
  finite;
* :func:`regular_file` for files a scenario names (trace CSVs): present, a regular file
  (not a directory, a device such as ``/dev/zero``, or a pipe), readable, not huge.
"""

from __future__ import annotations

import math
import os
import stat
from typing import Any, Iterable, Optional

from .errors import Problem, ScenarioError, _user_path, render_value

__all__ = ["MAX_DEPTH", "MAX_INT", "check_data", "check_model", "regular_file", "FileProblem"]

# Deeper than any scenario needs (the deepest, a graph link's queue's parameters, is 6).
MAX_DEPTH = 32
# The simulator keeps times (ns), rates (bit/s) and sizes (bytes) in 64-bit integers and
# adds them (start + duration, bytes * 8); i64::MAX leaves them room: 2^63 ns = 292 years.
MAX_INT = 2**63 - 1
# Flows a scenario may make in all (``count`` expands while validating, one object each).
MAX_FLOWS = 100_000
# TOML's own integer range is signed 64-bit (toml.io v1.0.0, "Integer"); a seed is u64.
_TOML_MIN, _TOML_MAX = -(2**63), 2**64 - 1


def _raw_at(data: Any, loc: tuple) -> Any:
    cur = data
    for part in loc:
        if isinstance(cur, dict) and part in cur:
            cur = cur[part]
        elif isinstance(cur, list) and isinstance(part, int) and 0 <= part < len(cur):
            cur = cur[part]
        else:
            return None
    return cur


def _problem(data: Any, loc: tuple, text: str, value: Any = None) -> Problem:
    path = _user_path(loc, data, keep_last=True) or "scenario"
    return Problem(path, f"{render_value(value)} {text}" if value is not None else text)


# --- raw TOML data ------------------------------------------------------------------------------


def check_data(data: Any, source: Optional[str] = None) -> None:
    """Raises :class:`ScenarioError` for a raw table too deep, with a non-finite float or
    an integer beyond 64 bits (every such value, one line each)."""
    problems: list[Problem] = []
    stack: list[tuple[Any, tuple, int]] = [(data, (), 0)]  # iterative: the input may be deep
    while stack:
        value, loc, depth = stack.pop()
        if depth > MAX_DEPTH:
            problems.append(_problem(data, loc, f"is nested deeper than {MAX_DEPTH} levels (accepted: at most {MAX_DEPTH} levels of tables and arrays)"))
            continue
        if isinstance(value, dict):
            stack.extend((v, loc + (k,), depth + 1) for k, v in reversed(list(value.items())))
        elif isinstance(value, list):
            stack.extend((v, loc + (i,), depth + 1) for i, v in reversed(list(enumerate(value))))
        elif isinstance(value, float) and not math.isfinite(value):
            problems.append(_problem(data, loc, "is not a finite number (accepted: a finite number)", value))
        elif isinstance(value, int) and not isinstance(value, bool) and not _TOML_MIN <= value <= _TOML_MAX:
            problems.append(_problem(data, loc, f"is out of range (accepted: an integer from {_TOML_MIN} to {_TOML_MAX})", value))
        if len(problems) >= 20:
            break
    if not problems:
        problems.extend(_flow_count(data))
    if problems:
        raise ScenarioError(problems, source=source)


def _flow_count(data: Any) -> list[Problem]:
    """``count = 1000000000`` would make a billion flow objects while validating: the
    sum of the flows' counts is capped before pydantic expands it."""
    flows = data.get("flows") if isinstance(data, dict) else None
    if not isinstance(flows, list):
        return []
    total = 0
    for i, f in enumerate(flows):
        if not isinstance(f, dict):
            continue
        c = f.get("count", 1)
        if not isinstance(c, int) or isinstance(c, bool) or c < 1:
            continue  # validation names it
        total += c * (2 if f.get("direction") == "both" else 1)
        if total > MAX_FLOWS:
            return [_problem(data, ("flows", i, "count"), f"makes more than {MAX_FLOWS} flows in the scenario (accepted: at most {MAX_FLOWS} flows in all)", c)]
    return []


# --- validated scenario -------------------------------------------------------------------------


def _has_own_bound(field) -> bool:
    """Fields that carry their own upper bound (``run.seed < 2**64``) are checked by it."""
    return any(type(m).__name__ in ("Lt", "Le", "Interval") for m in getattr(field, "metadata", ()) or ())


def _walk(obj: Any, loc: tuple, own_bound: bool) -> Iterable[tuple[tuple, Any, str]]:
    from pydantic import BaseModel

    if isinstance(obj, BaseModel):
        for name, field in type(obj).model_fields.items():
            yield from _walk(getattr(obj, name), loc + (field.alias or name,), _has_own_bound(field))
    elif isinstance(obj, tuple) and hasattr(obj, "_fields"):  # QLimit: value and unit
        yield from _walk(obj[0], loc, own_bound)
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            yield from _walk(v, loc + (i,), own_bound)
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield from _walk(v, loc + (k,), own_bound)
    elif isinstance(obj, bool):
        return
    elif isinstance(obj, int):
        if not own_bound and not -MAX_INT <= obj <= MAX_INT:
            yield loc, obj, "int"
    elif isinstance(obj, float) and not math.isfinite(obj):
        yield loc, obj, "float"


def check_model(scn: Any, data: Any, source: Optional[str] = None) -> None:
    """Raises :class:`ScenarioError` for a value of the validated scenario that no
    simulator field holds: an integer beyond ±(2^63 - 1) in its base unit (ns, bit/s,
    bytes, packets) or a float that is NaN or infinite."""
    problems: list[Problem] = []
    for loc, value, kind in _walk(scn, (), False):
        raw = _raw_at(data, loc)
        shown = raw if raw is not None else value
        if kind == "int":
            text = (
                "is too large (accepted: at most 9223372036854775807 of its base unit: "
                "ns for times (292 years), bit/s for rates, bytes or packets for sizes)"
            )
        else:
            text = "is not a finite number (accepted: a finite number)"
        problems.append(_problem(data, loc, text, shown if not isinstance(shown, int) or len(str(shown)) < 40 else f"{str(shown)[:12]}...({len(str(shown))} digits)"))
        if len(problems) >= 20:
            break
    if problems:
        raise ScenarioError(problems, source=source)


# --- files a scenario names ---------------------------------------------------------------------


class FileProblem(ValueError):
    """Why a named file cannot be read, as the end of a one-line message."""


def regular_file(path: str | os.PathLike, max_bytes: int) -> int:
    """Checks that ``path`` is a readable regular file of at most ``max_bytes``; returns
    its size. Raises :class:`FileProblem` naming what it is instead: reading a device
    (``/dev/zero``) or a FIFO would never end."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise FileProblem("does not exist (accepted: a readable regular file)") from None
    except OSError as e:
        raise FileProblem(f"cannot be read ({e.strerror or e}) (accepted: a readable regular file)") from None
    if stat.S_ISDIR(st.st_mode):
        raise FileProblem("is a directory (accepted: a readable regular file)")
    if not stat.S_ISREG(st.st_mode):
        raise FileProblem("is not a regular file (a device, pipe or socket) (accepted: a readable regular file)")
    if st.st_size == 0:
        raise FileProblem("is empty (accepted: a readable regular file with content)")
    if st.st_size > max_bytes:
        raise FileProblem(f"is {st.st_size} bytes (accepted: at most {max_bytes} bytes)")
    try:
        with open(path, "rb"):
            pass
    except OSError as e:
        raise FileProblem(f"cannot be read ({e.strerror or e}) (accepted: a readable regular file)") from None
    return st.st_size
