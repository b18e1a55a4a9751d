"""Quantities with units, as scenario files write them.

Every rate, time and size in a scenario is a string with a unit, so a file never
leaves the reader guessing whether ``50`` meant milliseconds or seconds:

=========  =====================================================  ==================
quantity   accepted units (exact spellings, case matters)         stored as
=========  =====================================================  ==================
rate       bits per second: ``bit``, ``kbit``, ``Mbit``,         ``int`` bit/s
           ``Gbit``, ``Tbit`` (also ``Kbit`` and tc's ``mbit``,   (``Rate``)
           ``gbit``, ``tbit``), ``bps``, ``kbps``, ``Mbps``,
           ``Gbps``, ``Tbps``, ``kb/s``, ``Mb/s`` ..., any
           ``...bit`` with ``/s``; binary ``Kibit``, ``Mibit``,
           ``Gibit``. Bytes per second are converted (x 8):
           ``B/s``, ``kB/s`` = ``KB/s``, ``MB/s``, ``GB/s``,
           ``KiB/s``, ``MiB/s``, ``GiB/s``, and ``Bps``,
           ``kBps``, ``MBps`` ...
time       ``ns``, ``us`` (or ``µs``), ``ms``, ``s`` (``sec``),   ``int`` ns
           ``min``                                                (``Duration``)
size       ``B`` (``byte``, ``bytes``), ``kB`` = ``KB``, ``MB``,  ``int`` bytes
           ``GB``, ``TB`` (decimal: k = 1000) and ``KiB``,        (``Size``)
           ``MiB``, ``GiB``, ``TiB`` (binary)
queue      a size, or a packet count ``"167pkt"`` (``pkts``,      ``QLimit``
limit      ``packet``, ``packets``)                               (``QueueLimit``)
=========  =====================================================  ==================

A unit the parser does not know exactly is an error; where only the case is wrong
the message names the spelling meant (``"24MBIT"``: did you mean "Mbit"?).

Prefixes are decimal (``k`` = ``K`` = 1000, ``M`` = 10^6) for rates and sizes alike,
as in ``tc`` rates and in the papers; binary multiples must be asked for explicitly
with the IEC prefixes (``KiB``, ``Mibit``). A lower-case ``b`` is a bit and an
upper-case ``B`` a byte, everywhere: ``"10Mbps"`` and ``"10Mb/s"`` are 10 Mbit/s,
``"10MBps"`` and ``"10MB/s"`` are 80 Mbit/s. Spellings whose meaning differs between
tools are refused with both readings named: ``mbps`` is megabytes/s to ``tc`` but
megabits/s to most people, ``Mb`` without ``/s`` could be a size. Rates and times are
rounded to the nearest integer (a rate of "1.5bit" is 2 bit/s); sizes must be whole
bytes.

The annotated types (``Rate``, ``Duration``, ``Size``, ``QueueLimit`` and their
``Positive...`` variants) parse these strings when a pydantic model is validated and
print them back as the shortest exact string when the model is saved, so
load -> save -> load gives the same values.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Annotated, Any, NamedTuple

from pydantic import PlainSerializer, PlainValidator, WithJsonSchema
from pydantic_core import PydanticCustomError

__all__ = [
    "UnitError",
    "QLimit",
    "parse_rate",
    "parse_duration",
    "parse_size",
    "parse_queue_limit",
    "format_rate",
    "format_duration",
    "format_size",
    "format_queue_limit",
    "si_value",
    "Rate",
    "Duration",
    "PositiveDuration",
    "Size",
    "PositiveSize",
    "QueueLimit",
]


class UnitError(ValueError):
    """A quantity string that cannot be parsed; the message says what is accepted."""


class QLimit(NamedTuple):
    """A queue limit: ``value`` bytes (``unit == "B"``) or packets (``unit == "pkt"``)."""

    value: int
    unit: str  # "B" or "pkt"

    @property
    def is_packets(self) -> bool:
        return self.unit == "pkt"

    def __str__(self) -> str:
        return format_queue_limit(self)


# --- unit tables ------------------------------------------------------------------
# Every accepted spelling is listed exactly; nothing is lower-cased before the look-up,
# so "MB/s" (bytes) can never fall into "Mb/s" (bits).

_SI = {"": 1, "k": 10**3, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}
_IEC = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}

_RATE_UNITS: dict[str, int] = {}
for _p, _m in _SI.items():
    for _u in ("bit", "bit/s", "bps", "b/s"):
        _RATE_UNITS[_p + _u] = _m
    for _u in ("B/s", "Bps"):  # bytes per second: 8 bits each
        _RATE_UNITS[_p + _u] = 8 * _m
for _p, _m in (("m", 10**6), ("g", 10**9), ("t", 10**12)):  # tc(8)'s mbit, gbit, tbit
    _RATE_UNITS[_p + "bit"] = _m
    _RATE_UNITS[_p + "bit/s"] = _m
for _p, _m in _IEC.items():
    _RATE_UNITS[_p + "bit"] = _m
    _RATE_UNITS[_p + "bit/s"] = _m
    _RATE_UNITS[_p + "B/s"] = 8 * _m
    _RATE_UNITS[_p + "Bps"] = 8 * _m
for _u in ("byte/s", "bytes/s"):
    _RATE_UNITS[_u] = 8

#: spellings refused because tools disagree on them: unit -> what to write instead
_RATE_AMBIGUOUS: dict[str, str] = {}
for _p, _n in (("m", "M"), ("g", "G"), ("t", "T")):
    _RATE_AMBIGUOUS[_p + "bps"] = (
        f'is ambiguous (tc reads it as {_n}B/s, most people as {_n}bit/s): write "{_n}bit" for bits or '
        f'"{_n}B/s" for bytes per second'
    )
for _p in ("", "k", "K", "M", "G", "T"):
    for _b in ("b", "B"):
        _RATE_AMBIGUOUS[_p + _b] = (
            f'is an amount, not a rate: write "{_p}bit" (bits per second) or "{_p}B/s" (bytes per second)'
        )

_TIME_UNITS: dict[str, int] = {
    "ns": 1,
    "us": 10**3,
    "µs": 10**3,
    "μs": 10**3,
    "ms": 10**6,
    "s": 10**9,
    "sec": 10**9,
    "min": 60 * 10**9,
}

_SIZE_UNITS: dict[str, int] = {"B": 1, "byte": 1, "bytes": 1}
for _p, _m in _SI.items():
    if _p:
        _SIZE_UNITS[_p + "B"] = _m
for _p, _m in _IEC.items():
    _SIZE_UNITS[_p + "B"] = _m

_PKT_UNITS = ("pkt", "pkts", "packet", "packets")

RATE_ACCEPTED = (
    "a positive number with unit bit, kbit, Mbit, Gbit (or bps, kbps, Mbps, Gbps, Mbit/s; all bits per second) "
    'or bytes per second B/s, kB/s, MB/s, KiB/s, MiB/s, e.g. "24Mbit"'
)
DURATION_ACCEPTED = 'a number >= 0 with unit ns, us, ms, s, e.g. "20ms"'
POS_DURATION_ACCEPTED = 'a positive number with unit ns, us, ms, s, e.g. "20ms"'
SIZE_ACCEPTED = 'a number >= 0 with unit B, kB, MB, GB (decimal) or KiB, MiB, GiB (binary), e.g. "40000B"'
POS_SIZE_ACCEPTED = 'a positive number with unit B, kB, MB, GB (decimal) or KiB, MiB, GiB (binary), e.g. "40000B"'
QLIMIT_ACCEPTED = 'a positive size with unit B, kB, MB, KiB, MiB, or a packet count with unit pkt, e.g. "40000B" or "167pkt"'

#: what a bare number would be written as, for the "needs a unit" hint
_EXAMPLE_UNIT = {"rate": "bit", "duration": "s", "size": "B", "queue limit": "pkt"}


def _did_you_mean(unit: str, table: dict[str, int]) -> str:
    """' (did you mean "Mbit"?)' when ``unit`` differs from accepted spellings only in
    case and they all mean the same; '' otherwise."""
    same = [u for u in table if u.lower() == unit.lower()]
    if same and len({table[u] for u in same}) == 1:
        return f' (did you mean "{same[0]}"?)'
    return ""


_NUM_RE = re.compile(r"^\s*([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)\s*([^\d\s].*?)?\s*$")


def _split(text: Any, what: str, accepted: str) -> tuple[Decimal, str]:
    """Splits ``"1.5Mbit"`` into ``(Decimal("1.5"), "Mbit")``."""
    if isinstance(text, bool) or not isinstance(text, (str, int, float)):
        raise UnitError(f"is not a valid {what} (accepted: {accepted})")
    if not isinstance(text, str):
        raise UnitError(f"is not a valid {what}: {_needs_unit(text, what)} (accepted: {accepted})")
    m = _NUM_RE.match(text)
    if not m:
        raise UnitError(f"is not a valid {what} (accepted: {accepted})")
    try:
        num = Decimal(m.group(1))
    except InvalidOperation:  # pragma: no cover - the regex only lets numbers through
        raise UnitError(f"is not a valid {what} (accepted: {accepted})") from None
    unit = m.group(2) or ""
    if not unit:
        raise UnitError(f"is not a valid {what}: {_needs_unit(m.group(1), what)} (accepted: {accepted})")
    if num < 0:
        raise UnitError(f"is not a valid {what}: it is negative (accepted: {accepted})")
    return num, unit


def _needs_unit(number: Any, what: str) -> str:
    """The hint for a bare number: units are never guessed (``30`` is not 30 ns or 30 s)."""
    example = f'"{number}{_EXAMPLE_UNIT.get(what, "")}"'
    if what == "rate":
        try:
            example = f'"{format_rate(int(Decimal(str(number))))}"'  # a bare rate reads most naturally as bit/s
        except (InvalidOperation, ValueError, OverflowError):
            pass
    return f"a number needs a unit, written as a string such as {example}"


def _to_int(num: Decimal, mult: int, exact: bool, what: str, unit_name: str, accepted: str) -> int:
    value = num * mult
    if exact and value != value.to_integral_value():
        raise UnitError(f"is not a valid {what}: not a whole number of {unit_name} (accepted: {accepted})")
    return int(value.to_integral_value())  # ROUND_HALF_EVEN, only reached for rates/times


def parse_rate(text: Any) -> int:
    """``"1.5Mbit"`` -> ``1500000`` (bit/s). Rates must be positive."""
    num, unit = _split(text, "rate", RATE_ACCEPTED)
    if unit in _RATE_AMBIGUOUS:
        raise UnitError(f"is not a valid rate: unit {unit!r} {_RATE_AMBIGUOUS[unit]} (accepted: {RATE_ACCEPTED})")
    if unit not in _RATE_UNITS:
        hint = _did_you_mean(unit, _RATE_UNITS)
        if not hint and unit.lower() in {u.lower() for u in _RATE_UNITS}:
            hint = " (the case says bits or bytes: b = bit, B = byte)"
        raise UnitError(f"is not a valid rate: unknown unit {unit!r}{hint} (accepted: {RATE_ACCEPTED})")
    value = _to_int(num, _RATE_UNITS[unit], False, "rate", "bit/s", RATE_ACCEPTED)
    if value <= 0:
        raise UnitError(f"is not a valid rate: it must be positive (accepted: {RATE_ACCEPTED})")
    return value


def parse_duration(text: Any, *, positive: bool = False) -> int:
    """``"100ms"`` -> ``100000000`` (ns)."""
    accepted = POS_DURATION_ACCEPTED if positive else DURATION_ACCEPTED
    num, unit = _split(text, "duration", accepted)
    if unit not in _TIME_UNITS:
        hint = _did_you_mean(unit, _TIME_UNITS)
        if unit == "m":
            hint = ' (write "min" for minutes or "ms" for milliseconds)'
        raise UnitError(f"is not a valid duration: unknown unit {unit!r}{hint} (accepted: {accepted})")
    value = _to_int(num, _TIME_UNITS[unit], False, "duration", "ns", accepted)
    if positive and value <= 0:
        raise UnitError(f"is not a valid duration: it must be positive (accepted: {accepted})")
    return value


def parse_size(text: Any, *, positive: bool = False) -> int:
    """``"40kB"`` -> ``40000``, ``"4MiB"`` -> ``4194304`` (bytes)."""
    accepted = POS_SIZE_ACCEPTED if positive else SIZE_ACCEPTED
    num, unit = _split(text, "size", accepted)
    if unit in _PKT_UNITS:
        raise UnitError(f"is not a valid size: a packet count is not accepted here (accepted: {accepted})")
    if unit not in _SIZE_UNITS:
        raise UnitError(f"is not a valid size: unknown unit {unit!r}{_size_hint(unit)} (accepted: {accepted})")
    value = _to_int(num, _SIZE_UNITS[unit], True, "size", "bytes", accepted)
    if positive and value <= 0:
        raise UnitError(f"is not a valid size: it must be positive (accepted: {accepted})")
    return value


def _size_hint(unit: str) -> str:
    if unit.endswith("b") or unit.endswith("bit"):
        return " ('b' would be bits; write 'B' for bytes)"
    if unit in _RATE_UNITS:
        return " (that is a rate; a size has no '/s')"
    return _did_you_mean(unit, _SIZE_UNITS)


def parse_queue_limit(text: Any) -> QLimit:
    """``"167pkt"`` -> ``QLimit(167, "pkt")``, ``"40kB"`` -> ``QLimit(40000, "B")``."""
    num, unit = _split(text, "queue limit", QLIMIT_ACCEPTED)
    if unit in _PKT_UNITS:
        if num != num.to_integral_value():
            raise UnitError(f"is not a valid queue limit: not a whole number of packets (accepted: {QLIMIT_ACCEPTED})")
        q = QLimit(int(num), "pkt")
    elif unit in _SIZE_UNITS:
        q = QLimit(_to_int(num, _SIZE_UNITS[unit], True, "queue limit", "bytes", QLIMIT_ACCEPTED), "B")
    else:
        raise UnitError(f"is not a valid queue limit: unknown unit {unit!r}{_size_hint(unit)} (accepted: {QLIMIT_ACCEPTED})")
    if q.value <= 0:
        raise UnitError(
            f"is not a valid queue limit: a limit of 0 would drop every packet (accepted: {QLIMIT_ACCEPTED})"
        )
    return q


def si_value(text: Any) -> tuple[float, str] | None:
    """A unit string as a number in SI units and that unit: ``"20ms"`` -> ``(0.02, "s")``,
    ``"1.5Mbit"`` -> ``(1.5e6, "bit/s")``, ``"40kB"`` -> ``(40000.0, "B")``,
    ``"14pkt"`` -> ``(14.0, "pkt")``; None for anything else (a name, a number, a table).

    The unit tables do not overlap, so the unit alone says which quantity it is.
    """
    if not isinstance(text, str) or not _NUM_RE.match(text):
        return None
    for parse, per_unit, unit in ((parse_rate, 1, "bit/s"), (parse_duration, 10**9, "s"), (parse_size, 1, "B")):
        try:
            return parse(text) / per_unit, unit
        except UnitError:
            continue
    try:
        q = parse_queue_limit(text)
    except UnitError:
        return None
    return float(q.value), q.unit


# --- formatting (shortest exact string) ------------------------------------------------


def _fmt(value: int, units: list[tuple[str, int]], min_unit: str) -> str:
    """The largest unit in which ``value`` is >= 1 and needs at most 3 decimals."""
    for name, mult in units:
        if value >= mult:
            d = Decimal(value) / Decimal(mult)
            if d == d.quantize(Decimal("0.001")):
                s = format(d.normalize(), "f")
                return f"{s}{name}"
    return f"{value}{min_unit}"


def format_rate(bps: int) -> str:
    """``1500000`` -> ``"1.5Mbit"``."""
    return _fmt(int(bps), [("Tbit", 10**12), ("Gbit", 10**9), ("Mbit", 10**6), ("kbit", 10**3)], "bit")


def format_duration(ns: int) -> str:
    """``100000000`` -> ``"100ms"``."""
    ns = int(ns)
    if ns == 0:
        return "0s"
    return _fmt(ns, [("s", 10**9), ("ms", 10**6), ("us", 10**3)], "ns")


def format_size(nbytes: int) -> str:
    """Bytes as written in papers: ``"40000B"``; whole MiB/MB above 1 MB as ``"4MiB"``/``"4MB"``."""
    n = int(nbytes)
    for name, mult in (("GiB", 2**30), ("MiB", 2**20), ("GB", 10**9), ("MB", 10**6)):
        if n >= mult and n % mult == 0:
            return f"{n // mult}{name}"
    return f"{n}B"


def format_queue_limit(q: QLimit) -> str:
    return f"{q.value}pkt" if q.unit == "pkt" else format_size(q.value)


# --- pydantic annotated types -----------------------------------------------------


def _validator(parse, kind: str):
    def validate(value: Any) -> Any:
        if isinstance(value, QLimit) and kind == "queue_limit":
            return value
        try:
            return parse(value)
        except UnitError as e:
            raise PydanticCustomError("ccbench_unit", "{text}", {"text": str(e)}) from None

    return validate


def _annotated(tp, parse, fmt, kind: str, example: str):
    return Annotated[
        tp,
        PlainValidator(_validator(parse, kind)),
        PlainSerializer(fmt, return_type=str),
        WithJsonSchema({"type": "string", "examples": [example]}),
    ]


Rate = _annotated(int, parse_rate, format_rate, "rate", "24Mbit")
"""A positive rate in bit/s, written ``"24Mbit"``."""
Duration = _annotated(int, parse_duration, format_duration, "duration", "100ms")
"""A time >= 0 in ns, written ``"100ms"``."""
PositiveDuration = _annotated(
    int, lambda v: parse_duration(v, positive=True), format_duration, "duration", "20ms"
)
"""A time > 0 in ns."""
Size = _annotated(int, parse_size, format_size, "size", "40000B")
"""A size >= 0 in bytes, written ``"40000B"``."""
PositiveSize = _annotated(int, lambda v: parse_size(v, positive=True), format_size, "size", "1448B")
"""A size > 0 in bytes."""
QueueLimit = _annotated(QLimit, parse_queue_limit, format_queue_limit, "queue_limit", "167pkt")
"""A positive queue limit in bytes or packets, written ``"40000B"`` or ``"167pkt"``."""
