"""Child processes that do not outlive their parent.

Linux's ``prctl(PR_SET_PDEATHSIG, SIGKILL)`` (prctl(2)) makes the kernel kill a child
when the thread that forked it exits, however it exits: a SIGKILLed sweep or emulator
run then leaves no worker or probe behind. The setting survives ``execve`` (except of
set-user-ID programs), so it holds for ``ip netns exec ... ccemu`` too.
"""

from __future__ import annotations

import os
import signal

__all__ = ["die_with_parent", "pdeathsig_preexec"]

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def _load_prctl():
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        return None


_PRCTL = _load_prctl()  # resolved here, never in a forked child (no import after fork)


def pdeathsig_preexec() -> None:
    """``preexec_fn`` for ``subprocess.Popen``: only a system call, nothing that could
    take a lock another thread held at fork time (imports, allocation-heavy code)."""
    if _PRCTL is not None:
        _PRCTL(PR_SET_PDEATHSIG, 9, 0, 0, 0)  # 9 = SIGKILL


def die_with_parent(parent: int | None = None) -> bool:
    """Asks the kernel to SIGKILL this process when its parent dies; returns whether it
    could. With ``parent`` (the pid expected), exits at once if the parent is already
    gone (it may have died before the call)."""
    ok = _PRCTL is not None and _PRCTL(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
    if parent is not None and os.getppid() != parent:
        os._exit(1)
    return ok
