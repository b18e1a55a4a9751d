"""LB-CC protocol library (Weigle et al. 2009, Section 3, Definition 1 / Eqs. 1-5).

A protocol of the Loss-Based Congestion-Control (LB-CC) class is given by ten
functions of the window ``W`` (segments):

* ``f1``, ``f2``: per-ACK window increase in slow start / congestion avoidance (Eq. 1);
* ``g1..g4``: window (g1, g2) and threshold (g3, g4) *decrements* after a
  triple-duplicate-ACK loss (Eqs. 2, 3);
* ``h1..h4``: the same after a retransmission timeout (Eqs. 4, 5);

plus the flow-control cap ``K`` and the threshold cap / "low window" ``L``.

Here every protocol is described directly by the *resulting* values
``W - g(W)`` etc. (the "under-bar" functions of Section 4.1.2,
``g_i(w) = max{w - g_i(w), 1}``) because that is what the Markov chain needs and
because it is exactly where the printed mappings are ambiguous.  Two semantics:

``"printed"``
    The functions of Section 3 taken literally as decrements:
    S-TCP ``g2 = 0.875 W`` (new window ``0.125 W``), HSTCP ``g2 = lambda(W) W``
    (new window ``(1 - lambda) W``), ``g4 = h4 = min{W/2, L}`` (new threshold
    ``max{W/2, W - L}``) and Tahoe's duplicate-ACK loss sent to the congestion-
    avoidance state ``(1, 1)`` exactly as Eq. (6)/(7) do.
``"corrected"`` (default)
    S-TCP keeps ``0.875 W`` and HSTCP keeps ``lambda(W) W`` (RFC 3649: the
    retained fraction is ``1 - b(w)``), the new threshold after a congestion-
    avoidance timeout is ``min{W/2, L}``, and a Tahoe duplicate-ACK loss goes to
    slow start ``(1, W/2)`` (it uses g1/g3 or g2/g4 with the ``+RTT`` delay),
    which the paper's footnote 2 overlooks.

SRF's ``g2 = b W^beta`` is a decrement in both semantics (15 % cut at W = 10^4,
exactly half at W = 900 = (2b)^2); ``L`` defaults to 900 so that the decrease is
continuous at ``L``.  See ``DEFAULT_LOW_WINDOW`` for all defaults of ``L``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

ArrayF = np.ndarray

PROTOCOLS = ("reno", "tahoe", "scalable", "highspeed", "srf")
SEMANTICS = ("printed", "corrected")

#: RFC 3649 constants for HighSpeed TCP.
HSTCP_LOW_WINDOW = 38.0
HSTCP_HIGH_WINDOW = 83_000.0
HSTCP_HIGH_DECREASE = 0.1

#: Scalable TCP constants (Kelly 2003): a = 0.01 per ACK, b = 0.125, legacy window 16.
STCP_AI = 0.01
STCP_RETAIN = 0.875
STCP_LOW_WINDOW = 16.0

#: SRF TCP constants (Fukuhara et al. 2005, as quoted by Weigle et al.).
SRF_A = 1.25
SRF_ALPHA = -0.5
SRF_B = 15.0
SRF_BETA = 0.5
SRF_LOW_WINDOW = (2 * SRF_B) ** (1.0 / (1.0 - SRF_BETA))  # 900: b W^beta == W/2

#: Default ``L`` per protocol; ``None`` means ``L = K`` (footnote 3: "for current
#: protocols L = K").
DEFAULT_LOW_WINDOW: dict[str, float | None] = {
    "reno": None,
    "tahoe": None,
    "scalable": STCP_LOW_WINDOW,
    "highspeed": HSTCP_LOW_WINDOW,
    "srf": SRF_LOW_WINDOW,
}


def hstcp_lambda(w: ArrayF, low: float = HSTCP_LOW_WINDOW, high: float = HSTCP_HIGH_WINDOW) -> ArrayF:
    """Retained fraction after a loss, lambda(W) of Section 3.4 (= 1 - b(w) of RFC 3649).

    ``lambda(W) = 0.5 + 0.4 (log W - log L) / (log W_high - log L)``, i.e. RFC 3649's
    ``b(w) = (High_Decrease - 0.5)(log w - log Low_Window)/(log High_Window - log
    Low_Window) + 0.5`` with ``High_Decrease = 0.1``.  Clipped to [0.5, 0.9].
    """
    w = np.maximum(np.asarray(w, dtype=float), 1.0)
    b = (HSTCP_HIGH_DECREASE - 0.5) * (np.log(w) - np.log(low)) / (np.log(high) - np.log(low)) + 0.5
    b = np.clip(b, HSTCP_HIGH_DECREASE, 0.5)
    return 1.0 - b


def hstcp_response_p(w: ArrayF) -> ArrayF:
    """HSTCP response-function loss rate ``p(W) = 0.078 / W^1.2`` (RFC 3649).

    Not the model's per-ACK loss probability (note, pitfall 15).
    """
    return 0.078 / np.asarray(w, dtype=float) ** 1.2


def hstcp_gamma(w: ArrayF, low: float = HSTCP_LOW_WINDOW) -> ArrayF:
    """Per-ACK increase gamma(W) = 2 W p(W) (1 - lambda)/(1 + lambda) (Section 3.4).

    Equals RFC 3649's per-RTT ``a(w) = w^2 p(w) 2 b(w) / (2 - b(w))`` divided by ``w``.
    """
    w = np.asarray(w, dtype=float)
    lam = hstcp_lambda(w, low)
    return 2.0 * w * hstcp_response_p(w) * (1.0 - lam) / (1.0 + lam)


def hstcp_a_b(w: ArrayF, low: float = HSTCP_LOW_WINDOW) -> tuple[ArrayF, ArrayF]:
    """RFC 3649's (a(w), b(w)) per RTT; for ``w <= Low_Window`` (1, 0.5) as in Reno."""
    w = np.asarray(w, dtype=float)
    b = 1.0 - hstcp_lambda(w, low)
    a = w * w * hstcp_response_p(w) * 2.0 * b / (2.0 - b)
    hi = w > low
    return np.where(hi, a, 1.0), np.where(hi, b, 0.5)


@dataclass(frozen=True)
class Protocol:
    """Vectorised LB-CC maps (all return *new* values, before the caps ``max{., 1}``/``K``).

    Attributes
    ----------
    name, semantics, low_window:
        Identification; ``low_window`` is ``L``.
    f1, f2:
        Per-ACK increase in slow start / congestion avoidance (Eq. 1).
    dup_ss_w, dup_ss_s, dup_ca_w, dup_ca_s:
        ``W - g1``, ``W - g3``, ``W - g2``, ``W - g4`` (Eqs. 2, 3).
    to_ss_w, to_ss_s, to_ca_w, to_ca_s:
        ``W - h1``, ``W - h3``, ``W - h2``, ``W - h4`` (Eqs. 4, 5).
    dup_to_slow_start:
        If True a duplicate-ACK loss goes to ``(W - g, W - g')`` which may be a
        slow-start state (corrected Tahoe); if False it goes to the congestion-
        avoidance state ``(W - g, W - g)`` as in Eqs. (6), (7).
    """

    name: str
    semantics: str
    low_window: float
    f1: Callable[[ArrayF], ArrayF]
    f2: Callable[[ArrayF], ArrayF]
    dup_ss_w: Callable[[ArrayF], ArrayF]
    dup_ss_s: Callable[[ArrayF], ArrayF]
    dup_ca_w: Callable[[ArrayF], ArrayF]
    dup_ca_s: Callable[[ArrayF], ArrayF]
    to_ss_w: Callable[[ArrayF], ArrayF]
    to_ss_s: Callable[[ArrayF], ArrayF]
    to_ca_w: Callable[[ArrayF], ArrayF]
    to_ca_s: Callable[[ArrayF], ArrayF]
    dup_to_slow_start: bool = False


def _one(w: ArrayF) -> ArrayF:
    return np.ones_like(np.asarray(w, dtype=float))


def _half(w: ArrayF) -> ArrayF:
    return 0.5 * np.asarray(w, dtype=float)


def _inv(w: ArrayF) -> ArrayF:
    return 1.0 / np.asarray(w, dtype=float)


def make_protocol(name: str, semantics: str = "corrected", low_window: float | None = None,
                  w_max: float = np.inf) -> Protocol:
    """Return the LB-CC mapping of ``name`` (Section 3.1-3.5).

    ``low_window`` is ``L``; ``None`` picks :data:`DEFAULT_LOW_WINDOW` (``L = K`` for
    Reno/Tahoe).  ``L`` is always capped at ``w_max`` (the paper requires ``L <= K``).
    """
    key = str(name).lower().replace("-", "").replace("_", "")
    aliases = {"stcp": "scalable", "hstcp": "highspeed", "squarerootfair": "srf"}
    key = aliases.get(key, key)
    if key not in PROTOCOLS:
        raise ValueError(f"protocol={name!r} is not supported; accepted: {', '.join(PROTOCOLS)}")
    if semantics not in SEMANTICS:
        raise ValueError(f"semantics={semantics!r} is not supported; accepted: {', '.join(SEMANTICS)}")
    L = DEFAULT_LOW_WINDOW[key] if low_window is None else float(low_window)
    if L is None:
        L = float(w_max)
    if not (L >= 1.0):
        raise ValueError(f"low_window={L!r} is invalid; accepted: a number >= 1 (segments)")
    L = float(min(L, w_max))
    printed = semantics == "printed"

    def go_to_one(w: ArrayF) -> ArrayF:  # h1 = h2 = W - 1 for every mapped protocol
        return _one(w)

    if key in ("reno", "tahoe"):
        f2 = _inv
    else:
        def f2(w: ArrayF, _key=key) -> ArrayF:
            w = np.asarray(w, dtype=float)
            if _key == "scalable":
                hi = np.full_like(w, STCP_AI)
            elif _key == "highspeed":
                hi = hstcp_gamma(w, L)
            else:
                hi = SRF_A * w ** SRF_ALPHA
            return np.where(w >= L, hi, 1.0 / w)

    def dup_ca_w(w: ArrayF) -> ArrayF:
        w = np.asarray(w, dtype=float)
        if key == "reno":
            return 0.5 * w
        if key == "tahoe":
            return np.ones_like(w)
        if key == "scalable":
            hi = (1.0 - STCP_RETAIN) * w if printed else STCP_RETAIN * w
        elif key == "highspeed":
            lam = hstcp_lambda(w, L)
            hi = (1.0 - lam) * w if printed else lam * w
        else:
            hi = w - SRF_B * w ** SRF_BETA
        return np.where(w >= L, hi, 0.5 * w)

    def new_thresh_ca(w: ArrayF) -> ArrayF:
        w = np.asarray(w, dtype=float)
        if key in ("reno", "tahoe"):
            return 0.5 * w
        # g4 = h4 = min{W/2, L}
        return w - np.minimum(0.5 * w, L) if printed else np.minimum(0.5 * w, L)

    if key == "tahoe":
        dup_ss_w = go_to_one
        dup_to_ss = not printed
    else:
        dup_ss_w = _half
        dup_to_ss = False
    return Protocol(
        name=key, semantics=semantics, low_window=L,
        f1=_one, f2=f2,
        dup_ss_w=dup_ss_w, dup_ss_s=_half,
        dup_ca_w=dup_ca_w, dup_ca_s=new_thresh_ca if key != "tahoe" else _half,
        to_ss_w=go_to_one, to_ss_s=_half,
        to_ca_w=go_to_one, to_ca_s=new_thresh_ca,
        dup_to_slow_start=dup_to_ss,
    )


# --- timeouts (Section 4.4) -------------------------------------------------------------

def q_hat(w: ArrayF, p: float) -> ArrayF:
    """PFTK's Q-hat(w), Eq. (19): probability that a loss indication is a timeout.

    ``min{1, (1 - q^3)(1 + q^3 (1 - q^(w-3))) / (1 - q^w)}`` with ``q = 1 - p``.
    Equals 1 for ``w <= 3`` and tends to ``1 - q^6`` for large ``w``.
    """
    w = np.asarray(w, dtype=float)
    q = 1.0 - p
    with np.errstate(divide="ignore", invalid="ignore"):
        val = (1.0 - q**3) * (1.0 + q**3 * (1.0 - q ** (w - 3.0))) / (1.0 - q**w)
    val = np.where(np.isfinite(val), val, 1.0)
    return np.minimum(1.0, np.where(w <= 3.0, 1.0, val))


def timeout_probability(w: ArrayF, p: float, mode: str = "scaled") -> ArrayF:
    """Per-ACK timeout probability p_T(w) (Eq. 19).

    ``mode="scaled"`` (default, documented correction): ``p_T(w) = p * Q-hat(w)``;
    Eq. (19) is a conditional probability and Table 1's "computed p_T" column is
    ``p (1 - (1-p)^6)``, its large-w value times ``p``.
    ``mode="printed"``: ``p_T(w) = Q-hat(w)`` literally (then ``p_L = p - p_T < 0``
    for every realistic w and the chain is rejected by :func:`build_chain`).
    """
    if mode == "scaled":
        return p * q_hat(w, p)
    if mode == "printed":
        return q_hat(w, p)
    raise ValueError(f"timeout_prob={mode!r} is not supported; accepted: scaled, printed")


def timeout_duration(t0_s: float, p: float) -> float:
    """Mean timeout duration t_TO, Eq. (20): ``TO (1 + p + 2p^2 + ... + 32p^6)/(1 - p)``."""
    poly = 1 + p + 2 * p**2 + 4 * p**3 + 8 * p**4 + 16 * p**5 + 32 * p**6
    return t0_s * poly / (1.0 - p)


def table1_computed_pt(p: float, w: float | None = None) -> float:
    """Table 1's "computed p_T": ``p * Q-hat(w)`` (large-w limit ``p(1-(1-p)^6)`` if w is None)."""
    if w is None:
        return p * (1.0 - (1.0 - p) ** 6)
    return float(p * q_hat(np.array([w]), p)[0])
