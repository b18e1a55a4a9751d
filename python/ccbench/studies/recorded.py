"""Reading a study's recorded result table for the notes of ``docs/REPRODUCTIONS.md``."""

from __future__ import annotations

from pathlib import Path

import pandas as pd


def read_recorded(path: Path) -> pd.DataFrame | None:
    """The CSV at ``path``, or None when that study has not been recorded there."""
    return pd.read_csv(path) if path.is_file() else None
