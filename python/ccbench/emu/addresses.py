"""The emulator's addressing plan (shared with ``crates/ccemu/src/lib.rs``).

Dumbbell host ``srv{i}`` is host number ``i + 1`` of ``10.78.0.0/16`` in the server
namespace, ``cli{i}`` host number ``i + 1`` of ``10.79.0.0/16`` in the client namespace:
``srv0`` = 10.78.0.1, ``srv254`` = 10.78.0.255, ``srv255`` = 10.78.1.0. A /16 per side
holds 65534 hosts (0 is the network, 65535 the broadcast address), so that many pairs;
a /24 per side, as before, held only 254.
"""

from __future__ import annotations

__all__ = ["MAX_PAIRS", "SIDE_NET", "host_addr", "side_prefix"]

MAX_PAIRS = 65534
SIDE_NET = {"srv": 78, "cli": 79}  # second octet of each side's 10.x.0.0/16


def host_addr(side: str, i: int) -> str:
    """The address of host ``i`` (0-based) on ``side`` (``"srv"`` or ``"cli"``)."""
    if not 0 <= i < MAX_PAIRS:
        raise ValueError(f"host {i} is outside the addressing plan (accepted: 0 to {MAX_PAIRS - 1})")
    n = i + 1
    return f"10.{SIDE_NET[side]}.{n >> 8}.{n & 0xFF}"


def side_prefix(side: str) -> str:
    """The side's network, e.g. ``"10.78.0.0/16"``."""
    return f"10.{SIDE_NET[side]}.0.0/16"
