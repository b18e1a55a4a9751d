"""The HTML report of one run: scenario, per-flow table, drops, delay CCDFs, cwnd and
queue traces (the figures of ``run.plot``)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pandas as pd

from ccbench.fmt import fmt_time

from . import html as H

FLOW_COLUMNS = (
    "flow", "transport", "cc", "goodput_bps", "loss_rate", "bytes_sent", "bytes_delivered", "retrans_bytes",
    "loss_events", "timeouts", "rtt_p50_s", "rtt_p95_s", "delay_p50_s", "delay_p95_s", "delay_p99_s",
    "delay_max_s", "completion_s",
)


def scenario_toml(meta: dict[str, Any]) -> str:
    """The run's scenario as TOML text (as stored in its metadata)."""
    data = meta.get("scenario")
    if not data:
        return "# (no scenario in the run's metadata)"
    try:
        from ccbench.scenario import Scenario

        return Scenario.from_dict(data).dumps()
    except Exception:  # noqa: BLE001 - an older or foreign run: show what is there
        return json.dumps(data, indent=2, default=str)


def _useful(df: pd.DataFrame) -> pd.DataFrame:
    """Drops columns that are empty for every row (NaN, or "" like cc of UDP flows)."""
    keep = []
    for c in df.columns:
        col = df[c]
        if col.isna().all():
            continue
        if not pd.api.types.is_numeric_dtype(col) and col.astype(str).str.len().eq(0).all():
            continue
        keep.append(c)
    return df[keep]


def run_sections(run, fmt: str = "svg", title_prefix: str = "") -> list[str]:
    """The body of a run report (also used for single points of a sweep)."""
    meta = run.meta
    parts: list[str] = []
    stats = meta.get("stats", {})
    facts = {
        "backend": meta.get("backend", "?"),
        "seed": meta.get("seed", "?"),
        "simulated": fmt_time(stats["sim_end_s"]) if "sim_end_s" in stats else None,
        "events": f"{stats['events']:,}" if "events" in stats else None,
        "ccbench": meta.get("versions", {}).get("ccbench"),
    }
    if "sweep" in meta:
        facts["sweep point"] = meta["sweep"].get("point")
        for k, v in meta["sweep"].get("values", {}).items():
            facts[k] = v if isinstance(v, str) else json.dumps(v)
    facts_df = pd.DataFrame([(k, str(v)) for k, v in facts.items() if v is not None], columns=["", "value"])
    parts.append(H.section(f"{title_prefix}Run", H.table(facts_df), anchor="run"))

    flows = run.flows[[c for c in FLOW_COLUMNS if c in run.flows.columns]].copy()
    for c in flows.columns:
        if isinstance(flows[c].dtype, pd.CategoricalDtype):
            flows[c] = flows[c].astype(str)
    parts.append(
        H.section(
            "Flows",
            H.table(_useful(flows)),
            H.note("goodput = bytes delivered x 8 / flow duration; delay = t_deliver - t_write per message; "
                   "loss_rate = dropped / sent messages (UDP)"),
            anchor="flows",
        )
    )
    drops = run.drops
    if len(drops):
        d = drops.copy()
        for c in ("link", "flow", "kind", "reason"):
            d[c] = d[c].astype(str)
        by = d.groupby(["link", "flow", "kind", "reason"], observed=True).size().reset_index(name="count")
        parts.append(H.section("Drops and marks", H.table(by), anchor="drops"))

    parts.append(H.section("Figures", *run_figures(run, fmt), anchor="figures"))
    from .models import run_models_sections

    parts.extend(run_models_sections(run))
    parts.append(H.section("Scenario", H.pre(scenario_toml(meta), "scenario"), anchor="scenario"))
    return parts


#: (figure name, RunPlots method, caption) of a run report, in page order
FIGURES = (
    ("goodput", "goodput", "goodput of each flow over time"),
    ("delay", "delay", "per-message delay (t_deliver - t_write): CDF and CCDF (tail, log scale), one line per flow"),
    ("cwnd", "cwnd", "cwnd (solid) and ssthresh (dashed) in packets"),
    ("queue", "queue", "queue occupancy of the monitored links, the limit (dashed) and the same backlog in ms at the link rate"),
)


def run_figures(run, fmt: str = "svg") -> list[str]:
    """The figures of a run (those it has data for) and a note for each it has not."""
    from ccbench.plots import NothingToPlot

    out: list[str] = []
    for name, method, caption in FIGURES:
        plots = run.plot
        try:
            fig = getattr(plots, method)()
        except NothingToPlot as e:
            out.append(H.note(f"{name}: not drawn: {e}"))
            continue
        notes = "; ".join(plots.notes)
        out.append(H.figure(fig, name, caption + (f" ({notes})" if notes else ""), fmt))
    return out


def run_report_html(run, title: str | None = None, fmt: str = "svg") -> str:
    """The complete HTML page of a run report."""
    name = title or f"ccbench run (seed {run.meta.get('seed', '?')})"
    sub = f"{run.meta.get('backend', '?')} backend; report written {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
    return H.page(name, run_sections(run, fmt), subtitle=sub)


def write_run_report(run_dir: str | Path, out: str | Path, fmt: str = "svg") -> Path:
    from ccbench.run import Run

    run = Run.load(run_dir)
    html = run_report_html(run, title=f"ccbench run: {Path(run_dir).name}", fmt=fmt)
    out = Path(out)
    out.write_text(html, encoding="utf-8")
    return out
