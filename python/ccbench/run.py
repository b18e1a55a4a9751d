"""A finished run: its tables, its metadata, and how it is saved and loaded.

Every backend (simulator, emulator) returns a :class:`Run` with the same tables
(see DESIGN.md, "Run tables"). Times are float seconds from the run start; a value a
backend cannot know is NaN.
"""

from __future__ import annotations

import json
import platform
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ccbench import __version__

TABLES = ("packets", "flows", "cwnd", "queue", "drops")

CA_STATES = ("open", "disorder", "cwr", "recovery", "loss")


@dataclass
class Run:
    """Tables of one run plus the metadata needed to reproduce it."""

    packets: pd.DataFrame
    flows: pd.DataFrame
    cwnd: pd.DataFrame
    queue: pd.DataFrame
    drops: pd.DataFrame
    meta: dict[str, Any] = field(default_factory=dict)

    # ---- persistence ---------------------------------------------------------------
    def save(self, directory: str | Path) -> Path:
        """Writes one Parquet file per table and ``meta.json`` into ``directory``."""
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        for name in TABLES:
            getattr(self, name).to_parquet(out / f"{name}.parquet", index=False)
        (out / "meta.json").write_text(json.dumps(self.meta, indent=2, default=str))
        return out

    @classmethod
    def load(cls, directory: str | Path) -> "Run":
        """Reads a run written by :meth:`save`."""
        src = Path(directory)
        meta_path = src / "meta.json"
        if not meta_path.exists():
            raise FileNotFoundError(f"{src} is not a ccbench run directory (no meta.json)")
        tables = {name: pd.read_parquet(src / f"{name}.parquet") for name in TABLES}
        return cls(meta=json.loads(meta_path.read_text()), **tables)

    # ---- views ---------------------------------------------------------------------
    def summary(self) -> pd.DataFrame:
        """Per-flow table: goodput, loss, delay percentiles (what ``ccbench run`` prints)."""
        cols = [
            "flow", "transport", "cc", "goodput_bps", "loss_rate", "retrans_bytes",
            "rtt_p50_s", "delay_p50_s", "delay_p95_s", "delay_p99_s", "delay_max_s",
        ]
        return self.flows[[c for c in cols if c in self.flows.columns]]

    @property
    def plot(self):
        """Plot helpers bound to this run (``run.plot.delay_ccdf()`` and friends)."""
        from ccbench.plots import RunPlots

        return RunPlots(self)


def versions() -> dict[str, str]:
    """Versions recorded with every run."""
    import pydantic

    return {
        "ccbench": __version__,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "pandas": pd.__version__,
        "pydantic": pydantic.__version__,
        "platform": platform.platform(),
    }


def delay_stats(packets: pd.DataFrame, flows: list[str]) -> pd.DataFrame:
    """Delay percentiles (t_deliver - t_write) per flow, over delivered messages."""
    delay = packets["t_deliver"] - packets["t_write"]
    rows = []
    for name in flows:
        d = delay[(packets["flow"] == name).to_numpy()].dropna().to_numpy()
        if d.size:
            p50, p95, p99 = np.percentile(d, [50, 95, 99])
            rows.append((name, p50, p95, p99, d.max()))
        else:
            rows.append((name, np.nan, np.nan, np.nan, np.nan))
    return pd.DataFrame(rows, columns=["flow", "delay_p50_s", "delay_p95_s", "delay_p99_s", "delay_max_s"])
