"""The simulator probe of the Lübben & Fidler benchmark and ``ccbench estimate``.

* ECN-AIMD system of the paper's Sec. III-C2 (marks with p = 1e-3, 5 ms each way, no
  capacity limit, one ACK per packet, Reno with ECN): where the probing stops.
* ``ccbench estimate SCENARIO`` and ``--from-csv`` through the real command line
  (``run_cli``, as the ``ccbench`` script runs it), including one-line errors.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import textwrap
import time
import tomllib
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ccbench.netcal import NetcalError, ProbingConfig, analyse_probes, check_samples, trains_from_frame
from ccbench.netcal.simprobe import SIM_PROBING, probe_flow, simulate_probes

PKT = 1448  # probe write = one MSS = one packet
PKT_BITS = PKT * 8

# Lübben Sec. III-C2 (marks with p = 1e-3, 5 ms each way, no capacity limit), the
# example file `ccbench estimate` is pointed at.
ECN_AIMD = tomllib.loads((Path(__file__).resolve().parents[1] / "examples" / "estimate_ecn_aimd.toml").read_text())
ECN_TRANSPORT = {"cc": "aimd", "ecn": True, "delayed_ack": False}
PAPER_THEORY_PPS = 4143.0  # 1.31 / (sqrt(1e-3) * 10 ms), Ott, Kemperman & Mathis
PAPER_FOUND_PPS = 4100.0   # largest stationary rate in the paper, r_acc = 100 pkt/s
# Near the long-term rate the delays' correlation time is minutes (about 30 s at 4000
# pkt/s, 100 s at 4100), so a rate counts as non-stationary only after DF-GLS has failed
# on trains up to 3000 s (the command line: --max-extensions 200
# --stationarity-retries 200 --max-train 3000s; examples/estimate_ecn_aimd.toml).
ECN_PROBING = replace(SIM_PROBING, max_extensions=200, stationarity_retries=200)
ECN_MAX_TRAIN_S = 3000.0


def _saturated_rate_pps(transport: dict, seconds: float = 300.0, seed: int = 11) -> float:
    """The long-term rate of a window on the ECN-AIMD system: a probe at 6000 pkt/s
    (always backlogged after the first second), delivered packets per second from 20 s
    on."""
    from ccbench.backends.sim import simulate
    from ccbench.scenario import Scenario

    data = dict(ECN_AIMD)
    data["run"] = dict(ECN_AIMD["run"], duration=f"{seconds}s")
    data["flows"] = [probe_flow(6000 * PKT_BITS, PKT, 0.0, seconds, transport, {"direction": "down"})]
    run = simulate(Scenario.from_dict(data), seed=seed)
    td = run.packets["t_deliver"].dropna().to_numpy()
    return float(np.count_nonzero(td >= 20.0) / (seconds - 20.0))


def test_ecn_aimd_long_term_rate_matches_theory():
    """The textbook AIMD window, backlogged, against theory.

    1.31/(sqrt(p) RTT) = 4143 pkt/s is the fluid model (and the per-packet chain w ->
    w + 1/w or w/2 gives 4140 when each packet costs RTT/w). A packet-level window
    carries a little more: after a halving the segments already in flight are still
    delivered at the old rate for one RTT (an independent event-driven window model,
    ACK-clocked with a fixed 10 ms RTT, gives 4220-4260 pkt/s over 4 M ACKs). This
    simulator: 4196-4234 pkt/s for seeds 1-6 over 2000 s. Linux Reno with ECN carries
    less: at most one reduction per RTT, with PRR, and no growth while in CWR.
    """
    aimd = np.mean([_saturated_rate_pps(ECN_TRANSPORT, seconds=2000.0, seed=s) for s in (1, 2)])
    reno = np.mean([_saturated_rate_pps(dict(ECN_TRANSPORT, cc="reno"), seed=s) for s in (11, 12)])
    print(f"\nbacklogged on the ECN-AIMD system: aimd {aimd:.0f} pkt/s, reno {reno:.0f} pkt/s")
    assert PAPER_THEORY_PPS * 0.995 <= aimd <= PAPER_THEORY_PPS * 1.035
    assert reno < aimd * 0.985


def test_ecn_aimd_stationarity_boundary():
    """The paper's check: the largest stationary probe rate within 2 % of 4143 pkt/s."""
    t0 = time.monotonic()
    probes, est = simulate_probes(
        ECN_AIMD, 100 * PKT_BITS, 5000 * PKT_BITS, xi=1e-4, size_bytes=PKT, config=ECN_PROBING,
        transport=ECN_TRANSPORT, warmup_s=5.0, seed=1, max_train_s=ECN_MAX_TRAIN_S,
    )
    total_s = time.monotonic() - t0
    largest = float(est.rates_bps.max()) / PKT_BITS
    stop = est.probing.stop_rate_bps / PKT_BITS
    last = est.probing.outcomes[-2:]
    print(
        f"\nECN-AIMD: largest stationary probe rate {largest:.0f} pkt/s (stopped at {stop:.0f} pkt/s, "
        f"{est.n_rates} rates, xi = 1e-4, eps = {est.eps:g}); {total_s:.1f} s\n"
        f"  vs theory {PAPER_THEORY_PPS:.0f}: {100 * (largest / PAPER_THEORY_PPS - 1):+.1f} %"
        f" (paper's estimator: {PAPER_FOUND_PPS:.0f})\n"
        f"  last outcomes: {[(o.rate_bps / PKT_BITS, o.status, o.extensions) for o in last]}"
    )
    # Every rate up to the stop was analysed and accepted, in order, without gaps.
    rates = est.rates_bps / PKT_BITS
    assert np.allclose(rates, 100 * np.arange(1, len(rates) + 1))
    assert est.probing.outcomes[-1].status == "nonstationary"
    assert abs(largest / PAPER_THEORY_PPS - 1) <= 0.02
    # The delay quantile grows with the rate (steady-state delays get longer).
    q = est.delay_quantiles_s
    assert q[-1] > 10 * q[0]
    assert total_s < 240


def test_floor_rule_low_rate_series():
    """A delay series at its floor with rare spikes after marks counts as stationary
    under the simulator configuration; the default configuration is unchanged."""
    rng = np.random.default_rng(3)
    y = np.full(150, 0.0050036)
    spikes = rng.choice(150, size=6, replace=False)
    y[spikes] += rng.uniform(0.001, 0.005, size=6)
    y[0] += 0.004  # a spike at the first sample: the GLS detrending leans on it
    sim = check_samples(y, SIM_PROBING)
    assert sim.stationary and "floor rule" in sim.note
    plain = check_samples(y, ProbingConfig())
    assert "floor rule" not in plain.note
    # A growing series is never rescued by the floor rule: it does not sit at its minimum.
    ramp = 0.005 + np.linspace(0, 1, 150) + rng.normal(0, 1e-3, 150)
    assert not check_samples(ramp, SIM_PROBING).stationary
    # Delays from float timestamps ((t + d) - t) with i.i.d. spikes: independent.
    t = 100.0 + np.arange(300) * 0.1
    noisy = (t + 0.0050036) - t + np.where(rng.random(300) < 0.1, 0.003, 0.0)
    assert check_samples(noisy, SIM_PROBING).independent
    with pytest.raises(NetcalError, match="floor_fraction"):
        ProbingConfig(floor_fraction=1.5)
    with pytest.raises(NetcalError, match="mean_gap_s"):
        ProbingConfig(mean_gap_s=-1.0)


# ----------------------------------------------------------------------------- CLI

TINY = textwrap.dedent(
    """\
    # a 10 Mbit/s bottleneck, 20 ms RTT, no flows of its own: the probe alone
    [run]
    queue_sample = "0s"
    state_sample = "0s"

    [topology]
    kind = "dumbbell"
    bottleneck = { down = "10Mbit", up = "10Mbit", delay = "10ms", queue = { kind = "droptail", limit = "50pkt" } }
    """
)
FAST = ["--warmup", "2s", "--samples", "50", "--sample-spacing", "20ms"]

_APP = textwrap.dedent(
    """\
    import sys, typer
    from ccbench.cli import estimate
    from ccbench.cli.errors import run_cli
    app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
    estimate.register(app)
    @app.command("version", hidden=True)
    def _v():
        pass
    sys.exit(run_cli(app))
    """
)


def _ccbench(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    """``ccbench estimate ARGS`` through run_cli (the ccbench script's error handling)."""
    app = tmp_path / "ccbench_app.py"
    if not app.exists():
        app.write_text(_APP)
    return subprocess.run(
        [sys.executable, str(app), "estimate", *args], cwd=tmp_path, capture_output=True, text=True, timeout=300,
        env={**os.environ, "COLUMNS": "120"},
    )


@pytest.fixture()
def tiny(tmp_path: Path) -> Path:
    p = tmp_path / "tiny.toml"
    p.write_text(TINY)
    return p


def test_cli_scenario_plot_save_and_reanalyse(tmp_path: Path, tiny: Path):
    plot = tmp_path / "alpha.png"
    csv = tmp_path / "probes.csv"
    r = _ccbench(tmp_path, str(tiny), "--r-acc", "2Mbit", "--r-max", "16Mbit", *FAST,
                 "--plot", str(plot), "--save-probes", str(csv))
    assert r.returncode == 0, r.stderr
    out = r.stdout
    print(out)
    assert "eps=" in out and "alpha~(t)" in out and "S~(t)" in out
    assert "eps = |R| * xi = " in out
    assert "stopped at 10 Mbit/s" in out  # the 10 Mbit/s bottleneck
    assert "largest stationary rate 8 Mbit/s" in out
    assert plot.is_file() and plot.stat().st_size > 1000
    df = pd.read_csv(csv)
    assert list(df.columns) == ["rate_bps", "seq", "bytes", "t_send_s", "t_recv_s"]
    assert sorted(df["rate_bps"].unique()) == [2e6, 4e6, 6e6, 8e6, 10e6]

    # The saved probes, re-analysed, give the same estimate (table and every number).
    r2 = _ccbench(tmp_path, "--from-csv", str(csv), "--r-acc", "2Mbit", *FAST[2:])
    assert r2.returncode == 0, r2.stderr
    table = lambda s: s.split("wrote")[0].split("largest")[0]  # noqa: E731
    assert table(r2.stdout) == table(out)
    assert "stopped at 10 Mbit/s" in r2.stdout

    # And in Python: the outcomes of the simulator run equal those of the CSV analysis.
    cfg = replace(SIM_PROBING, samples=50, mean_gap_s=0.02)
    probes, est = simulate_probes(tomllib_load(tiny), 2e6, 16e6, xi=0.05, config=cfg, warmup_s=2.0)
    res = analyse_probes(trains_from_frame(pd.read_csv(csv)), 0.05, 2e6, cfg)
    assert [o.status for o in res.outcomes] == [o.status for o in est.probing.outcomes]
    assert np.array_equal(res.quantiles_s, est.delay_quantiles_s)


def test_cli_pkt_rates(tmp_path: Path, tiny: Path):
    """Packet rates: 200pkt/s of 1448 B = 2.3168 Mbit/s."""
    r = _ccbench(tmp_path, str(tiny), "--r-acc", "200pkt/s", "--r-max", "600pkt/s", *FAST, "--quiet")
    assert r.returncode == 0, r.stderr
    assert "2.317 Mbit/s" in r.stdout and "600 pkt/s" in r.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["--r-acc", "20Mbit", "--r-max", "40Mbit", "--warmup", "1s", "--samples", "30"],
         "no probe rate showed a stationary"),
        (["--r-acc", "4Mbit", "--r-max", "2Mbit"], "--r-acc 4Mbit is above --r-max 2Mbit"),
        (["--r-acc", "5parsec", "--r-max", "2Mbit"], "unknown unit 'parsec'"),
        (["--r-acc", "1Mbit", "--r-max", "2Mbit", "--on-dependent", "maybe"], "--on-dependent must be accept or stop"),
        (["--r-acc", "1Mbit", "--r-max", "2Mbit", "--size", "12b"], "--size: '12b'"),
        (["--r-acc", "1Mbit", "--r-max", "2Mbit", "--xi", "2"], "--xi must lie in the open interval"),
        (["--r-acc", "1Mbit"], "needs --r-acc and --r-max"),
        (["--r-acc", "1Mbit", "--r-max", "2Mbit", "--cc", "nosuchcc"], "unknown congestion control"),
    ],
)
def test_cli_bad_input_one_line(tmp_path: Path, tiny: Path, args, message):
    r = _ccbench(tmp_path, str(tiny), *args)
    assert r.returncode == 2, (r.stdout, r.stderr)
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("error: ") and message in lines[0], lines[0]
    assert "Traceback" not in r.stderr


def test_cli_bad_scenario_and_modes(tmp_path: Path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[topology]\nkind = "dumbbell"\nbottleneck = { down = "10Mbit", up = "-1Mbit", delay = "10ms" }\n')
    syntax = tmp_path / "syntax.toml"
    syntax.write_text("[topology\n")
    for args, message in [
        ([str(bad), "--r-acc", "1Mbit", "--r-max", "2Mbit"], 'topology.bottleneck.up: "-1Mbit" is not a valid rate'),
        ([str(syntax), "--r-acc", "1Mbit", "--r-max", "2Mbit"], "TOML syntax error"),
        (["--r-acc", "1Mbit"], "give either a SCENARIO file or --from-csv"),
        (["--from-csv", str(tmp_path / "none.csv")], "no such file"),
    ]:
        r = _ccbench(tmp_path, *args)
        lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
        assert r.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: "), r.stderr
        assert message in lines[0], lines[0]


def test_cli_help_has_examples(tmp_path: Path):
    r = _ccbench(tmp_path, "--help")
    assert r.returncode == 0
    assert "--from-csv" in r.stdout and "pkt/s" in r.stdout and "ccbench estimate" in r.stdout


def tomllib_load(path: Path) -> dict:
    try:
        import tomllib
    except ImportError:  # pragma: no cover
        import tomli as tomllib  # type: ignore[no-redef]
    return tomllib.loads(path.read_text())


def test_simulate_probes_argument_errors():
    with pytest.raises(NetcalError, match="below r_acc"):
        simulate_probes(ECN_AIMD, 2e6, 1e6)
    with pytest.raises(NetcalError, match="already has a flow named 'probe'"):
        simulate_probes(dict(ECN_AIMD, flows=[{"name": "probe"}]), 1e6, 2e6)
    with pytest.raises(NetcalError, match="non-dumbbell"):
        simulate_probes({"topology": {"kind": "graph"}}, 1e6, 2e6)
    assert math.isclose(SIM_PROBING.mean_gap_s, 0.1)
