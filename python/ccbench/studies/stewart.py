"""Stewart, Hayes, Armitage, Welzl & Petlund (MMSys 2011), "Multimedia-unfriendly TCP
congestion control and home gateway queue management": Figs 3, 4, 6 and 7 and the
ADSL2 numbers of the text (note §2), simulated. Scenario and measurements:
:mod:`ccbench.studies.stewart_runs`.

Experiments (``PARTS``)
-----------------------
* ``fig1``: ADSL1, 20000 B FB-strict queue, 100 ms: the CBR's extra delay grows by up to
  Q x 8 / C = 107 ms (text, exact) and is consistently higher with CUBIC.
* ``fig3``: download goodput vs packet-slot queue (7..67 slots, rule ``packets``),
  ADSL1 and ADSL2, CUBIC and NewReno, 100 ms. Paper (text, exact): on ADSL1 CUBIC
  fills the link from 7 slots, NewReno needs 20; on ADSL2 both fail below 40 slots and
  NewReno never fills it up to 67. We call the link filled at ``util >= FULL_UTIL``.
* ``fig4``: downstream CBR loss vs queue size 10..100 kB per drop rule, ADSL1, 100 ms,
  CUBIC and NewReno, with the ns-2 gateway (in-service packet not counted; Fig. 4a) and
  with FB-loose as dummynet counts (in-service packet counted; the testbed's Fig. 4b
  gateway, simulated). Paper: FB-loose >> PS > FB-strict ~ 0 %; FB-loose peaks near 30,
  60 and 90 kB (figure only).
* ``adsl2``: the same on ADSL2 with FB-loose. Paper (text): about 1 % (CUBIC) and
  0.4 % (NewReno), insensitive to queue size.
* ``fig5``: CUBIC's fast-convergence lock-in: CUBIC and a CBR *without* jitter, ADSL1,
  50 ms, 60000 B FB-loose (dummynet accounting), 180 s, repeated with random TCP start
  phases, beside the same with the N(20 ms, 1 ms) jitter. Paper: "otherwise identical"
  trials split into FC-active (fewer congestion epochs, lower CBR loss) and FC-inactive
  ones; jitter removes the split. We compare the spread of congestion epochs across
  repetitions and the CBR loss with and without jitter.
* ``fig6``: fine sweep 52500..67500 B, FB-strict and FB-loose, CUBIC and NewReno, ADSL1,
  100 ms, 180 s trials; median and 5/95 % over seeds. Paper: FB-strict peaks just
  below multiples of 1500 B (57000, 58500, 60000), FB-loose worst just above them. We
  report the strongest period of the loss curve (periodogram) and the phase
  ``Q mod 1500`` of its maxima and minima.
* ``fig7``: CBR additional queuing delay, 40000 B FB-loose, RTT/2 = 12, 25, 50,
  100 ms, CUBIC vs NewReno, ADSL1 (Fig. 7) and ADSL2 (text: CUBIC median ~11 / 9 ms
  and NewReno ~5 / 1 ms at 12 / 25 ms, both < 2 ms at 50 and 100 ms, maximum ~13 ms).
  Paper: CUBIC has the higher median and the tighter spread (IQR).
* ``mechanism``: the bytes-loose 30/60/90 kB question, from the ``fig4`` and ``fig6``
  runs plus a fine FB-loose sweep with the in-service packet counted (see
  :func:`mechanism_table` and docs/REPRODUCTIONS.md).

Values the paper gives only in figures are not compared as numbers: the table says
what the figure shows (read from the plot's description in the text, note §2).

Sizes: reduced (default): 120 s trials (Fig. 6: 120 s), 3 seeds (Fig. 6: 2 seeds,
90-byte steps); ``full=True``: the paper's 300 s trials and 5 seeds (Fig. 6: 180 s,
30 seeds, 30-byte steps, 60 120 runs: use it on an idle machine).
"""

from __future__ import annotations

import math
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd

from .stewart_runs import CCS, RULES, one

DESCRIPTION = (
    "Stewart et al. ADSL home gateway: TCP download (CUBIC, NewReno) + 186-byte CBR, three drop rules; "
    "goodput vs queue (Fig 3), CBR loss (Figs 4, 6), CBR delay (Fig 7), ADSL2 numbers"
)

Q_GRID = tuple(range(10_000, 100_001, 10_000))
FULL_UTIL = 0.95
PARTS = ("fig1", "fig3", "fig4", "adsl2", "fig5", "fig6", "fig7")
CC_LABEL = {"cubic": "CUBIC", "reno": "NewReno"}

#: Period of the loss-vs-Q pattern if the TCP packets fill what the resident CBR packets
#: leave: a full ADSL1 queue of Q bytes drains in Q*8/C, during which Q*8/C/20 ms CBR
#: packets of 186 B arrive, so TCP's share is Q (1 - 186*8/(C*0.02)) and reaches the
#: next multiple of 1500 B every 1500 / (1 - 0.0496) = 1578 B of Q (the note's
#: "sweet-spot" hypothesis, §3.2, made quantitative).
RESIDENT_CBR_PERIOD_B = 1500 / (1 - 186 * 8 / (1.5e6 * 0.020))

#: ADSL2 median extra delay (ms) from the text (note §2.7): (cc, RTT/2 ms) -> value; the
#: text says "< 2 ms" for 50 and 100 ms (stored as 2.0 with ``<``).
PAPER_ADSL2_DELAY = {("cubic", 12): 11.0, ("reno", 12): 5.0, ("cubic", 25): 9.0, ("reno", 25): 1.0,
                     ("cubic", 50): 2.0, ("reno", 50): 2.0, ("cubic", 100): 2.0, ("reno", 100): 2.0}


def sizes(full: bool) -> dict:
    if full:
        return {"duration_s": 300.0, "seeds": 5, "fine_step": 30, "fine_seeds": 30, "fine_duration_s": 180.0}
    return {"duration_s": 120.0, "seeds": 3, "fine_step": 90, "fine_seeds": 2, "fine_duration_s": 120.0}


def jobs(part: str, size: dict) -> list[dict]:
    """The runs of one experiment (keywords of :func:`stewart_runs.scenario_dict`)."""
    d, seeds = size["duration_s"], range(1, size["seeds"] + 1)
    out: list[dict] = []
    if part == "fig1":
        out += [dict(cc=cc, rule="bytes-strict", q_bytes=20_000, duration_s=d, seed=s) for cc in CCS for s in seeds]
    elif part == "fig3":
        for link in ("adsl1", "adsl2"):
            out += [dict(link=link, cc=cc, rule="packets", q_bytes=q, duration_s=d, seed=s)
                    for cc in CCS for q in Q_GRID for s in seeds]
    elif part == "fig4":
        out += [dict(cc=cc, rule=r, q_bytes=q, duration_s=d, seed=s) for cc in CCS for r in RULES
                for q in Q_GRID for s in seeds]
        out += [dict(cc=cc, rule="bytes-loose", q_bytes=q, duration_s=d, seed=s, in_service=True)
                for cc in CCS for q in Q_GRID for s in seeds]
    elif part == "adsl2":
        out += [dict(link="adsl2", cc=cc, rule="bytes-loose", q_bytes=q, duration_s=d, seed=s)
                for cc in CCS for q in Q_GRID for s in seeds]
    elif part == "fig6":
        qs = range(52_500, 67_501, size["fine_step"])
        fs, fd = range(1, size["fine_seeds"] + 1), size["fine_duration_s"]
        out += [dict(cc=cc, rule=r, q_bytes=q, duration_s=fd, seed=s) for cc in CCS
                for r in ("bytes-strict", "bytes-loose") for q in qs for s in fs]
        # The mechanism check: FB-loose as dummynet counts (CUBIC, the paper's clearest case).
        out += [dict(cc="cubic", rule="bytes-loose", q_bytes=q, duration_s=fd, seed=s, in_service=True)
                for q in qs for s in fs]
    elif part == "fig5":
        out += [dict(cc="cubic", rule="bytes-loose", q_bytes=60_000, rtt_ms=50, duration_s=180.0, seed=s,
                     in_service=True, jitter=j) for j in (False, True) for s in range(1, 2 * size["seeds"] + 5)]
    elif part == "fig7":
        out += [dict(link=link, cc=cc, rule="bytes-loose", q_bytes=40_000, rtt_ms=2 * h, duration_s=d, seed=s)
                for link in ("adsl1", "adsl2") for cc in CCS for h in (12, 25, 50, 100) for s in seeds]
    else:
        raise ValueError(f"part={part!r}; accepted: {', '.join(PARTS)}")
    for j in out:
        j["part"] = part
    return out


def _one(job: dict) -> dict:
    args = {k: v for k, v in job.items() if k != "part"}
    return {"part": job["part"], **one(args)}


def run_jobs(all_jobs: list[dict], workers: int = 1, progress=None) -> pd.DataFrame:
    """Simulates every job (in ``workers`` processes); ``progress(done, total)`` after each."""
    rows: list[dict] = []

    def step(r: dict) -> None:
        rows.append(r)
        if progress:
            progress(len(rows), len(all_jobs))

    if workers <= 1:
        for j in all_jobs:
            step(_one(j))
    else:
        with ProcessPoolExecutor(max_workers=workers) as ex:
            for r in ex.map(_one, all_jobs, chunksize=8):
                step(r)
    df = pd.DataFrame(rows)
    for col, default in (("link", "adsl1"), ("rtt_ms", 100), ("in_service", False), ("jitter", True)):
        df[col] = df[col].fillna(default) if col in df else default
    df["in_service"] = df["in_service"].astype(bool)
    df["jitter"] = df["jitter"].astype(bool)
    return df


def _ci95(x: pd.Series) -> float:
    """Half-width of the 95 % confidence interval of the mean (Student t)."""
    from scipy import stats

    x = x.dropna()
    return float(stats.t.ppf(0.975, len(x) - 1) * x.std(ddof=1) / math.sqrt(len(x))) if len(x) > 1 else float("nan")


def aggregate(runs: pd.DataFrame, keys: list[str], value: str) -> pd.DataFrame:
    """Median, min, max (the paper's error bars), mean and its 95 % CI over seeds."""
    g = runs.groupby(keys, sort=True)[value]
    return pd.DataFrame({"median": g.median(), "min": g.min(), "max": g.max(), "mean": g.mean(),
                         "ci95": g.apply(_ci95), "p5": g.quantile(0.05), "p95": g.quantile(0.95)}).reset_index()


def min_full_slots(runs: pd.DataFrame, link: str, cc: str) -> float:
    """Smallest slot count whose median utilisation reaches ``FULL_UTIL`` (NaN: none)."""
    r = runs[(runs["part"] == "fig3") & (runs["link"] == link) & (runs["cc"] == cc)]
    a = aggregate(r, ["q_bytes"], "util")
    ok = a[a["median"] >= FULL_UTIL]
    return float(math.ceil(ok["q_bytes"].min() / 1500)) if len(ok) else float("nan")


def _fold_amplitudes(q: np.ndarray, ys: np.ndarray, periods: np.ndarray, bins: int = 8) -> np.ndarray:
    """Epoch folding: for each row of ``ys`` and each period, the spread (max - min) of
    the phase-binned means over the mean; shape (len(ys), len(periods))."""
    idx = (np.floor((q[None, :] % periods[:, None]) / periods[:, None] * bins).astype(int)
           + bins * np.arange(periods.size)[:, None]).ravel()
    counts = np.bincount(idx, minlength=bins * periods.size).reshape(periods.size, bins)
    out = []
    for y in np.atleast_2d(ys):
        sums = np.bincount(idx, weights=np.tile(y, periods.size), minlength=bins * periods.size)
        means = sums.reshape(periods.size, bins) / np.maximum(counts, 1)
        out.append((means.max(axis=1) - means.min(axis=1)) / max(float(np.mean(y)), 1e-12))
    return np.array(out)


def period_analysis(curve: pd.DataFrame, shuffles: int = 200) -> dict:
    """The periodicity of loss vs queue size by epoch folding: the best fold period in
    1000..3500 B (``period_B``) and its significance ``fold_z``: how many standard
    deviations its amplitude lies above the best amplitude of the same values in random
    order (``shuffles`` permutations; noise gives ~0); and the phases (Q mod 1500, bins
    of 186 B: the CBR packet) where loss is highest and lowest on average."""
    q = curve["q_bytes"].to_numpy(dtype=float)
    y = curve["median"].to_numpy(dtype=float)
    periods = np.arange(1000.0, 3500.0, 3.0)
    amp = _fold_amplitudes(q, y, periods)[0]
    rng = np.random.default_rng(0)
    null = _fold_amplitudes(q, np.array([rng.permutation(y) for _ in range(shuffles)]), periods).max(axis=1)
    best = int(np.argmax(amp))
    # Folding at a multiple of the period is at least as good as at the period: take the
    # half period when it explains nearly as much (the fundamental, not a subharmonic).
    half = np.abs(periods - periods[best] / 2) <= 0.02 * periods[best] / 2
    if half.any() and amp[half].max() >= 0.8 * amp[best]:
        best = int(np.flatnonzero(half)[np.argmax(amp[half])])
    phase = (q % 1500) // 186 * 186
    by = pd.Series(y).groupby(phase).mean()
    return {"period_B": float(periods[best]),
            "fold_z": float((amp[best] - null.mean()) / max(float(null.std()), 1e-12)),
            "phase_max_B": float(by.idxmax()), "phase_min_B": float(by.idxmin()),
            "phase_amplitude": float((by.max() - by.min()) / by.mean())}


def grid_peaks(runs: pd.DataFrame, cc: str, in_service: bool) -> dict:
    """FB-loose loss at 30/60/90 kB over the mean of its 10 kB neighbours (>1 = peak)."""
    r = runs[(runs["part"] == "fig4") & (runs["rule"] == "bytes-loose") & (runs["cc"] == cc)
             & (runs["in_service"] == in_service)]
    m = r.groupby("q_bytes")["voip_loss"].mean()
    qs = (30_000, 60_000, 90_000)
    if not all(q + d in m.index for q in qs for d in (-10_000, 0, 10_000)):
        return {}
    return {q: float(m[q] / ((m[q - 10_000] + m[q + 10_000]) / 2)) for q in qs}


def _num(x) -> bool:
    return isinstance(x, (int, float, np.floating)) and not isinstance(x, bool) and math.isfinite(x)


def _row(fig, quantity, setting, ours, paper, unit="", ci=float("nan"), note="", agrees=None):
    """One table row; ``diff`` = ours - paper when both are numbers; ``agrees``: whether
    ours satisfies the paper's statement (None where the paper gives a number only)."""
    diff = ours - paper if _num(ours) and _num(paper) else float("nan")
    return {"fig": fig, "quantity": quantity, "setting": setting, "ours": ours, "ci95": ci, "paper": paper,
            "diff": diff, "unit": unit, "agrees": agrees, "note": note}


def claims(runs: pd.DataFrame) -> pd.DataFrame:
    """The ours-vs-paper table (one row per number or statement of the paper)."""
    rows = []
    parts = set(runs["part"])
    if "fig1" in parts:
        r = runs[runs["part"] == "fig1"]
        mx = float(r["extra_max_ms"].max())
        rows.append(_row("1", "max CBR extra delay", "adsl1 20000 B 100ms", mx, 106.7, "ms",
                         note="20000 B x 8 / 1.5 Mbit/s; ours adds the CBR packet's own 1 ms"))
        med = {cc: float(r[r["cc"] == cc]["extra_p50_ms"].median()) for cc in CCS}
        rows.append(_row("1", "median extra delay CUBIC - NewReno", "adsl1 20000 B 100ms", med["cubic"] - med["reno"],
                         "> 0", "ms", agrees=med["cubic"] > med["reno"],
                         note=f"CUBIC {med['cubic']:.0f} ms, NewReno {med['reno']:.0f} ms"))
    if "fig3" in parts:
        for link in ("adsl1", "adsl2"):
            for cc in CCS:
                n = min_full_slots(runs, link, cc)
                ours = n if math.isfinite(n) else "none <= 67"
                if link == "adsl1":
                    paper, agrees, note = {"cubic": 7, "reno": 20}[cc], None, "text: full rate from this many slots"
                elif cc == "cubic":
                    paper, agrees, note = ">= 40", math.isfinite(n) and n >= 40, "text: both fail below 40 slots"
                else:
                    paper, agrees, note = "none <= 67", not math.isfinite(n), "text: NewReno never fills it"
                rows.append(_row("3", f"min slots to reach {FULL_UTIL:.0%} utilisation", f"{link} {CC_LABEL[cc]} 100ms",
                                 ours, paper, "slots", note=note, agrees=agrees))
    if "fig4" in parts:
        r = runs[(runs["part"] == "fig4") & ~runs["in_service"]]
        for cc in CCS:
            mean = {rule: r[(r["cc"] == cc) & (r["rule"] == rule)].groupby("seed")["voip_loss"].mean() for rule in RULES}
            ordered = mean["bytes-loose"].mean() > mean["packets"].mean() > mean["bytes-strict"].mean()
            for rule in RULES:
                x = mean[rule]
                paper = {"bytes-loose": "much higher", "packets": "moderate", "bytes-strict": "almost 0 %"}[rule]
                ok = ordered and (rule != "bytes-strict" or x.mean() < 0.005)
                rows.append(_row("4a", "CBR loss, mean over 10-100 kB", f"{CC_LABEL[cc]} {rule}", 100 * x.mean(),
                                 paper, "%", ci=100 * _ci95(x), agrees=bool(ok),
                                 note="order FB-loose > PS > FB-strict" + ("" if ordered else " NOT met")))
        for cc in CCS:
            for ins in (False, True):
                pk = grid_peaks(runs, cc, ins)
                if not pk:
                    continue
                rows.append(_row("4b" if ins else "4a", "FB-loose loss at 30/60/90 kB / neighbours",
                                 f"{CC_LABEL[cc]} in-service {'counted' if ins else 'not counted'}",
                                 float(np.mean(list(pk.values()))), "peaks (>1)", "ratio",
                                 agrees=all(v > 1 for v in pk.values()), note="30/60/90 kB: " + " / ".join(f"{v:.2f}" for v in pk.values())))
    if "adsl2" in parts:
        r = runs[runs["part"] == "adsl2"]
        for cc, paper in (("cubic", 1.0), ("reno", 0.4)):
            x = r[r["cc"] == cc]
            per_q = x.groupby("q_bytes")["voip_loss"].median()
            rows.append(_row("text", "ADSL2 FB-loose CBR loss", f"{CC_LABEL[cc]} 10-100 kB", 100 * per_q.median(),
                             paper, "%", ci=100 * _ci95(x.groupby("seed")["voip_loss"].mean()),
                             note=f"range over sizes {100 * per_q.min():.2f}-{100 * per_q.max():.2f} %"))
    if "fig6" in parts:
        r = runs[(runs["part"] == "fig6") & ~runs["in_service"]]
        for cc in CCS:
            for rule, paper in (("bytes-strict", "peaks just below k*1500"), ("bytes-loose", "worst just above k*1500")):
                a = aggregate(r[(r["cc"] == cc) & (r["rule"] == rule)], ["q_bytes"], "voip_loss")
                pa = period_analysis(a)
                near = rule == "bytes-strict" and pa["phase_max_B"] >= 1116 or rule == "bytes-loose" and pa["phase_max_B"] <= 372
                # One or two periods of the resident-CBR prediction (NewReno's FB-loose
                # pattern repeats every second multiple).
                k = max(1, round(pa["period_B"] / RESIDENT_CBR_PERIOD_B))
                periodic = k <= 2 and abs(pa["period_B"] / k - RESIDENT_CBR_PERIOD_B) <= 0.05 * RESIDENT_CBR_PERIOD_B \
                    and pa["fold_z"] > 3
                rows.append(_row("6", "period of loss vs Q", f"{CC_LABEL[cc]} {rule}", pa["period_B"], 1500.0, "B",
                                 agrees=bool(periodic and near),
                                 note=f"{paper}; resident-CBR prediction {RESIDENT_CBR_PERIOD_B:.0f} B; fold "
                                      f"z = {pa['fold_z']:.1f} against shuffled data; max at Q mod 1500 = {pa['phase_max_B']:.0f}, min at "
                                      f"{pa['phase_min_B']:.0f}, amplitude {100 * pa['phase_amplitude']:.0f} %"))
    if "fig5" in parts:
        r = runs[runs["part"] == "fig5"]
        spread = {}
        for j in (False, True):
            e = r[r["jitter"] == j]["tcp_loss_events"]
            spread[j] = float((e.max() - e.min()) / e.mean())
            rows.append(_row("5", "CBR loss", f"CUBIC 60000 B, jitter {'on' if j else 'off'}",
                             100 * float(r[r["jitter"] == j]["voip_loss"].mean()), "lower when FC locks in", "%",
                             note=f"congestion epochs {int(e.min())}-{int(e.max())} over {len(e)} repetitions"))
        # A lock-in splits jitter-free repetitions into two groups of clearly different
        # epoch counts (the paper's FC-active/inactive trials): a spread well above the
        # jittered one.
        rows.append(_row("5", "epoch spread (max-min)/mean, no jitter over jitter", "CUBIC 60000 B 50ms",
                         spread[False] / max(spread[True], 1e-9), "> 1 (two modes)", "ratio",
                         agrees=bool(spread[False] > 2 * spread[True])))
    if "fig7" in parts:
        r = runs[runs["part"] == "fig7"]
        for link in ("adsl1", "adsl2"):
            for h in (12, 25, 50, 100):
                x = r[(r["link"] == link) & (r["rtt_ms"] == 2 * h)]
                med = {cc: x[x["cc"] == cc]["extra_p50_ms"].median() for cc in CCS}
                iqr = {cc: (x[x["cc"] == cc]["extra_p75_ms"] - x[x["cc"] == cc]["extra_p25_ms"]).median() for cc in CCS}
                if link == "adsl1":
                    d = med["cubic"] - med["reno"]
                    rows.append(_row("7", "median extra delay CUBIC - NewReno", f"adsl1 RTT/2={h}ms", d, "> 0", "ms",
                                     agrees=bool(d > 0), note=f"CUBIC {med['cubic']:.0f} ms, NewReno {med['reno']:.0f} ms"))
                    d = iqr["cubic"] - iqr["reno"]
                    rows.append(_row("7", "IQR extra delay CUBIC - NewReno", f"adsl1 RTT/2={h}ms", d, "< 0 (tighter)",
                                     "ms", agrees=bool(d < 0), note=f"CUBIC {iqr['cubic']:.0f} ms, NewReno {iqr['reno']:.0f} ms"))
                else:
                    for cc in CCS:
                        p = PAPER_ADSL2_DELAY[(cc, h)]
                        rows.append(_row("text", "ADSL2 median extra delay", f"{CC_LABEL[cc]} RTT/2={h}ms", med[cc],
                                         p if h < 50 else "< 2", "ms", agrees=None if h < 50 else bool(med[cc] < 2),
                                         note="text: ~" if h < 50 else "text: link not saturated"))
        x = r[r["link"] == "adsl2"]
        rows.append(_row("text", "ADSL2 max extra delay", "40000 B FB-loose", float(x["extra_max_ms"].median()),
                         13.0, "ms", note="median over runs of each run's maximum"))
    return pd.DataFrame(rows)


def mechanism_table(runs: pd.DataFrame) -> pd.DataFrame:
    """FB-loose and FB-strict CBR loss by phase ``Q mod 1500`` (bins of 186 B) in the
    fine sweep: the 1500-byte periodicity and where the 10 kB grid samples it."""
    r = runs[runs["part"] == "fig6"].copy()
    r["phase_B"] = (r["q_bytes"] % 1500) // 186 * 186
    t = r.groupby(["rule", "in_service", "cc", "phase_B"])["voip_loss"].mean().mul(100).rename("loss_pct")
    return t.reset_index()


def _median_range(ax, a: pd.DataFrame, x, scale: float = 1.0, **kw) -> None:
    """Median with min-max error bars over seeds (the paper's plots)."""
    m = scale * a["median"]
    ax.errorbar(x, m, yerr=[m - scale * a["min"], scale * a["max"] - m], marker="o", capsize=2, **kw)


def _save(fig, path: Path) -> None:
    from ccbench.plots import save_figure

    save_figure(fig, path, dpi=110)


def plot(runs: pd.DataFrame, out: Path) -> None:
    """stewart_fig3.png, stewart_fig4.png, stewart_fig6.png, stewart_fig7.png."""
    from ccbench.plots import new_figure  # no pyplot: the backend stays the user's

    parts = set(runs["part"])
    colours = {"cubic": "C3", "reno": "C0"}
    if "fig3" in parts:
        fig, axes = new_figure(1, 2, figsize=(10, 3.6))
        for ax, link in zip(axes, ("adsl1", "adsl2")):
            for cc in CCS:
                a = aggregate(runs[(runs["part"] == "fig3") & (runs["link"] == link) & (runs["cc"] == cc)],
                              ["q_bytes"], "goodput_kbps")
                _median_range(ax, a, np.ceil(a["q_bytes"] / 1500), color=colours[cc], label=CC_LABEL[cc])
            ax.set(title=f"Fig 3 {link}: goodput vs PS queue (100 ms)", xlabel="queue (slots)", ylabel="goodput (kbit/s)")
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7)
        _save(fig, out / "stewart_fig3.png")
    if "fig4" in parts:
        fig, axes = new_figure(1, 3, figsize=(14, 3.6))
        r = runs[runs["part"] == "fig4"]
        for ax, cc in zip(axes, CCS):
            for rule, ls in zip(RULES, ("-", ":", "--")):
                a = aggregate(r[(r["cc"] == cc) & (r["rule"] == rule) & ~r["in_service"]], ["q_bytes"], "voip_loss")
                _median_range(ax, a, a["q_bytes"] / 1e3, 100.0, ls=ls, label=rule)
            ax.set(title=f"Fig 4a: {CC_LABEL[cc]} (ns-2 gateway)", xlabel="queue (kB)", ylabel="CBR loss (%)")
            ax.legend(fontsize=7)
            ax.grid(alpha=0.3)
        for cc in CCS:
            for ins, ls in ((False, "-"), (True, "--")):
                a = aggregate(r[(r["cc"] == cc) & (r["rule"] == "bytes-loose") & (r["in_service"] == ins)],
                              ["q_bytes"], "voip_loss")
                axes[2].plot(a["q_bytes"] / 1e3, 100 * a["median"], ls=ls, marker="o", color=colours[cc],
                             label=f"{CC_LABEL[cc]}, in-service {'counted' if ins else 'not counted'}")
        axes[2].set(title="Fig 4b: FB-loose, dummynet vs ns-2 accounting", xlabel="queue (kB)", ylabel="CBR loss (%)")
        axes[2].legend(fontsize=6)
        axes[2].grid(alpha=0.3)
        _save(fig, out / "stewart_fig4.png")
    if "fig6" in parts:
        fig, axes = new_figure(1, 2, figsize=(13, 3.8), sharey=True)
        r = runs[runs["part"] == "fig6"]
        for ax, rule in zip(axes, ("bytes-strict", "bytes-loose")):
            for cc in CCS:
                a = aggregate(r[(r["cc"] == cc) & (r["rule"] == rule) & ~r["in_service"]], ["q_bytes"], "voip_loss")
                ax.plot(a["q_bytes"], 100 * a["median"], color=colours[cc], lw=0.9, label=CC_LABEL[cc])
                ax.fill_between(a["q_bytes"], 100 * a["p5"], 100 * a["p95"], color=colours[cc], alpha=0.15)
            for k in range(36, 46):
                ax.axvline(k * 1500, color="grey", lw=0.5, alpha=0.5)
            ax.set(title=f"Fig 6: {rule}, ADSL1 100 ms (grey: multiples of 1500 B)", xlabel="queue (B)",
                   ylabel="CBR loss (%)")
            ax.legend(fontsize=7)
        _save(fig, out / "stewart_fig6.png")
    if "fig7" in parts:
        fig, axes = new_figure(1, 2, figsize=(11, 3.8))
        r = runs[runs["part"] == "fig7"]
        for ax, link in zip(axes, ("adsl1", "adsl2")):
            stats = []
            for h in (12, 25, 50, 100):
                for cc in CCS:
                    x = r[(r["link"] == link) & (r["rtt_ms"] == 2 * h) & (r["cc"] == cc)]
                    stats.append({"med": x["extra_p50_ms"].median(), "q1": x["extra_p25_ms"].median(),
                                  "q3": x["extra_p75_ms"].median(), "whislo": x["extra_p5_ms"].median(),
                                  "whishi": x["extra_p95_ms"].median(), "label": f"{h}\n{CC_LABEL[cc][:3]}"})
            ax.bxp(stats, showfliers=False)
            ax.set(title=f"Fig 7 ({link}): CBR extra delay, 40000 B FB-loose", xlabel="RTT/2 (ms), CC",
                   ylabel="extra delay (ms), 5/25/50/75/95 %")
            ax.grid(alpha=0.3)
        _save(fig, out / "stewart_fig7.png")


def run(full: bool = False, out: Path | None = None, parts=PARTS, workers: int | None = None,
        progress=None) -> pd.DataFrame:
    """Runs the experiments; writes ``stewart_runs.parquet`` (every run), ``stewart.csv``
    (the ours-vs-paper table), ``stewart_mechanism.csv`` and the figures into ``out``."""
    size = sizes(full)
    all_jobs = [j for p in parts for j in jobs(p, size)]
    runs = run_jobs(all_jobs, workers=workers if workers is not None else (2 if full else 1), progress=progress)
    table = claims(runs)
    if out is not None:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        runs.to_parquet(out / "stewart_runs.parquet", index=False)
        table.to_csv(out / "stewart.csv", index=False)
        if "fig6" in parts:
            mechanism_table(runs).to_csv(out / "stewart_mechanism.csv", index=False)
        plot(runs, out)
    # The printed table; the CSV also has the confidence intervals and the notes.
    return table.drop(columns=["ci95", "note"])
