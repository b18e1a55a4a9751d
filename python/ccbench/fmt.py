"""How ccbench writes a rate, a time, a size or a fraction for a reader: one function
each, used by every table, report and message, so the CLI and the HTML report print
the same number (``74.35 kbit/s`` in both, not 74.4 in one and 74.35 in the other).

Every number gets :data:`DIGITS` significant digits (trailing zeros dropped) in the
largest decimal unit in which it is at least 1 (SI prefixes, powers of 1000, as the
scenario parser reads ``kbit`` and ``kB``). A value that is NaN, infinite or None
prints as ``missing`` (``"-"`` by default). Rounding happens before the unit is
chosen, so 999.96 kbit/s is ``1 Mbit/s``, never ``1000 kbit/s``.

These are for people to read. Scenario files take the exact unit strings of
:mod:`ccbench.scenario.units` (``format_rate(1500000) == "1.5Mbit"``).

>>> fmt_rate(74352.0), fmt_time(0.1177), fmt_bytes(20000), fmt_pct(0.02238)
('74.35 kbit/s', '117.7 ms', '20 kB', '2.238%')
"""

from __future__ import annotations

import math
from typing import Optional

__all__ = ["DIGITS", "fmt_rate", "fmt_time", "fmt_bytes", "fmt_bits", "fmt_pct", "fmt_number"]

#: significant digits of every formatted number
DIGITS = 4

_RATE_UNITS = (("Tbit/s", 1e12), ("Gbit/s", 1e9), ("Mbit/s", 1e6), ("kbit/s", 1e3), ("bit/s", 1.0))
_BIT_UNITS = (("Tbit", 1e12), ("Gbit", 1e9), ("Mbit", 1e6), ("kbit", 1e3), ("bit", 1.0))
_SIZE_UNITS = (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3), ("B", 1.0))
_TIME_UNITS = (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9))


def _finite(x) -> Optional[float]:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def _round_sig(v: float, digits: int) -> float:
    """``v`` rounded to ``digits`` significant digits (0 stays 0)."""
    return float(f"{v:.{digits}g}") if v else 0.0


def fmt_number(x, digits: int = DIGITS, missing: str = "-") -> str:
    """A plain number with ``digits`` significant digits, never in exponent form for
    numbers a table holds (``12345.6`` -> ``12350``, ``0.001234`` -> ``0.001234``)."""
    v = _finite(x)
    if v is None:
        return missing
    r = _round_sig(v, digits)
    if r == 0:
        return "0"
    if abs(r) >= 10**digits:
        return f"{r:.0f}"
    # enough decimals for `digits` significant ones, then drop trailing zeros
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(r))))
    s = f"{r:.{decimals}f}"
    return s.rstrip("0").rstrip(".") if "." in s else s


def _scaled(x, units, digits: int, missing: str) -> str:
    v = _finite(x)
    if v is None:
        return missing
    r = _round_sig(v, digits)
    for name, mult in units:
        if abs(r) >= mult:
            return f"{fmt_number(r / mult, digits)} {name}"
    name, mult = units[-1]
    return f"{fmt_number(r / mult, digits)} {name}"


def fmt_rate(bps, digits: int = DIGITS, missing: str = "-") -> str:
    """A rate in bit/s: ``1362278.4`` -> ``"1.362 Mbit/s"``."""
    return _scaled(bps, _RATE_UNITS, digits, missing)


def fmt_bytes(nbytes, digits: int = DIGITS, missing: str = "-") -> str:
    """A size in bytes (decimal prefixes, as the scenario's ``kB``): ``20000`` -> ``"20 kB"``."""
    return _scaled(nbytes, _SIZE_UNITS, digits, missing)


def fmt_bits(bits, digits: int = DIGITS, missing: str = "-") -> str:
    """An amount of data in bits (a service curve's S(t)): ``500000`` -> ``"500 kbit"``."""
    return _scaled(bits, _BIT_UNITS, digits, missing)


def fmt_time(seconds, digits: int = DIGITS, unit: Optional[str] = None, missing: str = "-") -> str:
    """A time or delay in seconds: ``0.1177`` -> ``"117.7 ms"``.

    ``unit`` (``"s"``, ``"ms"``, ``"us"``, ``"ns"``) fixes the unit, for a table column
    that should read in one unit; by default the largest unit with a value >= 1.
    """
    if unit is None:
        if _finite(seconds) == 0.0:
            return "0 s"
        return _scaled(seconds, _TIME_UNITS, digits, missing)
    mult = dict(_TIME_UNITS).get(unit)
    if mult is None:
        raise ValueError(f"unit: {unit!r} is not accepted (accepted: {', '.join(n for n, _ in _TIME_UNITS)})")
    v = _finite(seconds)
    return missing if v is None else f"{fmt_number(v / mult, digits)} {unit}"


def fmt_pct(fraction, digits: int = DIGITS, missing: str = "-") -> str:
    """A fraction as a percentage: ``0.02238`` -> ``"2.238%"``."""
    v = _finite(fraction)
    return missing if v is None else f"{fmt_number(v * 100.0, digits)}%"
