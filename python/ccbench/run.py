"""A finished run: its tables, its metadata, and how it is saved and loaded.

Every backend (simulator, emulator) returns a :class:`Run` with the same tables
(see DESIGN.md, "Run tables"). Times are float seconds from the run start; a value a
backend cannot know is NaN.
"""

from __future__ import annotations

import json
import os
import platform
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ccbench import __version__
from ccbench.parquet_chunks import CA_STATES  # noqa: F401 - part of the Run schema (streamed chunks need it without pandas)
from ccbench.parquet_chunks import CATEGORIES_KEY as _CATEGORIES_KEY

TABLES = ("packets", "flows", "cwnd", "queue", "drops")


class RunFileError(ValueError):
    """A run directory whose files are damaged: one line naming the file."""


@dataclass(repr=False)
class Run:
    """Tables of one run plus the metadata needed to reproduce it.

    ``repr(run)`` is one short line (backend, seed, flows with goodput and p95 delay);
    in a notebook the run shows as its per-flow summary table (``_repr_html_``).
    ``run.save(DIR)`` and :func:`load_run` (``Run.load``) round-trip every table and
    the metadata.
    """

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
        self.save_files(out)
        return out

    def save_files(self, directory: str | Path) -> dict[str, dict[str, Any]]:
        """Like :meth:`save`, each file written atomically (temporary name, fsync, rename);
        returns ``{file name: {"sha256": ..., "bytes": ...}}`` of what was written."""
        from ccbench.atomicio import fsync_dir, sha256_file, write_atomic, write_text_atomic

        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        files: dict[str, dict[str, Any]] = {}
        unread = self.__dict__.get("_unread", {})
        for name in TABLES:
            dest = out / f"{name}.parquet"
            if name in unread:
                # Streamed during the run (or not read since load): copy the file, not
                # re-read it; a file streamed to its final place is only made durable.
                src = Path(unread[name])
                if src.resolve() == dest.resolve():
                    with open(dest, "rb+") as f:
                        os.fsync(f.fileno())
                    files[f"{name}.parquet"] = {"sha256": sha256_file(dest), "bytes": dest.stat().st_size}
                else:
                    import shutil

                    files[f"{name}.parquet"] = write_atomic(dest, lambda p, s=src: shutil.copyfile(s, p), sync_dir=False)
                continue
            table = getattr(self, name)
            files[f"{name}.parquet"] = write_atomic(dest, lambda p, t=table: _write_table(t, p), sync_dir=False)
        files["meta.json"] = write_text_atomic(out / "meta.json", json.dumps(self.meta, indent=2, default=str), sync_dir=False)
        fsync_dir(out)  # the renames above, once
        return files

    @classmethod
    def load(cls, directory: str | Path) -> "Run":
        """Reads a run written by :meth:`save` (also :func:`ccbench.load_run`). Tables are read lazily, each on first
        use: a large run's ``flows`` can be looked at without reading its ``cwnd``."""
        src = Path(directory)
        meta_path = src / "meta.json"
        if not meta_path.exists():
            raise FileNotFoundError(f"{src} is not a ccbench run directory (no meta.json)")
        run = cls.__new__(cls)
        try:
            run.meta = json.loads(meta_path.read_text())
        except (OSError, ValueError) as e:
            raise RunFileError(f"{meta_path}: is not readable JSON ({e})") from None
        run._unread = {name: src / f"{name}.parquet" for name in TABLES}
        return run

    def __getattr__(self, name: str):
        # Called only for attributes not set: the tables `load` has not read yet.
        unread = self.__dict__.get("_unread")
        if unread is not None and name in unread:
            f = unread[name]
            try:
                table = _read_table(f)
            except FileNotFoundError:
                raise RunFileError(f"{f}: is missing (accepted: a run directory as `ccbench run` saves it)") from None
            except Exception as e:  # noqa: BLE001 - pyarrow raises several kinds for a damaged file
                first = (str(e).strip().splitlines() or [type(e).__name__])[0]
                raise RunFileError(f"{f}: is not a readable Parquet table ({first})") from None
            unread.pop(name)
            setattr(self, name, table)
            return table
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    # ---- views ---------------------------------------------------------------------
    def summary(self) -> pd.DataFrame:
        """Per-flow table: goodput, loss, delay percentiles (what ``ccbench run`` prints)."""
        cols = [
            "flow", "transport", "cc", "goodput_bps", "loss_rate", "retrans_bytes",
            "rtt_p50_s", "delay_p50_s", "delay_p95_s", "delay_p99_s", "delay_max_s",
        ]
        return self.flows[[c for c in cols if c in self.flows.columns]]

    def _headline(self) -> str:
        m = self.meta
        parts = [str(m.get("backend", "run"))]
        if "seed" in m:
            parts.append(f"seed {m['seed']}")
        duration = (m.get("sim_config") or {}).get("duration_ns")
        if duration:
            from ccbench.scenario.units import format_duration

            parts.append(format_duration(duration))
        parts.append(f"{len(self.flows)} flows, {len(self.packets):,} messages")
        return ", ".join(parts)

    def _flow_cells(self) -> list[tuple[str, str, str]]:
        """(flow, goodput, p95 delay) as printed by ``ccbench run``."""
        from ccbench.fmt import fmt_rate, fmt_time

        rows = []
        for r in self.flows.itertuples(index=False):
            p95 = getattr(r, "delay_p95_s", float("nan"))
            rows.append((str(r.flow), fmt_rate(r.goodput_bps), fmt_time(p95)))
        return rows

    def __repr__(self) -> str:
        cells = self._flow_cells()
        shown = "; ".join(f"{f} {g}" + (f" p95 {d}" if d != "-" else "") for f, g, d in cells[:4])
        more = f"; +{len(cells) - 4} more" if len(cells) > 4 else ""
        return f"<Run {self._headline()}: {shown}{more}>"

    def _repr_html_(self) -> str:
        import html

        from ccbench.fmt import fmt_pct, fmt_rate, fmt_time

        table = pd.DataFrame(
            {
                "flow": self.flows["flow"].astype(str),
                "transport": self.flows.get("transport", pd.Series([""] * len(self.flows))).astype(str),
                "cc": self.flows.get("cc", pd.Series([""] * len(self.flows))).astype(str),
                "goodput": [fmt_rate(v) for v in self.flows["goodput_bps"]],
                "loss": [fmt_pct(v) for v in self.flows["loss_rate"]],
                **{
                    f"delay {q}": [fmt_time(v, unit="ms") for v in self.flows[f"delay_{q}_s"]]
                    for q in ("p50", "p95", "p99", "max")
                    if f"delay_{q}_s" in self.flows
                },
            }
        )
        return f"<p><b>Run</b> {html.escape(self._headline())}</p>" + table.to_html(index=False, escape=True)

    @property
    def plot(self):
        """Plot helpers bound to this run (``run.plot.delay_ccdf()`` and friends)."""
        from ccbench.plots import RunPlots

        return RunPlots(self)


def _write_table(df: pd.DataFrame, path: Path) -> None:
    """Parquet, plus the categories of categorical columns in the file's metadata: an
    empty table (no drops) would otherwise come back with no flow or link names."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(_arrow_table(df), path)


def _arrow_table(df: pd.DataFrame):
    """``df`` as an Arrow table carrying its categorical columns' categories."""
    import pyarrow as pa

    cats = {c: [str(x) for x in df[c].cat.categories] for c in df.columns if isinstance(df[c].dtype, pd.CategoricalDtype)}
    table = pa.Table.from_pandas(df, preserve_index=False)
    meta = dict(table.schema.metadata or {})
    meta[_CATEGORIES_KEY] = json.dumps(cats).encode()
    return table.replace_schema_metadata(meta)


def _read_table(path: Path) -> pd.DataFrame:
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    df = table.to_pandas()
    cats = json.loads((table.schema.metadata or {}).get(_CATEGORIES_KEY, b"{}"))
    for col, categories in cats.items():
        if col in df:
            values = df[col].astype(object) if len(df) else df[col]
            df[col] = pd.Categorical(values, categories=pd.Index(categories, dtype=pd.Index(["x"]).dtype))
    return df


def load_run(directory: str | Path) -> Run:
    """Reads a run saved by :meth:`Run.save` or ``ccbench run --out DIR``."""
    return Run.load(directory)


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
    """Delay percentiles (t_deliver - t_write) per flow, over delivered messages.

    One sort for all flows (by flow, then delay) instead of one mask per flow: linear
    in rows and flows up to the sort. Percentiles interpolate linearly between the
    two nearest ranks exactly as ``np.percentile`` does (same index formula, same
    two-sided lerp), so the values are bit for bit those of a per-flow call.
    """
    delay = (packets["t_deliver"] - packets["t_write"]).to_numpy(dtype=float)
    col = packets["flow"]
    if isinstance(col.dtype, pd.CategoricalDtype) and list(col.cat.categories) == list(flows):
        codes = col.cat.codes.to_numpy()
    else:
        codes = pd.Categorical(col, categories=flows).codes
    ok = (codes >= 0) & ~np.isnan(delay)
    c, d = codes[ok].astype(np.int64), delay[ok]
    order = np.lexsort((d, c))
    c, d = c[order], d[order]
    n = np.bincount(c, minlength=len(flows)).astype(np.int64)
    start = np.cumsum(n) - n
    has = n > 0
    out = {"flow": list(flows)}
    for name, q in (("delay_p50_s", 0.5), ("delay_p95_s", 0.95), ("delay_p99_s", 0.99)):
        out[name] = np.full(len(flows), np.nan)
        # numpy's `_compute_virtual_index` for method "linear" (alpha = beta = 1).
        virtual = n[has] * q + (1 + q * (1 - 1 - 1)) - 1
        prev = np.floor(virtual)
        gamma = virtual - prev
        lo = start[has] + np.clip(prev.astype(np.int64), 0, n[has] - 1)
        hi = start[has] + np.clip(prev.astype(np.int64) + 1, 0, n[has] - 1)
        a, b = d[lo], d[hi]
        diff = b - a
        out[name][has] = np.where(gamma >= 0.5, b - diff * (1 - gamma), a + diff * gamma)
    out["delay_max_s"] = np.full(len(flows), np.nan)
    out["delay_max_s"][has] = d[start[has] + n[has] - 1]
    return pd.DataFrame(out)
