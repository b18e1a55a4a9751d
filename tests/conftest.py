"""Shared pytest fixtures."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def has_core() -> bool:
    try:
        from ccbench import _core  # noqa: F401
    except ImportError:
        return False
    return True


needs_core = pytest.mark.skipif(not has_core(), reason="simulator extension not built (run `make setup`)")


@pytest.fixture
def ccbench_cli():
    """Runs the ccbench CLI in a subprocess, as a user would; returns CompletedProcess."""

    def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
        env = dict(os.environ, COLUMNS="200")
        return subprocess.run(
            [sys.executable, "-m", "ccbench", *args], capture_output=True, text=True, cwd=cwd or ROOT, env=env, timeout=300
        )

    return run
