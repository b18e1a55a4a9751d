"""Plots (PNG/SVG by suffix) and the typer command ``estimate --from-csv``."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import typer
from typer.testing import CliRunner

from ccbench.netcal import (
    NetcalError,
    estimate_service_curve,
    per_packet_delay_bound,
    plot_attainable_rate,
    plot_buffering,
    plot_delay_bound,
    plot_delay_ccdfs,
)
from ccbench.netcal.cli import estimate_from_csv


def make_app():
    app = typer.Typer()
    app.command("estimate")(estimate_from_csv)

    @app.command("noop")
    def _noop() -> None:  # a second command keeps "estimate" a sub-command, as in ccbench
        pass

    return app


def write_probe_csv(path, n=2500):
    rng = np.random.default_rng(0)
    parts = []
    for j in (1, 2, 3):
        r = j * 1e6
        t = np.arange(n) * 12_000 / r
        d = 0.03 + 0.004 * j * rng.random(n) if j < 3 else 0.03 + 0.5 * t / t[-1] + 0.001 * rng.random(n)
        parts.append(pd.DataFrame({"rate_bps": r, "seq": np.arange(n), "bytes": 1500, "t_send_s": t, "t_recv_s": t + d}))
    pd.concat(parts).to_csv(path, index=False)


def test_plots_write_png_and_svg(tmp_path):
    est = estimate_service_curve([1e6, 2e6], [0.03, 0.05], 0.05)
    p = plot_attainable_rate({"a": est, "b": estimate_service_curve([1e6], [0.02], 0.05)}, tmp_path / "alpha.png")
    assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    s = plot_attainable_rate(est, tmp_path / "sub" / "alpha.svg",
                             reference={"analytic": ([0.01, 1.0], [0.0, 2e6])})
    assert "<svg" in s.read_text()
    rng = np.random.default_rng(0)
    c = plot_delay_ccdfs({"e2e": rng.exponential(size=500), "net": rng.random(500)}, tmp_path / "ccdf.svg")
    assert "<svg" in c.read_text()
    t = np.sort(rng.uniform(0, 1, 300))
    b = per_packet_delay_bound(t, np.full(300, 1000), est)
    q = plot_delay_bound(b, tmp_path / "bound.png", quantiles_s=0.5 * b, envelope_bound_s=b.max(), eps=est.eps)
    assert q.stat().st_size > 1000
    tab = pd.DataFrame({"utilisation": [0.1, 0.5], "p_buffering": [0.1, 0.4], "ci_low": [0.05, 0.3], "ci_high": [0.2, 0.5]})
    assert plot_buffering(tab, tmp_path / "buf.png").exists()
    with pytest.raises(NetcalError, match=r"\.png or \.svg"):
        plot_attainable_rate(est, tmp_path / "alpha.pdf")


def test_cli_prints_table_with_eps_and_writes_plot(tmp_path):
    csv = tmp_path / "probe.csv"
    write_probe_csv(csv)
    trace = tmp_path / "trace.csv"
    pd.DataFrame({"t_s": np.arange(200) * 0.01, "bytes": 1000}).to_csv(trace, index=False)
    out = tmp_path / "alpha.svg"
    res = CliRunner().invoke(make_app(), [
        "estimate", "--from-csv", str(csv), "--xi", "0.05", "--r-acc-bps", "1e6",
        "--plot", str(out), "--time-scale", "0.1", "--time-scale", "10", "--trace", str(trace),
    ], terminal_width=200)
    assert res.exit_code == 0, res.output
    assert "eps=0.1" in res.output and "|R|=2" in res.output
    assert "eps = |R| * xi = 2 * 0.05 = 0.1" in res.output
    assert "stopped at 3 Mbit/s" in res.output
    # the table shows S̃ and α̃ of the estimate at the requested time scales
    from ccbench.netcal import ProbingConfig, estimate_from_file

    est = estimate_from_file(csv, 0.05, 1e6, ProbingConfig())
    from ccbench.fmt import fmt_bits, fmt_rate

    assert fmt_rate(est.alpha([10.0])[0]) in res.output
    assert fmt_bits(est.S([0.1])[0]) in res.output
    assert est.alpha([10.0])[0] == pytest.approx(2e6 * (10 - est.delay_quantiles_s[1]) / 10)
    assert "envelope delay bound" in res.output
    assert out.exists() and "<svg" in out.read_text()


def test_cli_reports_data_errors(tmp_path):
    csv = tmp_path / "probe.csv"
    pd.DataFrame({"rate_bps": [1e6], "seq": [0]}).to_csv(csv, index=False)
    res = CliRunner().invoke(make_app(), ["estimate", "--from-csv", str(csv)])
    assert res.exit_code == 2
    assert "missing column(s) bytes, t_send_s, t_recv_s" in res.output
    write_probe_csv(csv)
    res = CliRunner().invoke(make_app(), ["estimate", "--from-csv", str(csv), "--xi", "1.5"])
    assert res.exit_code == 2 and "xi must lie in the open interval" in res.output
