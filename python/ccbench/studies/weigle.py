"""Weigle, Cheng, Kaur & Kulkarni (2009), "Generalized stochastic performance models for
loss-based congestion control": Table 1 and the single-connection validation, Figs 1-7
(note §3.2, §4.1, §4.2).

The paper's experiment (note §3.2)
----------------------------------
One Reno connection sends 1000 segments of 1460 B over a path of capacity C with a
100 ms minimum RTT and independent random losses p; at least 100 runs per setting; the
mean and standard deviation of T_n (time until n segments are through) are compared
with the LB-CC model (M1), with M1 fed the *observed* timeout probability (M1-p) and
with Cardwell et al. (M2). Table 1 lists observed p, p_T computed by Eq. (19) and p_T
observed. Settings (Fig: C, K, p): 1: 56 kbit/s, K = BDP, 0.01; 2: 1.54 Mbit/s, BDP,
0.01; 3: 10 Mbit/s, BDP, 0.01; 4: 56 kbit/s, K = 44, 0.01; 5-7: 10 Mbit/s, BDP, 0.001 /
0.03 / 0.05.

Our scenario
------------
* Dumbbell, bottleneck C both ways, 50 ms one-way (100 ms propagation RTT), negligible
  access links (the paper's path had two hops of C; at 56 kbit/s its second hop adds
  ~0.21 s per segment: the models are fed our *measured* RTT, so they see the same path
  as the simulated stack), a 10000-packet drop-tail queue ("well provisioned").
* Bernoulli loss p on the data direction only (the paper does not say whether ACKs
  were lost).
* The flow writes 1000 messages of 1460 B at t = 0 (a ``trace`` app), so the packets
  table gives T_n = delivery time of message n for every n in one run. K is the send
  buffer, ``sndbuf = K x 1460 B`` (K = BDP rounded, at least 1: 56 kbit/s -> 1,
  1.54 Mbit/s -> 13, 10 Mbit/s -> 86), which caps the window as the paper's K does.
* Two stacks: ``textbook-reno`` (``stack = "textbook-reno"``: ns-2-like Reno, no SACK,
  3-dupACK rule, Reno fast recovery, no TLP/F-RTO, no delayed ACKs, IW 1, RFC 6298 RTO
  with 200 ms minimum) and ``linux`` (the simulator's default Linux stack with
  ``cc = "reno"``, 1460-byte MSS: SACK, RACK-TLP, F-RTO, PRR, delayed ACKs, IW 10,
  Linux RTO).

Model inputs (per setting and stack, from the runs; the paper names only p)
----------------------------------------------------------------------------
* ``p``: data packets dropped / data packets sent (pooled over runs);
* ``RTT``: the path's base RTT, 100 ms plus the serialisation of one data packet
  (1500 B) and one ACK (40 B) at C: the model's ACK clock ``alpha(W) = max(RTT/W, B/C)``
  puts queueing in the ``B/C`` floor, so RTT is the empty-path RTT (the paper's
  "minimum RTT"; feeding the measured mean RTT, which at 56 kbit/s with K = 44 is ~2.9 s
  of mostly queueing, makes every fast retransmit cost 2.9 s and M1 over-predict by
  ~30 %). The measured mean SRTT is in the table as ``srtt_s``;
* ``TO``: median of the RTO samples (a single, un-backed-off timeout);
* ``K``: as above; ``C``; ``B`` = 1460 B. M1 uses Eq. (19) for p_T and Eq. (20) for
  t_TO; M1-p uses the observed p_T; M2 is Cardwell et al. with b = 1 (no delayed
  ACKs), w1 = 1 and no handshake (our connections start established).
* Observed p_T = RTO expiries (``timeouts``, backoff repeats included: at p <= 5 % a
  retransmission is rarely lost twice) / data packets sent.

T_n in the simulation is the delivery of message n at the receiver; the model's T_n is
the n-th ACK at the sender (half an RTT later): we compare at the sender side by adding
the mean one-way delay RTT/2 to the simulated times.

Columns (one row per figure and stack)
--------------------------------------
``p_pct``/``p_paper_pct``, ``pT_computed_pct``/``pT_computed_paper_pct`` (Eq. 19 at
large w, Table 1's "computed"), ``pT_obs_pct``/``pT_obs_paper_pct``; ``T1000_sim_s``,
``T1000_M1_s``, ``T1000_M1p_s``, ``T1000_M2_s``, the relative errors
``err_M1 = (T_sim - T_M1)/T_sim`` (the paper's Fig. 9 definition) and ``err_M1p``, and the
standard deviations ``sd1000_sim_s``/``sd1000_M1_s``. The paper gives Figs 1-7 only as
plots; their statements are qualitative (note §4.2), listed in ``PAPER_FIGS``.

Sizes: reduced (default) 100 runs per setting and stack, the paper's N_sim >= 100 (Figs 1
and 4, whose transfers last 4-9 simulated minutes each, 50); ``full=True`` 500 (200).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

DESCRIPTION = (
    "Weigle et al. LB-CC model, Table 1 and Figs 1-7: 1000-segment Reno transfers under random loss, "
    "model (M1, M1-p, Cardwell M2) vs the textbook-reno and Linux stacks"
)

SEGMENTS = 1000
MSS = 1460
RTT_PROP_S = 0.1
STACKS = ("textbook-reno", "linux")

#: Fig -> (capacity bit/s, K segments or None for the BDP, loss p).
SETTINGS: dict[int, tuple[float, int | None, float]] = {
    1: (56e3, None, 0.01),
    2: (1.54e6, None, 0.01),
    3: (10e6, None, 0.01),
    4: (56e3, 44, 0.01),
    5: (10e6, None, 0.001),
    6: (10e6, None, 0.03),
    7: (10e6, None, 0.05),
}

#: Table 1 of the paper, verbatim: observed p (%), computed p_T (%), observed p_T (%).
PAPER_TABLE1: dict[int, tuple[float, float, float]] = {
    1: (0.994, 0.059, 0.983),
    2: (0.994, 0.059, 0.077),
    3: (0.989, 0.058, 0.063),
    4: (0.991, 0.058, 0.186),
    5: (0.093, 0.001, 0.002),
    6: (2.938, 0.479, 0.370),
    7: (4.961, 1.306, 0.960),
}

#: The paper's statements on Figs 1-7 (note §4.2; plots only, no numbers).
PAPER_FIGS: dict[int, str] = {
    1: "M1 tracks the mean; M2 under-predicts at low capacity",
    2: "M1 tracks the mean; M2 under-predicts at low capacity",
    3: "M1 and M2 both track the mean well",
    4: "M1 fairly accurate; M2 worse still; sd much lower than Fig. 1",
    5: "M1 and M2 equally good at p <= 0.01",
    6: "both under-predict; M1-p (observed p_T) fairly accurate",
    7: "both under-predict (p_T of Eq. 19 inaccurate at high loss)",
}

#: The paper's one numerical accuracy statement (Fig. 9, HTTP): |relative error| <= 0.1
#: for 80 % of the connections. We use it as the paper's model-vs-ns-2 spread.
PAPER_SPREAD = 0.10


def window_limit(rate_bps: float, k: int | None) -> int:
    """K: given, or the bandwidth-delay product in 1460-byte segments, rounded, >= 1."""
    if k is not None:
        return k
    return max(1, round(rate_bps * RTT_PROP_S / (8 * MSS)))


def base_rtt_s(rate_bps: float) -> float:
    """Empty-path RTT: propagation plus one 1500-byte packet and one 40-byte ACK at C."""
    return RTT_PROP_S + (1500 + 40) * 8 / rate_bps


def _rate(rate_bps: float) -> str:
    return f"{round(rate_bps)}bit"


def scenario_dict(fig: int, stack: str, segments: int = SEGMENTS) -> dict:
    """The scenario of one run of figure ``fig``'s setting with ``stack``."""
    if stack not in STACKS:
        raise ValueError(f"stack={stack!r}; accepted: {', '.join(STACKS)}")
    rate, k, p = SETTINGS[fig]
    k = window_limit(rate, k)
    tr: dict = {"kind": "tcp", "sndbuf": f"{k * MSS}B"}
    if stack == "textbook-reno":
        tr["stack"] = "textbook-reno"
    else:
        tr.update(cc="reno", mss=MSS)
    # Long enough for the slowest transfer (2.5x the loss-free time: serialisation plus
    # one RTT per window of at most 16 segments); an unfinished one is reported.
    ser = 1500 * 8 / rate
    duration = max(120.0, 2.5 * (segments * ser + segments / min(k, 16) * (RTT_PROP_S + ser)))
    return {
        "run": {"duration": f"{math.ceil(duration)}s", "queue_sample": "0s", "state_sample": "100ms"},
        "topology": {
            "kind": "dumbbell",
            "bottleneck": {
                "down": _rate(rate), "up": _rate(rate), "delay": f"{round(RTT_PROP_S * 500)}ms",
                "queue": {"kind": "droptail", "limit": "10000pkt"},
                "loss": {"kind": "bernoulli", "p": p},
            },
        },
        "flows": [{
            "name": "a1", "direction": "down", "transport": tr,
            "app": {"kind": "trace", "times": ["0s"] * segments, "sizes": [f"{MSS}B"] * segments},
        }],
    }


def measure(run, segments: int = SEGMENTS) -> dict:
    """One run's T_n (array, s) and the counters the model inputs come from."""
    t = run.packets["t_deliver"].to_numpy(dtype=float)
    f = run.flows.iloc[0]
    c = run.cwnd
    return {
        "T": t if t.size == segments else np.full(segments, np.nan),
        "sent": int(f["pkts_sent"]),
        "dropped": int(f["pkts_dropped"]),
        "timeouts": int(f["timeouts"]),
        "srtt_s": float(c["srtt_s"][c["srtt_s"] > 0].mean()),
        "rto_s": float(c["rto_s"].median()),
    }


def model_curves(rate_bps: float, k: int, p: float, rtt_s: float, to_s: float, p_timeout: float | None):
    """(M1 mean, M1 sd, M1-p mean, M2 mean at n = 1..SEGMENTS)."""
    from ccbench.models import cardwell
    from ccbench.models.weigle import WeigleParams, transfer_time

    base = dict(protocol="reno", loss=p, rtt_s=rtt_s, t0_s=to_s, w_max=float(k), rate_bps=rate_bps, mss_bytes=MSS)
    m1 = transfer_time(WeigleParams(**base), SEGMENTS)
    m1p = transfer_time(WeigleParams(**base, p_timeout=p_timeout), SEGMENTS) if p_timeout is not None else None
    m2 = np.array([
        cardwell.latency_s(n * MSS, rtt_s=rtt_s, p=p, t0_s=to_s, b=1.0, w1=1.0, w_max_pkts=float(k),
                           t_delack_s=0.0, include_handshake=False)
        for n in range(1, SEGMENTS + 1)
    ])
    return m1.mean_s, m1.sd_s, (m1p.mean_s if m1p is not None else np.full(SEGMENTS, np.nan)), m2


def runs_for(fig: int, full: bool) -> int:
    slow = SETTINGS[fig][0] < 1e5
    return (200 if slow else 500) if full else (50 if slow else 100)


def simulate_setting(fig: int, stack: str, runs: int, step=None) -> dict:
    """All runs of one (figure, stack): per-n sim mean/sd and the pooled counters."""
    import ccbench
    from ccbench.scenario import Scenario

    scn = Scenario.from_dict(scenario_dict(fig, stack))
    ms = []
    for seed in range(1, runs + 1):
        ms.append(measure(ccbench.simulate(scn, seed=seed)))
        if step:
            step()
    T = np.array([m["T"] for m in ms])
    done = np.isfinite(T[:, -1])
    sent = sum(m["sent"] for m in ms)
    return {
        "T": T[done], "incomplete": int((~done).sum()),
        "p": sum(m["dropped"] for m in ms) / sent,
        "pT": sum(m["timeouts"] for m in ms) / sent,
        "srtt_s": float(np.mean([m["srtt_s"] for m in ms])),
        "to_s": float(np.median([m["rto_s"] for m in ms])),
    }


def compare(fig: int, stack: str, sim: dict) -> tuple[dict, pd.DataFrame]:
    """The table row and the per-n curves (sim vs M1, M1-p, M2) of one setting/stack."""
    from ccbench.models.weigle import table1_computed_pt

    rate, k, _ = SETTINGS[fig]
    k = window_limit(rate, k)
    p = sim["p"]
    rtt = base_rtt_s(rate)
    m1, m1sd, m1p, m2 = model_curves(rate, k, p, rtt, sim["to_s"], sim["pT"])
    T = sim["T"] + rtt / 2  # receiver delivery -> the ACK at the sender
    mean, sd = T.mean(axis=0), T.std(axis=0, ddof=1)
    paper = PAPER_TABLE1[fig]
    n = SEGMENTS - 1
    row = {
        "fig": fig, "C_bps": rate, "K": k, "p_set": SETTINGS[fig][2], "stack": stack, "runs": len(T),
        "p_pct": 100 * p, "p_paper_pct": paper[0],
        "pT_computed_pct": 100 * table1_computed_pt(p), "pT_computed_paper_pct": paper[1],
        "pT_obs_pct": 100 * sim["pT"], "pT_obs_paper_pct": paper[2],
        "rtt_s": rtt, "srtt_s": sim["srtt_s"], "TO_s": sim["to_s"],
        "T1000_sim_s": mean[n], "T1000_M1_s": m1[n], "T1000_M1p_s": m1p[n], "T1000_M2_s": m2[n],
        "err_M1": (mean[n] - m1[n]) / mean[n], "err_M1p": (mean[n] - m1p[n]) / mean[n],
        "err_M2": (mean[n] - m2[n]) / mean[n],
        "sd1000_sim_s": sd[n], "sd1000_M1_s": m1sd[n],
        "incomplete": sim["incomplete"], "paper_says": PAPER_FIGS[fig],
    }
    curves = pd.DataFrame({
        "fig": fig, "stack": stack, "n": np.arange(1, SEGMENTS + 1), "sim_mean_s": mean, "sim_sd_s": sd,
        "M1_mean_s": m1, "M1_sd_s": m1sd, "M1p_mean_s": m1p, "M2_mean_s": m2,
    })
    return row, curves


def table(figs=tuple(SETTINGS), stacks=STACKS, full: bool = False, runs: int | None = None,
          progress=None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Runs every (figure, stack) and returns (table, curves); ``progress(done, total)``
    is called after each simulation run."""
    plan = [(f, s, runs or runs_for(f, full)) for f in figs for s in stacks]
    total, done = sum(r for _, _, r in plan), [0]

    def step() -> None:
        done[0] += 1
        if progress:
            progress(done[0], total)

    rows, curves = [], []
    for fig, stack, r in plan:
        row, cur = compare(fig, stack, simulate_setting(fig, stack, r, step))
        rows.append(row)
        curves.append(cur)
    return pd.DataFrame(rows), pd.concat(curves, ignore_index=True)


def plot(curves: pd.DataFrame, path: Path) -> None:
    """Per figure: mean (top) and sd (bottom) of T_n vs n, sim per stack and the models."""
    from ccbench.plots import new_figure, save_figure  # no pyplot: the backend stays the user's

    figs = sorted(curves["fig"].unique())
    fig, axes = new_figure(2, len(figs), figsize=(3.2 * len(figs), 6), squeeze=False)
    for j, f in enumerate(figs):
        g = curves[curves["fig"] == f]
        ax, bx = axes[0][j], axes[1][j]
        for stack, colour in zip(STACKS, ("C0", "C3")):
            h = g[g["stack"] == stack]
            if h.empty:
                continue
            ax.plot(h["n"], h["sim_mean_s"], color=colour, label=f"sim {stack}")
            bx.plot(h["n"], h["sim_sd_s"], color=colour, label=f"sim {stack}")
        h = g[g["stack"] == g["stack"].iloc[0]]
        ax.plot(h["n"], h["M1_mean_s"], "k--", label="M1 (LB-CC)")
        ax.plot(h["n"], h["M1p_mean_s"], "k:", label="M1-p")
        ax.plot(h["n"], h["M2_mean_s"], color="grey", ls="-.", label="M2 (Cardwell)")
        bx.plot(h["n"], h["M1_sd_s"], "k--", label="M1")
        rate, k, p = SETTINGS[int(f)]
        ax.set_title(f"Fig {f}: {rate / 1e6:g} Mbit/s, K={window_limit(rate, k)}, p={p}", fontsize=8)
        bx.set_xlabel("segments n")
        for a in (ax, bx):
            a.grid(alpha=0.3)
    axes[0][0].set_ylabel("mean T_n (s)")
    axes[1][0].set_ylabel("sd T_n (s)")
    axes[0][0].legend(fontsize=6)
    fig.suptitle("Weigle et al. Figs 1-7: transfer time of n segments, model vs simulated stacks "
                 "(M1/M1-p/M2 with the textbook stack's inputs)", fontsize=9)
    save_figure(fig, path, dpi=110)


#: The printed table (the CSV has every column: p, computed p_T, M1-p and M2 times, ...).
SHOWN = ["fig", "stack", "pT_obs_pct", "pT_obs_paper_pct", "T1000_sim_s", "T1000_M1_s", "err_M1", "err_M1p",
         "sd1000_sim_s", "sd1000_M1_s"]


def run(full: bool = False, out: Path | None = None, progress=None) -> pd.DataFrame:
    """Reduced (default) or full size; writes ``weigle.csv`` (table), ``weigle_curves.parquet``
    (T_n curves) and ``weigle.png`` into ``out``; ``progress(done, total)`` per run."""
    df, curves = table(full=full, progress=progress)
    if out is not None:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        df.to_csv(out / "weigle.csv", index=False)
        curves.to_parquet(out / "weigle_curves.parquet", index=False)
        plot(curves, out / "weigle.png")
    return df[SHOWN]
