"""Wei thesis Chapter 2 (Vegas and FAST, the studies ``wei-vegas`` and ``wei-fast``): the
path, the scenario of one run, the traces it yields and the theorems' bounds.

Path (thesis Figs 2.1-2.4 captions)
-----------------------------------
A dumbbell with a ``rate`` bottleneck both ways, one-way delay ``rtt/2`` each way,
lossless (a drop-tail buffer of a million packets: the model's infinite buffer), access
links 10x the bottleneck without delay. Packets are 1000 bytes on the wire (the captions'
"1000 bytes per packet": MSS 948 + 52 B headers), one ACK per packet (delayed ACK off: the
model's assumption, §2.1.2 footnote 2), socket buffers of 4 BDPs from the start.

``c`` is the capacity in packets/s and ``d`` the round-trip propagation delay as §2.1.1
defines it: it includes the data packet's own transmission time at the bottleneck (and,
here, the ACK's and the access hops', all small), i.e. the RTT of a packet that finds
every queue empty. Vegas's baseRTT is pinned to that ``d`` (``base_rtt_us``), as the
thesis did "to eliminate the effect of inaccurate base RTT estimation" (§2.1.6): flows
starting together otherwise queue behind each other's first packets and each settles at a
slightly different window.

Bounds
------
* Vegas, one flow, Theorem 2.1.5 with ``alpha d = A`` packets (Linux's ``alpha = beta =
  A``; the thesis's alpha has rate units and alpha = beta, footnote 5):
  ``cd + A - 1 < w < cd + A + 1`` and ``A - 1 < b < A + 1``
  (:func:`ccbench.models.wei_fast.vegas_equilibrium_bounds`).
* Vegas, N homogeneous flows (our extension, not a theorem of the thesis: its Figs 2.2-2.4
  show each flow's window within one packet of the shared equilibrium): each flow
  ``|w_i - (cd + NA)/N| < 1``, so ``|W - (cd + NA)| < N`` and ``|b - NA| < N``.
* FAST, N flows with alpha_i (Theorems 2.2.3.1-2): ``W -> cd + sum alpha_i``,
  ``w_i -> (alpha_i/alpha)(alpha + cd)``; with integer windows and a law rounded to the
  nearest packet (``ccsim`` ``fast``) a flow stops once its queued share ``w q/D`` is
  within ``1/(2 gamma)`` of alpha_i, hence ``|b - sum alpha_i| < N/(2 gamma)`` (ours).

The backlog trace counts whole packets waiting (the one in service is part of ``cd``),
while the theorem's ``b(j)`` is a fractional amount of work (20.7 packets shows as 20
or 21 waiting, depending on the instant): a backlog strictly inside ``(A - 1, A + 1)``
is seen as counts in the closed ``[A - 1, A + 1]``, so backlog samples are checked
against the closed interval and windows (whole numbers on both sides) against the open
one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

PKT_BYTES = 1000
HEADER_BYTES = 52
ACCESS_FACTOR = 10
STATE_SAMPLE = "100ms"
QUEUE_SAMPLE = "10ms"


@dataclass(frozen=True)
class Path:
    rate_bps: float
    rtt_s: float  # round-trip propagation delay of the links (2 x one-way)

    @property
    def c(self) -> float:
        """Capacity, packets/s."""
        return self.rate_bps / (PKT_BYTES * 8)

    @property
    def d(self) -> float:
        """Round-trip delay of a packet that finds every queue empty, s (§2.1.1's d)."""
        ack = HEADER_BYTES * 8
        data = PKT_BYTES * 8
        return (self.rtt_s + (data + ack) / self.rate_bps
                + 2 * (data + ack) / (ACCESS_FACTOR * self.rate_bps))

    @property
    def cd(self) -> float:
        return self.c * self.d

    @property
    def base_rtt_us(self) -> int:
        """``d`` as Vegas stores a sample: whole µs, truncated as the RTT sample is, +1
        (``tcp_vegas_pkts_acked``'s vrtt)."""
        return int(math.floor(self.d * 1e6)) + 1

    def label(self) -> str:
        return f"{self.rate_bps / 1e6:g} Mbit/s, {self.rtt_s * 1e3:g} ms"


def vegas_cc(a: int, legacy: bool, path: Path) -> dict[str, Any]:
    return {"name": "vegas", "alpha": a, "beta": a, "legacy_2_6": legacy, "base_rtt_us": path.base_rtt_us}


def fast_cc(alpha: int, gamma: float = 0.5) -> dict[str, Any]:
    return {"name": "fast", "alpha": alpha, "gamma": gamma}


Group = tuple  # (name, flow count, cc table, initial window or None)


def scenario_dict(path: Path, groups: list[Group], duration_s: float) -> dict[str, Any]:
    """``groups``: (name, flow count, cc table, init_cwnd) per group of identical flows, all
    starting at t = 0. A group with an initial window starts in congestion avoidance
    (``init_ssthresh`` = 2, the route metric): the thesis's model starts there (§2.1.4
    footnote 4), and from slow start's overshoot Vegas walks back one packet per round
    (2.6.16: per two rounds), thousands of rounds at 800 Mbit/s."""
    # Socket buffers of 4 BDPs from the start (the thesis's testbed used 2 BDPs, note §7
    # item 15; the receiver offers 160/256 of its buffer): Linux's default 4 MB would cap a
    # lone flow's window below the 20 000-packet BDP of 800 Mbit/s x 200 ms (Vegas, seeing
    # no queue, then grows cwnd without bound), and the receive window's autotuning ramp
    # would hold back the initial windows the flows start with.
    buf = f"{max(4 * path.rate_bps * path.rtt_s / 8, 4e6):.0f}B"
    flows = []
    for name, n, cc, w0 in groups:
        # tso_defer off: the thesis's discrete models clock out a packet per ACK, and at
        # 800 Mbit/s today's deferral sends 45-segment skbs whose own queueing they lack
        tr = {"kind": "tcp", "cc": cc, "delayed_ack": False, "tso_defer": False, "mss": PKT_BYTES - HEADER_BYTES,
              "header": f"{HEADER_BYTES}B", "sndbuf": buf, "rcvbuf": buf, "rcvbuf_initial": buf}
        if w0 is not None:
            tr.update(init_cwnd=int(w0), init_ssthresh=2)
        flows.append({"name": name, "count": n, "app": {"kind": "bulk"}, "transport": tr})
    return {
        "run": {"duration": f"{duration_s:g}s", "queue_sample": QUEUE_SAMPLE, "state_sample": STATE_SAMPLE},
        "topology": {
            "kind": "dumbbell",
            "bottleneck": {
                "down": f"{path.rate_bps / 1e6:g}Mbit",
                "up": f"{path.rate_bps / 1e6:g}Mbit",
                "delay": f"{path.rtt_s / 2 * 1e3:g}ms",
                "queue": {"kind": "droptail", "limit": "1000000pkt"},
            },
            "access": {"rate": f"{ACCESS_FACTOR * path.rate_bps / 1e6:g}Mbit"},
        },
        "flows": flows,
    }


@dataclass
class Trace:
    """One run: windows (state samples x flows) and the bottleneck backlog."""

    t: np.ndarray          # state sample times, s
    cwnd: np.ndarray       # (len(t), n_flows) packets
    flows: list[str]
    tq: np.ndarray         # queue sample times, s
    backlog: np.ndarray    # packets waiting at the bottleneck (downstream)
    wall_s: float

    def window(self, t0: float, t1: float = math.inf) -> "Trace":
        m = (self.t >= t0) & (self.t <= t1)
        mq = (self.tq >= t0) & (self.tq <= t1)
        return Trace(self.t[m], self.cwnd[m], self.flows, self.tq[mq], self.backlog[mq], self.wall_s)

    @property
    def total(self) -> np.ndarray:
        return self.cwnd.sum(axis=1)


def simulate(path: Path, groups: list[Group], duration_s: float, seed: int = 1) -> Trace:
    import time

    import ccbench
    from ccbench.scenario import Scenario

    t0 = time.perf_counter()
    run = ccbench.simulate(Scenario.from_dict(scenario_dict(path, groups, duration_s)), seed=seed)
    st = run.cwnd
    piv = st.pivot_table(index="t", columns="flow", values="cwnd_pkts", aggfunc="last", observed=True)
    flows = [str(f) for f in run.flows["flow"]]
    piv.columns = [str(c) for c in piv.columns]
    piv = piv[flows].ffill().dropna()
    q = run.queue
    q = q[q["link"].astype(str) == "bottleneck_down"]
    return Trace(piv.index.to_numpy(dtype=float), piv.to_numpy(dtype=float), flows,
                 q["t"].to_numpy(dtype=float), q["backlog_pkts"].to_numpy(dtype=float), time.perf_counter() - t0)


# --- bounds ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Bounds:
    flow: tuple[float, float]    # each flow's window, open interval
    total: tuple[float, float]   # sum of the windows, open interval
    queue: tuple[float, float]   # backlog, checked closed on whole-packet samples
    source: str


def vegas_bounds(path: Path, n: int, a: float) -> Bounds:
    """Thm 2.1.5 (n = 1, from the model module), or its per-flow extension (n > 1)."""
    from ccbench.models.wei_fast import vegas_equilibrium_bounds

    if n == 1:
        b = vegas_equilibrium_bounds(path.c, path.d, a / path.d)
        return Bounds(b["window"], b["window"], b["queue"], "Thm 2.1.5")
    w = (path.cd + n * a) / n
    return Bounds((w - 1, w + 1), (n * w - n, n * w + n), (n * a - n, n * a + n), "Thm 2.1.5 per flow (ours)")


def fast_bounds(path: Path, alphas: list[float], gamma: float = 0.5) -> Bounds:
    """Thms 2.2.3.1-2 with the integer dead band of the rounded law (module docstring)."""
    from ccbench.models.wei_fast import fast_equilibrium

    w, _ = fast_equilibrium(path.c, path.d, alphas)
    n, A = len(alphas), float(sum(alphas))
    band = n / (2 * gamma)
    return Bounds((float(w.min()) - 1 / (2 * gamma), float(w.max()) + 1 / (2 * gamma)),
                  (path.cd + A - band, path.cd + A + band), (A - band, A + band), "Thms 2.2.3.1-2 + rounding (ours)")


def frac_open(x: np.ndarray, lo: float, hi: float) -> float:
    x = np.asarray(x, dtype=float).ravel()
    return float(np.mean((x > lo) & (x < hi))) if x.size else float("nan")


def frac_closed(x: np.ndarray, lo: float, hi: float) -> float:
    x = np.asarray(x, dtype=float).ravel()
    return float(np.mean((x >= lo) & (x <= hi))) if x.size else float("nan")


def settle_time(t: np.ndarray, ok: np.ndarray) -> float:
    """The first time after which every sample is ``ok`` (NaN if the last one is not)."""
    ok = np.asarray(ok, dtype=bool)
    if ok.size == 0 or not ok[-1]:
        return float("nan")
    bad = np.flatnonzero(~ok)
    return float(t[0] if bad.size == 0 else t[bad[-1] + 1])


def summary(tr: Trace, b: Bounds) -> dict[str, Any]:
    """Ranges and the sample-by-sample fractions over a measurement window."""
    n = tr.cwnd.shape[1]
    mean = tr.total / n
    lo_f, hi_f = b.flow
    return {
        "cwnd_min": float(tr.cwnd.min()), "cwnd_max": float(tr.cwnd.max()),
        "mean_cwnd_min": float(mean.min()), "mean_cwnd_max": float(mean.max()), "mean_cwnd": float(mean.mean()),
        "total_min": float(tr.total.min()), "total_max": float(tr.total.max()),
        "queue_min": float(tr.backlog.min()), "queue_max": float(tr.backlog.max()),
        "queue_mean": float(tr.backlog.mean()),
        "frac_flow_in": frac_open(tr.cwnd, lo_f, hi_f),
        "frac_total_in": frac_open(tr.total, *b.total),
        "frac_queue_in": frac_closed(tr.backlog, *b.queue),
        # per-flow window span: how far each flow moves once converged (thesis: within 1-2)
        "flow_span_max": float((tr.cwnd.max(axis=0) - tr.cwnd.min(axis=0)).max()),
    }


def verdict_table(rows: list[dict], t0: float) -> "pd.DataFrame":
    """A study's table: verdicts as words (True/False, blank where not judged, also in the
    CSV) and the wall time since ``t0`` (``time.perf_counter``) in ``attrs``."""
    import time

    import pandas as pd

    table = pd.DataFrame(rows)
    table["agrees"] = [str(bool(v)) if isinstance(v, (bool, np.bool_)) else v for v in table["agrees"]]
    table.attrs["wall_s"] = time.perf_counter() - t0
    return table


def fmt_range(lo: float, hi: float, nd: int = 2) -> str:
    return f"{lo:.{nd}f}-{hi:.{nd}f}" if (lo != round(lo) or hi != round(hi)) else f"{lo:.0f}-{hi:.0f}"


def first_peak_time(tr: Trace, horizon_s: Optional[float] = None) -> float:
    """Time of the largest total window in the first ``horizon_s`` (slow start's overshoot)."""
    m = tr.t <= (horizon_s if horizon_s is not None else tr.t[-1])
    i = int(np.argmax(np.where(m, tr.total, -np.inf)))
    return float(tr.t[i])
