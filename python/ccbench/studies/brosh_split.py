"""Brosh et al. §7, delay-reduction schemes (Figs 25-28; note §4.6, §5): split-N and
parallel connections ("blind" round-robin, "intelligent" least-backlog) for live video.

Three experiments, one command (``ccbench reproduce brosh-split``):

1. **The drop-tail testbed, as the paper ran it** (Figs 26a/b, 28a/b):
   :mod:`ccbench.studies.brosh_split_testbed` (5 video flows using the scheme, 5 FTP,
   N web flows, 30 Mbit/s, 100 000 B drop-tail, 100 ms RTT; the in-order merge
   assumption and the three receiver readings are documented there). Two sweeps:

   - ``as-configured``: the paper's web-flow counts with the cross traffic as
     :mod:`ccbench.studies.brosh_droptail` models it (TCP reno). The single video
     connection sees 0.3-0.5 % loss and a 95th percentile of 0.10-0.13 s, far below
     Table 4's 1.25-3.2 % and 0.46-6.0 s (byte queue): a much lighter load.
   - ``calibrated``: the cross traffic with the congestion control of the paper's
     kernels (BIC, the Linux default from 2.6.8 to 2.6.18) and web-flow counts chosen
     so that the single connection's loss and 95th percentile span Table 4's byte-queue
     range (200 / 250 / 275 web flows: about 0.7 / 1.5 / 2.5 % loss and 0.47 / 1.2 /
     7 s, against Table 4's 1.25 / 1.79 / 3.18 % and 0.46 / 1.89 / 5.98 s at 0 / 50 /
     100 web flows). Our tg-like web flows are persistent connections, so their count
     is not the paper's; the load is what is matched.

2. **The model's random-drop bound** (Figs 25, 27): :mod:`ccbench.studies.brosh_split_model`.
3. **One video flow at 1 % random loss** (the conditions of the model curves, in the
   simulator): :mod:`ccbench.studies.brosh_split_random`.

Why the schemes rank as they do, hypothesis by hypothesis, is in
:mod:`ccbench.studies.brosh_split_notes` (``docs/REPRODUCTIONS.md``).

Sizes: reduced (default) 120 s of video per run, seeds 1-2, web flows (0, 50, 100) /
(200, 250, 275); ``full=True``: 300 s (the paper's 5 minutes), seeds 1-5 (its 5 runs),
web flows (0, 10, 25, 50, 100) / (0, 200, 225, 250, 275). The random-loss experiment:
120 s x 3 seeds / 300 s x 5 seeds.

Files in ``out``: ``brosh_split.csv`` (testbed summary, both sweeps),
``brosh_split_seeds.csv``, ``brosh_split_checks.csv`` (the paper's qualitative claims,
ours against them), ``brosh_split_model.csv``, ``brosh_split_random.csv`` (+ ``_seeds``),
figures ``brosh_split.png`` (95th-percentile reduction per scheme), ``brosh_split_cdf.png``
(CDFs of the message delay), ``brosh_split_ftp.png`` (background FTP throughput),
``brosh_split_model.png`` and ``brosh_split_random.png``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from . import brosh_split_model as model
from . import brosh_split_random as rnd
from . import brosh_split_testbed as tb

DESCRIPTION = (
    "Brosh et al. split-N and parallel connections (Figs 25-28): 5 video flows over the 30 Mbit/s drop-tail "
    "testbed with FTP and web traffic (as configured and calibrated to Table 4's load), the model's random-drop "
    "bound, and one flow at 1% random loss; merged vs no-HOL delivery"
)

#: sweep -> (scenario options, reduced web flows, full web flows)
SWEEPS: dict[str, tuple[dict, tuple[int, ...], tuple[int, ...]]] = {
    "as-configured": ({}, (0, 50, 100), tb.WEB_FLOWS),
    "calibrated": ({"ftp_cc": "bic"}, (200, 250, 275), (0, 200, 225, 250, 275)),
}
SHOWN = ["sweep", "web_flows", "scheme", "p95_s", "reduction_pct", "reduction_conn_pct", "reduction_nohol_pct",
         "paper_reduction_pct"]


def sizes(full: bool) -> dict:
    return {"measure_s": 300.0 if full else 120.0, "seeds": (1, 2, 3, 4, 5) if full else (1, 2),
            "web": {k: (v[2] if full else v[1]) for k, v in SWEEPS.items()},
            "random_seeds": (1, 2, 3, 4, 5) if full else (1, 2, 3)}


def checks(summ: pd.DataFrame) -> pd.DataFrame:
    """The paper's qualitative claims about Figs 26 and 28, each against our testbed
    numbers (reductions averaged over the web-flow counts of a sweep, merged delivery
    unless named)."""
    rows = []
    for sweep, g in summ.groupby("sweep", sort=False):
        m = g.groupby("scheme", sort=False).mean(numeric_only=True)
        r = m["reduction_pct"]
        per_n = g.pivot_table(index="web_flows", columns="scheme", values="reduction_pct")

        def add(claim, ours, holds, paper):
            rows.append({"sweep": sweep, "claim": claim, "ours": ours, "paper": paper, "holds": bool(holds)})

        s2 = per_n["split-2"]
        add("split-2 lowers the 95th percentile under low and moderate load (all but the heaviest web-flow count)",
            ", ".join(f"N={n}: {v:.0f}%" for n, v in s2.items()), (s2.iloc[:-1] > 0).all(),
            "Fig. 26a: up to 30 %")
        add("split-2 gains (almost) nothing at the heaviest load", f"N={s2.index[-1]}: {s2.iloc[-1]:.0f}%",
            s2.iloc[-1] < 10, "Fig. 26a: no gain at 100 web flows")
        add("split-4 gains no more than split-2 (diminishing or worse)", f"{r['split-4']:.0f}% vs {r['split-2']:.0f}%",
            r["split-4"] <= r["split-2"] + 5, "Fig. 26a")
        add("5 blind connections beat split-2", f"{r['par-5-rr']:.0f}% vs {r['split-2']:.0f}%",
            r["par-5-rr"] > r["split-2"], "90 % vs 30 %")
        add("5 blind connections lower the 95th percentile by ~90 %", f"{r['par-5-rr']:.0f}% (per connection "
            f"{m.loc['par-5-rr', 'reduction_conn_pct']:.0f}%, no HOL {m.loc['par-5-rr', 'reduction_nohol_pct']:.0f}%)",
            abs(r["par-5-rr"] - 90) <= 0.25 * 90, "Fig. 28a: 90 % on average")
        add("intelligent outperforms blind (5 connections)", f"{r['par-5-lb']:.0f}% vs {r['par-5-rr']:.0f}%",
            r["par-5-lb"] > r["par-5-rr"], "Fig. 28a")
        add("no gain beyond 5 connections (blind)", f"{r['par-10-rr']:.0f}% vs {r['par-5-rr']:.0f}%",
            r["par-10-rr"] <= r["par-5-rr"] + 5, "Fig. 28a: diminishing gains")
        ftp = m["ftp_change_pct"]
        add("split-4 costs the FTP flows throughput (~27 %)", f"{ftp['split-4']:+.1f}%", ftp["split-4"] < -13.5,
            "Fig. 26b: -27 % on average")
        add("parallel connections leave FTP throughput alone", f"{ftp['par-5-rr']:+.1f}% / {ftp['par-5-lb']:+.1f}%",
            abs(ftp["par-5-rr"]) < 5 and abs(ftp["par-5-lb"]) < 5, "Fig. 28b: negligible")
        add("no-HOL <= per-connection HOL <= merged (every row)", "",
            bool((g["p95_nohol_s"] <= g["p95_s"] + 1e-9).all()
                 and (g["p95_conn_s"].isna() | (g["p95_conn_s"] <= g["p95_s"] + 1e-9)).all()), "(definition)")
    return pd.DataFrame(rows)


def plot_reduction(summ: pd.DataFrame, path: Path) -> None:
    """Reduction of the 95th percentile per scheme, one panel per sweep, one colour per
    web-flow count; solid = merged delivery, dotted = no HOL; the paper's numbers as stars."""
    from ccbench.plots import new_figure

    sweeps = list(dict.fromkeys(summ["sweep"]))
    fig, axes = new_figure(1, len(sweeps), figsize=(7 * len(sweeps), 4.2), squeeze=False)
    schemes = [s for s in tb.SCHEMES if s != "single"]
    x = np.arange(len(schemes))
    for ax, sw in zip(axes[0], sweeps):
        g = summ[summ["sweep"] == sw]
        for i, (n, h) in enumerate(g.groupby("web_flows", sort=False)):
            h = h.set_index("scheme").reindex(schemes)
            ax.plot(x, h["reduction_pct"], "o-", color=f"C{i}", label=f"{n} web flows, merged")
            ax.plot(x, h["reduction_nohol_pct"], ":", color=f"C{i}", alpha=0.7, label=f"{n} web flows, no HOL")
        paper = [tb.PAPER.get(s, (np.nan, ""))[0] for s in schemes]
        ax.plot(x, paper, "k*", ms=12, label="paper (Figs 26a, 28a)")
        ax.axhline(0, color="grey", lw=0.8)
        ax.set_xticks(x)
        ax.set_xticklabels(schemes, rotation=30, fontsize=8)
        ax.set_ylim(max(-100, float(np.nanmin(g["reduction_pct"])) - 5), 100)
        ax.set_ylabel("reduction of the 95th percentile (%)")
        ax.set_title(f"drop-tail testbed, {sw}", fontsize=10)
        ax.grid(alpha=0.3)
    axes[0][-1].legend(fontsize=7, ncol=2)
    fig.savefig(path, dpi=120)


def plot_cdf(cdfs: dict, path: Path) -> None:
    """CDFs of the message delay per scheme (one panel per sweep at its heaviest load):
    solid = merged delivery, dashed = no HOL."""
    from ccbench.plots import new_figure

    fig, axes = new_figure(1, len(cdfs), figsize=(7 * len(cdfs), 4.2), squeeze=False)
    for ax, (title, per) in zip(axes[0], cdfs.items()):
        for i, sc in enumerate(s for s in ("single", "split-2", "split-4", "par-5-rr", "par-5-lb", "par-10-rr")
                                if s in per):
            d, a = per[sc]
            for v, ls, lab in ((d, "-", sc), (a, "--", None)):
                v = np.sort(v[np.isfinite(v)])
                if v.size:
                    ax.plot(v, np.arange(1, v.size + 1) / v.size, ls, color=f"C{i}", label=lab, lw=1.2)
        ax.axhline(0.95, color="grey", lw=0.8)
        ax.set_xscale("log")
        ax.set_xlabel("message delay t_deliver - t_write (s); dashed: t_arrive - t_write (no HOL)")
        ax.set_ylabel("CDF")
        ax.set_title(title, fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.savefig(path, dpi=120)


def plot_ftp(summ: pd.DataFrame, path: Path) -> None:
    """Goodput change of the 5 FTP flows against the single-connection run (Figs 26b, 28b)."""
    from ccbench.plots import new_figure

    fig, ax = new_figure(figsize=(8, 4))
    schemes = [s for s in tb.SCHEMES if s != "single"]
    x = np.arange(len(schemes))
    for i, (sw, g) in enumerate(summ.groupby("sweep", sort=False)):
        m = g.groupby("scheme").mean(numeric_only=True).reindex(schemes)
        ax.bar(x + (i - 0.5) * 0.4, m["ftp_change_pct"], 0.4, label=sw)
    ax.plot([schemes.index("split-4")], [-27], "k*", ms=12, label="paper: split-4 -27 % (Fig. 26b)")
    ax.set_xticks(x)
    ax.set_xticklabels(schemes, rotation=30, fontsize=8)
    ax.set_ylabel("FTP goodput change vs single (%)")
    ax.axhline(0, color="grey", lw=0.8)
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    fig.savefig(path, dpi=120)


def plot_model(df: pd.DataFrame, path: Path) -> None:
    """The model's reduction vs loss rate (Figs 25, 27), video and VoIP."""
    from ccbench.plots import new_figure

    fig, axes = new_figure(1, 2, figsize=(12, 4))
    for ax, fl in zip(axes, ("video", "voip")):
        g = df[(df["flow"] == fl) & (df["scheme"] != "single")]
        for sc, h in g.groupby("scheme", sort=False):
            ax.plot(h["loss_pct"], h["reduction_pct"], "o-", label=sc)
        ax.axhline(0, color="grey", lw=0.8)
        if fl == "video":
            ax.axhline(60, color="k", ls="--", lw=0.8, label="paper: split-2 and 5 blind, 60 % on average")
        ax.set_xscale("log")
        ax.set_ylim(-100, 100)
        ax.set_xlabel("random loss rate (%)")
        ax.set_ylabel("model: reduction of the 95th percentile (%)")
        ax.set_title(f"model, {fl}, RTT 100 ms (Figs 25, 27)", fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.savefig(path, dpi=120)


def run(full: bool = False, out: Path | None = None, progress=None) -> pd.DataFrame:
    """All three experiments (see the module docstring); returns the testbed table."""
    sz = sizes(full)
    schemes = tuple(tb.SCHEMES)
    n_tb = sum(len(w) for w in sz["web"].values()) * len(schemes) * len(sz["seeds"])
    n_rnd = len(rnd.VARIANTS) * len(sz["random_seeds"])
    total = n_tb + n_rnd
    done = 0

    def tick(k, _n=None):
        if progress:
            progress(done + k, total)

    summs, pers, cdfs = [], [], {}
    for sw, (opts, _, _) in SWEEPS.items():
        web = sz["web"][sw]
        s, p, c = tb.table(schemes, web, sz["measure_s"], sz["seeds"], progress=tick, cdf_web=web[-1], **opts)
        s.insert(0, "sweep", sw)
        p.insert(0, "sweep", sw)
        summs.append(s)
        pers.append(p)
        cdfs[f"{sw}, {web[-1]} web flows (seed {sz['seeds'][0]})"] = c
        done += len(p)
    summ, per = pd.concat(summs, ignore_index=True), pd.concat(pers, ignore_index=True)
    r_summ, r_per = rnd.table(tuple(rnd.VARIANTS), sz["measure_s"], sz["random_seeds"], progress=tick)
    mdl = model.table()
    if out is not None:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        summ.to_csv(out / "brosh_split.csv", index=False)
        per.to_csv(out / "brosh_split_seeds.csv", index=False)
        checks(summ).to_csv(out / "brosh_split_checks.csv", index=False)
        mdl.to_csv(out / "brosh_split_model.csv", index=False)
        r_summ.to_csv(out / "brosh_split_random.csv", index=False)
        r_per.to_csv(out / "brosh_split_random_seeds.csv", index=False)
        plot_reduction(summ, out / "brosh_split.png")
        plot_cdf(cdfs, out / "brosh_split_cdf.png")
        plot_ftp(summ, out / "brosh_split_ftp.png")
        plot_model(mdl, out / "brosh_split_model.png")
        rnd.plot(r_summ, out / "brosh_split_random.png")
    return summ[SHOWN]
