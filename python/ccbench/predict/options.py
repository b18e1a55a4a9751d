"""Command-line quantities in the scenario's unit convention, for every model command.

Durations, rates and sizes are unit strings parsed by :mod:`ccbench.scenario.units`
(``--rtt 100ms``, ``--rate 64kbit``, ``--mss 1448B``); a probability is ``1%`` or
``0.01``; a packet count is ``64`` or ``64pkt``. Each parser raises
``typer.BadParameter`` naming the option, the value and what is accepted (exit code 2).
"""

from __future__ import annotations

import math
import re
from typing import Optional

import typer

from ccbench.scenario.units import UnitError, parse_duration, parse_rate, parse_size

__all__ = ["duration_s", "rate_bps", "size_bytes", "probability", "packets"]

_NUM = re.compile(r"^\s*([+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)\s*(%|pkts?|packets?)?\s*$")


def _bad(option: str, value, what: str) -> typer.BadParameter:
    # Raised after parsing (click no longer knows the parameter), so the message names it.
    return typer.BadParameter(f"{option}: {value!r} {what}")


def duration_s(value: Optional[str], option: str, *, positive: bool = True) -> Optional[float]:
    """``"100ms"`` -> 0.1."""
    if value is None:
        return None
    try:
        return parse_duration(value, positive=positive) / 1e9
    except UnitError as e:
        raise _bad(option, value, str(e)) from None


def rate_bps(value: Optional[str], option: str) -> Optional[float]:
    """``"64kbit"`` -> 64000.0."""
    if value is None:
        return None
    try:
        return float(parse_rate(value))
    except UnitError as e:
        raise _bad(option, value, str(e)) from None


def size_bytes(value: Optional[str], option: str) -> Optional[int]:
    """``"1448B"`` -> 1448; a bare whole number is taken as bytes (old spelling)."""
    if value is None:
        return None
    text = str(value).strip()
    if text.isdigit():
        text += "B"
    try:
        return parse_size(text, positive=True)
    except UnitError as e:
        raise _bad(option, value, str(e)) from None


def probability(value: Optional[str], option: str, *, lo: float = 0.0, hi: float = 1.0,
                hi_open: bool = True) -> Optional[float]:
    """``"1%"`` or ``"0.01"`` -> 0.01, in [lo, hi) (or [lo, hi] with ``hi_open=False``)."""
    if value is None:
        return None
    m = _NUM.match(str(value))
    accepted = f'is not a probability (accepted: a number in [{lo:g}, {hi:g}{")" if hi_open else "]"} or a percentage, e.g. "1%" or 0.01)'
    if not m or (m.group(2) not in (None, "%")):
        raise _bad(option, value, accepted)
    p = float(m.group(1)) / (100.0 if m.group(2) == "%" else 1.0)
    if not (math.isfinite(p) and lo <= p and (p < hi if hi_open else p <= hi)):
        raise _bad(option, value, accepted)
    return p


def packets(value: Optional[str], option: str) -> Optional[float]:
    """``"64"`` or ``"64pkt"`` -> 64.0 (a window or buffer in packets, > 0)."""
    if value is None:
        return None
    m = _NUM.match(str(value))
    if not m or m.group(2) == "%" or not float(m.group(1)) > 0:
        raise _bad(option, value, 'is not a packet count (accepted: a number > 0, e.g. 64 or "64pkt")')
    return float(m.group(1))
