"""Fast-retransmit / timeout probabilities of one round (paper App. A.1, A.2).

All functions are vectorised over the window ``m`` (an integer array, m >= 1) and
return ``(q_fr, q_to)``: the probabilities that the round ends in a fast-retransmit
(FR) loss indication and in a timeout (TO). The success probability is
``1 - q_fr - q_to``; it equals ``(1-p)^m`` for network-limited (NL) rounds and
``1-p`` for an application-limited (AL) step.

Notation: P_m(i) = C(m,i) p^i (1-p)^(m-i) (probability of i losses in m segments).

Random loss ([37] TCP-SACK, Table 6):
    NL  q_fr = sum_{i=1}^{m-3} P_m(i),               q_to = 1-(1-p)^m - q_fr
    AL  q_fr = sum_{i=1}^{m-3} p P_{m-1}(i-1),        q_to = p - q_fr
        ("the first segment of the window is lost": P_m(i) -> p P_{m-1}(i-1)).
    Limited transmit (Eq. 6): add P_m(m-1)(1-p)^2 [m>1] (one dupACK, both LT segments
    must arrive) + P_m(m-2)(1-p^2) [m>2] (two dupACKs, one of two LT segments must
    arrive); ``literal`` multiplies them by (1-p)^(m-1) and (1-p)^(m-2) as printed.

Correlated loss (PFTK [29]): given a loss in a round of m segments, k = 0..m-1
segments before it succeed with A(m,k) = (1-p)^k p / (1-(1-p)^m). [29] Eq. 22:
    Q(m) = sum_{k=0}^{2} A(m,k) + sum_{k=3}^{m-1} A(m,k) (1-(1-p)^3),
    NL q_to = (1-(1-p)^m) Q(m); AL: A(m,k) -> p A(m-1,k-1), q_to = p Q_AL(m).
    Limited transmit (Eq. 7), derived: k=1 leads to TO unless both LT segments
    arrive (1-(1-p)^2), k=2 unless the first LT segment arrives (p, the second is lost
    with it under correlated loss). ``literal``: Eq. 7 as printed,
    q_to = A(m,1)p[m>1] + A(m,2)(p+(1-p)p)[m>2] + q_to[m>3], clipped to [0, P(loss)].
"""

from __future__ import annotations

import numpy as np
from scipy import stats
from scipy.special import comb

__all__ = ["random_loss_probs", "correlated_loss_probs", "round_probs"]


def _pmf(i, m, p):
    """P_m(i), zero outside 0 <= i <= m (vectorised)."""
    i = np.asarray(i)
    m = np.asarray(m)
    out = stats.binom.pmf(np.clip(i, 0, None), np.clip(m, 0, None), p)
    return np.where((i >= 0) & (i <= m) & (m >= 0), out, 0.0)


def random_loss_probs(m, p: float, *, al: bool, limited_transmit: bool, lt_formula: str = "derived",
                      binomial_exponent: str = "derived"):
    """Random (Bernoulli) segment loss, Table 6 (a)/(b) and Eq. 6. Returns (q_fr, q_to)."""
    m = np.asarray(m, dtype=np.int64)
    if np.any(m < 1):
        raise ValueError("window m must be >= 1")
    mf = m.astype(float)
    if p <= 0.0:
        z = np.zeros(m.shape)
        return z, z.copy()
    q = 1.0 - p
    if binomial_exponent == "derived":
        if al:
            # sum_{i=1}^{m-3} C(m-1,i-1) p^i q^(m-i) = p * BinomCDF(m-4; m-1, p)
            fr = np.where(m >= 4, p * stats.binom.cdf(m - 4, np.maximum(m - 1, 0), p), 0.0)
        else:
            fr = np.where(m >= 4, stats.binom.cdf(m - 3, m, p) - q**mf, 0.0)
    else:  # literal exponent w as extracted from the garbled Table 6
        fr = np.zeros(m.shape)
        for mm in np.unique(m):
            if mm < 4:
                continue
            i = np.arange(1, mm - 2)
            if al:
                s = np.sum(comb(mm - 1, i - 1) * p**i) * q**mm
            else:
                s = np.sum(comb(mm, i) * p**i) * q**mm
            fr[m == mm] = s
    if limited_transmit:
        if al:
            t1 = p * _pmf(m - 2, m - 1, p)  # first lost, exactly one success among the rest
            t2 = p * _pmf(m - 3, m - 1, p)  # first lost, exactly two successes
        else:
            t1 = _pmf(m - 1, m, p)
            t2 = _pmf(m - 2, m, p)
        f1 = q**2
        f2 = 1.0 - p**2
        if lt_formula == "literal":
            f1 = f1 * q ** (mf - 1)
            f2 = f2 * q ** (mf - 2)
        fr = fr + np.where(m > 1, t1 * f1, 0.0) + np.where(m > 2, t2 * f2, 0.0)
    loss = np.full(m.shape, p) if al else 1.0 - q**mf
    fr = np.clip(fr, 0.0, loss)
    return fr, np.clip(loss - fr, 0.0, None)


def _A(m, k, p):
    """PFTK A(m,k) = (1-p)^k p / (1-(1-p)^m) for 0 <= k <= m-1, else 0."""
    m = np.asarray(m, dtype=float)
    k = np.asarray(k, dtype=float)
    denom = 1.0 - (1.0 - p) ** m
    with np.errstate(divide="ignore", invalid="ignore"):
        a = (1.0 - p) ** k * p / denom
    return np.where((k >= 0) & (k <= m - 1) & (m >= 1), a, 0.0)


def correlated_loss_probs(m, p: float, *, al: bool, limited_transmit: bool, lt_formula: str = "derived"):
    """Correlated (burst) loss, PFTK [29] Eq. 22 and Eq. 7. Returns (q_fr, q_to)."""
    m = np.asarray(m, dtype=np.int64)
    if np.any(m < 1):
        raise ValueError("window m must be >= 1")
    if p <= 0.0:
        z = np.zeros(m.shape)
        return z, z.copy()
    q = 1.0 - p
    mf = m.astype(float)
    big = 1.0 - q**3  # TO probability once k >= 3 ([29]: next round)
    # A-weights: for NL, A(m,k); for AL, p A(m-1,k-1) (k successes counting shifted)
    if al:
        def Aw(k):
            return p * _A(m - 1, np.asarray(k) - 1, p)
        loss = np.full(m.shape, p)
    else:
        def Aw(k):
            return _A(m, k, p)
        loss = 1.0 - q**mf
    a0, a1, a2 = Aw(0), Aw(1), Aw(2)
    tot = p if al else 1.0
    # sum_{k>=3} A = total - (a0+a1+a2) (A sums to 1, or to p for the AL substitution)
    rest = np.clip(tot - a0 - a1 - a2, 0.0, None)
    if al:
        # window of a single segment: nothing can follow the lost one -> TO
        rest = np.where(m == 1, 0.0, rest)
        a0 = np.where(m == 1, p, a0)
    Q = a0 + a1 + a2 + rest * big  # (times `loss` for NL; already absolute for AL)
    if limited_transmit:
        if lt_formula == "derived":
            Q = a0 + a1 * (1.0 - q**2) + a2 * p + rest * big
        else:  # Eq. 7 as printed
            Qlit = a1 * p * (m > 1) + a2 * (p + q * p) * (m > 2) + Q * (m > 3)
            Q = Qlit
    to = Q if al else loss * Q
    to = np.clip(to, 0.0, loss)
    return loss - to, to


def round_probs(params, m, *, al: bool):
    """(q_fr, q_to) for the model variant in ``params`` (a BroshParams)."""
    p = params.loss_al if al else params.loss_nl
    if params.loss_model == "random":
        return random_loss_probs(m, p, al=al, limited_transmit=params.limited_transmit,
                                 lt_formula=params.lt_formula, binomial_exponent=params.binomial_exponent)
    return correlated_loss_probs(m, p, al=al, limited_transmit=params.limited_transmit,
                                 lt_formula=params.lt_formula)
