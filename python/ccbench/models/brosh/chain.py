"""State space and transition structure of the Brosh et al. chain (Table 2, Table 6).

States (paper App. A): s = (w, b, l), b held in whole application packets k = b/a.

* regular states, l in {0, 1}: w = 1..w_m, k = 0..b_m;
  index ``(l*w_m + w-1)*(b_m+1) + k``;
* timeout states (0, b, l), back-off stage l = 1..6: index
  ``2*w_m*(b_m+1) + (l-1)*(b_m+1) + k``.

Total (2 w_m + 6)(b_m + 1) states (App. A.3 counts 6 b_m + 2 b_m w_m).

Classification (Table 2; AL takes precedence): AL = {w >= r, b = 0, l = 0};
NL = {l = 0, b > 0 or w < r}; FR = {l = 1}; TO = timeout states. CA/SS within NL:
w > r/2 grows by one (CA), w <= r/2 doubles (SS), Sec. 4.3.

All delays are of the form L + c·RTT + j/f with c in {0, 1} and integer j >= 0, so
the per-packet rewards are kept as integer "delay bins" (c, j):

* a *flat* group: ``n`` packets (possibly fractional: an expected count) all with
  delay bin (c, j);
* a *box* group: packets i = 1..n with delay bins (1, j0 + i) (the fast-recovery
  lists of Table 6 / Eq. 1); a fractional n puts weight frac(n) on i = floor(n)+1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .lossprob import round_probs
from .params import BroshParams

__all__ = ["Chain", "build_chain", "state_index", "decode_states"]


@dataclass
class Chain:
    """Transition matrix plus per-transition rewards (one entry per branch).

    ``P`` is the row-stochastic CSR matrix (duplicates summed). The per-branch arrays
    (``src``, ``dst``, ``prob``, ``dur`` and the packet groups) carry the rewards of
    Eqs. 1, 2 and 5; ``prob`` sums to 1 over the branches of each source state.
    """

    params: BroshParams
    W: int
    K: int
    n_states: int
    P: sp.csr_matrix
    src: np.ndarray
    dst: np.ndarray
    prob: np.ndarray
    dur: np.ndarray
    kind: np.ndarray  # 0 AL->AL, 1 AL->FR, 2 AL->TO, 3 NL->NL, 4 NL->FR, 5 NL->TO, 6 FR->, 7 TO->ok, 8 TO->TO
    g1n: np.ndarray
    g1c: np.ndarray
    g1j: np.ndarray
    g2n: np.ndarray
    g2c: np.ndarray
    g2j: np.ndarray
    bxn: np.ndarray
    bxj0: np.ndarray
    overflow: np.ndarray  # packets dropped by backlog clipping on this branch

    @property
    def packets(self) -> np.ndarray:
        """Expected packets sent per branch (n of Eq. 2, all groups)."""
        return self.g1n + self.g2n + self.bxn


KIND_NAMES = ("AL->AL", "AL->FR", "AL->TO", "NL->NL", "NL->FR", "NL->TO", "FR->NL", "TO->NL", "TO->TO")


def state_index(W: int, K: int, w, k, l):
    """Index of regular states (l in {0,1}) or timeout states (pass l = 1+stage, w ignored)."""
    w = np.asarray(w)
    k = np.asarray(k)
    l = np.asarray(l)
    reg = (l * W + (w - 1)) * (K + 1) + k
    to = 2 * W * (K + 1) + (l - 2) * (K + 1) + k
    return np.where(l >= 2, to, reg)


def decode_states(W: int, K: int, S: int = 6):
    """Arrays (w, k, l, stage) for every state index; stage = 0 for regular states."""
    n_reg = 2 * W * (K + 1)
    idx = np.arange(n_reg + S * (K + 1))
    k = idx % (K + 1)
    q = idx // (K + 1)
    w = np.where(idx < n_reg, q % W + 1, 0)
    l = np.where(idx < n_reg, q // W, 1)
    stage = np.where(idx < n_reg, 0, q - 2 * W + 1)
    return w, k, l, stage


class _Acc:
    def __init__(self):
        self.cols = {name: [] for name in (
            "src", "w_pos", "w_zero", "kreal", "l", "prob", "dur", "kind",
            "g1n", "g1c", "g1j", "g2n", "g2c", "g2j", "bxn", "bxj0")}

    def add(self, n, **kw):
        for name, lst in self.cols.items():
            v = kw.get(name, 0)
            lst.append(np.broadcast_to(np.asarray(v, dtype=float), (n,)).copy())

    def cat(self):
        return {k: (np.concatenate(v) if v else np.zeros(0)) for k, v in self.cols.items()}


def _round_in_window(params: BroshParams, f: float, r: float):
    """Window after fast retransmit: (from AL, function of NL window)."""
    if params.fr_window == "table":
        w_al = math.floor((r + 3.0) / 2.0)
        return max(1, w_al), lambda w: np.maximum(1, np.floor((w + 3) / 2.0))
    w_al = max(2, math.floor(r / 2.0))
    return w_al, lambda w: np.maximum(2, np.floor(w / 2.0))


def build_chain(params: BroshParams) -> Chain:
    """Build the Table 6 chain for ``params.chain_params()`` (split/parallel applied)."""
    P = params.chain_params()
    f = P.f_pps
    rtt = P.rtt_s
    r = P.r
    T0 = P.T0
    a = P.size_bytes
    C1 = P.mss_bytes / a  # packets per MSS segment
    W, K, S = P.w_max, P.b_max, P.backoff_stages
    conserve = P.accounting == "conserving"
    w_fr_al, w_fr_nl = _round_in_window(P, f, r)
    acc = _Acc()

    def grow(w):
        return np.where(w > r / 2.0, w + 1, 2 * w)  # {w+1|2w}: CA / SS

    def round_send(k, w_cap_pkts, arrivals):
        """Eq. 2/4 for an RTT round: (n_old, n_new, b' real) in packets."""
        n_old = np.minimum(k, np.floor(w_cap_pkts + 1e-9))
        b_real = np.maximum(0.0, k + arrivals - w_cap_pkts)
        n_new = (k + arrivals - n_old - b_real) if conserve else np.zeros_like(b_real)
        return n_old, np.maximum(n_new, 0.0), b_real

    # ---------------------------------------------------------------- l = 0 states
    ww, kk = np.meshgrid(np.arange(1, W + 1), np.arange(K + 1), indexing="ij")
    ww = ww.ravel().astype(float)
    kk = kk.ravel().astype(float)
    idx0 = state_index(W, K, ww.astype(int), kk.astype(int), 0)
    is_al = (ww >= r - 1e-12) & (kk == 0)

    # (a) application-limited states: per-packet steps
    w_a, i_a = ww[is_al], idx0[is_al]
    n = w_a.size
    if n:
        p_al = P.loss_al
        q_fr, q_to = round_probs(P, w_a.astype(int), al=True)
        acc.add(n, src=i_a, w_pos=w_a, w_zero=w_a, kreal=0, l=0, prob=1.0 - p_al, dur=1.0 / f, kind=0,
                g1n=1.0, g1c=0, g1j=0)
        if conserve:
            bx_n = r  # the r packets generated during the RTT; 3 more are the backlog
        else:
            bx_n = w_a + 3  # Table 6: (L+RTT+i/f)_{i=1}^{3+w}
        j0 = 0 if P.al_fr_delays == "table" else 3
        acc.add(n, src=i_a, w_pos=w_fr_al, w_zero=w_fr_al, kreal=3.0, l=1, prob=q_fr, dur=rtt + 3.0 / f,
                kind=1, bxn=bx_n, bxj0=j0)
        acc.add(n, src=i_a, w_pos=1, w_zero=1, kreal=T0 * f, l=2, prob=q_to, dur=T0, kind=2)

    # (b) network-limited states: per-RTT rounds
    nl = ~is_al
    w_n, k_n, i_n = ww[nl], kk[nl], idx0[nl]
    n = w_n.size
    if P.loss_window == "sent":
        m = np.clip(np.ceil((k_n + r) / C1 - 1e-9), 1, w_n).astype(int)
    else:
        m = w_n.astype(int)
    q_fr, q_to = round_probs(P, m, al=False)
    q_ok = np.clip(1.0 - q_fr - q_to, 0.0, 1.0)
    n_old, n_new, b_real = round_send(k_n, w_n * C1, r)
    w_pos = grow(w_n)
    w_zero = np.where(w_n >= r - 1e-12, w_n, grow(w_n) if P.grow_when_cleared else w_n)
    acc.add(n, src=i_n, w_pos=w_pos, w_zero=w_zero, kreal=b_real, l=0, prob=q_ok, dur=rtt, kind=3,
            g1n=n_old, g1c=0, g1j=k_n, g2n=n_new, g2c=0, g2j=0)
    n_old, n_new, b_real = round_send(k_n, (w_n + 3) * C1, r)  # window inflation
    wf = w_fr_nl(w_n)
    acc.add(n, src=i_n, w_pos=wf, w_zero=wf, kreal=b_real, l=1, prob=q_fr, dur=rtt, kind=4,
            bxn=n_old, bxj0=k_n + 3, g1n=n_new, g1c=1, g1j=3)
    acc.add(n, src=i_n, w_pos=1, w_zero=1, kreal=k_n + T0 * f, l=2, prob=q_to, dur=T0, kind=5)

    # ---------------------------------------------------------------- (c) fast recovery
    idx1 = state_index(W, K, ww.astype(int), kk.astype(int), 1)
    n_old, n_new, b_real = round_send(kk, ww * C1, r)
    acc.add(ww.size, src=idx1, w_pos=ww, w_zero=ww, kreal=b_real, l=0, prob=1.0, dur=rtt, kind=6,
            g1n=n_old, g1c=0, g1j=kk, g2n=n_new, g2c=0, g2j=0)

    # ---------------------------------------------------------------- (d) timeouts
    st, kt = np.meshgrid(np.arange(1, S + 1), np.arange(K + 1), indexing="ij")
    st = st.ravel().astype(float)
    kt = kt.ravel().astype(float)
    idxt = state_index(W, K, 1, kt.astype(int), (st + 1).astype(int))
    p_nl = P.loss_nl
    n_old, n_new, b_real = round_send(kt, C1, r)
    acc.add(st.size, src=idxt, w_pos=1, w_zero=1, kreal=b_real, l=0, prob=1.0 - p_nl, dur=rtt, kind=7,
            g1n=n_old, g1c=0, g1j=kt, g2n=n_new, g2c=0, g2j=0)
    back = 2.0 ** np.minimum(st, P.max_backoff_exp) * T0
    acc.add(st.size, src=idxt, w_pos=1, w_zero=1, kreal=kt + back * f, l=np.minimum(st + 1, S) + 1,
            prob=p_nl, dur=back, kind=8)

    # ---------------------------------------------------------------- branches
    t = acc.cat()
    keep = t["prob"] > 0
    t = {k: v[keep] for k, v in t.items()}
    kr = t["kreal"]
    if P.rounding == "split":
        lo = np.floor(kr + 1e-9)
        phi = np.clip(kr - lo, 0.0, 1.0)
        phi[phi < 1e-9] = 0.0
    else:
        lo = np.floor(kr + 0.5)
        phi = np.zeros_like(kr)
    kb = np.concatenate([lo, lo + 1])
    bprob = np.concatenate([1.0 - phi, phi])
    t2 = {k: np.concatenate([v, v]) for k, v in t.items()}
    sel = bprob > 0
    kb, bprob = kb[sel], bprob[sel]
    t2 = {k: v[sel] for k, v in t2.items()}
    prob = t2["prob"] * bprob
    overflow = np.maximum(kb - K, 0.0)
    if P.overflow == "reject":
        ok = kb <= K
        nst = 2 * W * (K + 1) + S * (K + 1)
        src_all = t2["src"].astype(np.int64)
        rs = np.bincount(src_all[ok], weights=prob[ok], minlength=nst)
        # a row whose every branch overflows keeps its clipped branches
        ok = ok | (rs[src_all] <= 0)
        kb, prob, overflow = kb[ok], prob[ok], overflow[ok]
        t2 = {k: v[ok] for k, v in t2.items()}
        src_all = src_all[ok]
        rs = np.bincount(src_all, weights=prob, minlength=nst)
        prob = prob / rs[src_all]
        overflow = np.where(kb > K, overflow, 0.0)
    kb = np.minimum(kb, K)
    wdst = np.where(kb > 0, t2["w_pos"], t2["w_zero"])
    wdst = np.clip(wdst, 1, W)
    l = t2["l"].astype(np.int64)
    dst = state_index(W, K, wdst.astype(np.int64), kb.astype(np.int64), l)
    src = t2["src"].astype(np.int64)
    n_states = 2 * W * (K + 1) + S * (K + 1)
    Pm = sp.csr_matrix((prob, (src, dst)), shape=(n_states, n_states))
    Pm.sum_duplicates()
    return Chain(
        params=P, W=W, K=K, n_states=n_states, P=Pm, src=src, dst=dst, prob=prob, dur=t2["dur"],
        kind=t2["kind"].astype(np.int8),
        g1n=t2["g1n"], g1c=t2["g1c"].astype(np.int8), g1j=t2["g1j"].astype(np.int64),
        g2n=t2["g2n"], g2c=t2["g2c"].astype(np.int8), g2j=t2["g2j"].astype(np.int64),
        bxn=t2["bxn"], bxj0=t2["bxj0"].astype(np.int64), overflow=overflow,
    )
