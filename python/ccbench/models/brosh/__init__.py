"""Brosh et al. CBR-over-TCP delay model ("The Delay-Friendliness of TCP").

A discrete-time Markov chain on states (w, b, l) (congestion window, send backlog,
loss-recovery / timeout stage) with the Table 6 transitions, random or correlated
segment loss, byte-queue loss scaling and limited transmit (App. A), solved for its
stationary distribution; the per-packet delay distribution follows from Eq. 3.

Quick use::

    from ccbench.models.brosh import VOIP, solve
    res = solve(VOIP.with_(rtt_s=0.1, loss=0.02))
    res.mean_s, res.percentile(0.95), res.late_fraction(0.2)

Modules: :mod:`.params` (inputs and every documented modelling choice),
:mod:`.lossprob` (FR/TO probabilities), :mod:`.chain` (state space, Table 6),
:mod:`.solve` (stationary solution, Eq. 3, working region, benchmark),
:mod:`.montecarlo` (independent trajectory sampler), :mod:`.cli` (typer command).
"""

from .chain import Chain, build_chain, decode_states, state_index
from .cli import cli, plot_ccdf
from .lossprob import correlated_loss_probs, random_loss_probs, round_probs
from .montecarlo import MonteCarloResult, simulate_chain
from .params import VIDEO, VOIP, BroshParams
from .solve import (
    BroshResult,
    DelayDistribution,
    benchmark,
    delay_distribution,
    solve,
    stationary,
    working_region_boundary,
)

__all__ = [
    "BroshParams", "VOIP", "VIDEO", "Chain", "build_chain", "decode_states", "state_index",
    "random_loss_probs", "correlated_loss_probs", "round_probs", "stationary", "solve",
    "delay_distribution", "DelayDistribution", "BroshResult", "working_region_boundary",
    "benchmark", "simulate_chain", "MonteCarloResult", "cli", "plot_ccdf",
]
