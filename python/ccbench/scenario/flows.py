"""Flows: one sender application over one transport, from one host to another.

User side::

    [[flows]]
    name = "voip"                                  # unique; letters, digits, _ and -
    transport = { kind = "udp" }
    app = { kind = "cbr", size = "186B", interval = "20ms" }
    direction = "both"     # dumbbell: "down" (default, srv -> cli), "up", or "both",
                           # which makes two flows, voip.down and voip.up, on one pair
    pair = 0               # dumbbell: optional; default: each flow its own pair, in order
    start = "0s"           # when the application starts (default 0)
    stop = "50s"           # when it stops writing (default: run end)
    count = 1              # N > 1 replicates the flow: voip[0], voip[1], ...
    start_every = "250ms"  # with count: replica r starts at start + r * start_every
    arrivals = "regular"   # or "poisson": start_every is the mean of exponential gaps
                           # (many short transfers: count = 200, app = { kind = "bulk", bytes = "50kB" })
    split = 1              # TCP: each message written as N pieces back to back (Brosh split-N)
    connections = 1        # TCP: N parallel connections; the receiver merges in message order
    scheduler = "round-robin"   # or "least-backlog" (skips connections in RTO; Brosh "intelligent")

    # graph and parking lot: name the hosts
    src = "a"
    dst = "b"
    # parking lot shortcut: path = "long" (long_src -> long_dst) or "cross0", "cross1"...
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal, Optional

from pydantic import Field, field_validator, model_validator

from .apps import App, Bulk
from .base import Table
from .errors import fail
from .transport import Transport, Udp
from .units import Duration, format_duration

__all__ = ["Flow", "ResolvedFlow"]

_NAME = re.compile(r"^[A-Za-z0-9_\-]+$")


class Flow(Table):
    name: str
    transport: Transport
    app: App
    direction: Optional[Literal["down", "up", "both"]] = None
    pair: Optional[int] = Field(None, ge=0)
    src: Optional[str] = None
    dst: Optional[str] = None
    path: Optional[str] = None
    start: Duration = 0
    stop: Optional[Duration] = None
    count: int = Field(1, ge=1)
    start_every: Optional[Duration] = None
    #: "poisson": replicas start after exponential gaps of mean start_every.
    arrivals: Literal["regular", "poisson"] = "regular"
    split: int = Field(1, ge=1, le=1024)
    connections: int = Field(1, ge=1, le=64)
    scheduler: Literal["round-robin", "least-backlog"] = "round-robin"

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not _NAME.match(v):
            raise fail(
                'is not a valid flow name (accepted: letters, digits, _ and -, e.g. "voip"; '
                '"." and "[i]" are added by direction = "both" and count)',
                value=v,
            )
        return v

    @model_validator(mode="after")
    def _check(self):
        if self.stop is not None and self.stop <= self.start:
            raise fail(
                f'must be after start = "{format_duration(self.start)}"', at=("stop",), value=format_duration(self.stop)
            )
        if isinstance(self.app, Bulk) and isinstance(self.transport, Udp):
            raise fail(
                'bulk needs transport kind = "tcp" (a greedy UDP sender has no rate; use app kind = "cbr" or "onoff")',
                at=("app", "kind"),
                value="bulk",
            )
        if isinstance(self.transport, Udp):
            for key, default in (("split", 1), ("connections", 1)):
                if getattr(self, key) != default:
                    raise fail('needs transport kind = "tcp"', at=(key,), value=getattr(self, key))
        if self.arrivals == "poisson" and not self.start_every:
            raise fail('needs start_every, the mean gap between starts (e.g. "1ms")', at=("arrivals",), value="poisson")
        if (self.src is None) != (self.dst is None):
            missing = "dst" if self.dst is None else "src"
            raise fail("is missing (src and dst go together)", at=(missing,))
        if self.src is not None and (self.direction is not None or self.path is not None):
            raise fail("cannot be combined with src/dst (accepted: direction, path, or src and dst)", at=(
                "direction" if self.direction is not None else "path",
            ))
        return self


@dataclass(frozen=True)
class ResolvedFlow:
    """One simulated flow after ``count`` and ``direction = "both"`` are expanded."""

    name: str
    src: str
    dst: str
    flow: Flow
    #: Index of the user's ``[[flows]]`` entry.
    index: int
    #: Dumbbell pair (None for other topologies).
    pair: Optional[int] = None

    @property
    def replica(self) -> int:
        """Index of this replica of a ``count`` flow (0 for a single flow)."""
        if self.flow.count == 1:
            return 0
        return int(self.name.rsplit("[", 1)[1].split("]", 1)[0])

    def to_json(self, transport: Optional[dict] = None, app: Optional[dict] = None) -> dict[str, Any]:
        """The flow as ``ccsim::config::FlowConfig``; ``transport`` and ``app``, when
        given, are the already converted tables (shared work of ``count`` replicas)."""
        start = self.flow.start + self.replica * (self.flow.start_every or 0)
        out: dict[str, Any] = {
            "name": self.name,
            "src": self.src,
            "dst": self.dst,
            "transport": self.flow.transport.to_json() if transport is None else transport,
            "app": self.flow.app.to_json() if app is None else app,
            "start_ns": start,
        }
        if self.flow.stop is not None:
            out["stop_ns"] = max(self.flow.stop, start + 1)
        if self.flow.split != 1:
            out["split"] = self.flow.split
        if self.flow.connections != 1:
            out["connections"] = self.flow.connections
            out["scheduler"] = self.flow.scheduler
        return out
