"""Brosh et al., delay-reduction schemes (note §4.6, §5), the second experiment of
``ccbench reproduce brosh-split``: split-N and parallel connections for one 573 kbit/s
live video over TCP at 1 % random loss and 100 ms RTT (the conditions of the paper's
model curves, Figs 25 and 27, run in the simulator; the paper's own measurements of the
schemes used the drop-tail testbed, :mod:`ccbench.studies.brosh_split_testbed`).

Scenario
--------
* Dumbbell, bottleneck 100 Mbit/s both ways (the random-drop testbed's rate is not
  given; NIST Net on a LAN, so the link is far from the bottleneck: no queueing), one-way
  delay 50 ms each way (RTT 100 ms), drop-tail 1000 packets (never fills).
* Loss: Bernoulli p = 0.01 on every packet of the data direction (the down link); the
  ACK direction is lossless. The paper's NIST Net "drops packets uniformly at random";
  the direction is unstated (note §6 item 10), we drop data only so that p is the
  segment loss rate of the model.
* One video flow: preset ``live-video`` (1448 B every 20 ms = 573 kbit/s, one MSS per
  message) with the drop-tail testbed's media settings
  (:data:`~ccbench.studies.brosh_droptail.MEDIA_TCP`: TCP ``reno`` (NewReno with SACK),
  ``nagle = false``, ``init_cwnd = 4``, ``slow_start_after_idle = false``, the Linux
  2.6-era ``recovery = "rate-halving"``, no tail-loss probe, no F-RTO, per-ACK
  counting), the rest Linux defaults (delayed ACKs, 200 ms minimum RTO, 4 MB / 6 MB
  buffers).
* Variants (flow keys of the scenario):

  - ``single``: one connection;
  - ``split-2``: ``split = 2``, each message written as two 724-byte writes back to back
    (paper §7: same bytes/s, twice the packets, no pacing of the halves); also
    ``split-4`` for the paper's "diminishing gains";
  - ``par-5-rr``: ``connections = 5``, ``scheduler = "round-robin"`` (paper's "blind");
  - ``par-5-lb``: ``connections = 5``, ``scheduler = "least-backlog"`` (paper's
    "intelligent": the connection with the least unsent + unacknowledged data that is
    not in RTO recovery); also ``par-2-lb`` and ``par-10-lb``.

  With several connections the simulator's receiver merges by message number: message
  i is delivered when it and every earlier message have been delivered in order on
  their connections (paper §5: "the receiver must merge the streams by RTP sequence
  number"; how the paper measured across connections is not stated).

Metric
------
``p95_s``: 95th percentile (Brosh's α-percentile, ``method = "inverted_cdf"``) of the
per-message delay ``t_deliver - t_write`` of the messages written in
``[warmup, warmup + measure]`` (a message never delivered counts as infinitely late),
per seed, then the mean over seeds. ``reduction_pct = 100 * (1 - p95 / p95_single)``
(positive = the scheme lowers the 95th percentile), computed from the seed means.
``p95_nohol_s``: the same percentile of ``t_arrive - t_write`` (no head-of-line
blocking at all: what a receiver that reads out of order, e.g. TCP-RC, would see); the
paper's blind/intelligent numbers lie between the two if it did not merge strictly.

Mechanisms to keep in mind when reading the table: with 5 connections each carries
about one message per RTT, so a lost message is never followed by three duplicate ACKs
on its connection; it is repaired by the RTO (the 2.6 stack has no tail-loss probe;
today's Linux probes after 2 SRTT + 2 ms with two or more segments in flight, 2 SRTT +
200 ms with exactly one), and the in-order merge holds every later message meanwhile.
The least-backlog scheduler prefers idle connections, so its messages usually leave as
their connection's only segment in flight, and a connection with a
lost segment gets no new data that could trigger SACK-based recovery. A single
connection repairs a loss by fast retransmit about one RTT after it, but builds a send
backlog after each window halving (the delay Brosh's model describes).

Paper numbers (note §4.6; there is no exact table, only text): split-2 reduces the 95th
percentile by 60 % on average in the model with random drops (Fig. 25, "an upper
bound"), by up to 30 % in drop-tail experiments (Fig. 26a); 5 blind parallel
connections by 60 % (model, random drops, Fig. 27) and by 90 % in drop-tail experiments
(Fig. 28a); the intelligent scheme outperforms blind. The ``paper_*`` columns carry
these numbers with their source; they are not the same experiment as ours (random loss
at 1 %), so compare the sign and the order of magnitude.

Sizes: reduced (default) 120 s of video per run, seeds 1..3; ``full=True``: 300 s,
seeds 1..5 (the paper's 5 minutes and 5 runs of the drop-tail testbed; the random-drop
testbed used 10 runs).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from .brosh_droptail import MEDIA_TCP

DESCRIPTION = (
    "Brosh et al. split-N and parallel connections: 573 kbit/s video over TCP at 1% random loss, "
    "100 ms RTT; 95th-percentile delay of one connection vs split-2 vs 5 parallel (round-robin, least-backlog)"
)

WARMUP_S = 2.0
DRAIN_S = 10.0
LOSS_P = 0.01

#: The §8.1 guideline settings and 2.6-era recovery, as for the drop-tail testbed's media flows.
VIDEO_TCP = dict(MEDIA_TCP)

#: name -> (split, connections, scheduler, paper reduction % model, paper reduction % experiment)
VARIANTS: dict[str, tuple[int, int, str, float, float]] = {
    "single": (1, 1, "round-robin", np.nan, np.nan),
    "split-2": (2, 1, "round-robin", 60.0, 30.0),
    "split-4": (4, 1, "round-robin", np.nan, np.nan),
    "par-5-rr": (1, 5, "round-robin", 60.0, 90.0),
    "par-5-lb": (1, 5, "least-backlog", np.nan, 90.0),
    "par-2-lb": (1, 2, "least-backlog", np.nan, np.nan),
    "par-10-lb": (1, 10, "least-backlog", np.nan, np.nan),
}
PAPER_SOURCE = {
    "split-2": "model Fig. 25 (random drops, mean, upper bound) / drop-tail Fig. 26a ('up to')",
    "par-5-rr": "model Fig. 27 (blind, random drops, mean) / drop-tail Fig. 28a (mean)",
    "par-5-lb": "drop-tail Fig. 28a: intelligent outperforms blind (90% is the blind mean; Intro: 'up to 90%')",
}
REQUIRED = ("single", "split-2", "par-5-rr", "par-5-lb")


def scenario_dict(variant: str = "single", measure_s: float = 120.0, loss_p: float = LOSS_P) -> dict:
    split, conns, sched, _, _ = VARIANTS[variant]
    duration = WARMUP_S + measure_s + DRAIN_S
    flow = {
        "name": "video",
        "transport": dict(VIDEO_TCP),
        "app": {"kind": "preset", "name": "live-video"},
        "stop": f"{round((WARMUP_S + measure_s) * 1000)}ms",
    }
    if split != 1:
        flow["split"] = split
    if conns != 1:
        flow["connections"] = conns
        flow["scheduler"] = sched
    return {
        "run": {"duration": f"{round(duration * 1000)}ms", "queue_sample": "0s", "state_sample": "0s"},
        "topology": {
            "kind": "dumbbell",
            "bottleneck": {"down": "100Mbit", "up": "100Mbit", "delay": "50ms",
                           "queue": {"kind": "droptail", "limit": "1000pkt"},
                           "loss": {"kind": "bernoulli", "p": loss_p}},
        },
        "flows": [flow],
    }


def run_metrics(run) -> dict:
    p = run.packets
    p = p[p["t_write"].to_numpy(dtype=float) >= WARMUP_S]
    tw = p["t_write"].to_numpy(dtype=float)
    d = p["t_deliver"].to_numpy(dtype=float) - tw
    d = np.where(np.isfinite(d), d, np.inf)
    a = p["t_arrive"].to_numpy(dtype=float) - tw
    a = np.where(np.isfinite(a), a, np.inf)
    f = run.flows.iloc[0]
    return {
        "p95_s": float(np.percentile(d, 95, method="inverted_cdf")),
        "p50_s": float(np.percentile(d, 50, method="inverted_cdf")),
        "p95_nohol_s": float(np.percentile(a, 95, method="inverted_cdf")),
        "loss_pct": 100.0 * float(f["loss_rate"]),
        "timeouts": int(f["timeouts"]),
        "messages": int(d.size),
    }


def table(variants=tuple(VARIANTS), measure_s: float = 120.0, seeds=(1, 2, 3), loss_p: float = LOSS_P,
          progress=None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(summary table, per-seed table); ``progress(k)`` after each run."""
    import ccbench
    from ccbench.scenario import Scenario

    per = []
    for v in variants:
        scn = Scenario.from_dict(scenario_dict(v, measure_s, loss_p))
        for s in seeds:
            per.append({"variant": v, "seed": s, **run_metrics(ccbench.simulate(scn, seed=s))})
            if progress:
                progress(len(per))
    per_df = pd.DataFrame(per)
    g = per_df.groupby("variant", sort=False)
    summ = g[["p95_s", "p50_s", "p95_nohol_s", "loss_pct", "timeouts"]].mean()
    summ["p95_sd"] = g["p95_s"].std(ddof=1) if len(seeds) > 1 else np.nan
    summ = summ.reset_index()
    base = float(summ.loc[summ["variant"] == "single", "p95_s"].iloc[0]) if "single" in set(summ["variant"]) else np.nan
    base_nohol = float(summ.loc[summ["variant"] == "single", "p95_nohol_s"].iloc[0]) if "single" in set(summ["variant"]) else np.nan
    summ["reduction_pct"] = 100.0 * (1.0 - summ["p95_s"] / base)
    summ["reduction_nohol_pct"] = 100.0 * (1.0 - summ["p95_nohol_s"] / base_nohol)
    summ["paper_reduction_model_pct"] = [VARIANTS[v][3] for v in summ["variant"]]
    summ["paper_reduction_experiment_pct"] = [VARIANTS[v][4] for v in summ["variant"]]
    summ["paper_source"] = [PAPER_SOURCE.get(v, "") for v in summ["variant"]]
    summ.insert(1, "seeds", len(seeds))
    return summ, per_df


def plot(summ: pd.DataFrame, path: Path) -> None:
    """Bars of the 95th percentile per variant, merged delivery and no HOL."""
    from ccbench.plots import new_figure  # no pyplot: the backend stays the user's

    fig, ax = new_figure(figsize=(8, 4))
    x = np.arange(len(summ))
    ax.bar(x - 0.2, summ["p95_s"] * 1000, 0.4, yerr=summ["p95_sd"].fillna(0) * 1000, label="95th pct, merged delivery")
    ax.bar(x + 0.2, summ["p95_nohol_s"] * 1000, 0.4, label="95th pct, no HOL (t_arrive)")
    ax.set_xticks(x)
    ax.set_xticklabels(summ["variant"])
    ax.set_ylabel("delay (ms)")
    ax.set_title("573 kbit/s video over TCP, 1% random loss, 100 ms RTT\n(bar labels: change of the merged 95th percentile vs single)", fontsize=10)
    for xi, r in zip(x, summ["reduction_pct"]):
        ax.annotate(f"{-r:+.0f}%" if np.isfinite(r) else "", (xi - 0.2, 0), textcoords="offset points",
                    xytext=(0, 3), ha="center", fontsize=8, color="white")
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    fig.savefig(path, dpi=120)
