"""Congestion-control parameters in the units users think in, translated to Linux's.

The simulator's registry (``ccsim::tcp::cc``) keeps Linux's module parameters as the
kernel stores them: CUBIC's beta is 717 out of 1024 and its C is ``bic_scale * 10 /
1024`` (``tcp_cubic.c``), DCTCP's gain is a shift, Hybla's RTT0 is milliseconds. A
scenario may write either form; this module checks what the user wrote, says what is
accepted at the user's own path (``flows.bulk.transport.cc.beta``), and hands the
simulator the Linux form.

===========  ====================  ============================  =========================
algorithm    user form (default)   Linux form (default)          told apart by
===========  ====================  ============================  =========================
cubic, bic   ``beta = 0.7`` (bic   ``beta = 717`` (bic 819),     the value: a number in
             0.8): cwnd x beta     out of 1024                   (0, 1) is the fraction, a
             after a loss                                        whole number 2..1023 is
                                                                 Linux's /1024 integer
cubic        ``c = 0.4``           ``bic_scale = 41``            the key
                                   (C = bic_scale x 10/1024)
cubic        ``hystart_ack_delta   ``hystart_ack_delta_us =      the key
             = "2ms"``             2000``
dctcp        ``g = 0.0625``        ``dctcp_shift_g = 4``         the key
             (1/2^n, n = 0..10)    (g = 1/2^shift_g)
dctcp        ``alpha_on_init =     ``dctcp_alpha_on_init =       the key
             1.0``                 1024`` (/1024)
hybla        ``rtt0 = "25ms"``     ``rtt0 = 25`` (ms)            the type: a duration
                                                                 string vs a whole number
===========  ====================  ============================  =========================

A fraction is rounded to Linux's resolution (beta 0.8 -> 819/1024 = 0.7998, C 0.45 ->
46 x 10/1024 = 0.449), exactly as ``sysctl``-style integer parameters would force.
Every other parameter is already in user units (segments, booleans, FAST's and
Compound's real-valued gains) and passes through. ``ccbench cc list`` shows the user
form and its default.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable, Optional

from .units import UnitError, format_duration, parse_duration

__all__ = ["UserParam", "USER_PARAMS", "to_linux", "check_params", "registry", "display_params"]


class _Refused(ValueError):
    """A parameter value outside what is accepted; the message is the accepted form."""


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _whole(v: Any) -> bool:
    return _is_number(v) and float(v).is_integer()


@dataclass(frozen=True)
class UserParam:
    """One parameter as users write it, and how it becomes Linux's."""

    key: str  #: what the scenario writes
    linux: str  #: the registry's (Linux module) parameter it sets
    accepted: str  #: the accepted values, for messages
    convert: Callable[[Any], int]  #: user value -> Linux value; raises _Refused
    show: Callable[[Any], str]  #: Linux default -> user form, for ``cc list``
    doc: str


def _fraction_1024(v: Any) -> int:
    # (0, 1) is a fraction; 2..1023 is Linux's integer. 1 is refused: as a fraction it
    # would mean "never decrease", as Linux's integer 1/1024; neither is a sane beta.
    if _is_number(v) and 0 < v < 1:
        return max(1, round(v * 1024))
    if _whole(v) and 2 <= v <= 1023:
        return int(v)
    raise _Refused


def _fraction_0_1_1024(v: Any) -> int:
    if _is_number(v) and 0 <= v <= 1:
        return round(v * 1024)
    raise _Refused


def _cubic_c(v: Any) -> int:
    # tcp_cubic.c: cube_factor = 2^(10+3*BICTCP_HZ) / (bic_scale * 10), i.e. C = bic_scale*10/1024
    if _is_number(v) and v > 0:
        scale = round(v * 1024 / 10)
        if 1 <= scale <= 1 << 20:
            return scale
    raise _Refused


def _shift_g(v: Any) -> int:
    # tcp_dctcp.c: alpha = alpha * (1 - g) + g * F with g = 1 / 2^dctcp_shift_g
    if _is_number(v) and 0 < v <= 1:
        n = -math.log2(v)
        if abs(n - round(n)) < 1e-9 and 0 <= round(n) <= 10:
            return round(n)
    raise _Refused


def _duration_to(unit_ns: int, whole_linux: bool) -> Callable[[Any], int]:
    def convert(v: Any) -> int:
        if whole_linux and _whole(v) and v > 0:
            return int(v)  # Linux's own integer (hybla rtt0 in ms)
        if isinstance(v, str):
            try:
                ns = parse_duration(v, positive=True)
            except UnitError:
                raise _Refused from None
            if ns % unit_ns == 0:
                return ns // unit_ns
        raise _Refused

    return convert


def _show_fraction(d: Any) -> str:
    return f"{d / 1024:.3g}"


USER_PARAMS: dict[str, tuple[UserParam, ...]] = {
    "cubic": (
        UserParam(
            "beta", "beta",
            "a fraction in (0, 1), e.g. 0.7, or Linux's integer out of 1024, 2 .. 1023, e.g. 717",
            _fraction_1024, _show_fraction,
            "multiplicative decrease: cwnd x beta after a loss (Linux's beta = 717 out of 1024 accepted too)",
        ),
        UserParam(
            "c", "bic_scale",
            "a positive number, e.g. 0.4 (or Linux's bic_scale, an integer: C = bic_scale x 10/1024)",
            _cubic_c, lambda d: f"{d * 10 / 1024:.2g}",
            "C of W(t) = C(t-K)^3 + W_max, segments/s^3 (Linux's bic_scale = 41 = C x 1024/10 accepted too)",
        ),
        UserParam(
            "hystart_ack_delta", "hystart_ack_delta_us",
            'a positive duration in whole microseconds, e.g. "2ms" (or Linux\'s hystart_ack_delta_us = 2000)',
            _duration_to(1_000, False), lambda d: format_duration(int(d) * 1_000),
            "max ACK spacing still counted as one train (Linux's hystart_ack_delta_us accepted too)",
        ),
    ),
    "bic": (
        UserParam(
            "beta", "beta",
            "a fraction in (0, 1), e.g. 0.8, or Linux's integer out of 1024, 2 .. 1023, e.g. 819",
            _fraction_1024, _show_fraction,
            "multiplicative decrease: cwnd x beta after a loss (Linux's beta = 819 out of 1024 accepted too)",
        ),
    ),
    "dctcp": (
        UserParam(
            "g", "dctcp_shift_g",
            "1/2^n for n = 0 .. 10, e.g. 0.0625 (or Linux's dctcp_shift_g = n)",
            _shift_g, lambda d: f"{2.0 ** -int(d):g}",
            "EWMA gain of alpha, 1/2^n (Linux's dctcp_shift_g = n accepted too)",
        ),
        UserParam(
            "alpha_on_init", "dctcp_alpha_on_init",
            "a fraction in [0, 1], e.g. 1.0 (or Linux's dctcp_alpha_on_init, 0 .. 1024)",
            _fraction_0_1_1024, _show_fraction,
            "initial alpha (Linux's dctcp_alpha_on_init out of 1024 accepted too)",
        ),
    ),
    "hybla": (
        UserParam(
            "rtt0", "rtt0",
            'a positive duration in whole milliseconds, e.g. "25ms" (or Linux\'s integer in ms, e.g. 25)',
            _duration_to(1_000_000, True), lambda d: format_duration(int(d) * 1_000_000),
            "reference round-trip time RTT0 (Linux's integer in ms accepted too)",
        ),
    ),
}


@lru_cache(maxsize=1)
def registry() -> dict[str, dict[str, Any]]:
    """The simulator's algorithms by name (``_core.cc_list()``); empty without the extension."""
    try:
        from ccbench import _core
    except ImportError:  # pragma: no cover - depends on the build
        return {}
    return {a["name"]: a for a in _core.cc_list()}


def _user_param(algo: str, key: str) -> Optional[UserParam]:
    return next((p for p in USER_PARAMS.get(algo, ()) if p.key == key), None)


def _accepted_keys(algo: str, spec: dict[str, Any]) -> list[str]:
    keys = [p.key for p in USER_PARAMS.get(algo, ())]
    return keys + [p["name"] for p in spec["params"] if p["name"] not in keys]


def _type_ok(value: Any, default: Any) -> bool:
    if isinstance(default, bool):
        return isinstance(value, bool)
    if isinstance(default, int):
        return _whole(value)
    if isinstance(default, float):
        return _is_number(value)
    return True


def check_params(algo: str, params: dict[str, Any]) -> list[tuple[str, str, Any]]:
    """Problems of ``params`` for algorithm ``algo`` as ``(key, message, value)``;
    empty when they are fine, or when the algorithm is unknown here (the simulator
    then names it)."""
    spec = registry().get(algo)
    if spec is None:
        return []
    linux = {p["name"]: p for p in spec["params"]}
    problems: list[tuple[str, str, Any]] = []
    seen: dict[str, str] = {}
    for key, value in params.items():
        up = _user_param(algo, key)
        if up is None and key not in linux:
            keys = _accepted_keys(algo, spec)
            accepted = f"{algo} accepts {', '.join(keys)}" if keys else f"{algo} has no parameters"
            problems.append((key, f"is not a parameter of {algo} (accepted: {accepted}; see ccbench cc list {algo})", None))
            continue
        target = up.linux if up is not None else key
        if target in seen:
            problems.append((key, f"sets the same parameter as {seen[target]} (accepted: one of {seen[target]}, {key})", None))
            continue
        seen[target] = key
        if up is not None:
            try:
                up.convert(value)
            except _Refused:
                problems.append((key, f"is not accepted (accepted: {up.accepted})", value))
            continue
        default = linux[key]["default"]
        if not _type_ok(value, default):
            want = "true or false" if isinstance(default, bool) else "a whole number" if isinstance(default, int) else "a number"
            problems.append((key, f"is not accepted (accepted: {want}; {algo} default {_show_default(default)})", value))
    return problems


def to_linux(algo: str, params: dict[str, Any]) -> dict[str, Any]:
    """The parameters as the simulator's registry takes them (Linux's units and names)."""
    out: dict[str, Any] = {}
    for key, value in params.items():
        up = _user_param(algo, key)
        if up is None:
            out[key] = int(value) if _whole(value) and _linux_is_int(algo, key) else value
            continue
        out[up.linux] = up.convert(value)
    return out


def _linux_is_int(algo: str, key: str) -> bool:
    spec = registry().get(algo)
    p = next((p for p in spec["params"] if p["name"] == key), None) if spec else None
    return p is not None and isinstance(p["default"], int) and not isinstance(p["default"], bool)


def _show_default(d: Any) -> str:
    return str(d).lower() if isinstance(d, bool) else str(d)


def display_params(algo: str, params: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """``(name, default, meaning)`` rows of ``ccbench cc list``: the user form where
    there is one (in place of the Linux parameter it sets), the registry's otherwise."""
    by_linux = {p.linux: p for p in USER_PARAMS.get(algo, ())}
    rows = []
    for p in params:
        up = by_linux.get(p["name"])
        if up is not None:
            rows.append((up.key, up.show(p["default"]), up.doc))
        else:
            rows.append((p["name"], _show_default(p["default"]), p["doc"]))
    return rows
