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

from pydantic import Field, PrivateAttr, model_serializer, model_validator

from .base import Table, tagged
from .errors import fail
from .units import Duration, PositiveDuration, PositiveSize, Rate, format_duration, format_rate, format_size

__all__ = ["Cbr", "OnOff", "Bulk", "Web", "Trace", "Vbr", "Preset", "App", "Jitter", "PeriodDist", "SizeDist"]

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


class EmpiricalJitter(Table):
    """Gaps drawn from an empirical distribution: ``value[i]`` (a duration) is the
    ``p[i]``-quantile; linear in between (``p`` from 0 to 1, both non-decreasing)."""

    dist: Literal["empirical"] = "empirical"
    p: list[float]
    value: list[Duration]

    @model_validator(mode="after")
    def _check(self):
        _check_quantiles(self.p, self.value)
        return self

    def to_json(self) -> dict[str, Any]:
        return {"dist": "empirical", "quantiles": {"p": list(self.p), "value": [float(v) for v in self.value]}}

    def describe(self) -> str:
        return ", empirical gaps"


def _check_quantiles(p: list[float], value: list) -> None:
    if len(p) < 2 or len(p) != len(value):
        raise fail(f"needs at least 2 points and as many values as probabilities ({len(p)} p, {len(value)} values)", at=("p",))
    if p[0] != 0 or p[-1] != 1 or any(b < a for a, b in zip(p, p[1:])):
        raise fail("must rise from 0 to 1 (accepted: non-decreasing probabilities, first 0, last 1)", at=("p",))
    if any(b < a for a, b in zip(value, value[1:])):
        raise fail("must not decrease (value[i] is the p[i]-quantile)", at=("value",))


Jitter = tagged(NoJitter, NormalJitter, ExponentialJitter, UniformJitter, EmpiricalJitter, key="dist", shorthand=True)


# --- message sizes ----------------------------------------------------------------------


class FixedSize(Table):
    dist: Literal["fixed"] = "fixed"

    @model_serializer
    def _dump(self) -> Any:
        return "fixed"

    def to_json(self) -> Any:
        return "fixed"


class ExponentialSize(Table):
    """Exponential with mean ``size`` (M/M/1 service times)."""

    dist: Literal["exponential"] = "exponential"

    @model_serializer
    def _dump(self) -> Any:
        return "exponential"

    def to_json(self) -> Any:
        return "exponential"


class ParetoSize(Table):
    """Pareto with mean ``size`` and ``shape`` > 1 (heavy-tailed web responses)."""

    dist: Literal["pareto"] = "pareto"
    shape: float = Field(gt=1)

    def to_json(self) -> Any:
        return {"pareto": {"shape": self.shape}}


class LognormalSize(Table):
    """Lognormal with mean ``size``; ``sigma`` of the underlying normal."""

    dist: Literal["lognormal"] = "lognormal"
    sigma: float = Field(ge=0)

    def to_json(self) -> Any:
        return {"lognormal": {"sigma": self.sigma}}


class EmpiricalSize(Table):
    """Sizes from an empirical quantile table (``value`` in bytes)."""

    dist: Literal["empirical"] = "empirical"
    p: list[float]
    value: list[PositiveSize]

    @model_validator(mode="after")
    def _check(self):
        _check_quantiles(self.p, self.value)
        return self

    def to_json(self) -> Any:
        return {"empirical": {"quantiles": {"p": list(self.p), "value": [float(v) for v in self.value]}}}


SizeDist = tagged(FixedSize, ExponentialSize, ParetoSize, LognormalSize, EmpiricalSize, key="dist", shorthand=True)


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
    size_dist: SizeDist = FixedSize()

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
            "size_dist": self.size_dist.to_json(),
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
    #: Each replica's bytes drawn from a data-centre flow-size CDF (scenario.datacenter).
    size_dist: Optional[Literal["web_search", "data_mining"]] = None

    @model_validator(mode="after")
    def _one_size(self):
        if self.bytes is not None and self.size_dist is not None:
            raise fail("cannot be combined with bytes (accepted: one of bytes, size_dist)", at=("size_dist",), value=self.size_dist)
        return self

    def to_json(self) -> dict[str, Any]:
        return {"kind": "bulk", "bytes": self.bytes}

    def describe(self) -> str:
        if self.size_dist is not None:
            return f"bulk transfers of {self.size_dist.replace('_', ' ')} sizes"
        return "bulk (greedy)" if self.bytes is None else f"bulk transfer of {format_size(self.bytes)}"


class Web(Table):
    """Request/response sessions on one TCP connection: a response of ``size`` (mean;
    ``size_dist`` e.g. ``{ dist = "pareto", shape = 1.2 }``), then, once it has been
    delivered, an exponential think time with mean ``think`` before the next."""

    kind: Literal["web"] = "web"
    size: PositiveSize
    size_dist: SizeDist = ParetoSize(shape=1.2)
    think: PositiveDuration

    @model_validator(mode="after")
    def _check(self):
        _check_u32(self.size, "size")
        return self

    def to_json(self) -> dict[str, Any]:
        return {"kind": "web", "size_bytes": self.size, "size_dist": self.size_dist.to_json(), "think_ns": self.think}

    def describe(self) -> str:
        return f"web sessions: {format_size(self.size)} responses, think {format_duration(self.think)}"


class Trace(Table):
    """Replay of message times and sizes: from a CSV file (columns ``time_s`` and
    ``size_bytes``; a path relative to the working directory) or given inline
    (``times`` as durations from the flow's start, ``sizes``)."""

    kind: Literal["trace"] = "trace"
    file: Optional[str] = None
    _rows: Optional[tuple[list[int], list[int]]] = PrivateAttr(default=None)
    times: Optional[list[Duration]] = None
    sizes: Optional[list[PositiveSize]] = None
    repeat: bool = False

    @model_validator(mode="after")
    def _check(self):
        if (self.file is None) == (self.times is None or self.sizes is None):
            raise fail("give either file or both times and sizes", at=("file",))
        if self.file is not None:
            # read while validating, so a bad file is an error naming flows.<name>.app.file
            # (later, outside validation, nothing would attach the field to it)
            from .video import load_trace_csv

            self._rows = load_trace_csv(self.file)
        return self

    def arrays(self) -> tuple[list[int], list[int]]:
        if self.file is not None:
            return self._rows  # type: ignore[return-value]
        return list(self.times), list(self.sizes)  # type: ignore[arg-type]

    def to_json(self) -> dict[str, Any]:
        times, sizes = self.arrays()
        return {"kind": "trace", "times_ns": times, "sizes_bytes": sizes, "repeat": self.repeat}

    def describe(self) -> str:
        return f"trace replay ({self.file or f'{len(self.times or [])} messages'})"


class Vbr(Table):
    """Synthetic H.264-like VBR video (see :mod:`ccbench.scenario.video`): frames at
    ``fps`` with an I/P/B group of pictures, mean rate ``rate``, sizes lognormal around
    the frame type's share."""

    kind: Literal["vbr"] = "vbr"
    rate: Rate
    fps: float = Field(25.0, gt=0, le=240)
    gop: str = "IBBPBBPBBPBB"
    duration: PositiveDuration = 60_000_000_000
    sigma: float = Field(0.25, ge=0, le=2)
    seed: int = 1

    @model_validator(mode="after")
    def _check(self):
        if not self.gop or set(self.gop) - set("IPB") or self.gop[0] != "I":
            raise fail('is not a group of pictures (accepted: I, P and B frames starting with I, e.g. "IBBPBBPBBPBB")', at=("gop",), value=self.gop)
        return self

    def to_json(self) -> dict[str, Any]:
        from .video import synthetic_vbr

        times, sizes = synthetic_vbr(self.rate, self.fps, self.gop, self.duration, self.sigma, self.seed)
        return {"kind": "trace", "times_ns": times, "sizes_bytes": sizes, "repeat": True}

    def describe(self) -> str:
        return f"synthetic VBR video at {format_rate(self.rate)}, {self.fps:g} fps"


class Preset(Table):
    """An application preset by name (``ccbench.scenario.presets.PRESETS``);
    ``size`` and ``interval`` override the preset's."""

    kind: Literal["preset"] = "preset"
    name: str
    size: Optional[PositiveSize] = None
    interval: Optional[PositiveDuration] = None

    @model_validator(mode="after")
    def _check(self):
        from .presets import PRESETS

        if self.name not in PRESETS:
            raise fail(f"is not a preset (accepted: {', '.join(sorted(PRESETS))})", at=("name",), value=self.name)
        return self

    def expand(self) -> "Cbr":
        from .presets import preset_app

        over: dict[str, Any] = {}
        if self.size is not None:
            over["size"] = f"{self.size}B"
        if self.interval is not None:
            over["interval"] = f"{self.interval}ns"
        data = preset_app(self.name, over)
        return Cbr.model_validate({k: v for k, v in data.items()})

    def to_json(self) -> dict[str, Any]:
        return self.expand().to_json()

    def describe(self) -> str:
        return f"preset {self.name}: {self.expand().describe()}"


App = tagged(Cbr, OnOff, Bulk, Web, Trace, Vbr, Preset)
"""Any application, chosen by ``kind``."""
