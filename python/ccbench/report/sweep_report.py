"""The HTML report of a sweep: status, a summary table (median over seeds) and one
figure per (metric, swept parameter): the metric's median with min-max error bars over
the seeds, against the parameter's values, one line per combination of the other
parameters, one panel per flow (as Stewart et al. plot their results)."""

from __future__ import annotations

import itertools
import json
import math
import time
from pathlib import Path
from typing import Any, Optional

import numpy as np
import pandas as pd

from . import html as H

# metric -> (label, scale, unit)
METRICS: dict[str, tuple[str, float, str]] = {
    "goodput_bps": ("goodput", 1e-6, "Mbit/s"),
    "loss_rate": ("loss rate", 100.0, "%"),
    "delay_p50_s": ("median delay", 1e3, "ms"),
    "delay_p95_s": ("95th percentile delay", 1e3, "ms"),
    "delay_p99_s": ("99th percentile delay", 1e3, "ms"),
    "delay_max_s": ("maximum delay", 1e3, "ms"),
    "rtt_p50_s": ("median RTT", 1e3, "ms"),
    "rtt_p95_s": ("95th percentile RTT", 1e3, "ms"),
    "completion_s": ("completion time", 1.0, "s"),
    "retrans_bytes": ("retransmitted bytes", 1.0, "B"),
    "timeouts": ("timeouts", 1.0, ""),
}
DEFAULT_METRICS = ("goodput_bps", "loss_rate", "delay_p50_s", "delay_p95_s", "delay_p99_s", "rtt_p50_s", "rtt_p95_s", "completion_s")
TABLE_METRICS = ("goodput_bps", "loss_rate", "delay_p50_s", "delay_p95_s", "delay_p99_s", "rtt_p50_s", "completion_s")


def norm(v: Any) -> Any:
    """A parameter value as the summary column holds it (see store._param_column)."""
    if isinstance(v, (dict, list)):
        return json.dumps(v, sort_keys=True)
    return v


def _short_names(keys: list[str]) -> dict[str, str]:
    """Shortest unambiguous dotted suffix of each key (``queue.limit`` for ``topology.bottleneck.queue.limit``)."""
    out = {}
    for k in keys:
        parts = k.split(".")
        for n in range(1, len(parts) + 1):
            cand = ".".join(parts[-n:])
            if sum(1 for o in keys if o == cand or o.endswith("." + cand)) == 1:
                out[k] = cand
                break
        else:
            out[k] = k
    return out


def _label(v: Any) -> str:
    return v if isinstance(v, str) else json.dumps(v)


def _axis_values(meta: dict[str, Any], axis: list[str]) -> list[tuple]:
    """The axis' values in the sweep file's order (tuples: one entry per key)."""
    grid, zipped = meta.get("grid", {}), meta.get("zip", {})
    if len(axis) == 1 and axis[0] in grid:
        return [(norm(v),) for v in grid[axis[0]]]
    n = len(zipped[axis[0]])
    return [tuple(norm(zipped[k][i]) for k in axis) for i in range(n)]


def _matches(df: pd.DataFrame, keys: list[str], values: tuple) -> pd.Series:
    m = pd.Series(True, index=df.index)
    for k, v in zip(keys, values):
        col = df[k]
        if isinstance(v, float) and math.isnan(v):
            m &= col.isna()
        elif not pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_bool_dtype(col) and not isinstance(v, str):
            m &= col.astype(object).eq(json.dumps(v, sort_keys=True))  # mixed-type columns hold JSON text
        else:
            m &= col.astype(object).eq(v) if col.dtype == object else col.eq(v)
    return m.fillna(False).astype(bool)


def varied_axes(meta: dict[str, Any]) -> list[list[str]]:
    """Axes with at least two values (a single value is a constant, not an axis)."""
    return [list(a) for a in meta.get("axes", []) if len(_axis_values(meta, list(a))) > 1]


def numeric_axis(values: list[Any]) -> Optional[list[float]]:
    """The values of a one-key axis as numbers on a scale, or None for categories.

    Numbers are numbers; unit strings of one kind (``"10000B"``, ``"20ms"``,
    ``"1.5Mbit"``, ``"100pkt"``) are read with the scenario's unit parser (SI units),
    so ``"100000B"`` lies right of ``"20000B"``; anything else (cc names, queue rules,
    mixed units) is categorical."""
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return [float(v) for v in values]
    if not all(isinstance(v, str) for v in values):
        return None
    from ccbench.scenario.units import UnitError, parse_duration, parse_queue_limit, parse_rate, parse_size

    def qlimit_pkts(text: str) -> float:
        q = parse_queue_limit(text)
        if q.unit != "pkt":
            raise UnitError("not a packet count")
        return float(q.value)

    for parse in (parse_duration, parse_rate, parse_size, qlimit_pkts):
        try:
            return [float(parse(v)) for v in values]
        except UnitError:
            continue
    return None


def metric_figure(ok: pd.DataFrame, meta: dict[str, Any], axis: list[str], metric: str):
    """One figure: ``metric`` against the values of ``axis``, panels per flow, one
    series per combination of the other axes; the median over the seeds with error
    bars from min to max. A numeric axis (numbers, or unit strings of one kind) is a
    scale with lines joining the points; a categorical one (cc names, queue rules,
    zipped combinations) gets grouped bars. None when there is nothing finite to draw."""
    from ccbench.plots import new_figure

    label, scale, unit = METRICS.get(metric, (metric, 1.0, ""))
    axes = varied_axes(meta)
    others = [a for a in axes if a != axis]
    short = _short_names(list(meta.get("parameters", [])))
    # a value whose every point failed has nothing to show (and may not parse: "-1B")
    xs = [v for v in _axis_values(meta, axis) if _matches(ok, axis, v).any()]
    if not xs:
        return None
    xnum = numeric_axis([v[0] for v in xs]) if len(axis) == 1 else None
    numeric_x = xnum is not None
    xpos = xnum if numeric_x else list(range(len(xs)))
    xlabels = [" / ".join(_label(x) for x in v) for v in xs]
    other_vals = [[v for v in _axis_values(meta, a) if _matches(ok, a, v).any()] for a in others]
    groups = list(itertools.product(*other_vals)) if others else [()]
    # a flow without this metric (the delay of a bulk flow) gets no empty panel
    flows = [f for f in pd.unique(ok["flow"].dropna()) if ok.loc[ok["flow"] == f, metric].notna().any()]
    if not flows:
        return None
    ncol = min(len(flows), 3)
    nrow = math.ceil(len(flows) / ncol)
    fig, axs = new_figure(nrow, ncol, figsize=(4.6 * ncol + 0.6, 3.5 * nrow + 0.6), squeeze=False)
    logx = numeric_x and min(xpos) > 0 and max(xpos) / min(xpos) >= 20
    n_groups = len(groups)
    bar_w = 0.8 / n_groups
    drawn_any = False
    for fi, flow in enumerate(flows):
        ax = axs[fi // ncol][fi % ncol]
        fsel = ok[ok["flow"] == flow]
        for gi, gvals in enumerate(groups):
            gsel = fsel
            for a, v in zip(others, gvals):
                gsel = gsel[_matches(gsel, a, v)]
            med, lo, hi, px = [], [], [], []
            for xi, xv in enumerate(xs):
                vals = gsel.loc[_matches(gsel, axis, xv), metric].astype(float).to_numpy() * scale
                vals = vals[np.isfinite(vals)]
                if vals.size:
                    m = float(np.median(vals))
                    med.append(m)
                    lo.append(m - vals.min())
                    hi.append(vals.max() - m)
                    px.append(xpos[xi] if numeric_x else xi + (gi - (n_groups - 1) / 2) * bar_w)
            if not med:
                continue
            drawn_any = True
            glabel = ", ".join(f"{short.get(k, k)}={_label(v)}" for a, gv in zip(others, gvals) for k, v in zip(a, gv)) or None
            color = f"C{gi % 10}"
            if numeric_x:
                # a line joins the values of one numeric parameter, in the order of its scale
                ax.errorbar(px, med, yerr=[lo, hi], marker="o", ms=4, capsize=3, lw=1.2, label=glabel, color=color)
            else:
                # categories (cc names, queue rules) have no order between them: bars, not lines
                ax.bar(px, med, width=bar_w * 0.92, color=color, label=glabel)
                ax.errorbar(px, med, yerr=[lo, hi], fmt="none", ecolor="black", elinewidth=0.9, capsize=2.5)
        ax.set_title(str(flow), fontsize="medium")
        if logx:
            ax.set_xscale("log")
            ax.minorticks_off()
        ax.set_xticks(xpos)
        long = max(len(s) for s in xlabels) > 8
        ax.set_xticklabels(xlabels, rotation=30 if long else 0, ha="right" if long else "center", fontsize="small")
        if not numeric_x:
            ax.set_xlim(-0.5, len(xs) - 0.5)
            ax.set_ylim(bottom=0)
        elif len(xpos) > 1 and not logx:
            pad = 0.08 * (max(xpos) - min(xpos))
            ax.set_xlim(min(xpos) - pad, max(xpos) + pad)
        ax.set_xlabel(" / ".join(short.get(k, k) for k in axis), fontsize="small")
        ax.set_ylabel(f"{label} ({unit})" if unit else label, fontsize="small")
        ax.grid(True, axis="y" if not numeric_x else "both", alpha=0.3)
    for k in range(len(flows), nrow * ncol):
        axs[k // ncol][k % ncol].set_visible(False)
    if not drawn_any:
        return None
    fig.suptitle(f"{label} vs {' / '.join(short.get(k, k) for k in axis)}  (median, min-max over seeds)", fontsize="medium")
    handles, labels = axs[0][0].get_legend_handles_labels()
    if others and handles:
        # beside the panels, never over the data
        fig.legend(handles, labels, loc="outside right upper", fontsize="x-small", frameon=False)
    return fig


def aggregate(ok: pd.DataFrame, params: list[str], metrics: list[str]) -> pd.DataFrame:
    """Median of each metric over the seeds, per parameter combination and flow."""
    keys = [p for p in params if p in ok.columns] + ["flow"]
    cols = [m for m in metrics if m in ok.columns and ok[m].notna().any()]
    if ok.empty:
        return pd.DataFrame(columns=keys + ["seeds"] + cols)
    g = ok.groupby(keys, dropna=False, sort=False)
    agg = g[cols].median()
    agg.insert(0, "seeds", g.size())
    return agg.reset_index()


def sweep_report_html(sweep_dir: str | Path, fmt: str = "svg", metrics: Optional[list[str]] = None) -> str:
    from ccbench.sweep.store import SweepStore

    store = SweepStore(sweep_dir)
    meta = store.read_meta() or {}
    df = store.summary()
    params = [p for p in meta.get("parameters", []) if p in df.columns]
    if not meta.get("axes"):
        meta = dict(meta, axes=[[p] for p in params], grid={p: list(pd.unique(df[p].dropna())) for p in params}, parameters=params)
    ok = df[df["status"] == "ok"]
    err = df[df["status"] != "ok"]
    n_points = df["point"].nunique()
    n_err = err["point"].nunique()
    parts: list[str] = []

    facts = [
        ("sweep file", meta.get("source") or ""),
        ("scenario", meta.get("scenario_source") or "(inline)"),
        ("backend", meta.get("backend", "")),
        ("seeds", ", ".join(str(s) for s in meta.get("seeds", []))),
        ("parameters", ", ".join(params) or "(none: seeds only)"),
        ("points", f"{n_points} ({n_points - n_err} ok, {n_err} failed)"),
    ]
    desc = [H.note(meta["description"])] if meta.get("description") else []
    parts.append(H.section("Sweep", *desc, H.table(pd.DataFrame(facts, columns=["", "value"])), anchor="sweep"))

    wanted = metrics or [m for m in DEFAULT_METRICS]
    unknown = [m for m in wanted if m not in df.columns]
    if metrics and unknown:
        from ccbench.sweep import SweepError

        numeric = [c for c in df.columns if df[c].dtype.kind == "f" and c not in ("wall_s",)]
        raise SweepError(f"--metric: {unknown[0]!r} is not a column of the summary (accepted: {', '.join(numeric)})")
    shown = [m for m in wanted if m in ok.columns and ok[m].notna().any()]
    agg = aggregate(ok, params, list(TABLE_METRICS) if metrics is None else shown)
    parts.append(
        H.section(
            "Summary (median over seeds)",
            H.table(agg, max_rows=500),
            H.note("one row per parameter combination and flow; the full table (a row per run and flow) "
                   "is summary.parquet in the sweep directory"),
            anchor="summary",
        )
    )
    if len(err):
        e = err[["point", *params, "seed", "error"]]
        parts.append(H.section("Failed points", H.table(e, max_rows=200, row_class=lambda r: "error"), anchor="errors"))

    figs: list[str] = []
    axes = varied_axes(meta)
    constant = [k for a in meta.get("axes", []) if list(a) not in axes for k in a]
    if constant:
        figs.append(H.note("set to one value in every point (not plotted as axes): " + ", ".join(constant)))
    if not axes:
        figs.append(H.note("nothing was swept but the seed: no metric-versus-parameter plots"))
    elif ok.empty:
        figs.append(H.note("no point finished: nothing to plot"))
    for axis in axes:
        for m in shown:
            fig = metric_figure(ok, meta, axis, m)
            if fig is not None:
                name = f"{m}__{'+'.join(axis)}"
                figs.append(H.figure(fig, name, f"{METRICS.get(m, (m,))[0]} against {' / '.join(axis)}", fmt))
    parts.append(H.section("Metrics against parameters", *figs, anchor="figures"))
    # The models come after the figures: a table per parameter combination is long,
    # and the figures are what a reader opens a sweep report for.
    from .models import sweep_models_sections

    parts.extend(sweep_models_sections(store, meta, ok))

    full = df.drop(columns=[c for c in ("host",) if c in df.columns])
    parts.append(
        H.section(
            "All rows",
            "<details><summary>the summary table, a row per run and flow</summary>" + H.table(full, max_rows=1000) + "</details>",
            anchor="rows",
        )
    )
    spec_toml = store.root / "sweep.toml"
    if spec_toml.exists():
        parts.append(H.section("Sweep file (self-contained)", H.pre(spec_toml.read_text(encoding="utf-8")), anchor="spec"))
    title = f"ccbench sweep: {Path(meta.get('source') or store.root.name).stem}"
    sub = f"{store.root}; report written {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
    return H.page(title, parts, subtitle=sub)


def write_sweep_report(sweep_dir: str | Path, out: str | Path, fmt: str = "svg", metrics: Optional[list[str]] = None) -> Path:
    out = Path(out)
    out.write_text(sweep_report_html(sweep_dir, fmt, metrics), encoding="utf-8")
    return out
