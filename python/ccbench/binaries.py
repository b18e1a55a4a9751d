"""Locating the project's helper binaries (``ccemu``, ``ccprobe``)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

#: The repository root when running from a checkout (python/ccbench/binaries.py).
REPO = Path(__file__).resolve().parents[2]


def find_binary(name: str, error: type[Exception]) -> Path:
    """``$CCBENCH_<NAME>``, else ``target/release/<name>`` of this repository, else
    ``<name>`` on PATH; raises ``error`` with a one-line message saying how to build it."""
    var = f"CCBENCH_{name.upper()}"
    env = os.environ.get(var)
    if env:
        p = Path(env)
        if not (p.is_file() and os.access(p, os.X_OK)):
            raise error(f"{var}={env} is not an executable file")
        return p
    p = REPO / "target" / "release" / name
    if p.is_file() and os.access(p, os.X_OK):
        return p
    w = shutil.which(name)
    if w:
        return Path(w)
    raise error(
        f"the {name} binary was not found (looked at ${var}, {p} and PATH); "
        f"build it with `cargo build --release -p {name}`"
    )
