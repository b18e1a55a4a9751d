"""Queue disciplines, user side -> simulator JSON.

User side (TOML), with defaults::

    queue = { kind = "droptail", limit = "1000pkt" }      # rule from the unit:
            # "167pkt" -> rule "packets" (Linux pfifo), "40000B" -> "bytes-strict" (bfifo);
            # rule = "bytes-loose" is dummynet's byte mode (may overfill by < 1 packet)
    queue = { kind = "red", limit = "60000B", min_th = "5000B", max_th = "15000B",
              avpkt = "1000B", max_p = 0.02, w_q = 0.002, gentle = true, adaptive = false,
              ecn = false, harddrop = false, bytemode = false }
    queue = { kind = "codel", target = "5ms", interval = "100ms", limit = "1000pkt",
              ecn = false, ce_threshold = "1ms" }
    queue = { kind = "fq_codel", target = "5ms", interval = "100ms", limit = "10240pkt",
              quantum = "1514B", flows = 1024, ecn = true }
    queue = { kind = "pie", target = "15ms", tupdate = "15ms", limit = "1000pkt",
              alpha = 0.125, beta = 1.25, max_burst = "150ms", ecn = false, bytemode = false }
    queue = { kind = "pecn", limit = "100pkt", upper = "100pkt", lower = "50pkt" }

The Rust field names of each discipline live in :data:`RUST_KEYS` (one line per field),
so a rename on the Rust side is a one-line change here.
"""

from __future__ import annotations

from typing import Any, Literal, Optional

from pydantic import Field, model_validator

from .base import Table, tagged
from .errors import fail
from .units import (
    Duration,
    PositiveDuration,
    PositiveSize,
    QLimit,
    QueueLimit,
    format_queue_limit,
)

__all__ = ["DropTail", "Red", "CoDel", "FqCoDel", "Pie", "PersistentEcn", "Queue", "RUST_KEYS", "DEFAULT_QUEUE"]

#: user field -> Rust `QdiscConfig` field, per discipline (`kind` is the same on both sides).
RUST_KEYS: dict[str, dict[str, str]] = {
    "droptail": {"limit": "limit", "rule": "rule", "count_in_service": "count_in_service"},
    "red": {
        "limit": "limit",
        "unit": "unit",
        "min_th": "min_th",
        "max_th": "max_th",
        "max_p": "max_p",
        "w_q": "w_q",
        "gentle": "gentle",
        "adaptive": "adaptive",
        "ecn": "ecn",
        "harddrop": "harddrop",
        "bytemode": "byte_mode",
        "avpkt": "avpkt",
    },
    # Durations go to Rust in microseconds (as Linux's netlink attributes).
    "codel": {
        "target": "target_us",
        "interval": "interval_us",
        "limit": "limit",
        "ecn": "ecn",
        "ce_threshold": "ce_threshold_us",
    },
    "fq_codel": {
        "target": "target_us",
        "interval": "interval_us",
        "limit": "limit",
        "quantum": "quantum",
        "flows": "flows",
        "ecn": "ecn",
        "ce_threshold": "ce_threshold_us",
    },
    "pie": {
        "target": "target_us",
        "tupdate": "tupdate_us",
        "limit": "limit",
        "alpha": "alpha",
        "beta": "beta",
        "max_burst": "max_burst_us",
        "ecn": "ecn",
        "bytemode": "bytemode",
    },
    "pecn": {"limit": "limit", "unit": "unit", "upper": "upper", "lower": "lower"},
}


def _us(ns: Optional[int]) -> Optional[int]:
    """Nanoseconds to whole microseconds (the qdiscs' unit), rounding to nearest."""
    return None if ns is None else (ns + 500) // 1000


DropRule = Literal["packets", "bytes-strict", "bytes-loose"]


def _rule_for(limit: QLimit, rule: Optional[str], at: str = "rule") -> str:
    """The drop rule: given, or implied by the limit's unit; they must agree."""
    if rule is None:
        return "packets" if limit.is_packets else "bytes-strict"
    if rule == "packets" and not limit.is_packets:
        raise fail(
            f'does not match limit = "{format_queue_limit(limit)}" (rule "packets" needs a limit in pkt, '
            'e.g. "167pkt"; a limit in bytes takes rule "bytes-strict" or "bytes-loose")',
            at=(at,),
            value=rule,
        )
    if rule != "packets" and limit.is_packets:
        raise fail(
            f'does not match limit = "{format_queue_limit(limit)}" (rule "{rule}" needs a limit in bytes, '
            'e.g. "40000B"; a limit in pkt takes rule "packets")',
            at=(at,),
            value=rule,
        )
    return rule


def _need_pkts(q: QLimit, field: str, kind: str) -> int:
    if not q.is_packets:
        raise fail(
            f'is not accepted: {kind} counts its limit in packets (accepted: a packet count, e.g. "1000pkt")',
            at=(field,),
            value=format_queue_limit(q),
        )
    return q.value


class _Queue(Table):
    def _emit(self, values: dict[str, Any]) -> dict[str, Any]:
        keys = RUST_KEYS[self.kind]  # type: ignore[attr-defined]
        return {"kind": self.kind, **{keys[k]: v for k, v in values.items()}}  # type: ignore[attr-defined]


class DropTail(_Queue):
    """FIFO with the three drop rules of Stewart et al. (see ``ccsim::qdisc::droptail``)."""

    kind: Literal["droptail"] = "droptail"
    limit: QueueLimit = QLimit(1000, "pkt")
    rule: Optional[DropRule] = None
    count_in_service: bool = False

    @model_validator(mode="after")
    def _check(self):
        _rule_for(self.limit, self.rule)
        return self

    @property
    def effective_rule(self) -> str:
        return _rule_for(self.limit, self.rule)

    def to_json(self) -> dict[str, Any]:
        out = {"limit": self.limit.value, "rule": self.effective_rule}
        if self.count_in_service:
            out["count_in_service"] = True
        return self._emit(out)


class Red(_Queue):
    """RED (Floyd & Jacobson; Linux ``sch_red``). Thresholds in pkt are converted to bytes
    with ``avpkt``; ``max_th`` defaults to limit/4 and ``min_th`` to max_th/3 (as ``tc``)."""

    kind: Literal["red"] = "red"
    limit: QueueLimit
    min_th: Optional[QueueLimit] = None
    max_th: Optional[QueueLimit] = None
    avpkt: PositiveSize = 1000
    max_p: float = Field(0.02, gt=0, le=1)
    w_q: float = Field(0.002, gt=0, le=1)
    gentle: bool = True
    adaptive: bool = False
    ecn: bool = False
    harddrop: bool = False
    bytemode: bool = False

    def _bytes(self, q: QLimit) -> int:
        return q.value * self.avpkt if q.is_packets else q.value

    def thresholds(self) -> tuple[int, int, int]:
        """(limit, min_th, max_th) in bytes."""
        limit = self._bytes(self.limit)
        max_th = self._bytes(self.max_th) if self.max_th is not None else limit // 4
        min_th = self._bytes(self.min_th) if self.min_th is not None else max_th // 3
        return limit, min_th, max_th

    @model_validator(mode="after")
    def _check(self):
        limit, min_th, max_th = self.thresholds()
        if min_th <= 0:
            raise fail(f"is too small: min_th comes to {min_th} bytes (accepted: min_th >= 1 byte)", at=("min_th",))
        if not min_th < max_th:
            raise fail(
                f"must be above min_th ({min_th} B), but is {max_th} B (accepted: min_th < max_th <= limit)",
                at=("max_th",),
            )
        if max_th > limit:
            raise fail(
                f"must not exceed limit ({limit} B), but is {max_th} B (accepted: min_th < max_th <= limit)",
                at=("max_th",),
            )
        return self

    def to_json(self) -> dict[str, Any]:
        limit, min_th, max_th = self.thresholds()
        return self._emit(
            {
                "limit": limit,
                "unit": "bytes",
                "min_th": min_th,
                "max_th": max_th,
                "max_p": self.max_p,
                "w_q": self.w_q,
                "gentle": self.gentle,
                "adaptive": self.adaptive,
                "ecn": self.ecn,
                "harddrop": self.harddrop,
                "bytemode": self.bytemode,
                "avpkt": self.avpkt,
            }
        )


class CoDel(_Queue):
    """CoDel (Nichols & Jacobson, RFC 8289; Linux ``sch_codel`` defaults)."""

    kind: Literal["codel"] = "codel"
    target: PositiveDuration = 5_000_000
    interval: PositiveDuration = 100_000_000
    limit: QueueLimit = QLimit(1000, "pkt")
    ecn: bool = False
    ce_threshold: Optional[Duration] = None

    @model_validator(mode="after")
    def _check(self):
        _need_pkts(self.limit, "limit", self.kind)
        return self

    def to_json(self) -> dict[str, Any]:
        return self._emit(
            {
                "target": _us(self.target),
                "interval": _us(self.interval),
                "limit": self.limit.value,
                "ecn": self.ecn,
                "ce_threshold": _us(self.ce_threshold),
            }
        )


class FqCoDel(_Queue):
    """FQ-CoDel (RFC 8290; Linux ``sch_fq_codel`` defaults)."""

    kind: Literal["fq_codel"] = "fq_codel"
    target: PositiveDuration = 5_000_000
    interval: PositiveDuration = 100_000_000
    limit: QueueLimit = QLimit(10240, "pkt")
    quantum: PositiveSize = 1514
    flows: int = Field(1024, ge=1)
    ecn: bool = True
    ce_threshold: Optional[Duration] = None

    @model_validator(mode="after")
    def _check(self):
        _need_pkts(self.limit, "limit", self.kind)
        return self

    def to_json(self) -> dict[str, Any]:
        return self._emit(
            {
                "target": _us(self.target),
                "interval": _us(self.interval),
                "limit": self.limit.value,
                "quantum": self.quantum,
                "flows": self.flows,
                "ecn": self.ecn,
                "ce_threshold": _us(self.ce_threshold),
            }
        )


class Pie(_Queue):
    """PIE (RFC 8033; Linux ``sch_pie`` defaults)."""

    kind: Literal["pie"] = "pie"
    target: PositiveDuration = 15_000_000
    tupdate: PositiveDuration = 15_000_000
    limit: QueueLimit = QLimit(1000, "pkt")
    alpha: float = Field(0.125, ge=0)
    beta: float = Field(1.25, ge=0)
    max_burst: Duration = 150_000_000
    ecn: bool = False
    bytemode: bool = False

    @model_validator(mode="after")
    def _check(self):
        _need_pkts(self.limit, "limit", self.kind)
        return self

    def to_json(self) -> dict[str, Any]:
        return self._emit(
            {
                "target": _us(self.target),
                "tupdate": _us(self.tupdate),
                "limit": self.limit.value,
                "alpha": self.alpha,
                "beta": self.beta,
                "max_burst": _us(self.max_burst),
                "ecn": self.ecn,
                "bytemode": self.bytemode,
            }
        )


class PersistentEcn(_Queue):
    """Persistent ECN (Wei et al.): mark every packet while the queue is above ``upper``
    until it falls below ``lower``; drop-tail at ``limit``. All three in the limit's unit."""

    kind: Literal["pecn"] = "pecn"
    limit: QueueLimit
    rule: Optional[DropRule] = None
    upper: Optional[QueueLimit] = None
    lower: Optional[QueueLimit] = None

    def levels(self) -> tuple[int, int, int]:
        """(limit, upper, lower) in the limit's unit."""
        limit = self.limit.value
        upper = self.upper.value if self.upper is not None else limit
        lower = self.lower.value if self.lower is not None else upper // 2
        return limit, upper, lower

    @model_validator(mode="after")
    def _check(self):
        _rule_for(self.limit, self.rule)
        unit = self.limit.unit
        for name in ("upper", "lower"):
            q = getattr(self, name)
            if q is not None and q.unit != unit:
                raise fail(
                    f'must use the same unit as limit = "{format_queue_limit(self.limit)}"',
                    at=(name,),
                    value=format_queue_limit(q),
                )
        limit, upper, lower = self.levels()
        if upper > limit:
            raise fail(f"must not exceed limit ({limit}) (accepted: lower <= upper <= limit)", at=("upper",))
        if lower > upper:
            raise fail(f"must not exceed upper ({upper}) (accepted: lower <= upper <= limit)", at=("lower",))
        return self

    def to_json(self) -> dict[str, Any]:
        limit, upper, lower = self.levels()
        unit = "packets" if _rule_for(self.limit, self.rule) == "packets" else "bytes"
        return self._emit({"limit": limit, "unit": unit, "upper": upper, "lower": lower})


Queue = tagged(DropTail, Red, CoDel, FqCoDel, Pie, PersistentEcn, default="droptail")
"""Any queue discipline, chosen by ``kind`` (``"droptail"`` when omitted)."""


def DEFAULT_QUEUE() -> DropTail:
    """Linux's default: a 1000-packet FIFO (``txqueuelen``)."""
    return DropTail()
