"""Command-line values with units, spelled as in scenario files.

Every duration, rate and size an option takes is a string with its unit, parsed by
the scenario parser (:mod:`ccbench.scenario.units`): ``--duration 10s``,
``--rate 500pkt/s``, ``--size 48B``. Options that used to take a bare number still
accept one in their old unit (``legacy=``), so existing scripts keep working; the
help shows only the unit spelling.

Each function raises the one-line ``error: --option: 'value' is not ...`` (exit 2).
"""

from __future__ import annotations

import math
import re

from ccbench.cli.errors import fail

#: "500pkt/s", "500 packets/s", "500pps": a packet rate.
PKT_RATE = re.compile(r"^\s*([+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)\s*(pkts?/s|packets?/s|pps)\s*$")

PKT_RATE_ACCEPTED = 'a packet rate such as "500pkt/s", or a bit rate such as "200kbit" (packets of --size)'


def _bare(text: str) -> float | None:
    """The number if ``text`` is a bare number (the old spelling), else None."""
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def duration_s(text: str, option: str, *, legacy: str | None = None, positive: bool = True) -> float:
    """``"100ms"`` -> 0.1 (seconds). ``legacy="s"`` or ``"ms"``: a bare number is read
    in that unit, as the option did before it took units."""
    from ccbench.scenario.units import UnitError, parse_duration

    bare = _bare(text)
    if bare is not None and legacy is not None:
        text = f"{text}{legacy}"
    try:
        return parse_duration(text, positive=positive) / 1e9
    except UnitError as e:
        raise fail(f"{option}: {text!r} {e}") from None


def size_bytes(text: str, option: str, *, legacy: bool = False) -> int:
    """``"1448B"`` -> 1448. ``legacy``: a bare number is a count of bytes."""
    from ccbench.scenario.units import UnitError, parse_size

    if legacy and _bare(text) is not None:
        text = f"{text}B"
    try:
        return parse_size(text, positive=True)
    except UnitError as e:
        raise fail(f"{option}: {text!r} {e}") from None


def bit_rate(text: str, option: str) -> float:
    """``"24Mbit"`` -> 24e6 (bit/s)."""
    from ccbench.scenario.units import UnitError, parse_rate

    try:
        return float(parse_rate(text))
    except UnitError as e:
        raise fail(f"{option}: {text!r} {e}") from None


def packet_rate(text: str, option: str, size: int | None, *, legacy: bool = False) -> float:
    """Packets per second of ``size``-byte packets: ``"500pkt/s"`` -> 500, ``"200kbit"``
    -> 200e3 / (8 size) (``size=None``: packet rates only). ``legacy``: a bare number
    is packets per second."""
    bare = _bare(text) if legacy else None
    m = PKT_RATE.match(str(text))
    pps = bare if bare is not None else (float(m.group(1)) if m else None)
    if pps is None and size is None:
        raise fail(f"{option}: {text!r} is not a packet rate (accepted: a packet rate such as \"1000pkt/s\")")
    if pps is None:
        from ccbench.scenario.units import UnitError, parse_rate

        try:
            pps = parse_rate(text) / (8.0 * size)
        except UnitError as e:
            raise fail(f"{option}: {text!r} {e}; or a packet rate such as \"500pkt/s\" (packets of --size)") from None
    if not (pps > 0 and math.isfinite(pps)):
        raise fail(f"{option}: {text!r} is not a positive rate (accepted: {PKT_RATE_ACCEPTED})")
    return pps
