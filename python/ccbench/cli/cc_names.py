"""Which congestion-control algorithms this build of the simulator offers."""

from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=1)
def available_cc() -> tuple[str, ...]:
    from ccbench.backends.sim import _core

    core = _core()
    if hasattr(core, "cc_list"):
        return tuple(a["name"] for a in core.cc_list())
    return ()
