"""Link rates that change over time, and random link delay (netem's jitter).

A link's rate is a rate string, or a table::

    down = { trace = "examples/traces/cellular.down" }      # Mahimahi/Pantheon trace
    down = { schedule = [["0s", "10Mbit"], ["5s", "2Mbit"]], repeat = "10s" }

A **trace** is Mahimahi's packet-delivery format: one integer millisecond per line,
each a delivery opportunity for up to 1500 bytes, the file repeating with its last
timestamp as period (opportunities the queue leaves unused are lost). The path is
relative to the working directory, as the ``trace`` application's CSV. A **schedule**
holds each rate from its time until the next point (the first at ``"0s"``); with
``repeat`` it starts again after that long, otherwise the last rate stays. ``"0bit"``
is an outage.

The field's value stays an ``int`` -- the long-run mean rate in bit/s (what the
analytical models and queue disciplines read) -- of type :class:`VariableRate`, which
carries the table the user wrote and its simulator JSON.

Jitter (a ``jitter`` table beside a link's ``delay``)::

    jitter = { sigma = "5ms", dist = "normal", correlation = 0.25, reorder = true }

``dist`` is one of netem's: ``uniform`` (its default: delay +- sigma), ``normal``
(sigma is the standard deviation), ``pareto``, ``paretonormal`` (netem's tables, in
units of sigma); ``correlation`` is netem's (a fraction); ``reorder = true`` lets
packets overtake each other as netem does, ``false`` keeps their order (each packet
leaves at max(previous, t + delay)).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, PlainSerializer, PlainValidator, WithJsonSchema
from pydantic_core import PydanticCustomError

from .base import Table
from .units import Duration, UnitError, format_duration, format_rate, parse_duration, parse_rate

__all__ = ["VariableRate", "LinkRate", "LinkJitter", "read_mahimahi_trace", "rate_text", "OPPORTUNITY_BYTES"]

#: Bytes one Mahimahi delivery opportunity carries.
OPPORTUNITY_BYTES = 1500


class TraceFileError(ValueError):
    """A trace file that cannot be used; the message is one line naming the file."""


def read_mahimahi_trace(path: str | os.PathLike[str]) -> list[int]:
    """Millisecond timestamps of a Mahimahi trace, checked as ``mm-link`` checks them
    (non-empty, integer lines, never decreasing, lasting a nonzero time)."""
    p = Path(path)
    if not p.exists():
        raise TraceFileError(f"{str(p)!r}: no such trace file")
    if p.is_dir():
        raise TraceFileError(f"{str(p)!r} is a directory (accepted: a Mahimahi trace file)")
    if not p.is_file():
        raise TraceFileError(f"{str(p)!r} is not a regular file")
    try:
        text = p.read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError) as e:
        raise TraceFileError(f"{str(p)!r}: cannot read the trace file ({getattr(e, 'strerror', None) or e})") from None
    out: list[int] = []
    for n, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            raise TraceFileError(f"{str(p)!r} line {n}: empty line (accepted: one integer millisecond per line)")
        if not line.isdigit():
            raise TraceFileError(f"{str(p)!r} line {n}: {line[:30]!r} is not a whole number of milliseconds")
        ms = int(line)
        if out and ms < out[-1]:
            raise TraceFileError(f"{str(p)!r} line {n}: {ms} is before the previous line's {out[-1]} (timestamps must never decrease)")
        out.append(ms)
    if not out:
        raise TraceFileError(f"{str(p)!r} is empty (accepted: one integer millisecond per line)")
    if out[-1] == 0:
        raise TraceFileError(f"{str(p)!r}: the last timestamp is 0; a trace must last a nonzero time (its last line is its period)")
    return out


class VariableRate(int):
    """A link rate that changes over time; the int is the long-run mean in bit/s."""

    user: dict[str, Any]
    sim: dict[str, Any]

    def __new__(cls, mean_bps: int, user: dict[str, Any], sim: dict[str, Any]):
        obj = super().__new__(cls, mean_bps)
        obj.user, obj.sim = user, sim
        return obj

    def __reduce__(self):
        return (VariableRate, (int(self), self.user, self.sim))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, VariableRate) and self.user == other.user and int(self) == int(other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash((int(self), repr(self.user)))

    def __repr__(self) -> str:
        return f"VariableRate({self.user!r}, mean {int(self)} bit/s)"


def _trace_rate(path: Any) -> VariableRate:
    if not isinstance(path, str) or not path:
        raise UnitError(f"trace = {path!r} is not a file name (accepted: the path of a Mahimahi trace)")
    try:
        ms = read_mahimahi_trace(path)
    except TraceFileError as e:
        raise UnitError(f"trace {e}") from None
    mean = round(len(ms) * OPPORTUNITY_BYTES * 8 / (ms[-1] * 1e-3))
    return VariableRate(max(mean, 1), {"trace": path}, {"kind": "trace", "ms": ms, "bytes": OPPORTUNITY_BYTES})


def _schedule_rate(points: Any, repeat: Any) -> VariableRate:
    shape = 'a list of [time, rate] pairs, e.g. [["0s", "10Mbit"], ["5s", "2Mbit"]]'
    if not isinstance(points, list) or not points:
        raise UnitError(f"schedule = {points!r} is not {shape}")
    times, rates = [], []
    for i, pt in enumerate(points):
        if not (isinstance(pt, (list, tuple)) and len(pt) == 2):
            raise UnitError(f"schedule[{i}] = {pt!r} is not a [time, rate] pair (accepted: {shape})")
        t, r = parse_duration(pt[0]), _rate_or_zero(pt[1])
        if i == 0 and t != 0:
            raise UnitError(f'schedule[0] starts at {format_duration(t)} (accepted: the first point at "0s")')
        if i and t <= times[-1]:
            raise UnitError(f"schedule[{i}] at {format_duration(t)} is not after {format_duration(times[-1])} (times must increase)")
        times.append(t)
        rates.append(r)
    rep = None if repeat is None else parse_duration(repeat, positive=True)
    if rep is not None and rep <= times[-1]:
        raise UnitError(f"repeat = {format_duration(rep)} must be longer than the last point ({format_duration(times[-1])})")
    if rep is None and rates[-1] == 0:
        raise UnitError("the last rate of a schedule without repeat is 0 (the link would stop for ever)")
    if not any(rates):
        raise UnitError("every rate of the schedule is 0 (the link would never send)")
    if rep is None:
        mean = rates[-1]
    else:
        ends = times[1:] + [rep]
        mean = round(sum(r * (e - t) for t, e, r in zip(times, ends, rates)) / rep)
    user: dict[str, Any] = {"schedule": [[format_duration(t), format_rate(r) if r else "0bit"] for t, r in zip(times, rates)]}
    sim: dict[str, Any] = {"kind": "schedule", "times_ns": times, "rates_bps": rates}
    if rep is not None:
        user["repeat"] = format_duration(rep)
        sim["repeat_ns"] = rep
    return VariableRate(max(mean, 1), user, sim)


def _rate_or_zero(text: Any) -> int:
    if isinstance(text, str) and text.strip() in ("0bit", "0bps", "0"):
        return 0
    return parse_rate(text)


def _parse_link_rate(value: Any) -> int:
    if isinstance(value, VariableRate):
        return value
    if isinstance(value, dict):
        keys = set(value)
        if keys == {"trace"}:
            return _trace_rate(value["trace"])
        if keys in ({"schedule"}, {"schedule", "repeat"}):
            return _schedule_rate(value["schedule"], value.get("repeat"))
        raise UnitError(
            f"{value!r} is not a link rate (accepted: a rate such as \"10Mbit\", "
            '{ trace = "FILE" } or { schedule = [["0s", "10Mbit"], ...], repeat = "10s" })'
        )
    return parse_rate(value)


def _validate(value: Any) -> int:
    try:
        return _parse_link_rate(value)
    except UnitError as e:
        raise PydanticCustomError("ccbench_unit", "{text}", {"text": str(e)}) from None


def _serialize(value: int) -> Any:
    return dict(value.user) if isinstance(value, VariableRate) else format_rate(value)


LinkRate = Annotated[
    int,
    PlainValidator(_validate),
    PlainSerializer(_serialize),
    WithJsonSchema({"anyOf": [{"type": "string", "examples": ["10Mbit"]}, {"type": "object"}]}),
]
"""A link rate: a rate string, a Mahimahi ``{ trace = FILE }`` or a ``{ schedule = ... }``."""


def rate_text(rate: int) -> str:
    """A link rate for one-line descriptions."""
    if isinstance(rate, VariableRate):
        what = f"trace {rate.user['trace']}" if "trace" in rate.user else f"{len(rate.sim['times_ns'])}-step schedule"
        return f"{what} (mean {format_rate(int(rate))})"
    return format_rate(rate)


def rate_json(rate: int) -> dict[str, Any]:
    """The ``rate_bps`` (and ``rate_var``) keys of ``ccsim::config::LinkConfig``."""
    out: dict[str, Any] = {"rate_bps": int(rate)}
    if isinstance(rate, VariableRate):
        out["rate_var"] = rate.sim
    return out


class LinkJitter(Table):
    """Random delay around the link's delay, as netem draws it."""

    table_name = "jitter"

    sigma: Duration
    dist: Literal["uniform", "normal", "pareto", "paretonormal"] = "uniform"
    correlation: float = Field(0.0, ge=0, le=1)
    reorder: bool = True

    def to_json(self) -> dict[str, Any]:
        return {"sigma_ns": self.sigma, "dist": self.dist, "correlation": self.correlation, "reorder": self.reorder}
