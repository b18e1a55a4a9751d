"""Weigle, Cheng, Kaur, Kulkarni (2009): stochastic transfer-time model for loss-based CC.

"Generalized stochastic performance models for loss-based congestion control",
Computer Communications 32 (2009).  The sender is the semi-Markov chain of
Eqs. (6)-(8) on ``(W, S)`` embedded at ACK arrivals; this package computes the
mean ``tau_n(1, L)`` (Eqs. 9-12) and variance ``V(n) = sigma_n(1, L) - tau_n(1,L)^2``
(Eqs. 13-18) of the time ``T_n`` to deliver ``n`` segments, ``N_eps`` early stopping
(Section 6), ``Theta_n`` and ``N_delta`` (Section 6.1).

Public API
----------
``WeigleParams``          frozen dataclass of inputs (scenario units: s, bit/s, bytes, segments)
``transfer_time``         mean/variance of T_1..T_n -> ``TransferTime``
``n_delta``, ``find_n_eps``  Section 6 quantities
``make_protocol``         the LB-CC protocol library (Reno, Tahoe, S-TCP, HSTCP, SRF)
``q_hat``, ``timeout_probability``, ``timeout_duration``, ``table1_computed_pt``  Eqs. (19), (20)
``hstcp_lambda``, ``hstcp_gamma``, ``hstcp_a_b``  RFC 3649 functions
``simulate_chain``        independent Monte Carlo sampler of the same chain
``build_chain``, ``window_grid``, ``round_weights``  discretisation
``benchmark``             timings;  ``cli``  the typer command (``ccbench model weigle``)

Documented modelling choices (each with a switch for the other reading)
-----------------------------------------------------------------------
1. ``p_T(w) = p * Qhat(w)`` with Qhat from Eq. (19) (a conditional probability in
   PFTK); ``p_L = p - p_T``.  Switch ``timeout_prob="printed"`` uses Eq. (19)
   literally (rejected with a ValueError when ``p_L < 0``, i.e. practically always);
   ``p_timeout=`` feeds an observed window-independent ``p_T`` (the paper's M1-p).
2. ``t_TO`` from Eq. (20) with ``TO = t0_s``; ``timeout_backoff=False`` uses ``t_TO = TO``.
3. ``semantics="corrected"`` (default) vs ``"printed"`` for the protocol maps:
   S-TCP keeps 0.875 W / HSTCP keeps lambda(W) W (printed: those are the cuts);
   CA-timeout threshold ``min{W/2, L}`` (printed: ``W - min{W/2, L}``); Tahoe's
   duplicate-ACK loss goes to slow start ``(1, W/2)`` with the +RTT delay (printed:
   to ``(1, 1)`` by Eqs. 6/7).  SRF's ``b W^beta`` is a cut in both.
4. ``L`` defaults: ``K`` for Reno/Tahoe (footnote 3), 16 for S-TCP (Kelly's legacy
   window; Linux uses 100), 38 for HSTCP (RFC 3649 Low_Window), 900 for SRF
   (where ``b W^beta = W/2``, continuous decrease); always capped at ``K``.
5. Slow-start exit (Eq. 7 vs Eq. 11): ``ss_exit="window"`` continues in congestion
   avoidance at ``f1(w) = ceil(s)`` (Eq. 7; default for corrected semantics),
   ``"threshold"`` at ``s`` itself (Eqs. 11/15/18; default for printed).
6. Window discretisation: congestion-avoidance windows on a grid (default 1/8 up to
   12.5 then 1 % geometric steps; ``grid_step`` alone = uniform) with randomised
   rounding; slow-start windows are exact integers.  Refine the grid to check.
7. ``N_eps`` uses ``|psi_n - psi_{n-1}| < eps`` (absolute value; the literal test
   fires at once during slow start: ``eps_test="signed"``) holding for ``eps_run=10``
   consecutive levels (the paper's single test, ``eps_run=1``, can fire at a turning
   point of psi_n far from steady state); beyond ``N_eps`` the mean and the variance
   are extended linearly (the paper gives no rule for the variance).
8. ``N_delta`` uses ``|Theta_i - Theta_inf| / Theta_inf < delta`` for all
   ``N_delta <= i <= 10000`` with ``Theta_inf = Theta_10000``.
9. ``alpha(w) = max{RTT/w, B/C}`` with ``B = mss_bytes`` (payload only; no header
   bytes) and ``C = rate_bps``; ``rate_bps=None`` drops the floor.
10. Per-level linear systems are solved exactly (doubling product or reused sparse
    LU, ``solver=``) instead of the Eq. (12) contraction iteration; same fixed point.
"""

from .params import WeigleParams, round_weights, window_grid
from .protocols import (PROTOCOLS, SEMANTICS, Protocol, hstcp_a_b, hstcp_gamma, hstcp_lambda,
                        make_protocol, q_hat, table1_computed_pt, timeout_duration, timeout_probability)
from .recursion import Chain, TransferTime, build_chain, find_n_eps, n_delta, transfer_time
from .montecarlo import MonteCarloResult, simulate_chain
from .bench import benchmark
from .cli import cli

__all__ = [
    "PROTOCOLS", "SEMANTICS", "Chain", "MonteCarloResult", "Protocol", "TransferTime", "WeigleParams",
    "benchmark", "build_chain", "cli", "find_n_eps", "hstcp_a_b", "hstcp_gamma", "hstcp_lambda",
    "make_protocol", "n_delta", "q_hat", "round_weights", "simulate_chain", "table1_computed_pt",
    "timeout_duration", "timeout_probability", "transfer_time", "window_grid",
]
