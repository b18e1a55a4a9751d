"""Mean and variance of the LB-CC transfer time T_n (Weigle et al. 2009, Section 4).

Numerical scheme (the note's Section 2.10, with one structural speed-up):

* **Congestion avoidance (CA)** states ``(w, w)`` live on a window grid on
  ``1..K`` (:func:`.params.window_grid`), non-grid targets by randomised rounding.
  Per level ``n`` the CA unknowns satisfy Eqs. (9) and (16); the same-level
  (loss) coupling is the sparse matrix ``I - P_dup``, lower triangular in ascending
  ``w`` (every loss lowers the window; self-loop only at w = 1).  Both moments are
  solved together, exactly, for the block system
  ``[[I-P, 0], [-(2 alpha + 2 RTT P), I-P]]`` (Eq. 16 rearranged), either by the
  "doubling" product form of its inverse (the ascending-w sweep done in
  ``log2(depth)`` sparse products; default when sparse) or by one reused sparse LU
  factorisation (:class:`_LossSolver`).
* **Slow start (SS)** states ``(w, s)``, integer ``w < s <= L``: every mapped
  protocol enters slow start only at window 1 (``h1 = W - 1``), and a slow-start
  path ``(1,s) -> (2,s) -> ... -> (ceil s, .)`` moves one window and one level per
  success.  Unrolling Eqs. (10)/(11) and (17)/(18) along that path gives
  ``tau_n(1,s) = S_n(c) + Pi(c) X_{n+1-c}`` with ``S_n(c) = sum_{j<c} Pi(j)
  b_{n+1-j}(j)`` a prefix sum along an anti-diagonal of the level-window history
  of the loss-continuation terms ``b``; the variance adds the
  ``2 alpha(i) tau_{n+1-i}(i,s)`` terms in closed form.  The history is kept in a
  skewed ring buffer (one row per anti-diagonal), so each level costs O(K/Delta + L)
  instead of O(L^2).

Outputs: ``tau_n(1, L)`` and ``V(n) = sigma_n(1, L) - tau_n(1, L)^2`` for every
``n``; optional early stop at ``N_eps`` (Section 6) with linear extrapolation.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from .params import WeigleParams, round_weights, window_grid
from .protocols import Protocol, make_protocol, timeout_duration, timeout_probability

#: Maximum slow-start depth ``ceil(max threshold)``; the history ring is O(depth^2).
MAX_SS_DEPTH = 2500


@dataclass
class Chain:
    """The discretised semi-Markov chain (Eqs. 6-8) with precomputed per-state terms."""

    params: WeigleParams
    protocol: Protocol
    grid: np.ndarray          # CA windows
    t_to: float               # t_TO (Eq. 20)
    c_max: int                # slow-start depth (windows 1..c_max-1)
    # per CA grid point
    pL: np.ndarray
    pT: np.ndarray
    alpha: np.ndarray
    # per SS integer window 0..c_max (index = window; 0 unused)
    pL_ss: np.ndarray
    pT_ss: np.ndarray
    alpha_ss: np.ndarray
    # slow-start entries (1, s): thresholds, ceil, exit interpolation
    s_entry: np.ndarray
    c_entry: np.ndarray
    exit_lo: np.ndarray
    exit_wt: np.ndarray
    initial_entry: int        # index into entries, or -1 for CA(1)
    # transitions: (kind, index, weight) lists built in build_chain
    extras: dict = field(default_factory=dict)

    @property
    def n_states(self) -> int:
        return int(self.grid.size + max(self.c_max - 1, 0) * (self.c_max) // 2)


def loss_probabilities(params: WeigleParams, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(p_L(w), p_T(w))`` with ``p_T`` from Eq. (19) (or the observed ``p_timeout``)."""
    p = float(params.loss)
    w = np.asarray(w, dtype=float)
    if params.p_timeout is not None:
        pT = np.full(w.shape, min(float(params.p_timeout), p))
    else:
        pT = timeout_probability(w, p, params.timeout_prob)
    pL = p - pT
    return pL, pT


def ack_gap(params: WeigleParams, w: np.ndarray) -> np.ndarray:
    """``alpha(w) = max{RTT/w, B/C}`` (Section 4.1.3); ``B/C`` in seconds from bytes and bit/s."""
    a = params.rtt_s / np.asarray(w, dtype=float)
    if params.rate_bps is not None:
        a = np.maximum(a, 8.0 * params.mss_bytes / params.rate_bps)
    return a


def build_chain(params: WeigleParams) -> Chain:
    """Enumerate states and transitions of the discretised chain (note, Section 2.10 steps 1-2)."""
    K = float(params.w_max)
    proto = make_protocol(params.protocol, params.semantics, params.low_window, K)
    L = proto.low_window
    grid = window_grid(K, params.grid_step, params.grid_rel_step)
    pL, pT = loss_probabilities(params, grid)
    if np.any(pL < -1e-15):
        bad = grid[np.argmax(pL < -1e-15)]
        raise ValueError(
            f"timeout_prob={params.timeout_prob!r} gives p_T(w) > p (p_L < 0, e.g. at w={bad:g}) for "
            f"loss={params.loss!r}; accepted: timeout_prob='scaled' (p_T = p*Qhat) or a p_timeout <= loss")
    pL = np.maximum(pL, 0.0)
    t_to = timeout_duration(params.t0_s, params.loss) if params.timeout_backoff else float(params.t0_s)
    one = np.ones(1)
    # window-1 loss targets must be CA(1) (true for all five protocols)
    for fn in (proto.dup_ss_w, proto.dup_ca_w, proto.to_ss_w, proto.to_ca_w, proto.to_ss_s, proto.to_ca_s):
        if max(fn(one)[0], 1.0) > 1.0 + 1e-12:
            raise ValueError("protocol maps a loss at window 1 above window 1; not supported")
    if proto.dup_to_slow_start and max(proto.dup_ss_s(one)[0], proto.dup_ca_s(one)[0], 1.0) > 1.0:
        raise ValueError("protocol maps a loss at window 1 to slow start; not supported")
    if np.any(np.maximum(proto.to_ca_w(grid), 1.0) > 1.0 + 1e-12):
        raise ValueError("timeouts must reset the window to 1 (h1 = h2 = W - 1); not supported")

    # thresholds of slow-start entries reachable from CA and the initial state
    th_ca_to = np.maximum(proto.to_ca_s(grid), 1.0)
    th_ca_dup = np.maximum(proto.dup_ca_s(grid), 1.0) if proto.dup_to_slow_start else np.ones(0)
    cand = np.concatenate([[L], th_ca_to, th_ca_dup])
    cmax = int(math.ceil(cand.max() - 1e-9))
    if cmax > MAX_SS_DEPTH:
        raise ValueError(
            f"low_window/w_max give a slow-start depth of {cmax} segments (max threshold); accepted: "
            f"at most {MAX_SS_DEPTH} segments (lower w_max or low_window; printed S-TCP/HSTCP/SRF thresholds reach K - L)")
    cmax = max(cmax, 2)
    jw = np.arange(cmax + 1, dtype=float)
    jw[0] = 1.0
    pL_ss, pT_ss = loss_probabilities(params, jw)
    pL_ss = np.maximum(pL_ss, 0.0)
    alpha_ss = ack_gap(params, jw)
    for arr in (pL_ss, pT_ss, alpha_ss):
        arr[0] = 0.0
    js = np.arange(1, cmax, dtype=float)  # SS windows
    th_ss_to = np.maximum(proto.to_ss_s(js), 1.0)
    th_ss_dup = np.maximum(proto.dup_ss_s(js), 1.0) if proto.dup_to_slow_start else np.ones(0)
    allth = np.concatenate([cand, th_ss_to, th_ss_dup])
    window_exit = params.exit_mode == "window"
    if window_exit:
        # Eq. 7: the slow-start path from (1, s) depends on s only through c = ceil(s)
        c_entry = np.arange(2, cmax + 1, dtype=np.int64)
        ent = c_entry.astype(float)
        exit_pt = np.minimum(ent, K)
    else:
        ent = np.unique(np.round(allth[allth > 1.0 + 1e-12], 12))
        c_entry = np.ceil(ent - 1e-9).astype(np.int64)
        exit_pt = np.minimum(ent, K)
    if np.any(c_entry > cmax):
        raise ValueError("slow-start threshold above the slow-start depth; not supported")
    exit_lo, exit_wt = round_weights(exit_pt, grid)

    def entry_index(th: np.ndarray) -> np.ndarray:
        """Index into the entry vector; thresholds <= 1 map to the CA(1) slot (= len(ent))."""
        th = np.round(np.asarray(th, dtype=float), 12)
        if window_exit:
            idx = np.ceil(th - 1e-9).astype(np.int64) - 2
        else:
            idx = np.searchsorted(ent, th)
        return np.where(th > 1.0 + 1e-12, idx, ent.size)

    init = int(entry_index(np.array([L]))[0])
    chain = Chain(params=params, protocol=proto, grid=grid, t_to=t_to, c_max=cmax,
                  pL=pL, pT=pT, alpha=ack_gap(params, grid),
                  pL_ss=pL_ss, pT_ss=pT_ss, alpha_ss=alpha_ss,
                  s_entry=ent, c_entry=c_entry, exit_lo=exit_lo, exit_wt=exit_wt,
                  initial_entry=init if init < ent.size else -1)
    # CA transitions
    succ_lo, succ_wt = round_weights(np.minimum(grid + proto.f2(grid), K), grid)
    chain.extras["succ"] = (succ_lo, succ_wt)
    chain.extras["ca_to"] = entry_index(th_ca_to)
    if proto.dup_to_slow_start:
        chain.extras["ca_dup_entry"] = entry_index(th_ca_dup)
    else:
        chain.extras["ca_dup"] = round_weights(np.maximum(proto.dup_ca_w(grid), 1.0), grid)
    # SS transitions (windows 1..cmax-1)
    chain.extras["ss_to"] = entry_index(th_ss_to)
    if proto.dup_to_slow_start:
        chain.extras["ss_dup_entry"] = entry_index(th_ss_dup)
    else:
        chain.extras["ss_dup"] = round_weights(np.maximum(proto.dup_ss_w(js), 1.0), grid)
    return chain


@dataclass
class TransferTime:
    """Result of :func:`transfer_time`: moments of T_n for n = 1..n_max (index n-1)."""

    params: WeigleParams
    mean_s: np.ndarray        # tau_n(1, L)
    var_s2: np.ndarray        # V(n)
    n_computed: int           # levels actually iterated
    n_eps: int | None         # first n with |psi_n - psi_{n-1}| < eps (None: not reached)
    eps: float
    grid_step: float
    n_states: int
    t_to: float
    seconds: float
    solver: str = "doubling"
    grid_points: int = 0

    @property
    def n(self) -> np.ndarray:
        return np.arange(1, self.mean_s.size + 1)

    @property
    def sd_s(self) -> np.ndarray:
        return np.sqrt(np.maximum(self.var_s2, 0.0))

    def mean_at(self, n: int) -> float:
        return float(self.mean_s[n - 1])

    def var_at(self, n: int) -> float:
        return float(self.var_s2[n - 1])

    def theta_bps(self) -> np.ndarray:
        """Average throughput Theta_n = n B / tau_n in bit/s (Section 6.1)."""
        return 8.0 * self.params.mss_bytes * self.n / self.mean_s

    def psi_s(self) -> np.ndarray:
        """psi_n = tau_n - tau_{n-1} (seconds per segment at the n-th segment), psi_1 = tau_1."""
        return np.diff(self.mean_s, prepend=0.0)

    def instantaneous_bps(self) -> np.ndarray:
        """Instantaneous throughput B / (tau_n - tau_{n-1}) in bit/s."""
        return 8.0 * self.params.mss_bytes / self.psi_s()


def _hi(lo: np.ndarray, N: int) -> np.ndarray:
    return np.minimum(lo + 1, N - 1)


def _solver_matrices(ch: Chain):
    P = ch.params
    N = ch.grid.size
    m = ch.s_entry.size
    E0 = 2 * N                 # offset of E_tau in Y
    E1 = 2 * N + (m + 1)       # offset of E_sigma in Y
    pL, pT, a = ch.pL, ch.pT, ch.alpha
    p = pL + pT
    rtt, tto = P.rtt_s, ch.t_to
    u = a + tto * pT + rtt * pL
    v = rtt**2 * pL + tto**2 * pT - a**2
    rows = np.arange(N)
    # P_dup (CA -> CA same level)
    if "ca_dup" in ch.extras:
        lo, wt = ch.extras["ca_dup"]
        Pd = sp.csr_matrix((np.r_[pL * (1 - wt), pL * wt], (np.r_[rows, rows], np.r_[lo, _hi(lo, N)])), shape=(N, N))
    else:
        Pd = sp.csr_matrix((N, N))
    block = sp.bmat([[Pd, None], [sp.diags(2 * a) + 2 * rtt * Pd, Pd]], format="csr")
    # rhs = c_rhs + M_rhs @ Y
    slo, swt = ch.extras["succ"]
    to = ch.extras["ca_to"]
    R, C, V = [], [], []

    def add(r, c, val):
        R.append(np.asarray(r)); C.append(np.asarray(c)); V.append(np.asarray(val, dtype=float))

    q = 1 - p
    for off in (0, N):   # tau rows then sigma rows, success from previous level
        add(rows + off, slo + off, q * (1 - swt))
        add(rows + off, _hi(slo, N) + off, q * swt)
    add(rows, E0 + to, pT)
    add(rows + N, E0 + to, 2 * tto * pT)
    add(rows + N, E1 + to, pT)
    if "ca_dup_entry" in ch.extras:
        de = ch.extras["ca_dup_entry"]
        add(rows, E0 + de, pL)
        add(rows + N, E0 + de, 2 * rtt * pL)
        add(rows + N, E1 + de, pL)
    ny = 2 * N + 2 * (m + 1)
    M_rhs = sp.csr_matrix((np.concatenate(V), (np.concatenate(R), np.concatenate(C))), shape=(2 * N, ny))
    c_rhs = np.r_[u, v]
    # slow-start loss-continuation terms b_n(j), j = 2..cmax-1
    cm = ch.c_max
    j = np.arange(2, cm)
    nj = j.size
    pLs, pTs, a_s = ch.pL_ss[j], ch.pT_ss[j], ch.alpha_ss[j]
    R, C, V = [], [], []
    rr = np.arange(nj)
    sto = ch.extras["ss_to"][j - 1]
    add(rr, E0 + sto, pTs)
    add(rr + nj, E0 + sto, 2 * tto * pTs)
    add(rr + nj, E1 + sto, pTs)
    if "ss_dup_entry" in ch.extras:
        de = ch.extras["ss_dup_entry"][j - 1]
        add(rr, E0 + de, pLs)
        add(rr + nj, E0 + de, 2 * rtt * pLs)
        add(rr + nj, E1 + de, pLs)
    else:
        lo, wt = ch.extras["ss_dup"]
        lo, wt = lo[j - 1], wt[j - 1]
        # tau part
        add(rr, lo, pLs * (1 - wt)); add(rr, _hi(lo, N), pLs * wt)
        # sigma part: 2 RTT p_L tau(DUP) + p_L sigma(DUP)
        add(rr + nj, lo, 2 * rtt * pLs * (1 - wt)); add(rr + nj, _hi(lo, N), 2 * rtt * pLs * wt)
        add(rr + nj, lo + N, pLs * (1 - wt)); add(rr + nj, _hi(lo, N) + N, pLs * wt)
    M_b = sp.csr_matrix((np.concatenate(V), (np.concatenate(R), np.concatenate(C))), shape=(2 * nj, ny))
    u_s = a_s + tto * pTs + rtt * pLs
    v_s = rtt**2 * pLs + tto**2 * pTs - a_s**2
    c_b = np.r_[u_s, v_s]
    # exit interpolation of CA_n at entry exit points
    me = np.arange(m)
    lo, wt = ch.exit_lo, ch.exit_wt
    M_x = sp.csr_matrix((np.r_[1 - wt, wt, 1 - wt, wt],
                         (np.r_[me, me, me + m, me + m], np.r_[lo, _hi(lo, N), lo + N, _hi(lo, N) + N])),
                        shape=(2 * m, 2 * N))
    M_x = sp.hstack([M_x, sp.csr_matrix((2 * m, ny - 2 * N))])
    M_out = sp.vstack([M_b, M_x], format="csr")
    c_out = np.r_[c_b, np.zeros(2 * m)]
    # interleave rows so that the output reshapes to (., 2) = (tau, sigma) pairs
    perm = np.r_[np.column_stack([np.arange(nj), nj + np.arange(nj)]).ravel(),
                 2 * nj + np.column_stack([np.arange(m), m + np.arange(m)]).ravel()].astype(np.int64)
    M_out = M_out[perm].tocsr()
    c_out = c_out[perm]
    return dict(block=block, M_rhs=M_rhs, c_rhs=c_rhs, M_out=M_out, c_out=c_out, u=u, v=v, ny=ny)


try:  # raw kernel: out += A @ x without scipy's per-call checks
    from scipy.sparse._sparsetools import csr_matvec as _csr_matvec
except Exception:  # pragma: no cover - fallback for other scipy layouts
    _csr_matvec = None


def _matvec_into(A: sp.csr_matrix, x: np.ndarray, out: np.ndarray) -> None:
    """``out += A @ x``."""
    if _csr_matvec is not None:
        _csr_matvec(A.shape[0], A.shape[1], A.indptr, A.indices, A.data, x, out)
    else:
        out += A @ x


SOLVERS = ("auto", "lu", "doubling")
EPS_TESTS = ("absolute", "signed")


class _LossSolver:
    """Exact solve of the per-level CA system ``(I - B) x = r`` (Eqs. 9 and 16 together).

    ``B = [[P_dup, 0], [2 alpha + 2 RTT P_dup, P_dup]]`` is lower triangular up to its
    diagonal (every loss lowers the window except the self-loop at w = 1), so with
    ``Q = (I - D)^{-1} (B - D)`` strictly lower and nilpotent:
    ``x = (I + Q^(2^(k-1))) ... (I + Q^2)(I + Q) (I - D)^{-1} r`` -- exact after
    ``k = ceil(log2(depth + 1))`` factors ("doubling").  ``"lu"`` reuses one sparse
    LU factorisation (SuperLU) instead.
    """

    def __init__(self, block: sp.csr_matrix, method: str = "auto"):
        if method not in SOLVERS:
            raise ValueError(f"solver={method!r} is not supported; accepted: {', '.join(SOLVERS)}")
        n = block.shape[0]
        dg = block.diagonal()
        self.inv_diag = 1.0 / (1.0 - dg)
        facs = []
        if method in ("auto", "doubling"):
            Q = (sp.diags(self.inv_diag) @ (block - sp.diags(dg))).tocsr()
            Q.eliminate_zeros()
            total = 0
            while Q.nnz and len(facs) < 40:
                facs.append(Q)
                total += Q.nnz
                if method == "auto" and total > 30 * n:
                    facs = None
                    break
                Q = (Q @ Q).tocsr()
                Q.eliminate_zeros()
        if method == "lu" or facs is None:
            self.method = "lu"
            self.lu = spla.splu((sp.identity(n, format="csc") - block).tocsc(), permc_spec="NATURAL")
            self.facs = []
        else:
            self.method = "doubling"
            self.facs = facs
        self.tmp = np.empty(n)

    def solve(self, r: np.ndarray, out: np.ndarray) -> None:
        if self.method == "lu":
            out[:] = self.lu.solve(r)
            return
        np.multiply(r, self.inv_diag, out=out)
        tmp = self.tmp
        for Q in self.facs:
            tmp.fill(0.0)
            _matvec_into(Q, out, tmp)
            out += tmp


def transfer_time(params: WeigleParams, n: int, *, early_stop: bool = False, eps: float = 1e-12,
                  eps_test: str = "absolute", eps_run: int = 10, solver: str = "auto",
                  chain: Chain | None = None) -> TransferTime:
    """Mean and variance of T_1..T_n for a transfer starting in ``(W, S) = (1, L)``.

    Implements the mean recursion Eqs. (9)-(11) with initial condition
    ``tau_0 = 0`` and the second-moment recursion Eqs. (16)-(18);
    ``V(n) = sigma_n(1, L) - tau_n(1, L)^2``.  The per-level linear systems (the
    paper iterates the Eq. (12) contraction) are solved exactly: see
    :class:`_LossSolver` (``solver="doubling"``, ``"lu"`` or ``"auto"``) for the
    congestion-avoidance states and a closed-form slow-start path sum.

    With ``early_stop=True`` the recursion stops at ``N_eps``, the first ``n`` with
    ``|psi_n - psi_{n-1}| < eps`` (Section 6; ``psi_n = tau_n - tau_{n-1}``; the
    absolute value is a documented correction), and ``tau`` and ``V`` are extended
    linearly: ``tau_m = tau_N + psi_N (m - N)``, ``V_m = V_N + (V_N - V_{N-1})(m - N)``
    (the paper gives no rule for V; linear growth is the Markov-renewal CLT rate).
    ``eps_test="signed"`` uses the printed test without the absolute value.
    ``eps_run`` (default 10; the paper's test is ``eps_run=1``) requires the test to
    hold for that many consecutive levels: ``psi_n`` is not monotone (e.g. it has a
    minimum after slow start, where ``psi_n - psi_{n-1}`` changes sign and a single
    test can fire far from steady state -- SRF, p = 1e-4, K = 1000 stops at n = 1023
    with eps_run=1 and a 3x too small extrapolated E[T_100000]).
    """
    if isinstance(eps_run, bool) or int(eps_run) != eps_run or eps_run < 1:
        raise ValueError(f"eps_run={eps_run!r} is invalid; accepted: an integer >= 1")
    eps_run = int(eps_run)
    if eps_test not in EPS_TESTS:
        raise ValueError(f"eps_test={eps_test!r} is not supported; accepted: {', '.join(EPS_TESTS)}")
    eps_abs = eps_test == "absolute"
    if isinstance(n, bool) or int(n) != n or n < 1:
        raise ValueError(f"n={n!r} is invalid; accepted: an integer number of segments >= 1")
    if not (eps > 0):
        raise ValueError(f"eps={eps!r} is invalid; accepted: a positive tolerance in seconds")
    n = int(n)
    t_start = time.perf_counter()
    ch = build_chain(params) if chain is None else chain
    mats = _solver_matrices(ch)
    N = ch.grid.size
    m = ch.s_entry.size
    C = ch.c_max
    E0, E1 = 2 * N, 2 * N + m + 1
    window_exit = params.exit_mode == "window"
    # slow-start path constants (index = window)
    q_ss = 1.0 - (ch.pL_ss + ch.pT_ss)
    Pi = np.zeros(C + 1)
    Pi[1] = 1.0
    for jj in range(2, C + 1):
        Pi[jj] = Pi[jj - 1] * q_ss[jj - 1]
    a_ss = ch.alpha_ss
    Acum = np.concatenate([[0.0], np.cumsum(a_ss)])[:-1]  # Acum[c] = sum_{i<c} alpha(i)
    ce = ch.c_entry
    Pi_e, A_e = Pi[ce], Acum[ce]
    Pi_row = Pi[1:C].copy()              # windows 1..C-1 along an anti-diagonal
    # level-major history buffer (row = level, column = window 0..C), compacted when
    # full; each cell holds [b_tau, b_sigma, X_tau, X_sigma] so that one anti-diagonal
    # read touches one cache line per window
    W = C + 1
    HB = C + 1 + max(256, min(3 * C, 2_000_000 // (C + 1)))   # compaction every HB - C levels
    hist = np.zeros((HB * W, 4))
    if not window_exit:
        Xt = np.zeros(HB * m)
        Xs = np.zeros(HB * m)
        x_off = np.arange(m) - (ce - 1) * m
    # solver and matrices
    lossolve = _LossSolver(mats["block"], solver)
    M_rhs, c_rhs, M_out, c_out = mats["M_rhs"], mats["c_rhs"], mats["M_out"], mats["c_out"]
    use_doubling = lossolve.method == "doubling"
    if use_doubling:
        M_rhs = (sp.diags(lossolve.inv_diag) @ M_rhs).tocsr()
        c_rhs = c_rhs * lossolve.inv_diag
    facs = lossolve.facs
    nfac = len(facs)
    bufA = np.empty(2 * N)
    bufB = np.empty(2 * N)
    nj = max(C - 2, 0)
    # window-1 constants
    pL1, pT1, a1 = float(ch.pL[0]), float(ch.pT[0]), float(ch.alpha[0])
    p1 = pL1 + pT1
    q1 = 1.0 - p1
    u1, v1 = float(mats["u"][0]), float(mats["v"][0])
    k1 = a1 + ch.t_to * pT1 + params.rtt_s * pL1
    kb1 = 2.0 * (ch.t_to * pT1 + params.rtt_s * pL1)
    slo, swt = ch.extras["succ"]
    s1lo, s1w = int(slo[0]), float(swt[0])
    s1hi = min(s1lo + 1, N - 1)
    Y = np.zeros(mats["ny"])
    Yca = Y[:E0]
    rhs = np.empty(2 * N)
    xca = np.empty(2 * N)
    outv = np.empty(M_out.shape[0])
    prod = np.empty((2, C - 1))
    Sfull = np.empty((2, C - 1))          # Sfull[:, c-2] = (S_tau(c), S_sigma(c)), c = 2..C
    ASfull = np.zeros(C - 1)
    a_row2 = 2.0 * a_ss[2:C]
    A2_e = 2.0 * A_e
    E2 = Y[E0:E0 + 2 * (m + 1)].reshape(2, m + 1)[:, :m]   # entry values, tau row and sigma row
    tmpm = np.empty(m)
    tmpa = np.empty(max(C - 2, 0))
    ce2 = ce - 2
    mean = np.empty(n)
    second = np.empty(n)
    init = ch.initial_entry
    it = E0 + init if init >= 0 else E0 + m
    is_ = E1 + init if init >= 0 else E1 + m
    n_eps = None
    done = n
    r = C                                # current row; rows < r hold levels lev-1, lev-2, ... (zeros: <= 0)
    psi_prev = None
    run = 0
    for lev in range(1, n + 1):
        # (a) CA(1) closed form (all losses at window 1 return to window 1; Eqs. 9, 16)
        st = (1.0 - s1w) * Y[s1lo] + s1w * Y[s1hi]
        ss = (1.0 - s1w) * Y[N + s1lo] + s1w * Y[N + s1hi]
        tau1 = u1 / q1 + st
        sig1 = (v1 + 2.0 * tau1 * k1 + q1 * ss) / q1
        rW = r * W
        # (b) slow-start loss continuation at window 1, level lev
        hist[rW + 1, 0] = u1 + p1 * tau1
        hist[rW + 1, 1] = v1 + kb1 * tau1 + p1 * sig1
        if m:
            # (c) S_lev(c) = sum_{j<c} Pi(j) b_{lev+1-j}(j): anti-diagonal prefix sums (Eqs. 10/11, 17/18)
            stop = rW + 1 - C * C
            diag = hist[rW + 1:stop if stop > 0 else None:-C]      # windows k = 1..C on row r-k+1
            np.multiply(diag[:C - 1, 0:2].T, Pi_row, out=prod)
            np.cumsum(prod, axis=1, out=Sfull)
            if C > 2:
                np.multiply(a_row2, Sfull[0, :C - 2], out=tmpa)
                np.cumsum(tmpa, out=ASfull[1:])         # ASfull[c-2] = 2 sum_{i<c} alpha(i) S(i)
            if window_exit:
                X2 = diag[1:, 2:4].T                   # (2, m): CA_{lev+1-c}(c), tau and sigma
                S2, AS = Sfull, ASfull
            else:
                idx = r * m + x_off
                X2 = np.vstack((Xt[idx], Xs[idx]))
                S2, AS = Sfull[:, ce2], ASfull[ce2]
            # tau_lev(1,s) = S + Pi X ;  sigma_lev(1,s) = S_sig + 2 (A tau - AS) + Pi X_sig
            np.multiply(X2, Pi_e, out=E2)
            E2 += S2
            np.multiply(A2_e, E2[0], out=tmpm)
            tmpm -= AS
            E2[1] += tmpm
        Y[E0 + m] = tau1
        Y[E1 + m] = sig1
        mean[lev - 1] = Y[it]
        second[lev - 1] = Y[is_]
        # (d) CA states at level lev: rhs from level lev-1 and the entries, exact loss solve
        if use_doubling:
            # x = prod_k (I + Q^(2^k)) (I - D)^{-1} rhs, (I - D)^{-1} folded into M_rhs/c_rhs
            np.copyto(bufA, c_rhs)
            _matvec_into(M_rhs, Y, bufA)
            src = bufA
            for k, Qk in enumerate(facs):
                dst = Yca if k == nfac - 1 else (bufB if src is bufA else bufA)
                np.copyto(dst, src)
                _matvec_into(Qk, src, dst)
                src = dst
            if nfac == 0:
                np.copyto(Yca, bufA)
        else:
            np.copyto(rhs, c_rhs)
            _matvec_into(M_rhs, Y, rhs)
            lossolve.solve(rhs, xca)
            Y[:E0] = xca
        # (e) b_lev(j), j >= 2, and CA_lev at the slow-start exit points
        np.copyto(outv, c_out)
        _matvec_into(M_out, Y, outv)
        if nj:
            hist[rW + 2:rW + C, 0:2] = outv[:2 * nj].reshape(nj, 2)
        if m:
            if window_exit:
                hist[rW + 2:rW + 2 + m, 2:4] = outv[2 * nj:].reshape(m, 2)
            else:
                xo = outv[2 * nj:].reshape(m, 2)
                Xt[r * m:(r + 1) * m] = xo[:, 0]
                Xs[r * m:(r + 1) * m] = xo[:, 1]
        # next row; compact the history (keep the last C levels)
        r += 1
        if r == HB:
            keep = C
            hist[:keep * W] = hist[(HB - keep) * W:HB * W]
            if not window_exit:
                Xt[:keep * m] = Xt[(HB - keep) * m:HB * m]
                Xs[:keep * m] = Xs[(HB - keep) * m:HB * m]
            r = keep
        if early_stop and lev >= 2:
            psi = mean[lev - 1] - mean[lev - 2]
            dpsi = psi - psi_prev if psi_prev is not None else None
            if dpsi is not None and (abs(dpsi) if eps_abs else dpsi) < eps:
                run += 1
                if run >= eps_run:
                    n_eps = lev
                    done = lev
                    break
            else:
                run = 0
            psi_prev = psi
    var = second[:done] - mean[:done] ** 2
    mean_out = mean[:done]
    if done < n:
        k = np.arange(1, n - done + 1)
        psi = mean_out[-1] - mean_out[-2]
        dv = var[-1] - var[-2]
        mean_out = np.concatenate([mean_out, mean_out[-1] + psi * k])
        var = np.concatenate([var, var[-1] + dv * k])
    elif not early_stop:
        n_eps = find_n_eps(mean_out, eps, eps_test, eps_run)
    return TransferTime(params=params, mean_s=mean_out, var_s2=var, n_computed=done, n_eps=n_eps, eps=eps,
                        grid_step=float(np.min(np.diff(ch.grid))) if N > 1 else 0.0, grid_points=N,
                        n_states=ch.n_states, t_to=ch.t_to, seconds=time.perf_counter() - t_start,
                        solver=lossolve.method)


def find_n_eps(mean_s: np.ndarray, eps: float = 1e-12, eps_test: str = "absolute", eps_run: int = 10) -> int | None:
    """``N_eps`` (Section 6): first n >= 3 at which ``|psi_n - psi_{n-1}| < eps`` has held
    for ``eps_run`` consecutive levels (paper: ``eps_run = 1``), or None.

    ``eps_test="signed"`` applies the printed test ``psi_n - psi_{n-1} < eps`` (which
    fires at once while slow start shortens the ACK gaps).
    """
    if eps_test not in EPS_TESTS:
        raise ValueError(f"eps_test={eps_test!r} is not supported; accepted: {', '.join(EPS_TESTS)}")
    psi = np.diff(np.asarray(mean_s, dtype=float), prepend=0.0)
    d = np.diff(psi)                   # d[k] = psi_{k+2} - psi_{k+1}
    if eps_test == "absolute":
        d = np.abs(d)
    ok = (d[1:] < eps).astype(np.int64)       # ok[k] <-> n = k + 3
    if ok.size < eps_run:
        return None
    runs = np.convolve(ok, np.ones(int(eps_run), dtype=np.int64), mode="valid")
    idx = np.nonzero(runs == eps_run)[0]
    return int(idx[0] + eps_run - 1 + 3) if idx.size else None


def n_delta(result: TransferTime, delta: float = 0.1, n_ref: int = 10_000, relative: bool = True) -> int | None:
    """``N_delta`` (Section 6.1): smallest n with ``|Theta_i - Theta_inf| / Theta_inf < delta``
    for all ``n <= i <= n_ref``, where ``Theta_inf = Theta_{n_ref}`` (the paper's Theta_10000).

    The relative absolute difference is a documented correction (the printed
    ``Theta_i - Theta_inf < delta`` holds trivially during ramp-up);
    ``relative=False`` uses ``|Theta_i - Theta_inf| < delta`` with delta in bit/s.
    """
    if not (0 < delta < 1) and relative:
        raise ValueError(f"delta={delta!r} is invalid; accepted: 0 < delta < 1")
    if not (delta > 0):
        raise ValueError(f"delta={delta!r} is invalid; accepted: delta > 0 (bit/s when relative=False)")
    if result.mean_s.size < n_ref:
        raise ValueError(f"n_ref={n_ref} exceeds the computed n={result.mean_s.size}; accepted: n_ref <= n")
    th = result.theta_bps()[:n_ref]
    rel = np.abs(th - th[-1]) / (th[-1] if relative else 1.0)
    bad = np.nonzero(rel >= delta)[0]
    return 1 if bad.size == 0 else int(bad[-1] + 2)
