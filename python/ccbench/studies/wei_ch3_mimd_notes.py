"""The ``docs/REPRODUCTIONS.md`` bullets on the HS-TCP / S-TCP convergence, MIMD fairness and
throughput-CDF parts of ``wei-ch3`` (:mod:`ccbench.studies.wei_ch3_mimd`). Numbers are read
from the recorded results (``wei_ch3.csv`` and ``wei_ch3_runs.csv``); the reasoning is fixed
text, written from the reduced run of 2026-11-25."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from .recorded import read_recorded
from .wei_ch3_mimd import LABELS, MIMD_SCHEMES, sync_ntg


def _v(t: pd.DataFrame, quantity: str, setting: str | None = None, fmt: str = "{:.2g}") -> str:
    from .wei_ch3_notes import _ours

    return _ours(t, quantity, setting, fmt, inf="∞")


def _runs_mean(runs: pd.DataFrame, col: str, fmt: str = "{:.2f}", **kw) -> str:
    for k, v in kw.items():
        runs = runs[runs[k] == v]
    x = pd.to_numeric(runs[col], errors="coerce") if col in runs.columns else pd.Series(dtype=float)
    return fmt.format(float(x.mean())) if len(x.dropna()) else "–"


def bullets(results: Path) -> str:
    d = Path(results) / "reproduce-wei-ch3"
    t = read_recorded(d / "wei_ch3.csv")
    runs = read_recorded(d / "wei_ch3_runs.csv")
    if t is None or runs is None or "cc" not in runs.columns or not (runs["part"] == "mimd-n").any():
        return ""
    mn = runs[runs["part"] == "mimd-n"]
    share = {(sc, n): _runs_mean(mn, "min_share", scheme=sc, n_flows=n)
             for sc in MIMD_SCHEMES for n in sorted(mn["n_flows"].unique())}
    dur8 = f"N = 8, no noise, {mn['duration_s'].max():g} s"
    ns = sorted(mn["n_flows"].unique())

    def shares(sc: str) -> str:
        return "/".join(share[sc, n] for n in ns)

    f = {(cc, sc): _v(t, f"F (eq. 3.7) {sc}", f"{lab} N = 16, B = 1680 pkt", "{:.0f}")
         for cc, lab in (("reno", "Reno"), ("highspeed", "HS-TCP"), ("scalable", "S-TCP"))
         for sc in ("droptail", "pacing")}
    nt = runs[runs["part"] == "ntg"]
    full_buf = nt[(nt["buffer_bdp"] == 1.0) & nt["scheme"].isin(("droptail", "pacing"))]
    worst_1bdp = f"{-float(full_buf['ntg'].min()):.1%}" if len(full_buf) else "–"
    model = "/".join(f"{sync_ntg('reno', b, 16):+.3f}" for b in sorted(nt["buffer_bdp"].unique()))
    pe = nt[nt["scheme"].astype(str).str.startswith("pecn")]
    bad = pe[pe["ntg"] < -0.15].groupby("cc")["buffer_bdp"].unique()
    others = "; ".join(f"{LABELS[cc]} at {', '.join(f'{b:g}' for b in sorted(v))} BDP" for cc, v in bad.items()) or "none"
    st = nt[nt["cc"] == "scalable"]
    stcp_worst = f"{-float(st['ntg'].min()):.1%}" if len(st) else "–"
    steps = t[t["quantity"] == "Reno P-ECN NTG steps up with the buffer"]
    steps_txt = str(steps["note"].iloc[0]).split("ours ")[-1] if len(steps) else "–"
    return (
        "* **HS-TCP and S-TCP convergence (Figs 3.12 (b), (c), 3.17; `wei_ch3_convergence_cc.png`).** Under "
        f"DropTail with the noise, 16 HS-TCP flows take F = {f['highspeed', 'droptail']} RTTs and S-TCP "
        f"{f['scalable', 'droptail']} (Reno {f['reno', 'droptail']}; ∞: a seed did not converge within the 1500 s): "
        "neither is faster than Reno, as the thesis finds (its footnote: worse). λ "
        f"{_runs_mean(runs, 'sync', part='conv-cc', cc='highspeed', scheme='droptail')} and "
        f"{_runs_mean(runs, 'sync', part='conv-cc', cc='scalable', scheme='droptail')} against Table 3.2's 0.25 "
        f"and 0.23 (the DropTail gap above). Paced: HS-TCP {f['highspeed', 'pacing']}, S-TCP "
        f"{f['scalable', 'pacing']} RTTs. The bound (3.8) is printed for Reno only (the thesis says it extends to "
        "HS-TCP and S-TCP without giving the form); in Reno's form at these λ it is about 100 RTTs, far below "
        "every F.\n"
        "* **MIMD (Figs 3.13-3.14; `wei_ch3_mimd.png`): not reproduced.** Without noise, 8 S-TCP flows started "
        "within the first second stay unfair through the 600 s whether bursty or paced: over the last 100 s the "
        f"fastest flow gets {_runs_mean(mn, 'end_ratio', n_flows=8, scheme='droptail')}x the slowest's "
        f"throughput bursty and {_runs_mean(mn, 'end_ratio', n_flows=8, scheme='pacing')}x paced, and neither "
        "reaches F (eq. 3.7) within the run (thesis: bursty does not converge, paced does). Smallest flow / (c/N), "
        f"N = {'/'.join(str(n) for n in ns)}: bursty {shares('droptail')}, paced {shares('pacing')}, RED "
        f"{shares('red')}. Fairness "
        "falls from 2 to 8 flows as in Fig. 3.14 but recovers at 32, where each window is near 100 packets and "
        "Linux's Scalable TCP grows as Reno below 100 (a check with the 2.6.16 module's counting, +1 per 50 ACKs "
        "above 50 with `abc = \"per-ack\"`, two seeds: 0.74 bursty, 0.70 paced at 32 flows; still no gain from "
        "pacing). The model's mechanism is λ_i ∝ w_i for paced flows and λ_i equal for bursty ones; we measure "
        "the largest-window flow's λ_i over the smallest's at "
        f"{_runs_mean(mn, 'lam_hi_lo', n_flows=8, scheme='droptail')} (window ratio "
        f"{_runs_mean(mn, 'w_hi_lo', '{:.1f}', n_flows=8, scheme='droptail')}) bursty and "
        f"{_runs_mean(mn, 'lam_hi_lo', n_flows=8, scheme='pacing')} (window ratio "
        f"{_runs_mean(mn, 'w_hi_lo', '{:.1f}', n_flows=8, scheme='pacing')}) paced: our bursty flows already "
        "sample the losses almost as paced ones do, with λ "
        f"{_runs_mean(mn, 'sync', n_flows=8, scheme='droptail')} at 8 flows (Table 3.1 for S-TCP: 0.23), so "
        "pacing has little to add: the same DropTail λ gap as above. Randomised drops do what pacing does not "
        "here: under adaptive RED the same 8 bursty flows come together (fastest/slowest "
        f"{_runs_mean(mn, 'end_ratio', n_flows=8, scheme='red')} over the last 100 s, smallest flow "
        f"{share.get(('red', 8), '–')} of c/N, F (eq. 3.7) reached in "
        f"{_runs_mean(mn, 'converged', '{:.0%}', n_flows=8, scheme='red')} of the seeds against "
        f"{_runs_mean(mn, 'converged', '{:.0%}', n_flows=8, scheme='droptail')} bursty), at a cost of "
        f"{_runs_mean(mn, 'ntg', '{:+.2f}', n_flows=8, scheme='red')} "
        "of the fair share (RED under-uses the link, as the thesis saw).\n"
        "* **Throughput (Figs 3.16, 3.25; `wei_ch3_ntg.png`).** Normalized Throughput Gain per run (mean "
        "per-flow throughput after the warm-up against the fair share of what the noise leaves), 16 flows, 1/4, "
        "1/2 and 1 BDP. Pacing costs Reno "
        f"{_v(t, 'paced Reno loses throughput (NTG paced - bursty)', fmt='{:+.3f}')} of the fair share against "
        f"bursty, HS-TCP {_v(t, 'pacing' + chr(39) + 's loss smaller with HS-TCP', fmt='{:+.3f}')} and S-TCP "
        f"{_v(t, 'pacing' + chr(39) + 's loss unnoticeable with S-TCP', fmt='{:+.4f}')}: the thesis's order "
        "(a loss for paced Reno, smaller with HS-TCP, unnoticeable with S-TCP), all of it at the small buffers "
        f"(at 1 BDP no DropTail run loses more than {worst_1bdp}). From DropTail to Persistent ECN Reno's NTG "
        f"changes by {_v(t, 'Reno NTG under P-ECN - under DropTail', fmt='{:+.3f}')}, in the thesis's three steps "
        f"by buffer ({steps_txt} at 1/4, 1/2, 1 BDP, paced and bursty senders alike), below the fully "
        f"synchronised model's {model} (Fig. 3.15's reasoning, Reno, 16 flows) because P-ECN cuts each flow "
        "twice per marking period (above); "
        f"{_v(t, 'P-ECN runs losing at most 15 % of the fair share', fmt='{:.0%}')} of the P-ECN runs lose at "
        f"most 15 % (thesis: 'in most of the cases'); the others: {others}. S-TCP, whose decrease is 1/8, loses "
        f"at most {stcp_worst} under either queue.\n")
