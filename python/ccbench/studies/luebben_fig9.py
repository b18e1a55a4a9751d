"""Lübben & Fidler, TCP NewReno baseline, Fig. 9 (note §2.2, §3.3): the delay of a
5 Mbit/s CBR probe over TCP beside 9 greedy NewReno flows, split into its four
components (note §1.7).

Scenario (the paper's Emulab dumbbell, note §2.2)
-------------------------------------------------
* Dumbbell, 10 host pairs, bottleneck 100 Mbit/s both ways with no propagation delay of
  its own; each pair's one-way propagation delay is put on its server-side access link
  (``access.pair_delays``), so the one-way delay of pair i is exactly Table I's value and
  its RTT twice that: probe 10 ms; cross flows, sender s to receiver r:
  (1,1) 12, (1,2) 11, (1,3) 9, (2,1) 11, (2,2) 8, (2,3) 10, (3,1) 9, (3,2) 8, (3,3) 12 ms
  (note: "uniformly distributed with a mean of 10 ms"; the values are one-way). Each
  cross flow has its own host pair (the paper's 3 senders x 3 receivers share NICs;
  with 10 Gbit/s access links that sharing is immaterial).
* Bottleneck queue: drop-tail ``167pkt`` (Linux pfifo, the BDP 100 Mbit/s x 20 ms of
  1500-byte packets; maximum queueing delay 20 ms), on both directions.
* Probe: CBR 1448 B every 2.3168 ms = 5.000 Mbit/s of application payload (the
  paper's rates are application rates, "utilisation = rate / 9.4 Mbit/s"; one MSS per
  write so a message is one segment and no 52-byte tails wait for Nagle, note §4
  item 3). TCP: ``cc = "reno"`` (Linux reno = NewReno with SACK, SACK on as in Linux),
  ``nagle = false`` (TCP_NODELAY), socket buffers enlarged to 64 MB each (the paper:
  "never limit"), Linux defaults otherwise (IW10, PRR and delayed ACKs as Linux 3.5 had
  them; TLP/RACK are on in the simulator and cannot be switched off from a scenario,
  Linux 3.5 had neither).
* Cross traffic: 9 greedy (``bulk``) TCP reno flows, Linux defaults (4 MB / 6 MB
  buffers, far above the 334-packet pipe + buffer).
* The probe starts at 0, each cross flow at ``U(0, 1 s)`` drawn from the run's seed
  (nothing else in this scenario is random: without random phases every seed would
  give the same run); the probe's messages written in the first ``warmup`` seconds
  are left out (slow start, convergence of the cross flows); the probe stops writing
  ``drain`` seconds before the end so every measured message can be delivered.

Delay components per probe message (the four timestamps, note §1.7;
:func:`ccbench.analysis.delay.delay_components`)
-------------------------------------------------------------------------------------
* sender stack ``Δ_snd = t_first_tx - t_write`` (t1 = the scheduled CBR write time; t2 =
  the first transmission of the message's first byte by TCP onto the host's link);
* network ``Δ_net = t_arrive - t_first_tx`` (t3 = first arrival of the message's last
  byte at the receiving host, so retransmission time lands here, as the paper's Fig. 2
  reading implies);
* receiver ``Δ_rcv = t_deliver - t_arrive`` (in-order delivery, HOL blocking);
* total ``Δ_e2e = t_deliver - t_write``; the three parts add up to it per message.

``P[sender-stack buffering]`` = fraction of measured messages with ``Δ_snd > 1 µs``
(in the simulator an unbuffered message leaves at its write instant: Δ_snd = 0
exactly; the 1 µs tolerance only absorbs float rounding of the timestamps).

Table (metric, ours, paper, note): the paper's numbers are the text's readings of
Fig. 9 (note §3.3, all "[A]" approximate): Δ_net from 18 to 30 ms, queueing 8-20 ms,
Δ_snd more than ten times the network delay, P[queued in the sender stack] ≈ 0.3,
Δ_rcv non-zero only with small probability.

Sizes: reduced (default) 60 s of probe traffic, seed 1; ``full=True``: 300 s, seeds
1..5 (the paper does not give its run length; it samples 750 delays per rate).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

DESCRIPTION = (
    "Lübben & Fidler Fig. 9: 5 Mbit/s CBR probe over TCP NewReno beside 9 greedy NewReno flows, "
    "100 Mbit/s, 167-packet drop-tail; CCDFs of sender-stack, network, receiver and total delay"
)

#: Table I, one-way propagation delays (ms): the probe, then cross senders 1..3 x receivers 1..3.
PROBE_DELAY_MS = 10
CROSS_DELAYS_MS = (12, 11, 9, 11, 8, 10, 9, 8, 12)
BUFFER = "167pkt"
RATE = "100Mbit"
PROBE_SIZE = 1448
PROBE_INTERVAL_NS = 2_316_800  # 1448 B * 8 / 5 Mbit/s
WARMUP_S = 10.0
DRAIN_S = 3.0
BUFFERED_EPS_S = 1e-6
COMPONENTS = ("sender", "network", "receiver", "total")

PROBE_TCP = {"kind": "tcp", "cc": "reno", "sack": True, "nagle": False, "sndbuf": "64MB", "rcvbuf": "64MB"}
CROSS_TCP = {"kind": "tcp", "cc": "reno"}

PAPER = {
    "p_sender_buffering": 0.3,
    "network_min_ms": 18.0,
    "network_p99_ms": 30.0,
    "queueing_min_ms": 8.0,
    "queueing_p99_ms": 20.0,
    "sender_over_network": 10.0,
}


def scenario_dict(measure_s: float = 60.0, seed: int | None = None) -> dict:
    """The scenario; with ``seed`` the cross flows start at ``U(0, 1 s)`` drawn from it
    (whole microseconds), else all at 0 (the example file)."""
    duration = WARMUP_S + measure_s + DRAIN_S
    rng = np.random.default_rng(seed) if seed is not None else None
    flows = [{
        "name": "probe",
        "transport": dict(PROBE_TCP),
        "app": {"kind": "cbr", "size": f"{PROBE_SIZE}B", "interval": f"{PROBE_INTERVAL_NS}ns"},
        "stop": f"{round((WARMUP_S + measure_s) * 1000)}ms",
    }]
    for s in range(3):
        for r in range(3):
            off_us = int(rng.integers(0, 1_000_000)) if rng is not None else 0
            flows.append({"name": f"cross{s + 1}{r + 1}", "transport": dict(CROSS_TCP), "app": {"kind": "bulk"},
                          "start": f"{off_us}us"})
    return {
        "run": {"duration": f"{round(duration * 1000)}ms", "queue_sample": "0s", "state_sample": "0s"},
        "topology": {
            "kind": "dumbbell",
            "bottleneck": {"down": RATE, "up": RATE, "delay": "0ms", "queue": {"kind": "droptail", "limit": BUFFER}},
            "access": {"pair_delays": [f"{d}ms" for d in (PROBE_DELAY_MS, *CROSS_DELAYS_MS)]},
        },
        "flows": flows,
    }


def probe_components(run) -> pd.DataFrame:
    """The probe's measured messages (written after the warm-up) with the four delay
    components in seconds (``sender_s, network_s, receiver_s, total_s``)."""
    from ccbench.analysis.delay import delay_components

    c = delay_components(run.packets, "probe")
    return c[c["t_write"].to_numpy(dtype=float) >= WARMUP_S].reset_index(drop=True)


def summarize(comp: pd.DataFrame, prop_s: float = PROBE_DELAY_MS / 1000) -> dict:
    ok = comp[comp["delivered"]]
    snd, net, rcv, tot = (ok[f"{k}_s"].to_numpy(dtype=float) for k in COMPONENTS)
    q = lambda v, p: float(np.percentile(v, p))  # noqa: E731
    return {
        "messages": int(len(comp)),
        "undelivered": int((~comp["delivered"]).sum()),
        "p_sender_buffering": float(np.mean(snd > BUFFERED_EPS_S)),
        "p_receiver_hol": float(np.mean(rcv > BUFFERED_EPS_S)),
        "network_min_ms": 1000 * float(net.min()),
        "network_p01_ms": 1000 * q(net, 1),
        "network_p50_ms": 1000 * q(net, 50),
        "network_p99_ms": 1000 * q(net, 99),
        "network_max_ms": 1000 * float(net.max()),
        "queueing_min_ms": 1000 * (float(net.min()) - prop_s),
        "queueing_p99_ms": 1000 * (q(net, 99) - prop_s),
        "sender_p99_ms": 1000 * q(snd, 99),
        "sender_max_ms": 1000 * float(snd.max()),
        "sender_over_network": q(snd, 99) / q(net, 99),
        "sender_mean_if_buffered_ms": 1000 * float(snd[snd > BUFFERED_EPS_S].mean()) if np.any(snd > BUFFERED_EPS_S) else 0.0,
        "receiver_p99_ms": 1000 * q(rcv, 99),
        "total_p50_ms": 1000 * q(tot, 50),
        "total_p95_ms": 1000 * q(tot, 95),
        "total_p99_ms": 1000 * q(tot, 99),
        "max_sum_error_s": float(np.max(np.abs(snd + net + rcv - tot))) if len(tot) else np.nan,
    }


_NOTES = {
    "p_sender_buffering": "fraction of probe messages with Δ_snd > 1 µs; paper: ≈ 0.3 [A]",
    "p_receiver_hol": "fraction with Δ_rcv > 1 µs; paper: 'non-zero only with small probability' [Q]",
    "network_min_ms": "paper: Δ_net from 18 ms [A] (no sampled packet saw an empty buffer)",
    "network_max_ms": "largest Δ_net: includes the retransmitted messages (the paper's range ends at 30 ms)",
    "network_p99_ms": "99th percentile of Δ_net; paper: Δ_net up to 30 ms [A] (10 ms propagation + 20 ms full buffer)",
    "queueing_min_ms": "min Δ_net - 10 ms propagation; paper: 8 ms [A]",
    "queueing_p99_ms": "99th pct Δ_net - 10 ms; paper: up to 20 ms [A]",
    "sender_over_network": "99th pct Δ_snd / 99th pct Δ_net; paper: 'more than ten times' [A]",
    "sender_p99_ms": "99th percentile of Δ_snd",
    "sender_max_ms": "largest Δ_snd",
    "total_p95_ms": "95th percentile of Δ_e2e",
    "total_p99_ms": "99th percentile of Δ_e2e",
    "max_sum_error_s": "max |Δ_snd + Δ_net + Δ_rcv - Δ_e2e| over messages (must be ~0)",
}


def plot_ccdf(comps: list[pd.DataFrame], path: Path, p_buf: float | None = None) -> None:
    """Fig. 9: CCDF P[Δ > x] of each component over all seeds' messages, log-log."""
    from ccbench.plots import new_figure  # no pyplot: the backend stays the user's

    from ccbench.analysis.distribution import ccdf

    allc = pd.concat(comps, ignore_index=True)
    allc = allc[allc["delivered"]]
    fig, ax = new_figure(figsize=(7, 4.5))
    labels = {"sender": "sender stack Δ_snd", "network": "network Δ_net", "receiver": "receiver (HOL) Δ_rcv",
              "total": "end-to-end Δ_e2e"}
    for k, st in zip(COMPONENTS, ("-", "-", "-", "--")):
        v = allc[f"{k}_s"].to_numpy(dtype=float)
        v = v[v > BUFFERED_EPS_S]
        if v.size == 0:
            continue
        frac = v.size / len(allc)
        x, y = ccdf(v)
        # P[Δ > x] over all messages = P[Δ > 0] * P[Δ > x | Δ > 0]
        ax.step(x, np.maximum(y * frac, 1e-7), st, where="post", label=labels[k])
    if p_buf is not None:
        ax.axhline(p_buf, color="grey", lw=0.6, ls=":")
        ax.annotate(f"P[sender-stack buffering] = {p_buf:.2f} (paper ≈ 0.3)", (1e-3, p_buf), fontsize=7,
                    xytext=(0, 3), textcoords="offset points")
    ax.axvline(0.030, color="grey", lw=0.6, ls=":")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(1e-3, None)
    ax.set_ylim(1e-4, 1.1)
    ax.set_xlabel("delay x (s)")
    ax.set_ylabel("P[Δ > x]")
    ax.set_title("5 Mbit/s probe, TCP NewReno, 9 NewReno cross flows, 100 Mbit/s, 167 pkts")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8, loc="lower left")
    fig.savefig(path, dpi=120)


def table(measure_s: float = 60.0, seeds=(1,)) -> tuple[pd.DataFrame, list[pd.DataFrame]]:
    """(ours-vs-paper table, the probe components of each seed)."""
    import ccbench
    from ccbench.scenario import Scenario

    comps, sums = [], []
    for s in seeds:
        scn = Scenario.from_dict(scenario_dict(measure_s, seed=s))
        c = probe_components(ccbench.simulate(scn, seed=s))
        c["seed"] = s
        comps.append(c)
        sums.append(summarize(c))
    df = pd.DataFrame(sums)
    rows = []
    for k in df.columns:
        rows.append({
            "metric": k,
            "ours": float(df[k].mean()),
            "ours_sd": float(df[k].std(ddof=1)) if len(df) > 1 else np.nan,
            "paper": PAPER.get(k, np.nan),
            "note": _NOTES.get(k, ""),
        })
    return pd.DataFrame(rows), comps


def run(full: bool = False, out: Path | None = None) -> pd.DataFrame:
    """Reduced: 60 s, seed 1; full: 300 s, seeds 1..5. Writes ``luebben_fig9.csv``,
    ``luebben_fig9_ccdf.csv`` (CCDF points per component) and ``luebben_fig9.png``."""
    measure_s, seeds = (300.0, (1, 2, 3, 4, 5)) if full else (60.0, (1,))
    tab, comps = table(measure_s, seeds)
    if out is not None:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        tab.to_csv(out / "luebben_fig9.csv", index=False)
        from ccbench.analysis.distribution import ccdf

        allc = pd.concat(comps, ignore_index=True)
        allc = allc[allc["delivered"]]
        pts = []
        for k in COMPONENTS:
            x, y = ccdf(allc[f"{k}_s"].to_numpy(dtype=float))
            # thin to at most 2000 points per component for the CSV
            idx = np.unique(np.linspace(0, x.size - 1, min(2000, x.size)).astype(int))
            pts.append(pd.DataFrame({"component": k, "delay_s": x[idx], "ccdf": y[idx]}))
        pd.concat(pts, ignore_index=True).to_csv(out / "luebben_fig9_ccdf.csv", index=False)
        p_buf = float(tab.loc[tab["metric"] == "p_sender_buffering", "ours"].iloc[0])
        plot_ccdf(comps, out / "luebben_fig9.png", p_buf)
    # The returned (printed) table without the notes (they are in the CSV).
    return tab[["metric", "ours", "ours_sd", "paper"]]
