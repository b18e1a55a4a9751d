"""One sweep per directory at a time: a lock file ``SWEEP_DIR/.lock``.

Two sweeps writing the same points would both run every point and race on the
records. The lock is ``flock(2)`` on ``SWEEP_DIR/.lock`` (on NFS Linux maps it to a
byte-range lock, which the server arbitrates), and the file holds the owner's host, pid
and start time for the message a second sweep prints. The kernel releases the lock when
its owner dies, however it dies, so the lock of a dead sweep is stale by construction:
the next sweep takes it over and writes its own pid into the file (no pid guessing, no
window in which two sweeps both judge a lock stale). Forked local workers share the
lock's open file until they exit (they die with the sweep: see ``run._die_with_parent``).
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Optional

from .spec import SweepError

__all__ = ["sweep_lock", "LOCK_NAME", "lock_owner"]

LOCK_NAME = ".lock"


def lock_owner(root: Path) -> Optional[dict]:
    """What the lock file of ``root`` says about its (last) owner, or None."""
    try:
        data = json.loads((Path(root) / LOCK_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _acquire(path: Path) -> Optional[int]:
    """An fd holding the lock on the file now at ``path``, or None if another process holds it."""
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as e:
            raise SweepError(f"--out: cannot create the lock file {path} ({e.strerror or e}) (accepted: a directory you can write to)") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        # the previous owner may have unlinked the file between our open and flock: then
        # we hold a lock on a name nobody else sees; open the current file again
        try:
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            return fd
        os.close(fd)


@contextmanager
def sweep_lock(root: Path, wait: bool = False, poll_s: float = 0.25, timeout_s: Optional[float] = None) -> Iterator[None]:
    """Holds ``root/.lock`` for the block. A live owner makes this raise
    :class:`SweepError` naming it, or, with ``wait``, poll until it is gone."""
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise SweepError(f"--out: cannot create {root} ({e.strerror or e}) (accepted: a directory you can write to)") from None
    path = root / LOCK_NAME
    t0 = time.monotonic()
    while (fd := _acquire(path)) is None:
        if not wait or (timeout_s is not None and time.monotonic() - t0 > timeout_s):
            owner = lock_owner(root) or {}
            who = f"pid {owner.get('pid', '?')} on {owner.get('host', '?')} since {owner.get('since', '?')}"
            raise SweepError(
                f"--out: {root} is in use by another sweep ({who}) (accepted: --wait to wait for it, or another --out)"
            )
        time.sleep(poll_s)
    me = {"pid": os.getpid(), "host": socket.gethostname(), "since": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    os.ftruncate(fd, 0)
    os.pwrite(fd, json.dumps(me).encode(), 0)
    try:
        yield
    finally:
        try:
            path.unlink()  # while still holding it: a waiter that opened it retries (above)
        except FileNotFoundError:
            pass
        os.close(fd)
