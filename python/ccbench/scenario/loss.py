"""Loss models on a link (applied after the queue, before the wire).

User side -> JSON (same names)::

    loss = { kind = "bernoulli", p = 0.01, action = "drop" }     # or action = "mark" (ECN CE)
    loss = { kind = "periodic", every = 100, offset = 0 }        # every 100th packet
    loss = { kind = "gilbert_elliott", p_gb = 0.01, p_bg = 0.3, loss_good = 0.0, loss_bad = 1.0 }
    loss = { kind = "trace", indices = [10, 11, 500] }           # 0-based packet indices

Only the keys the user wrote are passed on (plus ``kind``); the simulator applies its
defaults to the rest.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from .base import Table, tagged
from .errors import fail

__all__ = ["Bernoulli", "Periodic", "GilbertElliott", "TraceLoss", "Loss"]

Prob = float
Action = Literal["drop", "mark"]


class _Loss(Table):
    action: Action = "drop"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind}  # type: ignore[attr-defined]
        for name in type(self).model_fields:
            if name != "kind" and name in self.model_fields_set:
                out[name] = getattr(self, name)
        return out


class Bernoulli(_Loss):
    """Each packet independently with probability ``p``."""

    kind: Literal["bernoulli"] = "bernoulli"
    p: Prob = Field(ge=0, le=1)

    def to_json(self) -> dict[str, Any]:
        out = super().to_json()
        out["p"] = self.p
        return out


class Periodic(_Loss):
    """Every ``every``-th packet, starting after ``offset`` packets."""

    kind: Literal["periodic"] = "periodic"
    every: int = Field(ge=1)
    offset: int = Field(0, ge=0)

    def to_json(self) -> dict[str, Any]:
        out = super().to_json()
        out["every"] = self.every
        return out


class GilbertElliott(_Loss):
    """Two-state Markov chain: good -> bad with ``p_gb``, bad -> good with ``p_bg``;
    loss probability ``loss_good`` / ``loss_bad`` in each state."""

    kind: Literal["gilbert_elliott"] = "gilbert_elliott"
    p_gb: Prob = Field(ge=0, le=1)
    p_bg: Prob = Field(ge=0, le=1)
    loss_good: Prob = Field(0.0, ge=0, le=1)
    loss_bad: Prob = Field(1.0, ge=0, le=1)

    def to_json(self) -> dict[str, Any]:
        out = super().to_json()
        out["p_gb"], out["p_bg"] = self.p_gb, self.p_bg
        return out


class TraceLoss(_Loss):
    """Exactly the packets with these 0-based indices (in arrival order at the link)."""

    kind: Literal["trace"] = "trace"
    indices: list[int]

    @model_validator(mode="after")
    def _check(self):
        bad = [i for i in self.indices if i < 0]
        if bad:
            raise fail("contains negative indices (accepted: packet indices >= 0)", at=("indices",), value=bad)
        return self

    def to_json(self) -> dict[str, Any]:
        out = super().to_json()
        out["indices"] = sorted(set(self.indices))
        return out


Loss = tagged(Bernoulli, Periodic, GilbertElliott, TraceLoss)
"""Any loss model, chosen by ``kind``."""
