"""What computed a sweep point, so that a resumed sweep does not reuse stale results.

A sweep resumes by skipping every point with an ``ok`` record. Without more, a
directory filled by last month's simulator would be "resumed" by today's: the old
points are skipped and the summary silently mixes two simulators. Each record
therefore names its *engine*, and :func:`stale` tells the planner to run a point
again when the engine that would compute it now differs.

* ``sim``: the ccbench version and a digest of the compiled simulator extension
  (``ccbench/_core*.so``), so any rebuild of the Rust code counts as a new engine
  even when the version string did not move (development builds).
* ``emu``: the kernel release. The kernel's TCP is what the point measures; a
  rebuilt ``ccemu`` bottleneck is not a reason to repeat hours of kernel runs (its
  queue code is the simulator's, checked by the simulator's own tests).
"""

from __future__ import annotations

import hashlib
import os
from functools import lru_cache
from typing import Any, Optional

__all__ = ["engine_id", "stale"]


@lru_cache(maxsize=None)
def _core_digest() -> str:
    try:
        from ccbench import _core
    except ImportError:  # pragma: no cover - depends on the build
        return "no-extension"
    path = getattr(_core, "__file__", None)
    if not path:  # pragma: no cover - a built-in module
        return "unknown"
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()[:12]


def engine_id(backend: str) -> str:
    """The identity of what computes a point on ``backend`` in this process."""
    if backend == "emu":
        return f"kernel {os.uname().release}"
    from ccbench import __version__

    return f"ccbench {__version__} core {_core_digest()}"


def stale(record: dict[str, Any], backend: str) -> Optional[str]:
    """Why a finished point must run again because another engine computed it, or None.

    Simulator records written before engines were recorded count as stale (they are
    cheap to recompute); emulator records without one are kept (kernel runs are not)."""
    was = record.get("engine")
    if was is None:
        return "it was computed before runs recorded their simulator build" if backend == "sim" else None
    now = engine_id(backend)
    return None if was == now else f"it was computed by another engine ({was}; now {now})"
