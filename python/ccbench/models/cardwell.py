"""Cardwell, Savage & Anderson (INFOCOM 2000): "Modeling TCP latency".

Expected time to open a TCP connection and transfer ``d`` data segments, extending
PFTK to short flows. Equation numbers are those of the INFOCOM 2000 paper:

* Handshake (eq. (4)): E[T_h] = RTT + T_s ( (1-p_r)/(1-2p_r) + (1-p_f)/(1-2p_f) - 2 ),
  T_s = initial SYN timeout (3 s); requires p_f, p_r < 1/2.
* Data sent in the initial slow start, including the first lost segment (eq. (5)):
  E[d_ss] = (1-(1-p)^d)(1-p)/p + 1.
* Window growth per round gamma = 1 + 1/b (b segments per ACK; 1.5 with delayed ACKs),
  initial window w_1; window at the end of slow start (eq. (11)):
  E[W_ss] = E[d_ss](gamma-1)/gamma + w_1/gamma.
* Slow-start time (eq. (15)):
  if E[W_ss] > W_max:
      E[T_ss] = RTT ( log_gamma(W_max/w_1) + 1 + (E[d_ss] - (gamma W_max - w_1)/(gamma-1)) / W_max )
  else:
      E[T_ss] = RTT log_gamma( E[d_ss](gamma-1)/w_1 + 1 ).
* First loss (eqs. (16)-(20)): l_ss = 1 - (1-p)^d;
  E[T_loss] = l_ss ( Q(p, E[W_ss]) E[Z^TO] + (1 - Q(p, E[W_ss])) RTT ),
  E[Z^TO] = G(p) T0/(1-p), with Q = PFTK's Q̂ and G = PFTK's f.
* Rest of the transfer at the PFTK steady-state rate R (eqs. (21)-(24)):
  E[d_ca] = d - E[d_ss], E[T_ca] = E[d_ca]/R.
* Delayed-ACK cost of the first segment E[T_delack] (Sec. 3.5) and the total
  (eq. (25)): E[T] = E[T_h] + E[T_ss] + E[T_loss] + E[T_ca] + E[T_delack].

Modelling choices (documented, each with a keyword switch):

* ``dss_formula="paper"`` (default) uses eq. (5) as printed, capped at ``d`` (as printed
  it tends to d + 1 as p -> 0, i.e. it always counts a lost segment).
  ``dss_formula="exact"`` uses the exact expectation of the number of segments sent up
  to and including the first loss, (1-(1-p)^d)(1-p)/p + 1 - (1-p)^d, which equals d
  at p = 0.
* ``steady_variant="csa00"`` (default) uses the paper's own form of the PFTK rate
  (eq. (22)); ``"pftk98"`` uses PFTK SIGCOMM'98 eq. (32). See :mod:`.pftk`.
* ``t_delack_s`` defaults to 0.1 s, the mean wait of a BSD-style 200 ms delayed-ACK
  timer; set it to 0 when the first segment is ACKed immediately (e.g. Linux
  quick-ACK at connection start, or w_1 >= 2 so the receiver gets two segments).
* ``include_handshake=True`` (default) adds E[T_h]; ``False`` gives the data-transfer
  latency only. The paper's handshake SYN timeout is ``t_syn_s = 3.0``.
* ``p = 0`` is accepted (no losses): E[d_ss] = d, no loss and no congestion-avoidance
  time.
* Loss in both directions is ``p`` unless ``p_reverse`` is given (handshake only).
* The timeout probability of the first loss uses min(E[W_ss], W_max) as the window
  (the paper writes Q(p, E[W_ss]); with a receiver limit the window cannot exceed
  W_max).
* T0 defaults to 4 x RTT when not given (the paper uses measured T0 values).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Annotated, Optional

import numpy as np
import typer

from . import pftk

__all__ = [
    "CardwellLatency",
    "handshake_time_s",
    "expected_slow_start_segments",
    "slow_start_end_window_pkts",
    "slow_start_time_s",
    "first_loss_time_s",
    "latency",
    "latency_s",
    "cli",
]

_DSS = ("paper", "exact")


def _check(name, value, ok: bool, accepted: str):
    if not ok:
        raise ValueError(f"{name}={value!r} is invalid: expected {accepted}")


def _check_p(name, p, hi=1.0, hi_open=True):
    ok = isinstance(p, (int, float)) and not math.isnan(p) and 0 <= p and (p < hi if hi_open else p <= hi)
    _check(name, p, ok, f"a probability in [0, {hi}{')' if hi_open else ']'}")
    return float(p)


def _check_pos(name, v, allow_inf=False):
    ok = isinstance(v, (int, float)) and not math.isnan(v) and v > 0 and (allow_inf or math.isfinite(v))
    _check(name, v, ok, "a number > 0" + (" (inf allowed)" if allow_inf else ", finite"))
    return float(v)


def handshake_time_s(rtt_s: float, p_forward: float, p_reverse: Optional[float] = None, *, t_syn_s: float = 3.0):
    """E[T_h] = RTT + T_s((1-p_r)/(1-2p_r) + (1-p_f)/(1-2p_f) - 2) (Cardwell eq. (4)), seconds."""
    rtt = _check_pos("rtt_s", rtt_s)
    pf = _check_p("p_forward", p_forward, hi=0.5)
    pr = pf if p_reverse is None else _check_p("p_reverse", p_reverse, hi=0.5)
    ts = _check_pos("t_syn_s", t_syn_s)
    return rtt + ts * ((1 - pr) / (1 - 2 * pr) + (1 - pf) / (1 - 2 * pf) - 2)


def expected_slow_start_segments(d: int, p: float, *, dss_formula: str = "paper") -> float:
    """E[d_ss], segments sent in the initial slow start (Cardwell eq. (5)); see module doc."""
    _check("d", d, isinstance(d, (int, np.integer)) and d >= 1, "an integer number of segments >= 1")
    p = _check_p("p", p)
    if dss_formula not in _DSS:
        raise ValueError(f"dss_formula={dss_formula!r} is invalid: expected one of {_DSS}")
    if p == 0:
        return float(d)
    lss = 1 - (1 - p) ** d
    if dss_formula == "paper":
        return min(float(d), lss * (1 - p) / p + 1)
    return lss * (1 - p) / p + lss


def slow_start_end_window_pkts(d_ss: float, *, gamma: float, w1: float) -> float:
    """E[W_ss] = E[d_ss](gamma-1)/gamma + w_1/gamma (Cardwell eq. (11)), packets (no W_max)."""
    return d_ss * (gamma - 1) / gamma + w1 / gamma


def slow_start_time_s(d_ss: float, rtt_s: float, *, gamma: float, w1: float, w_max_pkts: float = math.inf) -> float:
    """E[T_ss] for sending ``d_ss`` segments in slow start (Cardwell eq. (15)), seconds."""
    rtt = _check_pos("rtt_s", rtt_s)
    _check("gamma", gamma, isinstance(gamma, (int, float)) and 1 < gamma <= 2, "a growth factor in (1, 2]")
    w1 = _check_pos("w1", w1)
    wmax = _check_pos("w_max_pkts", w_max_pkts, allow_inf=True)
    _check("w_max_pkts", w_max_pkts, wmax >= w1, f"W_max >= w1 = {w1}")
    w_ss = slow_start_end_window_pkts(d_ss, gamma=gamma, w1=w1)
    if w_ss > wmax:
        ramp = (gamma * wmax - w1) / (gamma - 1)  # segments sent while growing from w1 to W_max
        return rtt * (math.log(wmax / w1, gamma) + 1 + (d_ss - ramp) / wmax)
    return rtt * math.log(d_ss * (gamma - 1) / w1 + 1, gamma)


def first_loss_time_s(d: int, p: float, rtt_s: float, *, t0_s: float, w_ss_pkts: float) -> float:
    """E[T_loss] = l_ss (Q E[Z^TO] + (1-Q) RTT), l_ss = 1-(1-p)^d (Cardwell eqs. (16)-(20)), seconds."""
    p = _check_p("p", p)
    if p == 0:
        return 0.0
    lss = 1 - (1 - p) ** d
    Q = pftk.q_hat(p, max(w_ss_pkts, 1e-9))
    zto = pftk.backoff_series(p) * t0_s / (1 - p)
    return lss * (Q * zto + (1 - Q) * rtt_s)


@dataclass(frozen=True)
class CardwellLatency:
    """Components of Cardwell eq. (25), seconds, plus the intermediate quantities."""

    segments: int
    handshake_s: float
    slow_start_s: float
    first_loss_s: float
    congestion_avoidance_s: float
    delayed_ack_s: float
    total_s: float
    d_ss_pkts: float
    w_ss_pkts: float
    loss_in_slow_start_prob: float
    steady_rate_pkts_per_s: float

    def as_dict(self) -> dict:
        return asdict(self)


def latency(
    size_bytes: int,
    *,
    mss_bytes: int = 1460,
    rtt_s: float,
    p: float,
    t0_s: Optional[float] = None,
    b: float = 2.0,
    w1: float = 1.0,
    w_max_pkts: float = math.inf,
    t_delack_s: float = 0.1,
    t_syn_s: float = 3.0,
    p_reverse: Optional[float] = None,
    include_handshake: bool = True,
    dss_formula: str = "paper",
    steady_variant: str = "csa00",
) -> CardwellLatency:
    """Expected latency of a ``size_bytes`` transfer (Cardwell eq. (25)); d = ceil(size/MSS).

    ``t0_s`` defaults to 4 x RTT (our choice; the paper measures T0). See the module
    docstring for the other documented choices.
    """
    _check("size_bytes", size_bytes, isinstance(size_bytes, (int, np.integer)) and size_bytes >= 1,
           "an integer number of bytes >= 1")
    mss = _check_pos("mss_bytes", mss_bytes)
    rtt = _check_pos("rtt_s", rtt_s)
    p = _check_p("p", p)
    if t0_s is None:
        t0_s = 4 * rtt
    _check("t0_s", t0_s, isinstance(t0_s, (int, float)) and math.isfinite(t0_s) and t0_s >= 0, "a time >= 0 [s]")
    _check("b", b, isinstance(b, (int, float)) and 1 <= b and math.isfinite(b), "packets per ACK, a number >= 1")
    _check("t_delack_s", t_delack_s, isinstance(t_delack_s, (int, float)) and 0 <= t_delack_s < math.inf,
           "a time >= 0 [s]")
    d = int(math.ceil(size_bytes / mss))
    gamma = 1 + 1 / b
    d_ss = expected_slow_start_segments(d, p, dss_formula=dss_formula)
    w_ss = slow_start_end_window_pkts(d_ss, gamma=gamma, w1=w1)
    t_ss = slow_start_time_s(d_ss, rtt, gamma=gamma, w1=w1, w_max_pkts=w_max_pkts)
    t_loss = first_loss_time_s(d, p, rtt, t0_s=t0_s, w_ss_pkts=min(w_ss, w_max_pkts))
    d_ca = max(0.0, d - d_ss)
    if p > 0:
        rate = pftk.throughput_pkts_per_s(rtt, p, t0_s=t0_s, b=b, w_max_pkts=w_max_pkts, variant=steady_variant)
    else:
        rate = w_max_pkts / rtt
    t_ca = d_ca / rate if d_ca > 0 else 0.0
    t_h = handshake_time_s(rtt, p, p_reverse, t_syn_s=t_syn_s) if include_handshake else 0.0
    total = t_h + t_ss + t_loss + t_ca + t_delack_s
    return CardwellLatency(
        segments=d, handshake_s=t_h, slow_start_s=t_ss, first_loss_s=t_loss, congestion_avoidance_s=t_ca,
        delayed_ack_s=float(t_delack_s), total_s=total, d_ss_pkts=d_ss, w_ss_pkts=w_ss,
        loss_in_slow_start_prob=(1 - (1 - p) ** d), steady_rate_pkts_per_s=float(rate),
    )


def latency_s(size_bytes: int, **kw) -> float:
    """Total expected latency E[T] in seconds (Cardwell eq. (25)); keywords as :func:`latency`."""
    return latency(size_bytes, **kw).total_s


# --------------------------------------------------------------------------- CLI


def cli(
    size: Annotated[int, typer.Option("--size-bytes", help="transfer size [bytes]")] = 100_000,
    rtt_ms: Annotated[float, typer.Option("--rtt-ms", help="round-trip time [ms]")] = 100.0,
    loss: Annotated[float, typer.Option("--loss", "-p", help="loss probability p in [0, 0.5)")] = 0.01,
    mss: Annotated[int, typer.Option("--mss", help="maximum segment size [bytes]")] = 1460,
    t0_ms: Annotated[Optional[float], typer.Option("--t0-ms", help="retransmission timeout T0 [ms] (default 4 x RTT)")] = None,
    b: Annotated[float, typer.Option("--b", help="segments per ACK (2 = delayed ACK; gamma = 1 + 1/b)")] = 2.0,
    w1: Annotated[float, typer.Option("--w1", help="initial window [segments]")] = 1.0,
    w_max: Annotated[Optional[float], typer.Option("--w-max", help="receiver window limit [segments] (default: none)")] = None,
    delack_ms: Annotated[float, typer.Option("--delack-ms", help="expected delayed-ACK wait of the first segment [ms]")] = 100.0,
    no_handshake: Annotated[bool, typer.Option("--no-handshake", help="leave out the connection set-up time")] = False,
    dss_formula: Annotated[str, typer.Option("--dss-formula", help="'paper' (eq. 5 capped at d) or 'exact'")] = "paper",
    plot: Annotated[Optional[Path], typer.Option("--plot", help="write latency-vs-size plot to this path")] = None,
) -> None:
    """Cardwell, Savage & Anderson 2000 TCP latency model (handshake, slow start, loss, steady state)."""
    from rich.console import Console
    from rich.table import Table

    kw = dict(mss_bytes=mss, rtt_s=rtt_ms / 1000, p=loss, t0_s=None if t0_ms is None else t0_ms / 1000, b=b, w1=w1,
              w_max_pkts=math.inf if w_max is None else w_max, t_delack_s=delack_ms / 1000,
              include_handshake=not no_handshake, dss_formula=dss_formula)
    try:
        res = latency(size, **kw)
    except ValueError as e:
        raise typer.BadParameter(str(e))
    table = Table(title=f"Cardwell et al. 2000: {size} B ({res.segments} segments), RTT={rtt_ms:g} ms, p={loss:g}")
    table.add_column("component")
    table.add_column("value", justify="right")
    table.add_column("unit")
    for name, val, unit in (
        ("handshake E[T_h] (eq. 4)", res.handshake_s, "s"),
        ("slow start E[T_ss] (eq. 15)", res.slow_start_s, "s"),
        ("first loss E[T_loss] (eq. 20)", res.first_loss_s, "s"),
        ("congestion avoidance E[T_ca] (eq. 24)", res.congestion_avoidance_s, "s"),
        ("delayed ACK E[T_delack]", res.delayed_ack_s, "s"),
        ("total E[T] (eq. 25)", res.total_s, "s"),
        ("E[d_ss] (eq. 5)", res.d_ss_pkts, "segments"),
        ("E[W_ss] (eq. 11)", res.w_ss_pkts, "segments"),
        ("steady-state rate R", res.steady_rate_pkts_per_s, "segments/s"),
        ("mean throughput", size * 8 / res.total_s / 1e6, "Mbit/s"),
    ):
        table.add_row(name, f"{val:.4f}", unit)
    Console().print(table)
    if plot is not None:
        from ccbench.plots import new_figure  # no pyplot: the backend stays the user's

        sizes = np.unique(np.logspace(np.log10(mss), np.log10(max(size, 100 * mss) * 10), 80).astype(int))
        lat = [latency_s(int(s), **kw) for s in sizes]
        fig, ax = new_figure(figsize=(6, 4))
        ax.loglog(sizes, lat)
        ax.set_xlabel("transfer size [bytes]")
        ax.set_ylabel("expected latency [s]")
        ax.set_title(f"Cardwell model, RTT={rtt_ms:g} ms, p={loss:g}")
        ax.grid(True, which="both", alpha=0.3)
        fig.savefig(plot)
