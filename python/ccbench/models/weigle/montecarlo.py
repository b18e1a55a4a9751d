"""Independent Monte Carlo sampler of the LB-CC semi-Markov chain (Eqs. 6-8).

Written separately from the recursion (:mod:`.recursion`): it simulates
individual ACK epochs of the discretised chain -- state ``(W, S)``, slow start
when ``W < S`` -- with the same protocol maps, loss probabilities, ACK gaps and
randomised rounding onto the congestion-avoidance grid, and records the time at
which the n-th segment is acknowledged.  It shares only the *specification*
(protocol maps, Eq. 19/20, the grid rule) with the recursion, not its code.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .params import WeigleParams, window_grid
from .protocols import make_protocol, timeout_duration, timeout_probability


@dataclass
class MonteCarloResult:
    samples_s: np.ndarray          # (runs, len(checkpoints)) transfer times T_n
    checkpoints: np.ndarray

    @property
    def mean_s(self) -> np.ndarray:
        return self.samples_s.mean(axis=0)

    @property
    def var_s2(self) -> np.ndarray:
        return self.samples_s.var(axis=0, ddof=1)

    @property
    def se_mean(self) -> np.ndarray:
        return np.sqrt(self.var_s2 / self.samples_s.shape[0])

    @property
    def se_var(self) -> np.ndarray:
        """Standard error of the sample variance: sqrt((m4 - var^2) / runs)."""
        x = self.samples_s - self.mean_s
        m4 = (x**4).mean(axis=0)
        return np.sqrt(np.maximum(m4 - self.var_s2**2, 0.0) / self.samples_s.shape[0])


def simulate_chain(params: WeigleParams, checkpoints, runs: int = 10_000, seed: int = 0,
                   max_steps: int = 10_000_000) -> MonteCarloResult:
    """Sample ``T_n`` for every ``n`` in ``checkpoints`` over ``runs`` independent transfers."""
    checkpoints = np.sort(np.atleast_1d(np.asarray(checkpoints, dtype=np.int64)))
    if checkpoints[0] < 1:
        raise ValueError(f"checkpoints={checkpoints!r} are invalid; accepted: integers >= 1")
    rng = np.random.default_rng(seed)
    K = float(params.w_max)
    proto = make_protocol(params.protocol, params.semantics, params.low_window, K)
    L = proto.low_window
    grid = window_grid(K, params.grid_step, params.grid_rel_step)
    p = float(params.loss)
    t_to = timeout_duration(params.t0_s, p) if params.timeout_backoff else float(params.t0_s)
    rtt = float(params.rtt_s)
    floor_gap = 8.0 * params.mss_bytes / params.rate_bps if params.rate_bps else 0.0
    window_exit = params.exit_mode == "window"

    def probs(w):
        if params.p_timeout is not None:
            pt = np.full(w.shape, min(params.p_timeout, p))
        else:
            pt = timeout_probability(w, p, params.timeout_prob)
        return np.maximum(p - pt, 0.0), pt

    def to_grid(x):
        """Randomised rounding: up with probability equal to the fractional grid position."""
        x = np.clip(x, 1.0, K)
        if grid.size == 1:
            return np.ones_like(x)
        k = np.clip(np.searchsorted(grid, x, side="right") - 1, 0, grid.size - 2)
        frac = (x - grid[k]) / (grid[k + 1] - grid[k])
        up = rng.random(x.shape) < frac
        return np.where(up, grid[k + 1], grid[k])

    R = int(runs)
    w = np.ones(R)
    s = np.full(R, L)
    t = np.zeros(R)
    delivered = np.zeros(R, dtype=np.int64)
    out = np.full((R, checkpoints.size), np.nan)
    nxt = np.zeros(R, dtype=np.int64)           # index of next checkpoint
    active = np.arange(R)
    steps = 0
    while active.size:
        steps += 1
        if steps > max_steps:
            raise RuntimeError("Monte Carlo did not finish; raise max_steps")
        wa, sa = w[active], s[active]
        slow = wa < sa
        pl, pt = probs(wa)
        u = rng.random(active.size)
        is_to = u < pt
        is_dup = (~is_to) & (u < pt + pl)
        ok = ~(is_to | is_dup)
        gap = np.maximum(rtt / wa, floor_gap) + rtt * is_dup + t_to * is_to
        t[active] += gap
        nw = wa.copy()
        ns = sa.copy()
        # success (Eq. 1): slow start +f1 and exit at the threshold (Eq. 7 / Eq. 11)
        m = ok & slow
        if m.any():
            w1 = np.minimum(wa[m] + proto.f1(wa[m]), K)
            reach = w1 >= sa[m]
            ex = np.where(window_exit, np.minimum(np.ceil(sa[m] - 1e-9), K), np.minimum(sa[m], K))
            cw = np.where(reach, to_grid(np.where(reach, ex, 1.0)), w1)
            nw[m] = cw
            ns[m] = np.where(reach, cw, sa[m])
        m = ok & ~slow
        if m.any():
            cw = to_grid(np.minimum(wa[m] + proto.f2(wa[m]), K))
            nw[m], ns[m] = cw, cw
        # losses (Eqs. 2-5): new (W, S); S <= W means congestion avoidance with S = W
        for mask, fw_ss, fs_ss, fw_ca, fs_ca, to_ss in (
            (is_dup, proto.dup_ss_w, proto.dup_ss_s, proto.dup_ca_w, proto.dup_ca_s, proto.dup_to_slow_start),
            (is_to, proto.to_ss_w, proto.to_ss_s, proto.to_ca_w, proto.to_ca_s, True),
        ):
            for phase in (True, False):
                mm = mask & (slow == phase)
                if not mm.any():
                    continue
                x = wa[mm]
                neww = np.maximum((fw_ss if phase else fw_ca)(x), 1.0)
                news = np.maximum((fs_ss if phase else fs_ca)(x), 1.0) if to_ss else neww
                into_ss = neww < news - 1e-12
                cw = np.where(into_ss, neww, to_grid(neww))
                nw[mm] = cw
                ns[mm] = np.where(into_ss, news, cw)
        w[active], s[active] = nw, ns
        # record deliveries
        d = delivered[active] + ok
        delivered[active] = d
        hit = ok & (d == checkpoints[np.minimum(nxt[active], checkpoints.size - 1)])
        if hit.any():
            idx = active[hit]
            out[idx, nxt[idx]] = t[idx]
            nxt[idx] += 1
        active = active[nxt[active] < checkpoints.size]
    return MonteCarloResult(samples_s=out, checkpoints=checkpoints)


def standard_errors_ok(mc: MonteCarloResult, mean, var, k: float = 3.0) -> bool:
    """True when ``mean`` and ``var`` are within ``k`` standard errors of the sample moments."""
    return bool(np.all(np.abs(mc.mean_s - mean) <= k * mc.se_mean)
                and np.all(np.abs(mc.var_s2 - var) <= k * mc.se_var))


__all__ = ["MonteCarloResult", "simulate_chain", "standard_errors_ok"]
