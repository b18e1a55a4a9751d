"""``ccbench query SWEEP_DIR "SQL"``: SQL (DuckDB) on a sweep's results."""

from __future__ import annotations

import math
from pathlib import Path

import typer

from ccbench.sweep.spec import SweepError

FORMATS = ("table", "csv", "json")


def query_cmd(
    sweep_dir: Path = typer.Argument(..., help="A sweep directory written by `ccbench sweep`.", show_default=False),
    sql: str = typer.Argument(
        "SELECT * FROM runs", help="SQL. Views: summary (a row per point and flow), runs (a row per point), "
        "packets, flows, queue, drops, cwnd (every point's tables, with a `point` column).",
    ),
    fmt: str = typer.Option("table", "--format", "-f", help="table (rich), csv or json."),
    limit: int = typer.Option(200, "--limit", "-n", help="Rows to print in table format (0 = all)."),
    unsafe: bool = typer.Option(
        False, "--unsafe", help="Let the SQL read and write any file DuckDB can (COPY ... TO, read_csv, ATTACH). "
        "Default: only the sweep's own tables, nothing written.",
    ),
) -> None:
    """Query a sweep with SQL (DuckDB). Swept parameters are columns named by their
    dotted path: quote them, e.g.

      ccbench query runs/droprules 'SELECT "topology.bottleneck.queue.rule" AS rule, flow,
      median(loss_rate) FROM summary GROUP BY ALL ORDER BY ALL'

    The SQL sees only the sweep's tables: reading or writing other files
    (read_csv, COPY ... TO, ATTACH) is refused unless --unsafe. Points whose files
    are damaged are left out with a warning (re-run the sweep to repair them).
    """
    if fmt not in FORMATS:
        raise SweepError(f"--format: {fmt!r} is not accepted (accepted: {', '.join(FORMATS)})")
    import duckdb

    from ccbench.sweep import connect

    if limit < 0:
        raise SweepError(f"--limit: {limit} is not accepted (accepted: a number of rows >= 0; 0 = all)")
    con = connect(sweep_dir, unsafe=unsafe)
    try:
        df = con.sql(sql).df() if sql.strip() else None
    except duckdb.Error as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise SweepError(f"SQL: {first}") from None
    if df is None:
        raise SweepError("SQL: the query is empty")
    if fmt == "csv":
        typer.echo(df.to_csv(index=False), nl=False)
        return
    if fmt == "json":
        typer.echo(df.to_json(orient="records", indent=1))
        return
    from rich.table import Table

    from ccbench.cli.progress import output_console

    t = Table(title=f"{sweep_dir}: {len(df)} rows", title_justify="left")
    for c in df.columns:
        numeric = df[c].dtype.kind in "iuf"
        t.add_column(str(c), justify="right" if numeric else "left", overflow="fold")
    shown = df if not limit else df.head(limit)
    for row in shown.itertuples(index=False):
        t.add_row(*[_cell(v) for v in row])
    if limit and len(df) > limit:
        t.caption = f"first {limit} of {len(df)} rows (--limit 0 for all, --format csv for a file)"
    output_console().print(t)


def _cell(v) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        if math.isnan(v):
            return ""
        return f"{v:.6g}"
    try:
        import pandas as pd

        if v is pd.NA or v is pd.NaT:
            return ""
    except ImportError:  # pragma: no cover
        pass
    return str(v)


def register(app: typer.Typer) -> None:
    app.command("query")(query_cmd)
