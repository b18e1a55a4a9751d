"""The results store of a sweep: one directory, one Parquet summary, one folder per point.

::

    SWEEP_DIR/
      sweep.json            the sweep (grid, zip, seeds, backend, base scenario, its hash)
      sweep.toml            the same as a self-contained sweep file (inline scenario)
      summary.parquet       one row per (point, flow); one row per failed point
      runs/<id>/            one folder per point (id = hash of the values and the seed)
        summary.json        the point's record: values, seed, status, error, flow rows and
                            the size and SHA-256 of every file below ("files").
                            Written last and atomically: it is the "done" marker.
        packets.parquet ... the run tables (Run.save_files), for points that ran; each
        meta.json           written atomically (temporary name, fsync, rename)
      .lock                 held by the running sweep (see lock.py)

A point whose files are missing, truncated or fail their checksum is *damaged*, and
one computed by another engine (another simulator build, another kernel: see
:mod:`ccbench.sweep.engine`) is *stale*: a resumed sweep runs either again, and ``summary`` / ``connect`` (``ccbench query``,
``ccbench report``) leave it out with one warning naming it and the file.

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
import sys
from pathlib import Path
from typing import Any, Iterable, Optional

import numpy as np
import pandas as pd

from ccbench.atomicio import OutputPathError, sha256_file, write_atomic, write_text_atomic
from ccbench.atomicio import check_out_dir as _check_out_dir

from .spec import SweepError, SweepSpec, si_column

__all__ = ["SweepStore", "load_summary", "connect", "is_sweep_dir", "flow_rows", "RUN_TABLES", "check_out_dir"]

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
    write_text_atomic(path, text)


def check_files(d: Path, files: dict[str, Any]) -> Optional[str]:
    """Why the files recorded in a point's record are not intact in ``d``, or None."""
    for name, info in sorted(files.items()):
        f = d / name
        try:
            size = f.stat().st_size
        except OSError:
            return f"{name} is missing"
        want = info.get("bytes") if isinstance(info, dict) else None
        if isinstance(want, int) and size != want:
            return f"{name} is {'truncated' if size < want else 'longer than written'} ({size} of {want} bytes)"
        digest = info.get("sha256") if isinstance(info, dict) else None
        if digest is not None:
            try:
                if sha256_file(f) != digest:
                    return f"{name} fails its SHA-256 checksum"
            except OSError as e:
                return f"{name} cannot be read ({e.strerror or e})"
    return None


def check_out_dir(path: Path, option: str) -> None:
    """:func:`ccbench.atomicio.check_out_dir` as a :class:`SweepError`."""
    try:
        _check_out_dir(path, option)
    except OutputPathError as e:
        raise SweepError(str(e)) from None


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
        try:
            meta = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise SweepError(f"{p}: is damaged ({e}) (accepted: the sweep.json `ccbench sweep` wrote; delete the directory to start over)") from None
        if not isinstance(meta, dict):
            raise SweepError(f"{p}: is not a sweep description (accepted: the sweep.json `ccbench sweep` wrote)")
        return meta

    def check_out_dir(self) -> None:
        """``--out`` must be a directory, or a path whose nearest existing parent is a
        writable directory (where the sweep can create it)."""
        check_out_dir(self.root, "--out")

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
        check_out_dir(self.root, "--out")
        try:
            self.runs_dir.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise SweepError(f"--out: cannot create {self.runs_dir} ({e.strerror or e})") from None
        _atomic_write_text(self.root / "sweep.json", json.dumps(spec.to_dict(), indent=2, default=str))
        _atomic_write_text(self.root / "sweep.toml", spec.dumps())

    # --- points -----------------------------------------------------------------------------------
    def read_point(self, pid: str) -> Optional[dict[str, Any]]:
        p = self.point_dir(pid) / DONE
        if not p.exists():
            return None
        try:
            rec = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None  # a torn or damaged record: the point runs again
        return rec if isinstance(rec, dict) and rec.get("point") == pid else None

    def status(self, pid: str) -> Optional[str]:
        rec = self.read_point(pid)
        return None if rec is None else rec.get("status")

    def damage(self, pid: str, rec: Optional[dict[str, Any]] = None) -> Optional[str]:
        """Why a finished point cannot be trusted (its record unreadable, a run table
        missing, truncated or failing its checksum), or None if it is intact."""
        d = self.point_dir(pid)
        rec = rec if rec is not None else self.read_point(pid)
        if rec is None:
            return f"{DONE} is missing or unreadable" if d.is_dir() else "its folder is missing"
        files = rec.get("files")
        if isinstance(files, dict):
            return check_files(d, files)
        if rec.get("run_dir"):  # a record from before checksums: the tables must at least exist
            missing = [f"{t}.parquet" for t in RUN_TABLES if not (d / f"{t}.parquet").exists()]
            return f"{missing[0]} is missing" if missing else None
        return None

    def write_point(self, record: dict[str, Any], run=None) -> Path:
        """Saves the run tables (if any, each atomically), then the record with their
        checksums (the done marker), atomically."""
        d = self.point_dir(record["point"])
        d.mkdir(parents=True, exist_ok=True)
        old = d / DONE
        if old.exists():
            old.unlink()  # the point is being rewritten: not done until the new record lands
        files = run.save_files(d) if run is not None else None
        record = dict(record, run_dir=f"runs/{record['point']}" if run is not None or (d / "meta.json").exists() else None)
        if files is not None:
            record["files"] = files
        _atomic_write_text(d / DONE, json.dumps(record, indent=1, default=_json_default))
        return d

    # --- integrity ---------------------------------------------------------------------------------
    def point_ids(self) -> list[str]:
        return sorted(p.name for p in self.runs_dir.iterdir() if p.is_dir()) if self.runs_dir.exists() else []

    def damaged(self, ids: Optional[Iterable[str]] = None, warn: bool = True) -> dict[str, str]:
        """``{point: why}`` for every damaged point among ``ids`` (default: every point
        folder with a record). With ``warn``, one line on stderr per damaged point."""
        out: dict[str, str] = {}
        for pid in (ids if ids is not None else self.point_ids()):
            d = self.point_dir(pid)
            if not d.is_dir() and ids is None:
                continue
            if ids is None and not (d / DONE).exists():
                continue  # not done yet (or being run): not damaged
            why = self.damage(pid)
            if why:
                out[pid] = why
        if warn:
            for pid, why in out.items():
                _warn_once(self.root, pid, why)
        return out

    # --- summary -----------------------------------------------------------------------------------
    def records(self, ids: Optional[Iterable[str]] = None) -> list[dict[str, Any]]:
        if ids is None:
            ids = self.point_ids()
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
        write_atomic(self.summary_path, lambda p: df.to_parquet(p, index=False))
        return df

    def summary(self, skip_damaged: bool = True) -> pd.DataFrame:
        """The summary table; with ``skip_damaged`` (default) without the rows of damaged
        points (one warning each on stderr)."""
        if not self.summary_path.exists():
            if not self.runs_dir.exists():
                raise SweepError(f"{self.root}: is not a sweep directory (no {SUMMARY}, no runs/)")
            df = self.consolidate()
        else:
            try:
                df = pd.read_parquet(self.summary_path)
            except Exception as e:  # noqa: BLE001 - pyarrow raises several kinds for damaged files
                if not self.runs_dir.exists():
                    raise SweepError(f"{self.summary_path}: is damaged ({type(e).__name__}) and there is no runs/ to rebuild it from") from None
                print(f"warning: {self.summary_path} is damaged ({type(e).__name__}); rebuilt from the points' records", file=sys.stderr)
                df = self.consolidate()
        if skip_damaged and "point" in df.columns and self.runs_dir.exists():
            bad = self.damaged(sorted(set(df["point"].dropna().astype(str))))
            if bad:
                df = df[~df["point"].isin(list(bad))].reset_index(drop=True)
        return df

    def connect(self, database: str = ":memory:", unsafe: bool = False):
        """A DuckDB connection with the views ``summary``, ``runs`` and the run tables.

        Read-only by default: the views read this sweep's intact files through Arrow
        datasets registered with the connection, then DuckDB's own file access is
        switched off and the configuration locked (``enable_external_access = false``,
        ``lock_configuration = true``), so SQL can neither read another file
        (``read_csv('/etc/passwd')``) nor write one (``COPY ... TO``), attach a database
        or install an extension. ``unsafe=True`` leaves DuckDB as it comes.
        """
        import duckdb

        df = self.summary()  # builds summary.parquet if only the point folders exist; warns of damage
        good = sorted(set(df["point"].dropna().astype(str))) if "point" in df.columns else []
        con = duckdb.connect(database)
        con.register("_ccbench_summary", df)
        con.execute("CREATE VIEW summary AS SELECT * FROM _ccbench_summary")
        meta = self.read_meta() or {}
        have = list(df.columns)
        params = [c for p in meta.get("parameters", []) for c in have if c == p or c.startswith(f"{p} (")]
        cols = ["point", *params, "seed", "backend", "status", "error", *TAIL_COLUMNS]
        sel = ", ".join('"' + c.replace('"', '""') + '"' for c in cols if c in have)
        con.execute(f"CREATE VIEW runs AS SELECT DISTINCT ON (point) {sel} FROM summary ORDER BY point")
        for table in RUN_TABLES:
            # the intact points' files by name (not a glob: a damaged or half-written
            # point's file must not be read)
            files = [self.point_dir(pid) / f"{table}.parquet" for pid in good]
            data = _dataset([f for f in files if f.exists()], self.runs_dir)
            if data is None:
                continue
            con.register(f"_ccbench_{table}", data)
            con.execute(f"CREATE VIEW {table} AS SELECT point, * EXCLUDE (point) FROM _ccbench_{table}")
        if not unsafe:
            con.execute("SET enable_external_access = false")
            try:
                con.execute("SET python_enable_replacements = false")  # no scans of Python variables by name
            except duckdb.Error:  # pragma: no cover - older DuckDB
                pass
            con.execute("SET lock_configuration = true")
        return con


def _dataset(files: list[Path], runs_dir: Path):
    """An Arrow dataset over ``files`` (``runs/<point>/<table>.parquet``) with a ``point``
    column from the folder name; schemas unified by column name (a column missing from
    a point's file is null there, as DuckDB's ``union_by_name``)."""
    if not files:
        return None
    import pyarrow as pa
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq

    schema = pa.unify_schemas([pq.read_schema(f).remove_metadata() for f in files], promote_options="permissive")
    part = pa.schema([("point", pa.string())])
    for name in part.names:
        if name in schema.names:
            schema = schema.remove(schema.get_field_index(name))
    return ds.dataset(
        [str(f) for f in files], format="parquet", schema=schema.append(part.field("point")),
        partitioning=ds.partitioning(part), partition_base_dir=str(runs_dir),
    )


_WARNED: set[tuple[str, str]] = set()


def _warn_once(root: Path, pid: str, why: str) -> None:
    key = (str(Path(root).resolve()), pid)
    if key in _WARNED:
        return
    _WARNED.add(key)
    print(f"warning: {root}: point {pid} skipped: {why} (run the sweep again to repair it)", file=sys.stderr)


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


def connect(sweep_dir: str | Path, database: str = ":memory:", unsafe: bool = False):
    """A DuckDB connection on a sweep directory (views ``summary``, ``runs``, run tables);
    read-only unless ``unsafe`` (see :meth:`SweepStore.connect`)."""
    root = Path(sweep_dir)
    if not root.exists():
        raise FileNotFoundError(2, "No such file or directory", str(root))
    if not is_sweep_dir(root):
        raise SweepError(f"{root}: is not a sweep directory (no sweep.json or {SUMMARY}; make one with `ccbench sweep`)")
    return SweepStore(root).connect(database, unsafe=unsafe)
