"""Checks of the classic TCP models: Mathis 1997, PFTK 1998, Cardwell 2000.

Every reference number says where it comes from: a number printed in a paper, or a
hand computation whose intermediate values are written out in the test.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import typer
from typer.testing import CliRunner

from ccbench.models import cardwell, mathis, pftk

runner = CliRunner()


def _app(fn):
    app = typer.Typer()
    app.command()(fn)
    return app


# ----------------------------------------------------------------------------- Mathis


def test_mathis_constants_match_paper_table():
    # Mathis et al. 1997 Table 1: periodic loss 1.22 (ACK every packet) and 0.87 (delayed ACK);
    # random loss 1.31 and 0.93.
    assert round(mathis.mathis_constant(1), 2) == 1.22
    assert round(mathis.mathis_constant(2), 2) == 0.87
    assert mathis.mathis_constant(1, "random") == 1.31
    assert mathis.mathis_constant(2, "random") == 0.93


def test_mathis_luebben_reference_rate():
    # Lübben & Fidler Sec. III-C2 print the theoretical long-term rate 4143 pkts/s for
    # p = 1e-3 ECN marks, 10 ms RTT and L = 1.31 (Mathis, one ACK per packet).
    r = mathis.throughput_pkts_per_s(0.010, 1e-3, loss_model="random")
    assert round(r) == 4143


def test_mathis_hand_computation_units():
    # Hand: 1460 B / 0.1 s * sqrt(1.5) / sqrt(0.01) = 14600 * 1.2247449 / 0.1 = 178812.75 B/s
    assert mathis.throughput_bytes_per_s(1460, 0.1, 0.01) == pytest.approx(178812.75, rel=1e-6)
    assert mathis.throughput_bits_per_s(1460, 0.1, 0.01) == pytest.approx(8 * 178812.75, rel=1e-6)
    # window sqrt(8/(3*0.01)) = sqrt(266.667) = 16.3299
    assert mathis.window_pkts(0.01) == pytest.approx(16.3299, abs=1e-4)
    # inverse
    assert mathis.loss_rate_for_throughput(mathis.throughput_pkts_per_s(0.05, 2e-4), 0.05) == pytest.approx(2e-4)


def test_mathis_against_numerical_sawtooth():
    # Independent check of C = sqrt(3/2): run a per-RTT AIMD sawtooth (+1 per RTT, halve
    # when the window reaches W), count packets between losses; one loss per cycle gives
    # p = 1/packets, rate = packets / (RTTs * RTT).
    for W in (40, 200, 1000):
        w = W / 2
        pkts = 0.0
        rtts = 0
        while True:
            pkts += w
            rtts += 1
            if w >= W:
                break
            w += 1
        p = 1.0 / pkts
        rate = pkts / rtts  # per RTT (RTT = 1 s)
        C_est = rate * math.sqrt(p)
        assert C_est == pytest.approx(math.sqrt(1.5), rel=3.0 / W)


def test_mathis_vectorised_and_cap():
    p = np.array([1e-4, 1e-3, 1e-2])
    r = mathis.throughput_pkts_per_s(0.1, p)
    assert r.shape == (3,) and np.all(np.diff(r) < 0)
    capped = mathis.throughput_pkts_per_s(0.1, p, max_rate_pkts_per_s=200.0)
    assert capped[0] == 200.0 and capped[2] == r[2]


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: mathis.throughput_pkts_per_s(0.1, 0.0), "p=0.0"),
        (lambda: mathis.throughput_pkts_per_s(-1, 0.1), "rtt_s=-1"),
        (lambda: mathis.mathis_constant(3, "random"), "b=3"),
        (lambda: mathis.mathis_constant(1, "bursty"), "loss_model='bursty'"),
    ],
)
def test_mathis_errors_name_parameter(call, name):
    with pytest.raises(ValueError, match=name.replace("(", r"\(")):
        call()


def test_mathis_cli(tmp_path):
    out = tmp_path / "m.png"
    res = runner.invoke(_app(mathis.cli), ["--rtt-ms", "10", "--loss", "0.001", "--loss-model", "random",
                                           "--plot", str(out)])
    assert res.exit_code == 0, res.output
    assert "4142.58" in res.output
    assert out.exists() and out.stat().st_size > 0
    bad = runner.invoke(_app(mathis.cli), ["--b", "3", "--loss-model", "random"])
    assert bad.exit_code != 0


# ----------------------------------------------------------------------------- PFTK


def test_pftk_full_model_hand_computation():
    # p = 0.01, b = 2, RTT = 0.1 s, T0 = 0.4 s, no W_max. By hand:
    #   (2+b)/(3b) = 0.666667; 8(1-p)/(3bp) = 7.92/0.06 = 132
    #   E[W_u] = 0.666667 + sqrt(132 + 0.444444) = 0.666667 + 11.508450 = 12.175117
    #   Q̂: 1-(0.99)^3 = 0.029701; 0.99^(E[W]-3) = 0.911911; 0.99^E[W] = 0.884826
    #       Q̂ = 0.029701 * (1 + 0.970299*0.088089) / 0.115174 = 0.279922
    #   f(0.01) = 1.0102040
    #   num = 99 + 12.175117 + 0.279922/0.99 = 111.457867
    #   den = 0.1*(12.175117+1) + 0.279922*0.4*1.010204/0.99 = 1.317512 + 0.114254 = 1.431766
    #   B = 77.8465 packets/s
    assert pftk.expected_window_unlimited_pkts(0.01, 2) == pytest.approx(12.175117, abs=2e-6)
    assert pftk.q_hat(0.01, 12.175117) == pytest.approx(0.279922, abs=2e-6)
    assert pftk.backoff_series(0.01) == pytest.approx(1.0102040, abs=1e-7)
    assert pftk.throughput_pkts_per_s(0.1, 0.01, t0_s=0.4, b=2) == pytest.approx(77.8465, abs=2e-3)
    assert pftk.throughput_bits_per_s(1000, 0.1, 0.01, t0_s=0.4) == pytest.approx(8000 * 77.8465, rel=1e-4)


def test_pftk_approx_hand_computation():
    # eq. (33), p = 0.01, b = 2, RTT = 0.1, T0 = 0.4:
    #   RTT*sqrt(2bp/3) = 0.1*sqrt(0.0133333) = 0.0115470
    #   min(1, 3*sqrt(3bp/8)) = 3*sqrt(0.0075) = 0.2598076
    #   T0*0.2598076*p*(1+32p^2) = 0.4*0.2598076*0.01*1.0032 = 0.00104256
    #   B = 1/0.01258956 = 79.4309
    assert pftk.throughput_approx_pkts_per_s(0.1, 0.01, t0_s=0.4) == pytest.approx(79.4309, abs=2e-3)


def test_pftk_tends_to_mathis_as_p_to_zero():
    # As p -> 0 the T0 terms vanish (Q̂ ~ 3/W ~ sqrt(p)) and the full model tends to the
    # square-root law sqrt(3/(2bp))/RTT (PFTK eq. (20) = Mathis eq. (3), C = sqrt(3/(2b))).
    # Use a large T0 = 10 s so the timeout term matters at moderate p.
    for b in (1, 2):
        ratios = []
        for p in (1e-2, 1e-4, 1e-6, 1e-8):
            full = pftk.throughput_pkts_per_s(0.2, p, t0_s=10.0, b=b)
            ratios.append(full / mathis.throughput_pkts_per_s(0.2, p, b=b))
        errs = np.abs(1 - np.array(ratios))
        assert np.all(np.diff(errs) < 0), ratios
        assert errs[-1] < 1e-3
        assert errs[0] > 0.05  # at p = 1e-2 the timeout term is visible


def test_pftk_approx_agrees_with_full_in_its_regime():
    # PFTK's eq. (33) is derived from eq. (32) with E[W] ~ sqrt(8/(3bp)), Q̂ ~ min(1, 3/W),
    # f(p) ~ 1 + 32p^2: they agree for small p; they drift apart at high loss.
    for p in np.logspace(-5, math.log10(0.03), 12):
        full = pftk.throughput_pkts_per_s(0.1, p, t0_s=0.4)
        approx = pftk.throughput_approx_pkts_per_s(0.1, p, t0_s=0.4)
        assert approx == pytest.approx(full, rel=0.03)
    full = pftk.throughput_pkts_per_s(0.1, 0.3, t0_s=0.4)
    approx = pftk.throughput_approx_pkts_per_s(0.1, 0.3, t0_s=0.4)
    assert abs(approx / full - 1) > 0.2


def test_pftk_window_limitation():
    # E[W_u] >> W_max: rate -> W_max/RTT as p -> 0 (second branch of eq. (32)).
    r = pftk.throughput_pkts_per_s(0.1, 1e-6, t0_s=1.0, w_max_pkts=20)
    assert r == pytest.approx(200.0, rel=2e-3)
    # limit not active when W_max is far above E[W_u]
    assert pftk.throughput_pkts_per_s(0.1, 0.01, t0_s=0.4, w_max_pkts=1e6) == pytest.approx(
        pftk.throughput_pkts_per_s(0.1, 0.01, t0_s=0.4))
    assert pftk.throughput_approx_pkts_per_s(0.1, 1e-6, t0_s=1.0, w_max_pkts=20) == pytest.approx(200.0)


def test_pftk_q_hat_limits_and_variant():
    assert pftk.q_hat(0.2, 2.5) == 1.0 and pftk.q_hat(0.01, 3) == 1.0
    assert pftk.q_hat(1e-7, 60) == pytest.approx(3 / 60, rel=1e-4)  # small-p limit 3/w
    a = pftk.throughput_pkts_per_s(0.1, 0.02, t0_s=0.4, variant="pftk98")
    c = pftk.throughput_pkts_per_s(0.1, 0.02, t0_s=0.4, variant="csa00")
    assert c < a  # W/2 + Q̂ < W + Q̂/(1-p) packets per cycle
    a6 = pftk.throughput_pkts_per_s(0.1, 1e-6, t0_s=0.4, variant="pftk98")
    c6 = pftk.throughput_pkts_per_s(0.1, 1e-6, t0_s=0.4, variant="csa00")
    assert c6 == pytest.approx(a6, rel=2e-3)


@pytest.mark.parametrize(
    "kw,name",
    [
        (dict(p=1.0), "p=1.0"),
        (dict(p=0.0), "p=0.0"),
        (dict(t0_s=-1.0), "t0_s=-1.0"),
        (dict(b=0.5), "b=0.5"),
        (dict(w_max_pkts=0), "w_max_pkts=0"),
        (dict(variant="ton"), "variant='ton'"),
    ],
)
def test_pftk_errors_name_parameter(kw, name):
    args = dict(rtt_s=0.1, p=0.01, t0_s=0.4)
    args.update(kw)
    with pytest.raises(ValueError, match=name):
        pftk.throughput_pkts_per_s(args.pop("rtt_s"), args.pop("p"), **args)


def test_pftk_cli(tmp_path):
    out = tmp_path / "p.png"
    res = runner.invoke(_app(pftk.cli), ["--rtt-ms", "100", "--loss", "0.01", "--t0-ms", "400", "--plot", str(out)])
    assert res.exit_code == 0, res.output
    assert "77.85" in res.output and "79.43" in res.output
    assert out.exists()
    assert runner.invoke(_app(pftk.cli), ["--loss", "1.5"]).exit_code != 0


# ----------------------------------------------------------------------------- Cardwell


def test_cardwell_no_loss_hand_computation():
    # p = 0, d = 7 segments (7 x 1000 B), w1 = 1, b = 1 (gamma = 2), RTT = 0.1 s:
    # slow start sends 1, 2, 4 -> 3 rounds = log2(7*1/1 + 1); handshake = 1 RTT.
    res = cardwell.latency(7000, mss_bytes=1000, rtt_s=0.1, p=0.0, b=1, w1=1, t_delack_s=0.0)
    assert res.segments == 7
    assert res.handshake_s == pytest.approx(0.1)
    assert res.slow_start_s == pytest.approx(0.3)
    assert res.first_loss_s == 0 and res.congestion_avoidance_s == 0
    assert res.total_s == pytest.approx(0.4)
    # with the default 100 ms delayed-ACK cost and without the handshake
    assert cardwell.latency_s(7000, mss_bytes=1000, rtt_s=0.1, p=0.0, b=1, include_handshake=False) == \
        pytest.approx(0.4)


def test_cardwell_window_limited_slow_start():
    # W_max = 2, gamma = 2, w1 = 1, d = 7: rounds send 1, 2, 2, 2 -> 4 rounds.
    # eq. (15): RTT*(log2(2/1) + 1 + (7 - (2*2-1)/1)/2) = RTT*(1 + 1 + 2) = 0.4 s
    t = cardwell.slow_start_time_s(7, 0.1, gamma=2, w1=1, w_max_pkts=2)
    assert t == pytest.approx(0.4)
    # delayed ACKs, gamma = 1.5, w1 = 2, 19 segments: 2, 3, 4.5, 6.75, ... eq. (15)
    # log_1.5(19*0.5/2 + 1) = log_1.5(5.75) = 4.3140 rounds
    assert cardwell.slow_start_time_s(19, 1.0, gamma=1.5, w1=2) == pytest.approx(4.31398, abs=1e-4)


def test_cardwell_handshake_hand_computation():
    # eq. (4), p = 0.1 both ways, T_s = 3 s: 0.1 + 3*(2*0.9/0.8 - 2) = 0.1 + 3*0.25 = 0.85 s
    assert cardwell.handshake_time_s(0.1, 0.1) == pytest.approx(0.85)
    # asymmetric: p_f = 0.1, p_r = 0.2: 0.1 + 3*(0.8/0.6 + 0.9/0.8 - 2) = 0.1 + 3*0.458333 = 1.475
    assert cardwell.handshake_time_s(0.1, 0.1, 0.2) == pytest.approx(1.475)
    with pytest.raises(ValueError, match="p_forward=0.5"):
        cardwell.handshake_time_s(0.1, 0.5)


def test_cardwell_slow_start_segments():
    # eq. (5) as printed, d = 10, p = 0.1: (1-0.9^10)*0.9/0.1 + 1 = 0.6513216*9 + 1 = 6.861894
    assert cardwell.expected_slow_start_segments(10, 0.1) == pytest.approx(6.861894, abs=1e-6)
    # the paper's form tends to d + 1 as p -> 0; we cap it at d (documented)
    assert cardwell.expected_slow_start_segments(10, 1e-9) == pytest.approx(10.0)
    # "exact" variant against a Monte-Carlo of segments sent up to and including the first loss
    rng = np.random.default_rng(1)
    d, p = 10, 0.1
    k = rng.geometric(p, size=400_000)  # index of the first lost segment (1-based)
    sim = np.minimum(k, d).mean()
    assert cardwell.expected_slow_start_segments(d, p, dss_formula="exact") == pytest.approx(sim, rel=5e-3)
    with pytest.raises(ValueError, match="dss_formula='x'"):
        cardwell.expected_slow_start_segments(10, 0.1, dss_formula="x")


def test_cardwell_long_transfer_tends_to_steady_state_rate():
    # For d -> inf, dE[T]/dd -> 1/R with R the steady-state (PFTK) rate.
    kw = dict(mss_bytes=1000, rtt_s=0.1, p=0.01, t0_s=0.4)
    t1 = cardwell.latency_s(1_000_000, **kw)
    t2 = cardwell.latency_s(2_000_000, **kw)
    R = pftk.throughput_pkts_per_s(0.1, 0.01, t0_s=0.4, variant="csa00")
    # (the first-loss term still changes by l_ss = 1 - 0.99^d, i.e. by ~0.99^1000 = 4e-5)
    assert (t2 - t1) / 1000 == pytest.approx(1 / R, rel=1e-5)
    R98 = cardwell.latency(10_000, steady_variant="pftk98", **kw).steady_rate_pkts_per_s
    assert R98 == pytest.approx(pftk.throughput_pkts_per_s(0.1, 0.01, t0_s=0.4))


def test_cardwell_first_loss_term():
    # eq. (20) by hand: d = 50, p = 0.02, RTT = 0.1, T0 = 1, E[W_ss] = 10
    #   l_ss = 1 - 0.98^50 = 0.6358303; Q̂(0.02, 10) from PFTK eq. (24)
    q = 0.98
    Q = min(1, (1 - q**3) * (1 + q**3 * (1 - q**7)) / (1 - q**10))  # = 0.361385
    # by hand: 0.058808 * (1 + 0.941192*0.131874) / 0.182927 = 0.361385
    assert Q == pytest.approx(0.361385, abs=1e-6)
    G = 1 + 0.02 + 2 * 0.02**2 + 4 * 0.02**3 + 8 * 0.02**4 + 16 * 0.02**5 + 32 * 0.02**6
    expect = 0.6358303 * (Q * G * 1.0 / 0.98 + (1 - Q) * 0.1)
    assert cardwell.first_loss_time_s(50, 0.02, 0.1, t0_s=1.0, w_ss_pkts=10) == pytest.approx(expect, rel=1e-6)


def test_cardwell_errors():
    with pytest.raises(ValueError, match="size_bytes=0"):
        cardwell.latency(0, rtt_s=0.1, p=0.01)
    with pytest.raises(ValueError, match="rtt_s=0"):
        cardwell.latency(1000, rtt_s=0, p=0.01)
    with pytest.raises(ValueError, match="p=1.2"):
        cardwell.latency(1000, rtt_s=0.1, p=1.2)


def test_cardwell_cli(tmp_path):
    out = tmp_path / "c.png"
    res = runner.invoke(_app(cardwell.cli), ["--size-bytes", "7000", "--mss", "1000", "--loss", "0", "--b", "1",
                                             "--delack-ms", "0", "--plot", str(out)])
    assert res.exit_code == 0, res.output
    assert "0.4000" in res.output
    assert out.exists()
    assert runner.invoke(_app(cardwell.cli), ["--loss", "0.7"]).exit_code != 0
