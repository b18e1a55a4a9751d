"""Input parameters of the Weigle et al. LB-CC model, in scenario units."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .protocols import PROTOCOLS, SEMANTICS

SS_EXITS = ("window", "threshold")
TIMEOUT_PROBS = ("scaled", "printed")


def _num(name: str, value, accepted: str, ok) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name}={value!r} is invalid; accepted: {accepted}") from None
    if not math.isfinite(v) or not ok(v):
        raise ValueError(f"{name}={value!r} is invalid; accepted: {accepted}")
    return v


@dataclass(frozen=True)
class WeigleParams:
    """Parameters of one LB-CC transfer-time computation.

    Attributes
    ----------
    protocol:
        ``reno``, ``tahoe``, ``scalable``, ``highspeed`` or ``srf`` (Section 3).
    loss:
        Per-segment loss probability ``p`` (0 <= p < 1); ``p = p_L + p_T``.
    rtt_s:
        Mean round-trip time ``RTT`` in seconds (Eq. 8, and the +RTT fast-retransmit delay).
    t0_s:
        Average single timeout ``TO`` in seconds (Eq. 20 turns it into ``t_TO``).
    w_max:
        Flow-control limit ``K`` in segments (>= 1).
    rate_bps:
        Bottleneck capacity ``C`` in bit/s, or ``None`` for no ACK-spacing floor; the
        ACK gap is ``alpha(W) = max{RTT/W, B/C}``.
    mss_bytes:
        Segment size ``B`` in bytes (payload; used for ``B/C`` and for throughputs).
    low_window:
        ``L`` in segments (initial slow-start threshold and threshold cap);
        ``None`` = protocol default (``K`` for Reno/Tahoe, 16 S-TCP, 38 HSTCP, 900 SRF).
    semantics:
        ``"corrected"`` (default) or ``"printed"``; see :mod:`.protocols`.
    ss_exit:
        Where a slow-start success that reaches the threshold lands: ``"window"``
        (Eq. 7: congestion avoidance at ``f1(w) = ceil(s)``) or ``"threshold"``
        (Eqs. 11/15/18 literally: congestion avoidance at ``s``).  ``None`` picks
        ``"window"`` for corrected and ``"threshold"`` for printed semantics.
    timeout_prob:
        ``"scaled"`` (default): ``p_T(w) = p * Qhat(w)``; ``"printed"``: ``p_T = Qhat``.
    p_timeout:
        Observed per-segment timeout probability (the paper's "M1-p"); overrides
        Eq. (19) with a window-independent ``p_T = min(p_timeout, p)``.
    timeout_backoff:
        True: ``t_TO`` from Eq. (20); False: ``t_TO = TO``.
    grid_step, grid_rel_step:
        Congestion-avoidance window grid (randomised rounding), see :func:`window_grid`:
        only ``grid_step`` given = uniform step ``Delta``; default = step 1/8 up to
        window 12.5 then geometric with 1 % relative steps.
    """

    protocol: str = "reno"
    loss: float = 0.01
    rtt_s: float = 0.1
    t0_s: float = 1.0
    w_max: float = 64.0
    rate_bps: float | None = None
    mss_bytes: float = 1460.0
    low_window: float | None = None
    semantics: str = "corrected"
    ss_exit: str | None = None
    timeout_prob: str = "scaled"
    p_timeout: float | None = None
    timeout_backoff: bool = True
    grid_step: float | None = None
    grid_rel_step: float | None = None

    def __post_init__(self) -> None:
        if str(self.protocol).lower() not in PROTOCOLS and self.protocol not in ("stcp", "hstcp"):
            raise ValueError(f"protocol={self.protocol!r} is not supported; accepted: {', '.join(PROTOCOLS)}")
        _num("loss", self.loss, "a probability 0 <= p < 1", lambda v: 0.0 <= v < 1.0)
        _num("rtt_s", self.rtt_s, "a time in seconds > 0", lambda v: v > 0)
        _num("t0_s", self.t0_s, "a time in seconds >= 0", lambda v: v >= 0)
        _num("w_max", self.w_max, "a window in segments >= 1 (and <= 1e6)", lambda v: 1.0 <= v <= 1e6)
        if self.rate_bps is not None:
            _num("rate_bps", self.rate_bps, "a bit rate in bit/s > 0, or None", lambda v: v > 0)
        _num("mss_bytes", self.mss_bytes, "a segment size in bytes > 0", lambda v: v > 0)
        if self.low_window is not None:
            _num("low_window", self.low_window, "a window in segments >= 1, or None", lambda v: v >= 1)
        if self.semantics not in SEMANTICS:
            raise ValueError(f"semantics={self.semantics!r} is not supported; accepted: {', '.join(SEMANTICS)}")
        if self.ss_exit is not None and self.ss_exit not in SS_EXITS:
            raise ValueError(f"ss_exit={self.ss_exit!r} is not supported; accepted: {', '.join(SS_EXITS)}, or None")
        if self.timeout_prob not in TIMEOUT_PROBS:
            raise ValueError(f"timeout_prob={self.timeout_prob!r} is not supported; accepted: {', '.join(TIMEOUT_PROBS)}")
        if self.p_timeout is not None:
            _num("p_timeout", self.p_timeout, "a probability 0 <= p_T <= loss, or None",
                 lambda v: 0.0 <= v <= self.loss)
        if self.grid_step is not None:
            _num("grid_step", self.grid_step, "a window step in segments > 0", lambda v: v > 0)
        if self.grid_rel_step is not None:
            _num("grid_rel_step", self.grid_rel_step, "a relative window step 0 <= r <= 1 (0 = uniform)",
                 lambda v: 0 <= v <= 1)

    @property
    def exit_mode(self) -> str:
        if self.ss_exit is not None:
            return self.ss_exit
        return "window" if self.semantics == "corrected" else "threshold"

    @classmethod
    def from_bytes(cls, transfer_bytes: float, **kw) -> tuple["WeigleParams", int]:
        """Parameters plus the transfer size in segments, ``ceil(bytes / mss_bytes)``."""
        params = cls(**kw)
        nbytes = _num("transfer_bytes", transfer_bytes, "a size in bytes > 0", lambda v: v > 0)
        return params, int(math.ceil(nbytes / params.mss_bytes))


def window_grid(w_max: float, grid_step: float | None = None, grid_rel_step: float | None = None) -> np.ndarray:
    """Congestion-avoidance window grid on ``[1, K]`` (note Section 2.10 step 1, option a).

    * ``grid_step`` given and ``grid_rel_step`` None: uniform grid ``1, 1+Delta, ..., K``
      (Delta adjusted down so that ``(K-1)/Delta`` is an integer);
    * otherwise (default): uniform step ``Delta0 = grid_step or 1/8`` up to the window
      ``Delta0 / r`` and geometric spacing ``w_{k+1} = w_k (1 + r)`` above it, with
      ``r = grid_rel_step or 0.01``; ``K`` is always a grid point.

    Non-grid windows are mapped to the two neighbouring grid points with linear
    weights ("randomised rounding"), which keeps the discretised chain Markov and
    the recursions (9)-(18) exact for it (it preserves the mean window change).
    """
    K = float(w_max)
    if K <= 1.0:
        return np.array([1.0])
    if grid_step is not None and grid_rel_step is None:
        intervals = max(1, int(math.ceil((K - 1.0) / float(grid_step) - 1e-9)))
        return np.linspace(1.0, K, intervals + 1)
    d0 = 0.125 if grid_step is None else float(grid_step)
    r = 0.01 if grid_rel_step is None else float(grid_rel_step)
    if r <= 0:
        return window_grid(K, d0, None)
    w_switch = max(1.0, d0 / r)
    pts = [np.arange(1.0, min(w_switch, K), d0)]
    if w_switch < K:
        start = pts[0][-1] + d0 if pts[0].size else w_switch
        k = int(math.ceil(math.log(K / start) / math.log1p(r))) if K > start else 0
        pts.append(start * (1.0 + r) ** np.arange(k + 1))
    g = np.concatenate(pts)
    g = g[g < K * (1 - 1e-9)]
    # avoid a sliver interval just below K
    if g.size > 1 and (K - g[-1]) < 0.25 * (g[-1] - g[-2]):
        g = g[:-1]
    return np.append(g, K)


def round_weights(x: np.ndarray, grid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Lower grid index and upper weight of randomised rounding of ``x`` onto ``grid``."""
    x = np.clip(np.asarray(x, dtype=float), grid[0], grid[-1])
    if grid.size == 1:
        return np.zeros(x.shape, dtype=np.int64), np.zeros(x.shape)
    lo = np.clip(np.searchsorted(grid, x, side="right") - 1, 0, grid.size - 2).astype(np.int64)
    wt = np.clip((x - grid[lo]) / (grid[lo + 1] - grid[lo]), 0.0, 1.0)
    wt = np.where(wt < 1e-9, 0.0, np.where(wt > 1 - 1e-9, 1.0, wt))
    return lo, wt
