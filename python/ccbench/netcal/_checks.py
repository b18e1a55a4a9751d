"""Small shared argument checks (internal)."""

from __future__ import annotations

import math

from .errors import NetcalError


def check_xi(xi: float) -> float:
    """Return ``xi`` as float, or raise :class:`NetcalError` unless ``0 < xi < 1``."""
    try:
        value = float(xi)
    except (TypeError, ValueError):
        raise NetcalError(f"xi must be a number in (0, 1), got {xi!r}") from None
    if not (0.0 < value < 1.0) or math.isnan(value):
        raise NetcalError(f"xi must lie in the open interval (0, 1), got {value!r}")
    return value


def check_positive(name: str, value: float) -> float:
    v = float(value)
    if not (v > 0.0) or not math.isfinite(v):
        raise NetcalError(f"{name} must be a positive finite number, got {value!r}")
    return v


def check_probability(name: str, value: float) -> float:
    v = float(value)
    if not (0.0 < v < 1.0):
        raise NetcalError(f"{name} must lie in (0, 1), got {value!r}")
    return v
