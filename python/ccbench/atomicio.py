"""Files that are either whole or absent: write to a temporary name, fsync, rename.

A crash (SIGKILL, power loss, a full disk) while a run table is being written must not
leave a truncated Parquet file under the final name, where a later resume would take it
for a finished point and a query would read it. POSIX ``rename(2)`` replaces the target
atomically; the ``fsync`` of the file before the rename and of the directory after it
make the new name durable in that order (the pattern of ext4's ``auto_da_alloc`` notes
and of SQLite's journal, "Atomic Commit In SQLite" §3). Each write returns the SHA-256
of the bytes it made durable, so readers can tell a damaged file later.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Callable

__all__ = ["write_atomic", "write_text_atomic", "sha256_file", "fsync_dir", "OutputPathError", "check_out_dir", "check_out_file"]

_CHUNK = 1 << 20


def sha256_file(path: str | os.PathLike) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def fsync_dir(path: str | os.PathLike) -> None:
    """Makes a rename inside ``path`` durable (a no-op where directories cannot be opened)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:  # pragma: no cover - not POSIX
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover - some filesystems refuse fsync on directories
        pass
    finally:
        os.close(fd)


def write_atomic(path: str | os.PathLike, write: Callable[[Path], None], sync_dir: bool = True) -> dict:
    """Calls ``write(tmp)`` to fill a temporary file beside ``path``, fsyncs it, renames it
    to ``path`` and returns ``{"sha256": ..., "bytes": ...}`` of its content.

    On any error (or KeyboardInterrupt) the temporary file is removed and ``path`` is
    left as it was."""
    target = Path(path)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        write(tmp)
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        info = {"sha256": sha256_file(tmp), "bytes": os.path.getsize(tmp)}
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    if sync_dir:
        fsync_dir(target.parent)
    return info


def write_text_atomic(path: str | os.PathLike, text: str, sync_dir: bool = True) -> dict:
    return write_atomic(path, lambda p: p.write_text(text, encoding="utf-8"), sync_dir=sync_dir)


# --- where output may go -----------------------------------------------------------------------


class OutputPathError(ValueError):
    """An ``--out`` that cannot be written: one line naming the option and the path."""


def check_out_dir(path: str | os.PathLike, option: str = "--out") -> None:
    """``path`` must be a directory, or a path whose nearest existing parent is a
    writable directory (where it can be created). Checked before the work, not after."""
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise OutputPathError(f"{option}: {p} is a file (accepted: a directory, or a path to create one at)")
    anc = p
    while not anc.exists() and anc != anc.parent:
        anc = anc.parent
    if not anc.is_dir():
        raise OutputPathError(f"{option}: {anc} is a file, so {p} cannot be created (accepted: a path under a directory)")
    if not os.access(anc, os.W_OK | os.X_OK):
        raise OutputPathError(f"{option}: {anc} is not writable (accepted: a directory you can write to)")


def check_out_file(path: str | os.PathLike, option: str = "--out") -> list[Path]:
    """``path`` must name a file (not a directory) whose directory exists or can be
    created under a writable directory. Returns the directories that writing it needs
    created, outermost first (the caller creates them just before writing, and removes
    them again if writing fails: nothing is left that the user did not name)."""
    p = Path(path)
    if p.is_dir():
        raise OutputPathError(f"{option}: {p} is a directory (accepted: a file name, e.g. {p / 'report.html'})")
    missing: list[Path] = []
    anc = p.parent
    while not anc.exists() and anc != anc.parent:
        missing.append(anc)
        anc = anc.parent
    if not anc.is_dir():
        raise OutputPathError(f"{option}: {anc} is a file, so {p} cannot be written (accepted: a file under a directory)")
    if not os.access(anc, os.W_OK | os.X_OK):
        raise OutputPathError(f"{option}: {anc} is not writable (accepted: a file in a directory you can write to)")
    return list(reversed(missing))
