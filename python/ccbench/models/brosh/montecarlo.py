"""Independent Monte Carlo sampler of the Brosh chain (for validating the matrix code).

This module deliberately shares no code with :mod:`.chain` or :mod:`.lossprob`: it
walks one trajectory of the same model (Table 6 with the choices documented in
:class:`~.params.BroshParams`) state by state, and it *samples segment losses*
instead of using the closed-form fast-retransmit/timeout probabilities:

* random loss: the number of lost segments of a round is drawn from a binomial
  distribution (AL steps: the first segment is lost w.p. p, the other w-1 are drawn);
  the round ends in fast retransmit if at least 3 segments arrive (3 dupACKs), or with
  limited transmit if the 1 (2) arriving segments are followed by 2 (at least 1 of 2)
  arriving limited-transmit segments; otherwise a timeout;
* correlated loss: the position of the first loss is drawn segment by segment; after
  k successes, k < 3 needs limited transmit (k = 1: both LT segments, k = 2: the first
  LT segment) and k >= 3 needs the first 3 segments of the next round ([29]).

It supports the default readings (``binomial_exponent="derived"``,
``lt_formula="derived"``); the literal formula variants exist only as closed forms.
Packets and their delays are recorded per step (renewal-reward, Eq. 3).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .params import BroshParams

__all__ = ["simulate_chain", "MonteCarloResult"]


@dataclass
class MonteCarloResult:
    values_s: np.ndarray  # sorted distinct delays
    counts: np.ndarray  # packets (possibly fractional expected counts) per delay
    packets: float
    time_s: float
    batch_means_s: np.ndarray  # mean delay per batch (for a batch-means standard error)
    steps: int

    @property
    def pmf(self) -> np.ndarray:
        return self.counts / self.counts.sum()

    @property
    def mean_s(self) -> float:
        return float(np.dot(self.values_s, self.pmf))

    @property
    def std_s(self) -> float:
        m = self.mean_s
        return float(math.sqrt(np.dot((self.values_s - m) ** 2, self.pmf)))

    @property
    def mean_stderr_s(self) -> float:
        b = self.batch_means_s
        return float(b.std(ddof=1) / math.sqrt(b.size))

    @property
    def packet_rate_pps(self) -> float:
        return self.packets / self.time_s

    def cdf_at(self, x) -> np.ndarray:
        c = np.cumsum(self.pmf)
        i = np.searchsorted(self.values_s, np.asarray(x) + 1e-12, side="right")
        return np.r_[0.0, c][i]

    def percentile(self, q: float) -> float:
        c = np.cumsum(self.pmf)
        return float(self.values_s[min(np.searchsorted(c, q - 1e-12), self.values_s.size - 1)])


def simulate_chain(params: BroshParams, steps: int = 200_000, seed: int = 1, batches: int = 20,
                   burn_in: int = 2_000) -> MonteCarloResult:
    """Simulate ``steps`` transitions of the chain for ``params.chain_params()``."""
    P = params.chain_params()
    if P.binomial_exponent != "derived" or P.lt_formula != "derived":
        raise ValueError("simulate_chain supports binomial_exponent='derived' and lt_formula='derived' only")
    rng = np.random.default_rng(seed)
    f, rtt, L, T0 = P.f_pps, P.rtt_s, P.L, P.T0
    r = f * rtt
    a, mss = P.size_bytes, P.mss_bytes
    seg = mss / a  # packets per MSS segment
    W, K, S = P.w_max, P.b_max, P.backoff_stages
    conserve = P.accounting == "conserving"
    p_al, p_nl = P.loss_al, P.loss_nl
    lt = P.limited_transmit
    corr = P.loss_model == "correlated"

    def after_fr_window(w_old, from_al):
        if P.fr_window == "table":
            return max(1, math.floor((r + 3) / 2)) if from_al else max(1, math.floor((w_old + 3) / 2))
        return max(2, math.floor(r / 2)) if from_al else max(2, math.floor(w_old / 2))

    def level(x):
        """Backlog (real, packets) -> integer level, mean-preserving random rounding."""
        if P.rounding == "split":
            lo = math.floor(x + 1e-9)
            frac = x - lo
            if frac > 1e-9 and rng.random() < frac:
                lo += 1
        else:
            lo = math.floor(x + 0.5)
        return lo

    def outcome_after_losses(successes, p):
        """FR or TO given `successes` arriving segments of the lossy round (random loss)."""
        if successes >= 3:
            return "FR"
        if lt and successes == 1:
            return "FR" if (rng.random() >= p and rng.random() >= p) else "TO"
        if lt and successes == 2:
            return "FR" if (rng.random() >= p or rng.random() >= p) else "TO"
        return "TO"

    def outcome_correlated(k, p):
        if k >= 3:  # [29]: three segments of the next round must arrive
            for _ in range(3):
                if rng.random() < p:
                    return "TO"
            return "FR"
        if lt and k == 1:
            return "FR" if (rng.random() >= p and rng.random() >= p) else "TO"
        if lt and k == 2:
            return "FR" if rng.random() >= p else "TO"
        return "TO"

    def first_loss_position(n, p):
        """Successes before the first loss among n segments, conditioned on a loss."""
        while True:
            for k in range(n):
                if rng.random() < p:
                    return k
            # no loss: redraw (conditioning)

    vals: dict[float, float] = {}
    cur = [0.0, 0.0, 0.0]  # packets, delay sum, time in current batch

    def emit(delay, n=1.0):
        if n <= 0:
            return
        key = round(delay, 12)
        vals[key] = vals.get(key, 0.0) + n
        cur[0] += n
        cur[1] += n * delay

    def emit_list(base, n):
        """Packets i = 1..n with delay base + i/f (fractional n: weight on the last)."""
        whole = math.floor(n + 1e-9)
        for i in range(1, whole + 1):
            emit(base + i / f)
        if n - whole > 1e-12:
            emit(base + (whole + 1) / f, n - whole)

    def send_round(k, cap):
        n_old = min(k, math.floor(cap + 1e-9))
        b = max(0.0, k + r - cap)
        n_new = (k + r - n_old - b) if conserve else 0.0
        return n_old, max(0.0, n_new), b

    w, k, l, stage = max(1, math.ceil(r - 1e-12)), 0, 0, 0
    total_t = 0.0
    total_pk = 0.0
    batch_len = max(1, steps // batches)
    batch_means = []
    recording = False
    for step in range(burn_in + steps):
        if step == burn_in:
            vals.clear()
            recording = True
            cur[:] = [0.0, 0.0, 0.0]
            total_t = 0.0
            total_pk = 0.0
        pk_before = cur[0]
        if stage > 0:  # timeout state (0, b, stage)
            if rng.random() >= p_nl:
                n_old, n_new, b = send_round(k, seg)
                emit(L + k / f, n_old)
                emit(L, n_new)
                w, k, l, stage, dt = 1, level(b), 0, 0, rtt
            else:
                back = 2.0 ** min(stage, P.max_backoff_exp) * T0
                k, stage, dt = level(k + back * f), min(stage + 1, S), back
        elif l == 1:  # fast recovery: one RTT, no loss considered
            n_old, n_new, b = send_round(k, w * seg)
            emit(L + k / f, n_old)
            emit(L, n_new)
            k, l, dt = level(b), 0, rtt
        elif w >= r - 1e-12 and k == 0:  # application-limited: one packet per step
            if rng.random() >= p_al:
                emit(L)
                dt = 1.0 / f
            else:
                if corr:
                    ev = "TO" if w == 1 else outcome_correlated(first_loss_position(w - 1, p_al) + 1, p_al)
                else:
                    succ = (w - 1) - rng.binomial(w - 1, p_al)
                    ev = outcome_after_losses(succ, p_al)
                if ev == "FR":
                    j0 = 0 if P.al_fr_delays == "table" else 3
                    emit_list(L + rtt + j0 / f, r if conserve else w + 3)
                    w, k, l, dt = after_fr_window(w, True), 3, 1, rtt + 3.0 / f
                else:
                    k, stage, dt = level(T0 * f), 1, T0
        else:  # network-limited round
            if P.loss_window == "sent":
                m = int(min(w, max(1, math.ceil((k + r) / seg - 1e-9))))
            else:
                m = w
            if corr:
                ev = "OK"
                for kk in range(m):
                    if rng.random() < p_nl:
                        ev = outcome_correlated(kk, p_nl)
                        break
            else:
                lost = rng.binomial(m, p_nl)
                ev = "OK" if lost == 0 else outcome_after_losses(m - lost, p_nl)
            if ev == "OK":
                n_old, n_new, b = send_round(k, w * seg)
                emit(L + k / f, n_old)
                emit(L, n_new)
                k = level(b)
                grown = w + 1 if w > r / 2 else 2 * w
                if k > 0:
                    w = grown
                elif w < r - 1e-12 and P.grow_when_cleared:
                    w = grown
                l, dt = 0, rtt
            elif ev == "FR":
                n_old, n_new, b = send_round(k, (w + 3) * seg)
                emit_list(L + rtt + (k + 3) / f, n_old)
                emit(L + rtt + 3 / f, n_new)
                w, k, l, dt = after_fr_window(w, False), level(b), 1, rtt
            else:
                k, stage, dt = level(k + T0 * f), 1, T0
        w = min(max(w, 1), W)
        if k > K:
            if P.overflow != "clip":
                raise ValueError("simulate_chain supports overflow='clip' only")
            k = K
        if recording:
            total_t += dt
            total_pk += cur[0] - pk_before
            cur[2] += dt
            if (step - burn_in + 1) % batch_len == 0:
                batch_means.append(cur[1] / cur[0] if cur[0] > 0 else np.nan)
                cur[0] = cur[1] = cur[2] = 0.0
    keys = np.array(sorted(vals))
    counts = np.array([vals[x] for x in keys])
    bm = np.array([b for b in batch_means if np.isfinite(b)])
    return MonteCarloResult(keys, counts, total_pk, total_t, bm, steps)
