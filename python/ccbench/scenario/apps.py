"""Applications: what a flow's sender writes, and when.

User side::

    # constant bit rate: one `size` message every `interval`
    app = { kind = "cbr", size = "186B", interval = "20ms",
            jitter = { dist = "normal", sd = "1ms" },   # or "none" (default),
                                                        # { dist = "exponential" } (Poisson),
                                                        # { dist = "uniform", width = "2ms" }
            size_dist = "fixed" }                       # or "exponential" (mean = size)
    # on/off source: `size` packets at `peak_rate` while on
    app = { kind = "onoff", size = "1500B", peak_rate = "2Mbit",
            on = { dist = "exponential", mean = "1s" },
            off = { dist = "pareto", mean = "2s", shape = 1.5 } }
    # greedy sender; with `bytes`, a transfer of that size (completion time reported)
    app = { kind = "bulk" }
    app = { kind = "bulk", bytes = "64MiB" }
"""

from __future__ import annotations

from typing import Any, Literal, Optional

from pydantic import Field, model_serializer, model_validator

from .base import Table, tagged
from .errors import fail
from .units import PositiveDuration, PositiveSize, Rate, format_duration, format_rate, format_size

__all__ = ["Cbr", "OnOff", "Bulk", "App", "Jitter", "PeriodDist"]

_U32 = 2**32 - 1


# --- jitter -------------------------------------------------------------------------


class NoJitter(Table):
    dist: Literal["none"] = "none"

    @model_serializer
    def _dump(self) -> Any:
        return "none"

    def to_json(self) -> dict[str, Any]:
        return {"dist": "none"}

    def describe(self) -> str:
        return ""


class NormalJitter(Table):
    """Normal around the interval, sd ``sd`` (truncated at 0)."""

    dist: Literal["normal"] = "normal"
    sd: PositiveDuration

    def to_json(self) -> dict[str, Any]:
        return {"dist": "normal", "sd_ns": self.sd}

    def describe(self) -> str:
        return f", N(0, {format_duration(self.sd)}) jitter"


class ExponentialJitter(Table):
    """Exponential gaps with mean ``interval``: a Poisson process."""

    dist: Literal["exponential"] = "exponential"

    def to_json(self) -> dict[str, Any]:
        return {"dist": "exponential"}

    def describe(self) -> str:
        return ", Poisson"


class UniformJitter(Table):
    """Uniform on ``[interval - width/2, interval + width/2]``."""

    dist: Literal["uniform"] = "uniform"
    width: PositiveDuration

    def to_json(self) -> dict[str, Any]:
        return {"dist": "uniform", "width_ns": self.width}

    def describe(self) -> str:
        return f", ±{format_duration(self.width // 2)} uniform jitter"


Jitter = tagged(NoJitter, NormalJitter, ExponentialJitter, UniformJitter, key="dist", shorthand=True)


# --- on/off periods -------------------------------------------------------------------


class ExponentialPeriod(Table):
    dist: Literal["exponential"] = "exponential"
    mean: PositiveDuration

    def to_json(self) -> dict[str, Any]:
        return {"dist": "exponential", "mean_ns": self.mean}


class ParetoPeriod(Table):
    dist: Literal["pareto"] = "pareto"
    mean: PositiveDuration
    shape: float = Field(gt=1)

    def to_json(self) -> dict[str, Any]:
        return {"dist": "pareto", "mean_ns": self.mean, "shape": self.shape}


PeriodDist = tagged(ExponentialPeriod, ParetoPeriod, key="dist")


# --- applications -----------------------------------------------------------------------


def _check_u32(size: int, field: str) -> None:
    if size > _U32:
        raise fail(f"is too large for one message (accepted: at most {_U32} bytes)", at=(field,), value=format_size(size))


class Cbr(Table):
    kind: Literal["cbr"] = "cbr"
    size: PositiveSize
    interval: PositiveDuration
    jitter: Jitter = NoJitter()
    size_dist: Literal["fixed", "exponential"] = "fixed"

    @model_validator(mode="after")
    def _check(self):
        _check_u32(self.size, "size")
        return self

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": "cbr",
            "size_bytes": self.size,
            "interval_ns": self.interval,
            "jitter": self.jitter.to_json(),
            "size_dist": self.size_dist,
        }

    def rate_bps(self) -> float:
        return self.size * 8 * 1e9 / self.interval

    def describe(self) -> str:
        return (
            f"CBR {format_size(self.size)} every {format_duration(self.interval)}"
            f"{self.jitter.describe()} ({format_rate(round(self.rate_bps()))})"
        )


class OnOff(Table):
    kind: Literal["onoff", "on_off"] = "onoff"
    size: PositiveSize
    peak_rate: Rate
    on: PeriodDist
    off: PeriodDist

    @model_validator(mode="after")
    def _check(self):
        _check_u32(self.size, "size")
        return self

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": "on_off",
            "size_bytes": self.size,
            "peak_rate_bps": self.peak_rate,
            "on": self.on.to_json(),
            "off": self.off.to_json(),
        }

    def mean_rate_bps(self) -> float:
        return self.peak_rate * self.on.mean / (self.on.mean + self.off.mean)

    def describe(self) -> str:
        return (
            f"on/off {format_size(self.size)} packets at {format_rate(self.peak_rate)}, "
            f"on {format_duration(self.on.mean)} / off {format_duration(self.off.mean)} "
            f"(mean {format_rate(max(1, round(self.mean_rate_bps())))})"
        )


class Bulk(Table):
    kind: Literal["bulk"] = "bulk"
    bytes: Optional[PositiveSize] = None

    def to_json(self) -> dict[str, Any]:
        return {"kind": "bulk", "bytes": self.bytes}

    def describe(self) -> str:
        return "bulk (greedy)" if self.bytes is None else f"bulk transfer of {format_size(self.bytes)}"


App = tagged(Cbr, OnOff, Bulk)
"""Any application, chosen by ``kind``."""
