"""Brosh et al., "The Delay-Friendliness of TCP", drop-tail testbed (note §3.5), Table 3.

Scenario (one run per web-flow count N and queue kind)
------------------------------------------------------
* Dumbbell, bottleneck 3 Mbit/s in both directions, one-way delay 50 ms on each
  direction (round-trip propagation 100 ms), access links 10 Gbit/s with no delay.
* Queue: drop-tail on both bottleneck directions, either ``100pkt`` (Linux pfifo: a
  packet is a packet whatever its size) or ``50000B`` (bfifo, strict byte limit).
* 5 VoIP-over-TCP flows ``voip0..voip4`` (preset ``brosh-voip``: 174 B, RTP + RFC 4571
  framing included, every 20 ms = 64 kbit/s of payload). TCP settings of the paper's
  §8.1 guidelines as far as the simulator has them: ``nagle = false`` (TCP_NODELAY),
  ``sack = true``, ``init_cwnd = 4`` (RFC 3390), ``slow_start_after_idle = false``
  (congestion-window validation off), ``cc = "reno"`` (the paper models NewReno;
  Linux ``reno`` is NewReno with SACK), ``recovery = "rate-halving"`` (the Linux 2.6.9 /
  2.6.17 kernels of the testbed predate PRR). Limited transmit is always on in the
  simulator (as in Linux). Not settable and therefore Linux-today defaults: delayed
  ACKs (on; the paper does not say), TLP and F-RTO (on; absent in 2.6.17), the 200 ms
  minimum RTO, ACK-counting per acked segment (Linux 2.6 "byte counting off" is the
  same for full segments; for VoIP segments Linux reno also counts one per ACKed
  segment). Send/receive buffers: the simulator's Linux maxima (4 MB / 6 MB), i.e.
  "large", as the paper asks.
* 5 FTP flows ``ftp0..ftp4``: greedy (``bulk``) TCP reno, Linux defaults otherwise.
* N web flows ``web[0..N-1]``: preset ``tg-web`` (512 B messages, exponential gaps with
  mean 50 ms, i.e. 82 kbit/s each, the tg setting the paper took from RFC 4828) over
  TCP reno with Linux defaults (Nagle on: tg writes through an ordinary socket).
* Every flow has its own host pair. Start phases are drawn from the run's seed: VoIP
  flow i starts at ``warmup + U(0, 20 ms)``, FTP flow j at ``U(0, 1 s)``, web flows at 0
  (their Poisson gaps are random anyway). The paper's five senders were independent
  processes; in a simulator five CBR sources started at the same instant reach the
  full queue in lock step and the later ones in the same instant are always the ones
  dropped (per-flow loss rates of 1.2 % .. 3.8 % from that artefact alone in a trial
  run); and without web flows nothing else is random, so without random phases every
  seed would give the same run. The first ``warmup`` seconds (slow start of the FTP
  flows) are outside every VoIP statistic. The VoIP applications stop writing ``drain`` seconds before the end of
  the run, so every message written can still be delivered; a message written and
  never delivered counts as infinitely late in the percentiles.

Columns (VoIP flows only; per run averaged over the 5 flows, then mean and standard
deviation over seeds)
------------------------------------------------------------------------------------
* ``loss_pct``: segment loss rate of the VoIP connections in percent: data segments
  of the 5 VoIP connections dropped at the bottleneck / data segments they sent
  (retransmissions count as sent, as in a packet capture), pooled over the 5 flows.
  This is the paper's "packet loss rate" (network segments, note §3.1), not the loss
  of application packets (TCP loses none).
* ``rtt_s``: median of the per-ACK RTT samples of each VoIP connection (the flows
  table's ``rtt_p50_s``), averaged over the 5 flows. The paper does not say whether its
  RTT is a mean or a median; with the queue full most of the time they are close.
* ``jitter_s``: σ_D, the standard deviation of the per-message delay D (note §1;
  :func:`ccbench.analysis.delay.jitter` ``std_s``), per flow, averaged over flows.
  Caution: the paper's column is headed "95% jitter" and its values (0.089 s at
  N = 25 with a 95th percentile of 6.2 s) cannot be σ_D of that delay distribution;
  they look like a short-term delay variation. We therefore also report
  ``jitter_rfc3550_s`` (the RFC 3550 interarrival jitter, mean over the run) and
  ``jitter_mad_s`` (mean |D_i - D_{i-1}|) next to it; neither is compared to the paper.
* ``p95_s``: 95th percentile of the per-message delay D = t_deliver - t_write
  (application write to application read, so it includes the one-way propagation L),
  with Brosh's α-percentile definition (``method = "inverted_cdf"``), per flow, then
  averaged over the flows.
* ``*_paper``: Table 3 of the paper (note §4.3), verbatim.
* ``ftp_mbps``, ``web_mbps``: goodput of all FTP / all web flows together (context).

Sizes: reduced (default) 60 s of VoIP measurement, 1 seed; ``full=True``: 300 s
(the paper's 5 minutes), 5 seeds. Either way warm-up 5 s and drain 15 s are added.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

DESCRIPTION = (
    "Brosh et al. drop-tail testbed, Table 3: 5 VoIP-over-TCP + 5 FTP + N web flows at 3 Mbit/s, "
    "100 ms RTT, 100-packet and 50000-byte queues; VoIP loss, RTT, jitter, 95% delay vs the paper"
)

WEB_FLOWS = (0, 10, 15, 20, 25)
QUEUES = {"packet": "100pkt", "byte": "50000B"}
N_VOIP = 5
N_FTP = 5
WARMUP_S = 5.0
DRAIN_S = 15.0
VOIP_STAGGER_MS = 4

#: Brosh et al. Table 3 (VoIP), note §4.3: (queue, web flows) -> (loss %, RTT s, jitter s, 95% delay s).
PAPER_TABLE3: dict[tuple[str, int], tuple[float, float, float, float]] = {
    ("packet", 0): (1.02, 0.317, 0.027, 0.410),
    ("packet", 10): (1.60, 0.380, 0.034, 0.498),
    ("packet", 15): (2.31, 0.371, 0.041, 0.644),
    ("packet", 20): (3.39, 0.383, 0.052, 1.335),
    ("packet", 25): (5.61, 0.385, 0.089, 6.173),
    ("byte", 0): (0.20, 0.172, 0.014, 0.135),
    ("byte", 10): (0.55, 0.178, 0.019, 0.183),
    ("byte", 15): (0.81, 0.180, 0.022, 0.233),
    ("byte", 20): (1.24, 0.182, 0.028, 0.308),
    ("byte", 25): (2.41, 0.185, 0.040, 3.057),
}

#: The VoIP connections' TCP settings (paper §8.1 guidelines, see the module docstring).
VOIP_TCP = {
    "kind": "tcp",
    "cc": "reno",
    "nagle": False,
    "sack": True,
    "init_cwnd": 4,
    "slow_start_after_idle": False,
    "recovery": "rate-halving",
}
BACKGROUND_TCP = {"kind": "tcp", "cc": "reno"}


def scenario_dict(n_web: int, queue: str = "packet", measure_s: float = 60.0, seed: int | None = None) -> dict:
    """The scenario (TOML-shaped dict) for ``n_web`` web flows and queue ``"packet"`` or
    ``"byte"``; the VoIP flows write during ``[warmup, warmup + measure_s]``.

    ``seed`` None: VoIP flow i starts at ``warmup + 4 ms * i``, FTP flow j at 0 (the
    example file). With a seed, the start phases are drawn from it: each VoIP flow at
    ``warmup + U(0, 20 ms)`` and each FTP flow at ``U(0, 1 s)`` (whole microseconds), so
    that repetitions differ as testbed runs do; without web flows nothing else in the
    scenario is random and every seed would otherwise give the same run."""
    limit = QUEUES[queue]
    duration = WARMUP_S + measure_s + DRAIN_S
    stop = WARMUP_S + measure_s
    rng = np.random.default_rng(seed) if seed is not None else None
    flows = []
    for i in range(N_VOIP):
        off_us = int(rng.integers(0, 20_000)) if rng is not None else i * VOIP_STAGGER_MS * 1000
        flows.append({
            "name": f"voip{i}",
            "transport": dict(VOIP_TCP),
            "app": {"kind": "preset", "name": "brosh-voip"},
            "start": f"{round(WARMUP_S * 1e6) + off_us}us",
            "stop": f"{round(stop * 1000)}ms",
        })
    for j in range(N_FTP):
        off_us = int(rng.integers(0, 1_000_000)) if rng is not None else 0
        flows.append({"name": f"ftp{j}", "transport": dict(BACKGROUND_TCP), "app": {"kind": "bulk"},
                      "start": f"{off_us}us"})
    if n_web:
        flows.append({"name": "web", "count": n_web, "transport": dict(BACKGROUND_TCP),
                      "app": {"kind": "preset", "name": "tg-web"}})
    return {
        "run": {"duration": f"{round(duration * 1000)}ms", "queue_sample": "0s", "state_sample": "0s"},
        "topology": {
            "kind": "dumbbell",
            "bottleneck": {"down": "3Mbit", "up": "3Mbit", "delay": "50ms",
                           "queue": {"kind": "droptail", "limit": limit}},
        },
        "flows": flows,
    }


def voip_metrics(run) -> dict:
    """The Table 3 columns of one run (VoIP flows), as defined in the module docstring."""
    from ccbench.analysis.delay import delay_components, jitter

    f = run.flows
    v = f[f["flow"].astype(str).str.startswith("voip")]
    names = [str(x) for x in v["flow"]]
    sent = float(v["pkts_sent"].sum())
    comp = delay_components(run.packets, names)
    p95, sd = [], []
    for name, g in comp.groupby("flow", sort=False, observed=True):
        d = g["total_s"].to_numpy(dtype=float)
        d = np.where(np.isfinite(d), d, np.inf)  # never delivered = infinitely late
        p95.append(float(np.percentile(d, 95, method="inverted_cdf")))
        fin = d[np.isfinite(d)]
        sd.append(float(np.std(fin)))
    jt = jitter(run.packets, names)
    ftp = f[f["flow"].astype(str).str.startswith("ftp")]
    web = f[f["flow"].astype(str).str.startswith("web")]
    return {
        "loss_pct": 100.0 * float(v["pkts_dropped"].sum()) / sent if sent else np.nan,
        "rtt_s": float(v["rtt_p50_s"].mean()),
        "jitter_s": float(np.mean(sd)),
        "p95_s": float(np.mean(p95)),
        "jitter_rfc3550_s": float(jt["rfc3550_mean_s"].mean()),
        "jitter_mad_s": float(jt["mean_abs_diff_s"].mean()),
        "undelivered": int((~np.isfinite(comp["total_s"].to_numpy(dtype=float))).sum()),
        "ftp_mbps": float(ftp["goodput_bps"].sum()) / 1e6,
        "web_mbps": float(web["goodput_bps"].sum()) / 1e6 if len(web) else 0.0,
    }


METRICS = ("loss_pct", "rtt_s", "jitter_s", "p95_s")
EXTRA = ("jitter_rfc3550_s", "jitter_mad_s", "undelivered", "ftp_mbps", "web_mbps")


def table(
    web_flows=WEB_FLOWS, queues=("packet", "byte"), measure_s: float = 60.0, seeds=(1,), progress=None
) -> pd.DataFrame:
    """Runs every (queue, N, seed) and returns the ours-vs-paper table: one row per
    (queue, N); ours = mean over seeds (``*_sd`` = standard deviation over seeds)."""
    import ccbench
    from ccbench.scenario import Scenario

    rows = []
    for q in queues:
        for n in web_flows:
            per_seed = []
            for s in seeds:
                scn = Scenario.from_dict(scenario_dict(n, q, measure_s, seed=s))
                per_seed.append(voip_metrics(ccbench.simulate(scn, seed=s)))
                if progress:
                    progress(q, n, s)
            df = pd.DataFrame(per_seed)
            row: dict = {"queue": q, "web_flows": n, "seeds": len(seeds)}
            paper = PAPER_TABLE3.get((q, n), (np.nan,) * 4)
            for k, pv in zip(METRICS, paper):
                row[k] = float(df[k].mean())
                row[f"{k}_paper"] = pv
            for k in METRICS:
                row[f"{k}_sd"] = float(df[k].std(ddof=1)) if len(df) > 1 else np.nan
            for k in EXTRA:
                row[k] = float(df[k].mean())
            rows.append(row)
    return pd.DataFrame(rows)


def plot(df: pd.DataFrame, path: Path) -> None:
    """Four panels (loss, RTT, jitter, 95% delay vs N), ours (solid) and paper (dashed),
    one colour per queue kind."""
    from ccbench.plots import new_figure  # no pyplot: the backend stays the user's

    titles = {"loss_pct": "VoIP segment loss (%)", "rtt_s": "RTT (s)", "jitter_s": "jitter σ_D (s)",
              "p95_s": "95th-percentile delay (s)"}
    fig, axes = new_figure(1, 4, figsize=(16, 3.8))
    for ax, k in zip(axes, METRICS):
        for q, colour in (("packet", "C0"), ("byte", "C1")):
            g = df[df["queue"] == q]
            if g.empty:
                continue
            ax.plot(g["web_flows"], g[k], "o-", color=colour, label=f"ours, {QUEUES[q]}")
            ax.plot(g["web_flows"], g[f"{k}_paper"], "s--", color=colour, alpha=0.6, label=f"paper, {QUEUES[q]}")
        ax.set_xlabel("web flows N")
        ax.set_title(titles[k])
        if k == "p95_s":
            ax.set_yscale("log")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7)
    fig.suptitle("Brosh et al. Table 3 (VoIP, drop-tail, 3 Mbit/s, 100 ms RTT): ours vs paper")
    fig.savefig(path, dpi=120)


def run(full: bool = False, out: Path | None = None) -> pd.DataFrame:
    """Reduced: 60 s of VoIP, seed 1; full: 300 s, seeds 1..5. Writes
    ``brosh_droptail.csv`` and ``brosh_droptail.png`` into ``out``."""
    measure_s, seeds = (300.0, (1, 2, 3, 4, 5)) if full else (60.0, (1,))
    df = table(WEB_FLOWS, ("packet", "byte"), measure_s, seeds)
    if out is not None:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        df.to_csv(out / "brosh_droptail.csv", index=False)
        plot(df, out / "brosh_droptail.png")
    # The returned (printed) table: ours next to the paper's; the CSV has every column
    # (standard deviations over seeds, the other jitter measures, goodputs).
    cols = ["queue", "web_flows"] + [c for k in METRICS for c in (k, f"{k}_paper")] + ["jitter_rfc3550_s"]
    return df[cols]
