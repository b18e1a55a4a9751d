"""Figures of :mod:`ccbench.studies.luebben` (one PNG per paper figure, the paper's
values drawn as grey reference lines where its text gives them)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from . import luebben_metrics as M


def _fig(n: int = 1, w: float = 6.4, h: float = 4.2):
    from ccbench.plots import new_figure

    fig, ax = new_figure(figsize=(w * n, h), ncols=n) if n > 1 else new_figure(figsize=(w, h))
    return fig, (list(np.atleast_1d(ax)) if n > 1 else [ax])


def _finish(fig, ax, path: Path, xlabel: str, ylabel: str, title: str) -> None:
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)
    fig.savefig(path, dpi=120)


def _alpha_axes(ax, title: str, ref_mbit: float | None = None):
    ax.set_xscale("log")
    ax.set_xlabel("time scale t (s)")
    ax.set_ylabel("attainable rate α̃(t) (Mbit/s)")
    ax.set_title(title, fontsize=9)
    if ref_mbit is not None:
        ax.axhline(ref_mbit, color="grey", lw=0.7, ls=":", label=f"paper: {ref_mbit:g} Mbit/s")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7)


def _alphas(ax, ests: dict, names, t):
    for c in names:
        e = ests.get(c)
        if e is not None:
            ax.plot(t, e.alpha(t) / 1e6, label=f"{c} (→ {e.long_term_rate_bps / 1e6:g})")


def write_all(data: dict, out: Path) -> None:
    from ccbench.models.luebben import periodic_loss_buffering_probability

    from .luebben import AQM, BUFFERS, CCS, CWND_NEEDED_PKTS, PKT, RATES_MBIT

    out = Path(out)
    t = np.logspace(-2, 2, 300)
    ests = data["estimates"]

    fig, (ax,) = _fig()
    for w, (tt, a, an, mn) in data["fig4"].items():
        ax.plot(tt, a / 1e6, label=f"estimate, w = {w / 1e3:g} kbit")
        ax.plot(tt, an / 1e6, ls=":", label=f"analytic S(t)/t, w = {w / 1e3:g} kbit")
    ax.axvline(0.05, color="grey", lw=0.6, ls="--")
    _alpha_axes(ax, "Fig. 4: static window, C = 10 Mbit/s, T = 50 ms (paper: 5 / 10 Mbit/s, 50 ms)")
    fig.savefig(out / "luebben_fig4.png", dpi=120)

    fig, (ax,) = _fig()
    tt = np.logspace(-3, 3, 400)
    for racc, e in sorted(data["fig5"].items()):
        ax.plot(tt, e.alpha(tt) / PKT, label=f"ECN-AIMD estimate, r_acc = {racc} pkt/s")
    ax.plot(tt, M.static_alpha(tt, 41, 0.005, 1.0), ls=":", label="static window w = 41 (analytic, convex minorant)")
    ax.axhline(4100, color="grey", lw=0.7, ls=":")
    ax.set_xscale("log")
    ax.set_xlabel("time scale t (s)")
    ax.set_ylabel("α̃(t) (pkt/s)")
    ax.set_title("Fig. 5: ECN-AIMD, p = 1e-3, RTT 10 ms (paper: 4100 / 4000 pkt/s)", fontsize=9)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7)
    fig.savefig(out / "luebben_fig5.png", dpi=120)

    f6 = data["fig6"]
    fig, (ax,) = _fig(w=8)
    ax.plot(f6["t"], 1e3 * f6["bound"], lw=0.7, label=f"delay bound (ε = {f6['eps']:.2g})")
    ax.plot(f6["t"], 1e3 * f6["quantile"], lw=0.7, label="empirical (1 − ε) quantile over repetitions")
    _finish(fig, ax, out / "luebben_fig6.png", "frame time (s)", "delay (ms)",
            "Fig. 6: synthetic VBR video (2000 pkt/s) over ECN-AIMD (paper: bounds follow the quantiles)")

    fig, (ax,) = _fig()
    _alphas(ax, ests, ["droptail-167"], t)
    _alpha_axes(ax, "Fig. 8: NewReno, 167 pkts, 9 cross flows", 9.0)
    fig.savefig(out / "luebben_fig8.png", dpi=120)

    fx = data["fixed"]
    fig, axs = _fig(2, w=5)
    for ax, rate in zip(axs, (1e6, 9e6)):
        r = fx[("droptail-167", rate)][0]
        tw = r["t_write"]
        sel = tw < tw[0] + 20
        for k in ("sender", "network", "receiver"):
            ax.plot(tw[sel], r[k][sel], lw=0.6, label=f"Δ_{k[:3]}")
        ax.set_yscale("log")
        ax.set_xlabel("send time (s)")
        ax.set_ylabel("delay (s)")
        ax.set_title(f"Fig. 2: {rate / 1e6:g} Mbit/s", fontsize=9)
        ax.legend(fontsize=7)
    fig.savefig(out / "luebben_fig2.png", dpi=120)

    f10 = data["fig10"]
    fig, (ax,) = _fig()
    uu = np.linspace(0, 1, 101)
    ax.plot(f10["u"], f10["pbuf"], "o-", label="ours (NewReno, drop-tail 167)")
    ax.plot(uu, periodic_loss_buffering_probability(uu), ls=":", label="periodic-loss model (ccbench.models.luebben)")
    _finish(fig, ax, out / "luebben_fig10.png", "utilisation (rate / 9.4 Mbit/s)", "P[buffering in the sender stack]",
            "Fig. 10 (paper: > 0 from small u, → 1 at u → 1)")

    fig, (ax,) = _fig(w=8)
    for k, r in data["aimd"].items():
        sel = r["t"] < r["t"][0] + 20
        ax.plot(r["t"][sel], r["cwnd"][sel], lw=0.7, label=k)
    ax.axhline(CWND_NEEDED_PKTS, color="k", ls="-.", lw=0.8, label="cwnd needed for 5 Mbit/s")
    _finish(fig, ax, out / "luebben_fig11.png", "time (s)", "cwnd (pkts)",
            "Fig. 11: AIMD window, 20 ms, long-term 9.4 Mbit/s, 5 Mbit/s application")

    from ccbench.analysis.distribution import ccdf

    fig, (ax,) = _fig()
    for m in RATES_MBIT:
        v = np.concatenate([r["total"] for r in fx[("droptail-167", m * 1e6)]])
        x, y = ccdf(v)
        ax.step(x, np.maximum(y, 1e-6), where="post", lw=0.8, label=f"{m} Mbit/s")
    ax.axvline(0.03, color="grey", ls=":", lw=0.7)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(1e-4, 1.1)
    ax.set_xlabel("end-to-end delay x (s)")
    ax.set_ylabel("P[Δ_e2e > x]")
    ax.set_title("Fig. 12: NewReno, 167 pkts (paper: bend at ≈30 ms)", fontsize=9)
    ax.legend(fontsize=6, ncol=2)
    fig.savefig(out / "luebben_fig12.png", dpi=120)

    fig, axs = _fig(2, w=5)
    _alphas(axs[0], ests, BUFFERS, t)
    _alpha_axes(axs[0], "Fig. 13: buffer size (paper: 8 at 21 pkts, else 9)", 9.0)
    for c in ("droptail-83", "droptail-167", "droptail-251"):
        for k, ls in (("total", "-"), ("network", ":")):
            v = np.concatenate([r[k] for r in fx[(c, 5e6)]])
            x, y = ccdf(v)
            axs[1].step(x, np.maximum(y, 1e-6), ls, where="post", lw=0.8, label=f"{c} {k}")
    axs[1].set_xscale("log")
    axs[1].set_yscale("log")
    axs[1].set_ylim(1e-4, 1.1)
    axs[1].set_xlabel("delay x (s)")
    axs[1].set_ylabel("P[Δ > x]")
    axs[1].set_title("Fig. 14a: 5 Mbit/s", fontsize=9)
    axs[1].legend(fontsize=6)
    fig.savefig(out / "luebben_fig13_14a.png", dpi=120)

    acf = data["acf"]
    lags = np.arange(len(next(iter(acf.values()))["acf"])) * 0.01
    for name, group in (("fig14b", ("droptail-83", "droptail-167", "droptail-251")),
                        ("fig15cd", ("droptail-167", "red-20", "codel", "bernoulli", "periodic")),
                        ("fig16b", CCS)):
        fig, (ax,) = _fig()
        for c in group:
            a = acf[c]
            ax.plot(lags, a["acf"], lw=0.9, label=c)
            ax.fill_between(lags, a["acf"] - a["ci"], a["acf"] + a["ci"], alpha=0.2)
        _finish(fig, ax, out / f"luebben_{name}.png", "lag τ (s)", "CWND autocorrelation",
                f"{name}: CWND autocorrelation at 5 Mbit/s (mean, 95 % CI)")

    fig, axs = _fig(2, w=5)
    _alphas(axs[0], ests, ("droptail-167", "red-5", "red-20", "codel"), t)
    _alpha_axes(axs[0], "Fig. 15a: AQM (paper: RED-5 8, others 9)", 9.0)
    _alphas(axs[1], ests, ("red-20", "bernoulli", "periodic"), t)
    _alpha_axes(axs[1], "Fig. 15b: loss processes", 9.0)
    fig.savefig(out / "luebben_fig15ab.png", dpi=120)
    assert set(AQM) <= set(ests)

    fig, (ax,) = _fig()
    _alphas(ax, ests, CCS, t)
    _alpha_axes(ax, "Fig. 16a: congestion control (paper: all 9)", 9.0)
    fig.savefig(out / "luebben_fig16a.png", dpi=120)

    fig, (ax,) = _fig(w=7)
    items = sorted(data["fig17"].items(), key=lambda kv: kv[1])
    ax.barh([k for k, _ in items], [v for _, v in items])
    ax.set_xlabel("delay bound (ms), ξ = 0.01")
    ax.set_title("Fig. 17: synthetic 4 Mbit/s VBR video", fontsize=9)
    fig.savefig(out / "luebben_fig17.png", dpi=120)
