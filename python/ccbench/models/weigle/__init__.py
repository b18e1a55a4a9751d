"""Weigle, Cheng, Kaur, Kulkarni (2009): stochastic transfer-time model for loss-based CC."""
from .params import WeigleParams, round_weights, window_grid
from .protocols import (PROTOCOLS, SEMANTICS, Protocol, hstcp_a_b, hstcp_gamma, hstcp_lambda,
                        make_protocol, q_hat, table1_computed_pt, timeout_duration, timeout_probability)
from .recursion import Chain, TransferTime, build_chain, find_n_eps, n_delta, transfer_time
from .montecarlo import MonteCarloResult, simulate_chain
from .bench import benchmark
from .cli import cli
