"""Brosh et al., "The Delay-Friendliness of TCP", drop-tail testbed (note §3.5): Table 3
(VoIP) here, Table 4 (video) in :mod:`ccbench.studies.brosh_video` with the same code.

Scenario (one run per web-flow count N, queue kind and seed)
------------------------------------------------------------
* Dumbbell, bottleneck ``capacity`` in both directions (3 Mbit/s for VoIP, 30 Mbit/s for
  video: "so that the ratio of cumulative bit rate of five CBR-TCP flows to link capacity
  was one to ten"), one-way delay 50 ms on each direction (round-trip propagation
  100 ms), access links 10 Gbit/s with no delay.
* Queue: drop-tail on both bottleneck directions, either ``100pkt`` (Linux pfifo: a
  packet is a packet whatever its size) or a byte limit (bfifo, strict): 50000 B for
  VoIP, 100000 B for video (paper §5.3).
* 5 media-over-TCP flows ``voip0..voip4`` (preset ``brosh-voip``: 174 B, RTP + RFC 4571
  framing included, every 20 ms = 64 kbit/s of payload) or ``video0..video4`` (preset
  ``brosh-video``: 1448 B every 20 ms). TCP settings of the paper's §8.1 guidelines as
  far as the simulator has them: ``nagle = false`` (TCP_NODELAY), ``sack = true``,
  ``init_cwnd = 4`` (RFC 3390), ``slow_start_after_idle = false`` (congestion-window
  validation off), ``cc = "reno"`` (the paper models NewReno; Linux ``reno`` is NewReno
  with SACK), ``recovery = "rate-halving"`` (the Linux 2.6.9 / 2.6.17 kernels of the
  testbed predate PRR), ``tlp = false`` and ``frto = false`` (no tail-loss probe before
  Linux 3.10; F-RTO off by default before 2.6.24), ``abc = "per-ack"`` (ACK counting:
  Linux 2.6 with ``tcp_abc = 0`` grows cwnd per ACK, so by half a segment per RTT with
  delayed ACKs; paper §3.2 "byte counting off", §6.3 "Linux and Windows XP use
  ACK-counting by default"; today's Linux counts the segments an ACK covers). Limited
  transmit is always on in the simulator (as in Linux). Left at the simulator's Linux
  defaults: delayed ACKs (on; the paper does not say), the 200 ms minimum RTO, RACK loss
  detection with SACK. Send/receive buffers: the simulator's Linux maxima (4 MB / 6 MB),
  i.e. "large", as the paper asks.
* 5 FTP flows ``ftp0..ftp4``: greedy (``bulk``) TCP reno with ACK counting
  (``abc = "per-ack"``, the testbed kernels' default for every host), Linux defaults
  otherwise. ACK counting of the background flows is what brings the packet-queue VoIP
  loss to the paper's (hypotheses table in the notes).
* N web flows ``web[0..N-1]``: preset ``tg-web`` (512 B messages, exponential gaps with
  mean 50 ms, i.e. 82 kbit/s each, the tg setting the paper took from RFC 4828) over
  TCP reno with ACK counting, Linux defaults otherwise (Nagle on: tg writes through an
  ordinary socket).
* Every flow has its own host pair. Start phases are drawn from the run's seed: media
  flow i starts at ``warmup + U(0, 20 ms)``, FTP flow j at ``U(0, 1 s)``, web flows at 0
  (their Poisson gaps are random anyway). The paper's five senders were independent
  processes; in a simulator five CBR sources started at the same instant reach the
  full queue in lock step and the later ones in the same instant are always the ones
  dropped (per-flow loss rates of 1.2 % .. 3.8 % from that artefact alone in a trial
  run); and without web flows nothing else is random, so without random phases every
  seed would give the same run. The first ``warmup`` seconds (slow start of the FTP
  flows) are outside every media statistic. The media applications stop writing
  ``drain`` seconds before the end of the run, so every message written can still be
  delivered; a message written and never delivered counts as infinitely late.

Columns (media flows only; mean over seeds)
-------------------------------------------
* ``loss_pct``: segment loss rate of the media connections in percent: data segments of
  the 5 connections dropped at the bottleneck / data segments they sent (retransmissions
  count as sent, as in a packet capture), pooled over the 5 flows. This is the paper's
  "network loss rate" (segments, note §3.1), not the loss of application packets.
* ``rtt_s``: median of the per-ACK RTT samples of each media connection (the flows
  table's ``rtt_p50_s``), averaged over the 5 flows; ``srtt_s`` is the time-mean of the
  connections' smoothed RTT sampled every 100 ms (what a tool polling TCP_INFO reports;
  the paper says "average round trip time" without saying how it measured it).
  ``queue_kb``: time-mean backlog of the bottleneck queue (data direction), kB.
* ``p95_s``: 95th percentile of the per-message delay D = t_deliver - t_write (write to
  read, so it includes the one-way propagation L), Brosh's α-percentile
  (``method = "inverted_cdf"``), per flow, then averaged over flows and seeds: the
  paper's "mean ... of the 95th percentile TCP delay" (§5.3).
* The paper's "95% jitter" column is ambiguous, so it is computed in both readings:

  - ``jitter_s`` (compared with the paper): the 95th percentile of the RFC 3550
    interarrival-jitter estimate J (RFC 3550 §6.4.1 / A.8, transit = read time - write
    time, messages in delivery order), per flow, then averaged: "95% jitter" read as the
    header reads, the jitter an RTP receiver computes (the paper's tool frames every
    packet with a 12-byte RTP header).
  - ``p95_sd_runs_s``: the text's reading. §5.3 says the tables present "the mean and
    standard deviation of the 95th percentile TCP delay", i.e. the sample standard
    deviation (ddof = 1) over the five repetitions of the per-run (flow-averaged) 95th
    percentile; NaN with one seed. ``p95_sd_s`` is the same over every (flow, seed)
    pair (25 values at full size), ``p95_sd_windows_s`` over every ``WINDOW_S`` window
    of every flow (the within-run spread).

  They agree at light load; where they differ (N = 25), the paper's own numbers favour
  the first: its column grows with the loss rate (x3.3 / x2.9 from N = 0 to 25) while its
  95th percentile grows x15 / x23, and a standard deviation of the 95th percentile grows
  with the percentile (ours: x25 and more).
  :mod:`ccbench.studies.brosh_droptail_notes` has the numbers.
* ``sigma_d_s``: σ_D, the per-message standard deviation of D per flow (the model's
  jitter, §4), not the table's column; ``jitter_rfc3550_s`` (mean of J) and
  ``jitter_mad_s`` (mean |D_i - D_{i-1}|) for context.
* ``*_paper``: the paper's table (note §4.3), verbatim.
* ``ftp_mbps``, ``web_mbps``: goodput of all FTP / all web flows together (context).

Sizes: reduced (default) 60 s of media measurement, 2 seeds; ``full=True``: 300 s (the
paper's 5 minutes), 5 seeds (the paper's five repetitions). Either way warm-up 5 s and
drain 15 s are added. Why our numbers differ from the paper's where they do:
:mod:`ccbench.studies.brosh_droptail_notes` (hypotheses table, one change at a time,
rerun by ``scripts/brosh_droptail_hypotheses.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd

DESCRIPTION = (
    "Brosh et al. drop-tail testbed, Table 3: 5 VoIP-over-TCP + 5 FTP + N web flows at 3 Mbit/s, "
    "100 ms RTT, 100-packet and 50000-byte queues; VoIP loss, RTT, jitter, 95% delay vs the paper"
)

N_MEDIA = 5
N_FTP = 5
WARMUP_S = 5.0
DRAIN_S = 15.0
STAGGER_MS = 4
WINDOW_S = 60.0

#: The media connections' TCP settings (paper §8.1 guidelines, see the module docstring).
MEDIA_TCP = {
    "kind": "tcp",
    "cc": "reno",
    "nagle": False,
    "sack": True,
    "init_cwnd": 4,
    "slow_start_after_idle": False,
    "recovery": "rate-halving",
    "tlp": False,
    "frto": False,
    "abc": "per-ack",
    # the 2.6 kernels deferred whole 64 KB skbs for at most a jiffy, not today's rule
    # (autosized chunks while the next ACK is due within 1 ms): off, as calibrated
    "tso_defer": False,
}
VOIP_TCP = MEDIA_TCP  # the name the first version of the study used
#: Background flows: Linux reno with the testbed kernels' ACK counting (see the docstring).
BACKGROUND_TCP = {"kind": "tcp", "cc": "reno", "abc": "per-ack", "tso_defer": False}


@dataclass(frozen=True)
class Setup:
    """One of the paper's two drop-tail tables."""

    table: int
    name: str                 # the media flows' name prefix ("voip", "video")
    preset: str               # application preset of the media flows
    capacity: str             # bottleneck rate, both directions
    queues: dict[str, str]    # queue kind -> drop-tail limit
    web_flows: tuple[int, ...]
    paper: dict[tuple[str, int], tuple[float, float, float, float]]
    csv: str                  # file name stem of the table and figure in --out


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
#: Brosh et al. Table 4 (video), note §4.3, same columns.
PAPER_TABLE4: dict[tuple[str, int], tuple[float, float, float, float]] = {
    ("packet", 0): (0.75, 0.101, 0.020, 0.215),
    ("packet", 10): (0.81, 0.101, 0.018, 0.265),
    ("packet", 25): (0.90, 0.101, 0.018, 0.289),
    ("packet", 50): (1.20, 0.101, 0.022, 0.608),
    ("packet", 100): (2.91, 0.101, 0.062, 4.880),
    ("byte", 0): (1.25, 0.101, 0.030, 0.460),
    ("byte", 10): (1.28, 0.101, 0.032, 0.594),
    ("byte", 25): (1.34, 0.101, 0.035, 0.914),
    ("byte", 50): (1.79, 0.101, 0.046, 1.890),
    ("byte", 100): (3.18, 0.101, 0.109, 5.978),
}

TABLE3 = Setup(3, "voip", "brosh-voip", "3Mbit", {"packet": "100pkt", "byte": "50000B"}, (0, 10, 15, 20, 25),
               PAPER_TABLE3, "brosh_droptail")
#: The paper gives the video byte queue (100000 B); its packet queue is not restated for
#: video, so it is the 100 packets of the VoIP runs.
TABLE4 = Setup(4, "video", "brosh-video", "30Mbit", {"packet": "100pkt", "byte": "100000B"}, (0, 10, 25, 50, 100),
               PAPER_TABLE4, "brosh_video")

WEB_FLOWS = TABLE3.web_flows
QUEUES = TABLE3.queues

Tweak = Callable[[dict[str, Any]], None]


def scenario_dict(n_web: int, queue: str = "packet", measure_s: float = 60.0, seed: int | None = None,
                  setup: Setup = TABLE3) -> dict:
    """The scenario (TOML-shaped dict) for ``n_web`` web flows and queue ``"packet"`` or
    ``"byte"``; the media flows write during ``[warmup, warmup + measure_s]``.

    ``seed`` None: media flow i starts at ``warmup + 4 ms * i``, FTP flow j at 0 (the
    example file). With a seed, the start phases are drawn from it: each media flow at
    ``warmup + U(0, 20 ms)`` and each FTP flow at ``U(0, 1 s)`` (whole microseconds), so
    that repetitions differ as testbed runs do; without web flows nothing else in the
    scenario is random and every seed would otherwise give the same run."""
    limit = setup.queues[queue]
    duration = WARMUP_S + measure_s + DRAIN_S
    stop = WARMUP_S + measure_s
    rng = np.random.default_rng(seed) if seed is not None else None
    flows = []
    for i in range(N_MEDIA):
        off_us = int(rng.integers(0, 20_000)) if rng is not None else i * STAGGER_MS * 1000
        flows.append({
            "name": f"{setup.name}{i}",
            "transport": dict(MEDIA_TCP),
            "app": {"kind": "preset", "name": setup.preset},
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
        # srtt every 100 ms (what polling TCP_INFO gives) and the queue every 10 ms.
        "run": {"duration": f"{round(duration * 1000)}ms", "queue_sample": "10ms", "state_sample": "100ms"},
        "topology": {
            "kind": "dumbbell",
            "bottleneck": {"down": setup.capacity, "up": setup.capacity, "delay": "50ms",
                           "queue": {"kind": "droptail", "limit": limit}},
        },
        "flows": flows,
    }


def _p95(d: np.ndarray) -> float:
    """Brosh's α-percentile (inverted CDF) with undelivered messages infinitely late."""
    return float(np.percentile(d, 95, method="inverted_cdf")) if d.size else np.nan


def _within(t: pd.Series, stop: float) -> np.ndarray:
    """Rows of a sampled table inside the media flows' writing period [warmup, stop]."""
    tt = t.to_numpy(dtype=float)
    return (tt >= WARMUP_S) & (tt <= stop)


def _srtt(run, names: list[str], stop: float) -> float:
    """Time-mean of the media connections' smoothed RTT (sampled every 100 ms, as a tool
    polling TCP_INFO's ``tcpi_rtt`` sees it), averaged over the flows."""
    c = run.cwnd
    if c is None or not len(c):
        return np.nan
    c = c[c["flow"].astype(str).isin(names)]
    c = c[_within(c["t"], stop)]
    return float(c.groupby("flow", observed=True)["srtt_s"].mean().mean()) if len(c) else np.nan


def _queue_kb(run, stop: float) -> float:
    """Time-mean backlog of the data direction's bottleneck queue, kB."""
    q = run.queue
    if q is None or not len(q):
        return np.nan
    q = q[(q["link"].astype(str) == "bottleneck_down")]
    q = q[_within(q["t"], stop)]
    return float(q["backlog_bytes"].mean()) / 1e3 if len(q) else np.nan


def media_metrics(run, prefix: str = "voip") -> dict:
    """One run's columns (media flows ``prefix*``), as defined in the module docstring;
    ``p95_flows`` and ``p95_windows`` are the per-flow and per-(flow, window) 95th
    percentiles the jitter readings are computed from across seeds."""
    from ccbench.analysis.delay import delay_components, jitter_rfc3550

    f = run.flows
    v = f[f["flow"].astype(str).str.startswith(prefix)]
    names = [str(x) for x in v["flow"]]
    sent = float(v["pkts_sent"].sum())
    comp = delay_components(run.packets, names)
    pk = run.packets
    stop = float(comp["t_write"].max())
    p95, p95w, sd, rj_mean, rj_p95, mad = [], [], [], [], [], []
    for name, g in comp.groupby("flow", sort=False, observed=True):
        g = g.sort_values("msg", kind="stable")
        d = g["total_s"].to_numpy(dtype=float)
        d = np.where(np.isfinite(d), d, np.inf)  # never delivered = infinitely late
        p95.append(_p95(d))
        tw = g["t_write"].to_numpy(dtype=float)
        win = np.floor((tw - tw.min()) / WINDOW_S)
        p95w += [_p95(d[win == k]) for k in np.unique(win) if (win == k).sum() >= 0.5 * WINDOW_S * 50 * 0.5]
        fin = d[np.isfinite(d)]
        sd.append(float(np.std(fin)))
        mad.append(float(np.mean(np.abs(np.diff(fin)))) if fin.size > 1 else np.nan)
        p = pk[pk["flow"].astype(str) == name]
        j = jitter_rfc3550(p["t_write"].to_numpy(dtype=float), p["t_deliver"].to_numpy(dtype=float))
        rj_mean.append(float(j.mean()))
        rj_p95.append(float(np.percentile(j, 95)))
    ftp = f[f["flow"].astype(str).str.startswith("ftp")]
    web = f[f["flow"].astype(str).str.startswith("web")]
    return {
        "loss_pct": 100.0 * float(v["pkts_dropped"].sum()) / sent if sent else np.nan,
        "rtt_s": float(v["rtt_p50_s"].mean()),
        "srtt_s": _srtt(run, names, stop),
        "queue_kb": _queue_kb(run, stop),
        "p95_s": float(np.mean(p95)),
        "p95_flows": p95,
        "p95_windows": p95w,
        "sigma_d_s": float(np.mean(sd)),
        "jitter_rfc3550_p95_s": float(np.mean(rj_p95)),
        "jitter_rfc3550_s": float(np.mean(rj_mean)),
        "jitter_mad_s": float(np.nanmean(mad)),
        "undelivered": int((~np.isfinite(comp["total_s"].to_numpy(dtype=float))).sum()),
        "ftp_mbps": float(ftp["goodput_bps"].sum()) / 1e6,
        "web_mbps": float(web["goodput_bps"].sum()) / 1e6 if len(web) else 0.0,
    }


def voip_metrics(run) -> dict:
    """:func:`media_metrics` of the VoIP flows (Table 3)."""
    return media_metrics(run, "voip")


METRICS = ("loss_pct", "rtt_s", "jitter_s", "p95_s")
EXTRA = ("srtt_s", "queue_kb", "p95_sd_s", "p95_sd_runs_s", "p95_sd_windows_s", "sigma_d_s", "jitter_rfc3550_s",
         "jitter_mad_s", "undelivered", "ftp_mbps", "web_mbps")
_PER_RUN = ("loss_pct", "rtt_s", "srtt_s", "queue_kb", "p95_s", "sigma_d_s", "jitter_rfc3550_p95_s", "jitter_rfc3550_s",
            "jitter_mad_s", "undelivered", "ftp_mbps", "web_mbps")


def _sd(x) -> float:
    x = np.asarray(x, dtype=float)
    x = x[np.isfinite(x)]
    return float(np.std(x, ddof=1)) if x.size > 1 else np.nan


def aggregate(per_seed: list[dict], setup: Setup, queue: str, n_web: int) -> dict:
    """One table row from the runs (seeds) of one (queue, N): means over seeds, the three
    jitter readings of the standard deviation of the 95th percentile, the paper's values."""
    df = pd.DataFrame([{k: m[k] for k in _PER_RUN} for m in per_seed])
    row: dict = {"queue": queue, "web_flows": n_web, "seeds": len(per_seed)}
    mean = {k: float(df[k].mean()) for k in _PER_RUN}
    mean["jitter_s"] = mean["jitter_rfc3550_p95_s"]
    mean["p95_sd_s"] = _sd([x for m in per_seed for x in m["p95_flows"]])
    mean["p95_sd_runs_s"] = _sd(df["p95_s"])
    mean["p95_sd_windows_s"] = _sd([x for m in per_seed for x in m["p95_windows"]])
    paper = setup.paper.get((queue, n_web), (np.nan,) * 4)
    for k, pv in zip(METRICS, paper):
        row[k] = mean[k]
        row[f"{k}_paper"] = pv
    for k in ("loss_pct", "rtt_s"):
        row[f"{k}_sd"] = _sd(df[k])
    for k in EXTRA:
        row[k] = mean[k]
    return row


def simulate_one(n_web: int, queue: str, measure_s: float, seed: int, setup: Setup = TABLE3,
                 tweak: Tweak | None = None) -> dict:
    """One run's metrics; ``tweak`` changes the scenario dict before it is built (the
    hypotheses script's one-change-at-a-time rows)."""
    import ccbench
    from ccbench.scenario import Scenario

    d = scenario_dict(n_web, queue, measure_s, seed=seed, setup=setup)
    if tweak is not None:
        tweak(d)
    return media_metrics(ccbench.simulate(Scenario.from_dict(d), seed=seed), setup.name)


def table(web_flows=None, queues=("packet", "byte"), measure_s: float = 60.0, seeds=(1,), progress=None,
          setup: Setup = TABLE3, tweak: Tweak | None = None) -> pd.DataFrame:
    """Runs every (queue, N, seed) and returns the ours-vs-paper table: one row per
    (queue, N). ``progress(k, total)`` after every run."""
    web_flows = setup.web_flows if web_flows is None else web_flows
    total, k = len(queues) * len(web_flows) * len(seeds), 0
    rows = []
    for q in queues:
        for n in web_flows:
            per_seed = []
            for s in seeds:
                per_seed.append(simulate_one(n, q, measure_s, s, setup, tweak))
                k += 1
                if progress:
                    progress(k, total)
            rows.append(aggregate(per_seed, setup, q, n))
    return pd.DataFrame(rows)


def plot(df: pd.DataFrame, path: Path, setup: Setup = TABLE3) -> None:
    """Four panels (loss, RTT, jitter, 95% delay vs N), ours (solid) and paper (dashed),
    one colour per queue kind; the jitter panel also shows the text's reading (dotted,
    standard deviation of the 95th percentile over seeds)."""
    from ccbench.plots import new_figure  # no pyplot: the backend stays the user's

    titles = {"loss_pct": "segment loss (%)", "rtt_s": "RTT (s)", "jitter_s": "95% jitter (s): RFC 3550, sd of p95",
              "p95_s": "95th-percentile delay (s)"}
    fig, axes = new_figure(1, 4, figsize=(16, 3.8))
    for ax, k in zip(axes, METRICS):
        for q, colour in (("packet", "C0"), ("byte", "C1")):
            g = df[df["queue"] == q]
            if g.empty:
                continue
            ax.plot(g["web_flows"], g[k], "o-", color=colour, label=f"ours, {setup.queues[q]}")
            ax.plot(g["web_flows"], g[f"{k}_paper"], "s--", color=colour, alpha=0.6, label=f"paper, {setup.queues[q]}")
            if k == "jitter_s":
                ax.plot(g["web_flows"], g["p95_sd_runs_s"], ":", color=colour, alpha=0.8, label=f"sd of p95 (ours), {q}")
        ax.set_xlabel("web flows N")
        ax.set_title(titles[k])
        if k in ("p95_s", "jitter_s"):
            ax.set_yscale("log")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7)
    axes[2].legend(fontsize=6)
    fig.suptitle(f"Brosh et al. Table {setup.table} ({setup.name}, drop-tail, {setup.capacity}/s, 100 ms RTT): "
                 "ours vs paper")
    fig.savefig(path, dpi=120)


def sizes(full: bool) -> tuple[float, tuple[int, ...]]:
    """(measurement seconds, seeds): full = the paper's 5 min x 5 repetitions."""
    return (300.0, (1, 2, 3, 4, 5)) if full else (60.0, (1, 2))


def run_setup(setup: Setup, full: bool = False, out: Path | None = None, progress=None) -> pd.DataFrame:
    """Runs one table at the reduced or full size; writes ``<csv>.csv`` and ``<csv>.png``
    into ``out`` and returns the printed ours-vs-paper columns."""
    measure_s, seeds = sizes(full)
    df = table(setup.web_flows, ("packet", "byte"), measure_s, seeds, progress=progress, setup=setup)
    if out is not None:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        df.to_csv(out / f"{setup.csv}.csv", index=False)
        plot(df, out / f"{setup.csv}.png", setup)
    # The returned (printed) table: ours next to the paper's, the text's reading of the
    # jitter column and σ_D; the CSV has every column.
    cols = ["queue", "web_flows"] + [c for k in METRICS for c in (k, f"{k}_paper")] + ["p95_sd_runs_s", "sigma_d_s"]
    return df[cols]


def run(full: bool = False, out: Path | None = None, progress=None) -> pd.DataFrame:
    """Table 3. Reduced: 60 s of VoIP, seeds 1-2; full: 300 s, seeds 1..5. Writes
    ``brosh_droptail.csv`` and ``brosh_droptail.png`` into ``out``."""
    return run_setup(TABLE3, full, out, progress)
