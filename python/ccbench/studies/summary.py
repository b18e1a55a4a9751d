"""``docs/REPRODUCTIONS.md``: the catalogue (:mod:`ccbench.studies.catalogue`) with the
numbers of recorded study results (``RESULTS/reproduce-STUDY/``, written by
``ccbench reproduce STUDY --out ...``). Nothing is simulated here.

Status of an item with recorded results (mechanical, so the page can be regenerated):
``reproduced`` when every comparison holds, ``partly`` when some do, ``not yet`` when
none does. A comparison holds when our number is within ``REL_TOL`` (relative) of the
paper's, or, for a qualitative statement, when the study's ``agrees`` check is true.
Weigle's model-vs-simulation items use the paper's own spread instead
(:data:`ccbench.studies.weigle.PAPER_SPREAD`).
"""

from __future__ import annotations

import datetime as _dt
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

from .catalogue import PAPERS, Item
from .summary_notes import NOTES

REL_TOL = 0.25
#: study -> (ours, paper) column pairs compared by the generic rule.
PAIRS: dict[str, list[tuple[str, str]]] = {
    "wei-sync": [("sync", "paper")],
    "brosh-droptail": [(m, f"{m}_paper") for m in ("loss_pct", "rtt_s", "jitter_s", "p95_s")],
    "brosh-video": [(m, f"{m}_paper") for m in ("loss_pct", "rtt_s", "jitter_s", "p95_s")],
    "brosh-split": [("reduction_pct", "paper_reduction_pct")],
    "luebben-fig9": [("ours", "paper")],
}

#: study -> (CSV file its ``run`` writes, the columns shown in the summary).
TABLES: dict[str, tuple[str, list[str] | None]] = {
    "wei-sync": ("wei_sync.csv", ["algorithm", "scheme", "sync", "sync_sd", "paper", "runs"]),
    "brosh-droptail": ("brosh_droptail.csv", ["queue", "web_flows", "loss_pct", "loss_pct_paper", "rtt_s", "rtt_s_paper",
                                              "jitter_s", "jitter_s_paper", "p95_s", "p95_s_paper", "p95_sd_runs_s", "sigma_d_s"]),
    "brosh-video": ("brosh_video.csv", ["queue", "web_flows", "loss_pct", "loss_pct_paper", "rtt_s", "rtt_s_paper",
                                        "jitter_s", "jitter_s_paper", "p95_s", "p95_s_paper", "p95_sd_runs_s", "sigma_d_s"]),
    "brosh-split": ("brosh_split.csv", ["sweep", "web_flows", "scheme", "loss_pct", "p95_s", "reduction_pct",
                                        "reduction_conn_pct", "reduction_nohol_pct", "ftp_change_pct",
                                        "paper_reduction_pct"]),
    "brosh-model": ("brosh_model.csv", ["fig", "quantity", "setting", "sim", "model", "paper", "agrees"]),
    "luebben-fig9": ("luebben_fig9.csv", None),
    "wei-ch3": ("wei_ch3.csv", ["item", "quantity", "setting", "ours", "paper", "unit", "agrees", "note"]),
    "wei-probe": ("wei_probe.csv", ["backend", "queue", "losses", "n_losses", "within_1pct", "poisson_1pct",
                                    "within_1rtt", "poisson_1rtt", "paper_planetlab_1pct", "paper_planetlab_1rtt",
                                    "runs", "note"]),
    "luebben": ("luebben.csv", ["item", "quantity", "setting", "ours", "paper", "unit", "agrees", "note"]),
    "stewart": ("stewart.csv", ["fig", "quantity", "setting", "ours", "ci95", "paper", "diff", "unit", "agrees", "note"]),
    "wei-vegas": ("wei_vegas.csv", ["fig", "quantity", "decision", "setting", "ours", "thesis", "bound", "in_bound",
                                    "agrees"]),
    "wei-fast": ("wei_fast.csv", ["experiment", "quantity", "ours", "theorem", "bound", "in_bound", "agrees"]),
    "weigle": ("weigle.csv", ["fig", "stack", "p_pct", "p_paper_pct", "pT_computed_pct", "pT_computed_paper_pct",
                              "pT_obs_pct", "pT_obs_paper_pct", "T1000_sim_s", "T1000_M1_s", "err_M1", "T1000_M1p_s",
                              "err_M1p", "T1000_M2_s", "err_M2", "sd1000_sim_s", "sd1000_M1_s"]),
}


def load(results: Path) -> dict[str, tuple[pd.DataFrame, dict]]:
    """Recorded tables (and ``meta.json``) of the studies that have results."""
    out = {}
    for study, (name, _) in TABLES.items():
        d = Path(results) / f"reproduce-{study}"
        if (d / name).is_file():
            meta = json.loads((d / "meta.json").read_text()) if (d / "meta.json").is_file() else {}
            out[study] = (pd.read_csv(d / name), meta)
    return out


def _status(checks: list[bool]) -> str:
    if not checks:
        return "not yet"
    return "reproduced" if all(checks) else ("partly" if any(checks) else "not yet")


def _close(ours: float, paper: float, tol: float = REL_TOL) -> bool:
    return math.isfinite(ours) and math.isfinite(paper) and abs(ours - paper) <= tol * max(abs(paper), 1e-12)


def _fmt(x) -> str:
    if isinstance(x, (float, np.floating)):
        if not math.isfinite(x):
            return "–"
        return f"{x:.3g}"
    return str(x)


def _generic(study: str, df: pd.DataFrame) -> tuple[str, str]:
    checks, shown = [], []
    for ours, paper in PAIRS.get(study, []):
        if ours not in df.columns or paper not in df.columns:
            continue
        o = pd.to_numeric(df[ours], errors="coerce").to_numpy(dtype=float)
        p = pd.to_numeric(df[paper], errors="coerce").to_numpy(dtype=float)
        ok = [_close(a, b) for a, b in zip(o, p) if math.isfinite(a) and math.isfinite(b)]
        checks += ok
        if ok:
            shown.append(f"{ours} vs {paper}: {sum(ok)}/{len(ok)} within {REL_TOL:.0%}")
    return _status(checks), "; ".join(shown) or "no numeric pairs"


def _maybe_float(x):
    if isinstance(x, (bool, np.bool_)):  # a verdict column read back from CSV: keep the word
        return str(bool(x))
    try:
        return float(x)
    except (TypeError, ValueError):
        return x


def _stewart(df: pd.DataFrame, part: str) -> tuple[str, str]:
    sel = {
        "fig1": df["fig"].astype(str) == "1",
        "fig3": df["fig"].astype(str) == "3",
        "fig4a": df["quantity"].astype(str).str.startswith("CBR loss"),
        "fig4b": df["quantity"].astype(str).str.startswith("FB-loose loss at"),
        "adsl2": df["quantity"] == "ADSL2 FB-loose CBR loss",
        "fig5": df["fig"].astype(str) == "5",
        "fig6": df["fig"].astype(str) == "6",
        "fig7": df["fig"].astype(str) == "7",
        "adsl2delay": df["quantity"].astype(str).str.startswith("ADSL2 m"),
    }[part]
    rows = df[sel]
    checks, cells = [], []
    for r in rows.itertuples(index=False):
        ag = str(r.agrees)
        if ag in ("True", "False"):
            checks.append(ag == "True")
        else:
            o, p = pd.to_numeric(pd.Series([r.ours, r.paper]), errors="coerce")
            if math.isfinite(o) and math.isfinite(p):
                checks.append(_close(o, p))
        cells.append(f"{r.setting}: {_fmt(_maybe_float(r.ours))} vs {r.paper} {r.unit}".strip())
    return _status(checks), "; ".join(cells)


def _weigle(df: pd.DataFrame, part: str) -> tuple[str, str]:
    from .weigle import PAPER_SPREAD

    tb = df[df["stack"] == "textbook-reno"]
    lx = df[df["stack"] == "linux"]
    if part == "table1":
        checks = [_close(a, b) for a, b in zip(tb["pT_computed_pct"], tb["pT_computed_paper_pct"])]
        obs = [_close(a, b, 0.5) for a, b in zip(tb["pT_obs_pct"], tb["pT_obs_paper_pct"])]
        cells = ", ".join(f"Fig {f}: {a:.3g} vs {b:.3g}" for f, a, b in zip(tb["fig"], tb["pT_obs_pct"],
                                                                             tb["pT_obs_paper_pct"]))
        return _status(checks + obs), (f"computed p_T within {REL_TOL:.0%}: {sum(checks)}/{len(checks)}; observed p_T "
                                       f"(textbook stack, %) within 50 %: {sum(obs)}/{len(obs)} ({cells})")
    figs = (1, 2, 3, 4, 5) if part == "low" else (6, 7)
    t = tb[tb["fig"].isin(figs)]
    lt = lx[lx["fig"].isin(figs)]
    if part == "low":
        checks = [abs(e) <= PAPER_SPREAD for e in t["err_M1"]]
        # The paper's spread is "within 0.1 for 80 % of the connections": the same share here.
        status = "reproduced" if checks and sum(checks) >= 0.8 * len(checks) else _status(checks)
        text = (f"abs. error of M1 vs textbook-reno <= {PAPER_SPREAD:.0%} in {sum(checks)}/{len(checks)} settings (the "
                f"paper: 80 % of its cases within 0.1): "
                + ", ".join(f"Fig {f} {e:+.1%}" for f, e in zip(t["fig"], t["err_M1"]))
                + "; Linux stack: " + ", ".join(f"Fig {f} {e:+.1%}" for f, e in zip(lt["fig"], lt["err_M1"])))
        return status, text
    under = [e > 0 for e in t["err_M1"]]
    better = [abs(a) < abs(b) for a, b in zip(t["err_M1p"], t["err_M1"])]
    text = ("paper: both models under-predict, M1-p fixes it; ours (textbook-reno): M1 "
            + ", ".join(f"Fig {f} {e:+.1%}" for f, e in zip(t["fig"], t["err_M1"]))
            + ", M1-p " + ", ".join(f"{e:+.1%}" for e in t["err_M1p"]) + " (positive = under-predicts)")
    return _status(under + better), text


def _claims(df: pd.DataFrame, items: str) -> tuple[str, str]:
    """Rows of a claims table (``item, quantity, setting, ours, paper, unit, agrees``) whose
    ``item`` is one of the ``|``-separated names: status from ``agrees`` where the row has
    one, else from ours vs paper within ``REL_TOL``."""
    rows = df[df["item"].astype(str).isin(items.split("|"))]
    checks, cells = [], []
    for r in rows.itertuples(index=False):
        ag = {"True": True, "yes": True, "False": False, "no": False}.get(str(r.agrees))
        o, p = _maybe_float(r.ours), _maybe_float(r.paper)
        if ag is not None:
            checks.append(ag)
        elif isinstance(o, float) and isinstance(p, float) and math.isfinite(p):
            checks.append(_close(o, p))
        ours = "∞" if isinstance(o, float) and math.isinf(o) else _fmt(o)
        vs = f" vs {_fmt(p)}" if isinstance(p, float) and math.isfinite(p) else ""
        where = f" ({r.setting})" if isinstance(r.setting, str) and r.setting else ""
        unit = f" {r.unit}" if isinstance(r.unit, str) and r.unit else ""
        cells.append(f"{r.quantity}{where}: {ours}{vs}{unit}")
    return _status(checks), "; ".join(cells) or "no rows"


def _wei_probe(df: pd.DataFrame) -> tuple[str, str]:
    """The probe's losses burstier than Poisson under drop-tail (the thesis's finding), per backend."""
    pr = df[(df["losses"] == "probe") & (df["queue"] == "droptail")]
    checks = [float(r.within_1rtt) > float(r.poisson_1rtt) for r in pr.itertuples()]
    text = "; ".join(f"{r.backend} {r.queue}: {r.within_1pct:.0%} < 1 % RTT (Poisson {r.poisson_1pct:.1%}), "
                     f"{r.within_1rtt:.0%} < 1 RTT (Poisson {r.poisson_1rtt:.0%})"
                     for r in df[df["losses"] == "probe"].itertuples())
    skipped = df[df["note"].astype(str).str.startswith("skipped")]
    if len(skipped):
        text += "; emulator " + str(skipped["note"].iloc[0])
    return _status(checks), f"thesis (PlanetLab): 40 % < 1 % RTT, 60 % < 1 RTT; ours: {text}"


def _judged(df: pd.DataFrame, part: str) -> tuple[str, str]:
    """Rows with an ``agrees`` verdict (wei-vegas: those of the figure ``part`` and its
    variants, e.g. ``fig2.2`` with ``fig2.2-ca``; wei-fast: all): the status from the
    verdicts, the text from ours vs the thesis's (or theorem's) value."""
    rows = df[df["fig"].astype(str).str.startswith(part)] if part else df
    rows = rows[rows["agrees"].astype(str).isin(("True", "False"))]
    ref = "thesis" if "thesis" in rows.columns else "theorem"
    checks = [str(a) == "True" for a in rows["agrees"]]
    # The figure's own rows (not its variants, e.g. fig2.2-ca) make the text.
    shown = rows[rows["fig"].astype(str) == part] if part else rows
    cells = [f"{r.quantity}: {_fmt(_maybe_float(r.ours))} vs {getattr(r, ref)}"
             + (f" (in bound {float(r.in_bound):.0%})" if math.isfinite(float(r.in_bound)) else "")
             for r in shown.itertuples(index=False)]
    return _status(checks), f"{sum(checks)}/{len(checks)} hold; " + "; ".join(cells)


def item_result(item: Item, tables: dict) -> tuple[str, str]:
    """(status, ours-vs-paper text) of one catalogue item."""
    if item.status is not None:
        return item.status, item.why
    if item.study not in tables:
        return "not yet", f"no recorded results (run `ccbench reproduce {item.study}`)"
    df = tables[item.study][0]
    key = item.key or ""
    if key.startswith("stewart:"):
        return _stewart(df, key.split(":", 1)[1])
    if key.startswith("weigle:"):
        return _weigle(df, key.split(":", 1)[1])
    if key.startswith("claims:"):
        return _claims(df, key.split(":", 1)[1])
    if key == "wei-probe":
        return _wei_probe(df)
    if key.startswith("brosh-model:"):
        from .brosh_model import summary_item

        return summary_item(df, key.split(":", 1)[1])
    if key.startswith("wei-vegas:") or key == "wei-fast":
        return _judged(df, key.split(":", 1)[1] if ":" in key else "")
    status, text = _generic(item.study, df)
    return status, f"{text} (table below)"


def _markdown(df: pd.DataFrame, cols: list[str] | None) -> str:
    if cols is not None:
        df = df[[c for c in cols if c in df.columns]]
    head = "| " + " | ".join(map(str, df.columns)) + " |\n|" + "---|" * len(df.columns) + "\n"
    body = "".join("| " + " | ".join(_fmt(_maybe_float(v)).replace("|", "/") for v in row) + " |\n"
                   for row in df.itertuples(index=False))
    return head + body


def render(results: Path) -> str:
    tables = load(results)
    today = _dt.date.today().isoformat()
    out = [
        "# Reproductions of the founding papers\n\n",
        f"Generated by `ccbench reproduce --all --summary` ({today}) from the recorded results in "
        f"`{results}/reproduce-*/` and the catalogue in `python/ccbench/studies/catalogue.py`; "
        "`ccbench reproduce --summary` rebuilds this page from recorded results without simulating.\n\n",
        "Status: **reproduced** = every comparison holds (numbers within "
        f"{REL_TOL:.0%} relative of the paper's, or the paper's qualitative statement holds); **partly** = "
        "some do; **not yet** = none does or there is no study; **not reproducible here** = needs something "
        "ccbench cannot have. Values the papers give only in figures are compared as the statements the "
        "text makes about them.\n",
    ]
    for paper in PAPERS:
        out.append(f"\n## {paper.title}\n\n")
        cmds = ", ".join(f"`ccbench reproduce {s}`" for s in paper.studies)
        sizes = []
        for s in paper.studies:
            if s in tables:
                m = tables[s][1]
                wall = f", {m['wall_s']:.0f} s" if "wall_s" in m else ""
                sizes.append(f"{s}: {m.get('size', '?')} size, {m.get('date', '?')}{wall}")
            else:
                sizes.append(f"{s}: no recorded results")
        out.append(f"Seed {paper.seed}, notes `{paper.notes}`. Commands: {cmds} (add `--full` for the paper's "
                   f"size). Recorded: {'; '.join(sizes)}.\n\n")
        out.append("| item | the paper reports | status | ours vs paper |\n|---|---|---|---|\n")
        for it in paper.items:
            status, text = item_result(it, tables)
            out.append(f"| {it.item} | {it.reports} | {status} | {text.replace('|', '/')} |\n")
        for s in paper.studies:
            if s in tables:
                out.append(f"\n`ccbench reproduce {s}` (recorded table):\n\n")
                out.append(_markdown(tables[s][0], TABLES[s][1]))
        if paper.key in NOTES:
            out.append("\n" + NOTES[paper.key](Path(results)))
    return "".join(out)


def write(path: Path, results: Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render(Path(results)))
    return path
