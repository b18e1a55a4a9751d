"""The results store of a sweep: one directory, one Parquet summary, one folder per point.

::

    SWEEP_DIR/
      sweep.json            the sweep (grid, zip, seeds, backend, base scenario, its hash)
      sweep.toml            the same as a self-contained sweep file (inline scenario)
      summary.parquet       one row per (point, flow); one row per failed point
      runs/<id>/            one folder per point (id = hash of the values and the seed)
        summary.json        the point's record: values, seed, status, error, flow rows.
                            Written last and atomically: it is the "done" marker.
        packets.parquet ... the run tables (Run.save), for points that ran
        meta.json

Columns of ``summary.parquet``: ``point``, one column per swept parameter named by its
dotted path as written in the sweep file (``topology.bottleneck.queue.limit``), each
unit-string parameter followed by its value in SI units (seconds, bit/s, bytes,
packets) in ``<path> (<unit>)`` (``topology.bottleneck.queue.limit (B)``), then
``seed``, ``backend``, ``status`` (``ok`` or ``error``), ``error`` (the message, or
null), ``flow`` and the run's flow-table columns (``goodput_bps``, ``loss_rate``,
``delay_p50_s`` ... ``delay_max_s``, ``rtt_p50_s``, ``rtt_p95_s``, ``bytes_sent``, ...),
``wall_s``, ``host`` and ``run_dir`` (relative to SWEEP_DIR).

Query it with pandas (``pd.read_parquet(SWEEP_DIR / "summary.parquet")``), with
:func:`load_summary`, or with DuckDB through :func:`connect`, which exposes the views
``summary``, ``runs`` (one row per point) and, when the points saved them, ``packets``,
``flows``, ``queue``, ``drops`` and ``cwnd`` over every point's tables (each with a
``point`` column). Dotted column names need double quotes in SQL:
``SELECT "topology.bottleneck.queue.limit", avg(loss_rate) FROM summary GROUP BY 1``.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any, Iterable, Optional

import numpy as np
import pandas as pd

from .spec import SweepError, SweepSpec, si_column

__all__ = ["SweepStore", "load_summary", "connect", "is_sweep_dir", "flow_rows", "RUN_TABLES"]

RUN_TABLES = ("packets", "flows", "cwnd", "queue", "drops")
SUMMARY = "summary.parquet"
DONE = "summary.json"
FIXED_COLUMNS = ("point", "seed", "backend", "status", "error", "flow")
TAIL_COLUMNS = ("wall_s", "host", "run_dir")


def _plain(v: Any) -> Any:
    """numpy scalars -> Python; NaN stays a float NaN."""
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, float) and math.isnan(v):
        return float("nan")
    return v


def flow_rows(run) -> list[dict[str, Any]]:
    """The run's flow table as a list of plain dicts (one per flow)."""
    flows = run.flows.copy()
    for c in flows.columns:
        if isinstance(flows[c].dtype, pd.CategoricalDtype):
            flows[c] = flows[c].astype(str)
    return [{k: _plain(v) for k, v in rec.items()} for rec in flows.to_dict("records")]


def _atomic_write_text(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def is_sweep_dir(path: str | Path) -> bool:
    p = Path(path)
    return p.is_dir() and ((p / "sweep.json").exists() or (p / SUMMARY).exists())


class SweepStore:
    """The directory of one sweep."""

    def __init__(self, root: str | Path):
        self.root = Path(root)

    # --- layout ---------------------------------------------------------------------------------
    @property
    def runs_dir(self) -> Path:
        return self.root / "runs"

    @property
    def summary_path(self) -> Path:
        return self.root / SUMMARY

    def point_dir(self, pid: str) -> Path:
        return self.runs_dir / pid

    # --- sweep metadata ---------------------------------------------------------------------------
    def read_meta(self) -> Optional[dict[str, Any]]:
        p = self.root / "sweep.json"
        if not p.exists():
            return None
        return json.loads(p.read_text(encoding="utf-8"))

    def open_for(self, spec: SweepSpec) -> None:
        """Creates the directory for ``spec`` or checks that it holds the same sweep base.

        Points are only comparable (and resumable) under the same base scenario and
        backend: another base in the same directory is an error.
        """
        meta = self.read_meta()
        if meta is not None and meta.get("base_hash") != spec.base_hash():
            raise SweepError(
                f"--out: {self.root} holds a sweep of another base scenario or backend "
                "(accepted: a new output directory, or delete this one to start over)"
            )
        if self.root.exists() and not self.root.is_dir():
            raise SweepError(f"--out: {self.root} is a file (accepted: a directory)")
        self.runs_dir.mkdir(parents=True, exist_ok=True)
        _atomic_write_text(self.root / "sweep.json", json.dumps(spec.to_dict(), indent=2, default=str))
        _atomic_write_text(self.root / "sweep.toml", spec.dumps())

    # --- points -----------------------------------------------------------------------------------
    def read_point(self, pid: str) -> Optional[dict[str, Any]]:
        p = self.point_dir(pid) / DONE
        if not p.exists():
            return None
        try:
            return json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None  # a torn file from a crash: the point runs again

    def status(self, pid: str) -> Optional[str]:
        rec = self.read_point(pid)
        return None if rec is None else rec.get("status")

    def write_point(self, record: dict[str, Any], run=None) -> Path:
        """Saves the run tables (if any), then the record (the done marker), atomically."""
        d = self.point_dir(record["point"])
        d.mkdir(parents=True, exist_ok=True)
        if run is not None:
            run.save(d)
        record = dict(record, run_dir=f"runs/{record['point']}" if run is not None or (d / "meta.json").exists() else None)
        _atomic_write_text(d / DONE, json.dumps(record, indent=1, default=_json_default))
        return d

    # --- summary -----------------------------------------------------------------------------------
    def records(self, ids: Optional[Iterable[str]] = None) -> list[dict[str, Any]]:
        if ids is None:
            ids = sorted(p.name for p in self.runs_dir.iterdir() if p.is_dir()) if self.runs_dir.exists() else []
        out = []
        for pid in ids:
            rec = self.read_point(pid)
            if rec is not None:
                out.append(rec)
        return out

    def consolidate(self, ids: Optional[Iterable[str]] = None, parameters: Optional[list[str]] = None) -> pd.DataFrame:
        """Rebuilds ``summary.parquet`` from the points' records (``ids``: the points of
        the current sweep, in order; default: every point folder) and returns it."""
        meta = self.read_meta() or {}
        params = parameters if parameters is not None else list(meta.get("parameters", []))
        df = summary_frame(self.records(ids), params)
        tmp = self.summary_path.with_name(f".{SUMMARY}.tmp")
        df.to_parquet(tmp, index=False)
        os.replace(tmp, self.summary_path)
        return df

    def summary(self) -> pd.DataFrame:
        if not self.summary_path.exists():
            if self.runs_dir.exists():
                return self.consolidate()
            raise SweepError(f"{self.root}: is not a sweep directory (no {SUMMARY}, no runs/)")
        return pd.read_parquet(self.summary_path)

    def connect(self, database: str = ":memory:"):
        """A DuckDB connection with the views ``summary``, ``runs`` and the run tables."""
        import duckdb

        self.summary()  # builds summary.parquet if only the point folders exist
        con = duckdb.connect(database)
        con.execute(f"CREATE VIEW summary AS SELECT * FROM read_parquet({_sql_str(self.summary_path)})")
        meta = self.read_meta() or {}
        have = list(con.execute("SELECT * FROM summary LIMIT 0").df().columns)
        params = [c for p in meta.get("parameters", []) for c in have if c == p or c.startswith(f"{p} (")]
        cols = ["point", *params, "seed", "backend", "status", "error", *TAIL_COLUMNS]
        sel = ", ".join('"' + c.replace('"', '""') + '"' for c in cols if c in have)
        con.execute(f"CREATE VIEW runs AS SELECT DISTINCT ON (point) {sel} FROM summary ORDER BY point")
        for table in RUN_TABLES:
            files = list(self.runs_dir.glob(f"*/{table}.parquet"))
            if not files:
                continue
            pattern = _sql_str(self.runs_dir / "*" / f"{table}.parquet")
            con.execute(
                f"CREATE VIEW {table} AS SELECT regexp_extract(filename, '([0-9a-f]+)/{table}\\.parquet$', 1) AS point, "
                f"* EXCLUDE (filename) FROM read_parquet({pattern}, filename = true, union_by_name = true)"
            )
        return con


def _json_default(o: Any) -> Any:
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, (Path,)):
        return str(o)
    return str(o)


def _sql_str(p: Path | str) -> str:
    return "'" + str(p).replace("'", "''") + "'"


def _param_column(values: list[Any]) -> pd.Series:
    """A parameter column with one type: numbers, booleans, strings, or JSON text."""
    present = [v for v in values if v is not None]
    if present and all(isinstance(v, bool) for v in present):
        return pd.Series(values, dtype="boolean")
    if present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return pd.Series(values, dtype="Int64")
    if present and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        return pd.Series([float(v) if v is not None else np.nan for v in values], dtype="float64")
    if all(isinstance(v, str) for v in present):
        return pd.Series(values, dtype="object")
    return pd.Series([None if v is None else (v if isinstance(v, str) else json.dumps(v, sort_keys=True)) for v in values], dtype="object")


def summary_frame(records: list[dict[str, Any]], parameters: list[str]) -> pd.DataFrame:
    """Rows of the summary (one per point and flow; one per failed point)."""
    params = list(parameters)
    for rec in records:
        for k in rec.get("values", {}):
            if k not in params:
                params.append(k)
    base_rows: list[dict[str, Any]] = []
    metric_cols: list[str] = []
    for rec in records:
        common = {
            "point": rec["point"],
            **{("param:" + k): rec.get("values", {}).get(k) for k in params},
            "seed": rec.get("seed"),
            "backend": rec.get("backend"),
            "status": rec.get("status"),
            "error": rec.get("error"),
        }
        tail = {"wall_s": rec.get("wall_s"), "host": rec.get("host"), "run_dir": rec.get("run_dir")}
        rows = rec.get("rows") or [{}]
        for r in rows:
            for k in r:
                if k != "flow" and k not in metric_cols:
                    metric_cols.append(k)
            base_rows.append({**common, "flow": r.get("flow"), **{f"metric:{k}": v for k, v in r.items() if k != "flow"}, **tail})
    cols: dict[str, pd.Series] = {}
    n = len(base_rows)
    cols["point"] = pd.Series([r["point"] for r in base_rows], dtype="object")
    for k in params:
        cols[k] = _param_column([r.get("param:" + k) for r in base_rows])
        si = si_column(k, [r.get("param:" + k) for r in base_rows])
        if si is not None:  # "100000B" -> 100000.0 in "<path> (B)": sorts by value
            cols[si[0]] = pd.Series(si[1], dtype="float64")
    cols["seed"] = pd.Series([r["seed"] for r in base_rows], dtype="Int64")
    for k in ("backend", "status", "error", "flow"):
        cols[k] = pd.Series([r.get(k) for r in base_rows], dtype="object")
    for k in metric_cols:
        vals = [r.get(f"metric:{k}") for r in base_rows]
        present = [v for v in vals if v is not None]
        if present and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
            cols[k] = pd.Series([np.nan if v is None else float(v) for v in vals], dtype="float64") if any(
                isinstance(v, float) for v in present
            ) or len(present) < n else pd.Series(vals, dtype="int64")
        else:
            cols[k] = pd.Series([None if v is None else str(v) for v in vals], dtype="object")
    cols["wall_s"] = pd.Series([r.get("wall_s") for r in base_rows], dtype="float64")
    cols["host"] = pd.Series([r.get("host") for r in base_rows], dtype="object")
    cols["run_dir"] = pd.Series([r.get("run_dir") for r in base_rows], dtype="object")
    return pd.DataFrame(cols, index=pd.RangeIndex(n))


def load_summary(sweep_dir: str | Path) -> pd.DataFrame:
    """The summary of a sweep directory as a pandas DataFrame."""
    return SweepStore(sweep_dir).summary()


def connect(sweep_dir: str | Path, database: str = ":memory:"):
    """A DuckDB connection on a sweep directory (views ``summary``, ``runs``, run tables)."""
    root = Path(sweep_dir)
    if not root.exists():
        raise FileNotFoundError(2, "No such file or directory", str(root))
    if not is_sweep_dir(root):
        raise SweepError(f"{root}: is not a sweep directory (no sweep.json or {SUMMARY}; make one with `ccbench sweep`)")
    return SweepStore(root).connect(database)
