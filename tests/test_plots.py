"""Figures of a run and of a sweep (issue 16, item 5), the one CCDF (item 6) and the
demo (item 8): what is drawn, what is refused and why, the backend left alone."""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import pytest

from conftest import ROOT, has_core, needs_core

EXAMPLE = ROOT / "examples" / "adsl1_voip_download.toml"


def short_scenario_text() -> str:
    """The demo scenario, 6 s long with the download starting at 2 s."""
    text = EXAMPLE.read_text()
    assert 'duration = "40s"' in text and 'start = "10s"' in text
    return text.replace('duration = "40s"', 'duration = "6s"').replace('start = "10s"', 'start = "2s"')


@pytest.fixture(scope="module")
def run():
    if not has_core():
        pytest.skip("simulator extension not built")
    from ccbench.backends.sim import simulate
    from ccbench.scenario import loads_scenario

    return simulate(loads_scenario(short_scenario_text()))


@pytest.fixture(scope="module")
def run_dir(run, tmp_path_factory):
    return run.save(tmp_path_factory.mktemp("plots") / "run")


# ---- the one CCDF ----------------------------------------------------------------------------
def test_ccdf_ties_nans_and_nothing():
    from ccbench.analysis import AnalysisError, ccdf, ecdf

    x, p = ccdf([3.0, 1.0, 2.0, 2.0, np.nan])
    np.testing.assert_allclose(x, [1, 2, 3])
    np.testing.assert_allclose(p, [0.75, 0.25, 0.0])  # exact P[X > x] at the tie
    _, f = ecdf(np.array([[1.0, 1.0], [2.0, np.inf]]))
    np.testing.assert_allclose(f, [2 / 3, 1.0])
    with pytest.raises(AnalysisError, match="no finite value"):
        ccdf([np.nan])
    # netcal's name for it is the same function, with netcal's error type
    from ccbench.netcal import NetcalError
    from ccbench.netcal.decomposition import ccdf as netcal_ccdf

    np.testing.assert_allclose(netcal_ccdf([3.0, 1.0, 2.0, 2.0])[1], [0.75, 0.25, 0.0])
    with pytest.raises(NetcalError):
        netcal_ccdf([])


# ---- run figures -------------------------------------------------------------------------------
@needs_core
def test_goodput_over_time_per_flow(run):
    g = run.plot.goodput_series(bin="500ms")
    assert list(g.columns) == ["voip.down", "voip.up", "download"]
    assert np.diff(g.index.to_numpy()) == pytest.approx(0.5) and g.index[-1] == pytest.approx(5.5)
    # the bulk flow (no message rows) from its delivered-packet counter: no goodput
    # before it starts, and the bins add up to the bytes it delivered
    assert (g.loc[g.index < 2.0, "download"] == 0).all()
    delivered = float(run.flows.set_index("flow").at["download", "bytes_delivered"])
    assert g["download"].sum() * 0.5 / 8 == pytest.approx(delivered, rel=0.02)
    # VoIP: 200 B every 20 ms = 80 kbit/s in each full bin
    assert g["voip.up"].iloc[1:-1].mean() == pytest.approx(80e3, rel=0.05)
    fig = run.plot.goodput(bin="500ms")
    ax = fig.axes[0]
    assert [l.get_label() for l in ax.get_lines()] == ["voip.down", "voip.up", "download"]
    assert ax.get_ylabel() == "goodput (Mbit/s)" and "500 ms bins" in ax.get_title()


@needs_core
def test_delay_cdf_and_ccdf(run):
    fig = run.plot.delay()
    a1, a2 = fig.axes
    assert [l.get_label().split(" ")[0] for l in a1.get_lines()] == ["voip.down", "voip.up"]
    assert a2.get_yscale() == "log"
    assert run.plot.notes == []  # asked for nothing: the bulk flow is a note, see below
    plots = run.plot
    plots.delay(flows=["voip.down", "download"])
    assert plots.notes == ["no delay samples: flow 'download' is a bulk TCP flow without messages"]
    # the CDF ends at 1 at the largest delay
    x, y = a1.get_lines()[0].get_data()
    d = (run.packets.t_deliver - run.packets.t_write)[run.packets.flow == "voip.down"].dropna()
    assert y[-1] == 1.0 and x[-1] == pytest.approx(d.max() * 1e3)


@needs_core
def test_queue_limit_line_and_ms_axis(run):
    fig = run.plot.queue()
    down, up = [a for a in fig.axes if a.get_title()]
    assert down.get_title().startswith("bottleneck_down") and "limit 20 kB" in down.get_title()
    limit = [l for l in down.get_lines() if l.get_label() == "limit 20 kB"]
    assert limit and limit[0].get_ydata()[0] == 20000
    sec = [c for c in down.child_axes][0]
    # 20000 B at 1.5 Mbit/s drain in 106.7 ms
    fwd = sec._functions[0]
    assert fwd(20000.0) == pytest.approx(20000 * 8 / 1.5e6 * 1e3)
    assert "1.5 Mbit/s" in sec.get_ylabel()
    # the up queue never comes near its limit: no line squashing the trace, the limit in the title
    assert not [l for l in up.get_lines() if l.get_label().startswith("limit")] and "limit 20 kB" in up.get_title()


@needs_core
def test_nothing_to_plot_and_unknown_names(run):
    from ccbench.plots import NothingToPlot, UnknownSelection

    with pytest.raises(NothingToPlot, match=r"^no delay samples: flow 'download' is a bulk TCP flow without messages$"):
        run.plot.delay(flows="download")
    with pytest.raises(NothingToPlot, match=r"^no cwnd samples: flows 'voip.down' and 'voip.up' are UDP flows "
                                            r"\(no congestion window\)$"):
        run.plot.cwnd(flows="voip")  # a scenario name selects voip.down and voip.up
    with pytest.raises(UnknownSelection, match=r"flow 'video' is not in this run \(flows: voip.down, voip.up, download\)"):
        run.plot.goodput(flows=["voip", "video"])
    with pytest.raises(UnknownSelection, match="links: bottleneck_down, bottleneck_up"):
        run.plot.queue(links="hop0_fwd")
    from ccbench.run import Run

    quiet = Run(packets=run.packets, flows=run.flows, cwnd=run.cwnd, queue=run.queue.iloc[0:0], drops=run.drops, meta=run.meta)
    with pytest.raises(NothingToPlot, match="no queue samples: no link was monitored"):
        quiet.plot.queue()


@needs_core
def test_dense_legend_goes_outside(run):
    from ccbench.run import Run

    p = run.packets[run.packets.flow == "voip.down"]
    many = pd.concat([p.assign(flow=f"v{i}") for i in range(7)], ignore_index=True)
    r = Run(packets=many, flows=run.flows.iloc[0:0], cwnd=run.cwnd.iloc[0:0], queue=run.queue, drops=run.drops, meta={})
    fig = r.plot.delay_ccdf()
    assert fig.axes[0].get_legend() is None and len(fig.legends) == 1
    assert len(fig.legends[0].get_texts()) == 7
    few = run.plot.delay_ccdf(flows="voip")
    assert few.axes[0].get_legend() is not None and not few.legends


@needs_core
def test_plotting_leaves_the_backend_and_pyplot_alone(run, tmp_path):
    """A user's backend (here pdf) is what it was after every figure and the report."""
    import matplotlib

    before = matplotlib.get_backend()
    pyplot_figs = sys.modules["matplotlib.pyplot"].get_fignums() if "matplotlib.pyplot" in sys.modules else []
    try:
        matplotlib.use("pdf")
        for name in ("goodput", "delay", "cwnd", "queue", "decomposition"):
            getattr(run.plot, name)(path=tmp_path / f"{name}.png")
        from ccbench.report.run_report import run_report_html

        assert "<img" in run_report_html(run)
        assert matplotlib.get_backend() == "pdf"
        if "matplotlib.pyplot" in sys.modules:
            assert sys.modules["matplotlib.pyplot"].get_fignums() == pyplot_figs
    finally:
        matplotlib.use(before)
    assert all((tmp_path / f"{n}.png").stat().st_size > 5000 for n in ("goodput", "delay", "cwnd", "queue"))


# ---- ccbench plot -------------------------------------------------------------------------------
@needs_core
def test_cli_plot(run_dir, tmp_path):
    from typer.testing import CliRunner

    from ccbench.cli import app

    def plot(*args):
        return CliRunner().invoke(app, ["plot", str(run_dir), "--out", str(tmp_path / "p"), *args], terminal_width=200)

    r = plot()
    assert r.exit_code == 0, r.output
    assert sorted(p.name for p in (tmp_path / "p").iterdir()) == ["cwnd.png", "delay.png", "goodput.png", "queue.png"]
    assert "note: delay: no delay samples: flow 'download' is a bulk TCP flow without messages" in r.output
    # asked for a figure with nothing to show: not written, one line why, exit 1
    r = plot("--what", "delay", "--flow", "download", "--format", "svg")
    assert r.exit_code == 1
    assert "error: delay: not written: no delay samples: flow 'download' is a bulk TCP flow without messages" in r.output
    assert not (tmp_path / "p" / "delay.svg").exists()
    # a mistake: exit 2, naming the known flows
    r = plot("--flow", "vioп")
    assert r.exit_code == 2 and "--flow: flow 'vioп' is not in this run (flows: voip.down, voip.up, download)" in r.output
    r = plot("--bin", "5")
    assert r.exit_code == 2 and "--bin: '5' is not a valid duration" in r.output
    r = plot("--what", "bars")
    assert r.exit_code == 2 and "accepted: goodput, delay, cwnd, queue, decomposition" in r.output
    # --flow repeats
    r = plot("--what", "decomposition", "--flow", "voip.down", "--flow", "voip.up", "--format", "svg")
    assert r.exit_code == 0, r.output
    assert (tmp_path / "p" / "decomposition-voip.down.svg").exists() and (tmp_path / "p" / "decomposition-voip.up.svg").exists()
    assert "Traceback" not in r.output


# ---- sweep report: categories are bars, scales are lines -------------------------------------------
def test_sweep_categorical_axis_bars_numeric_axis_lines():
    from matplotlib.container import BarContainer, ErrorbarContainer

    from ccbench.report.sweep_report import metric_figure, numeric_axis

    assert numeric_axis(["20000B", "100000B", "40kB"]) == [20000.0, 100000.0, 40000.0]
    assert numeric_axis(["10ms", "1s"]) == [0.01e9, 1e9]
    assert numeric_axis(["reno", "cubic"]) is None and numeric_axis(["14pkt", "20000B"]) is None
    meta = {"axes": [["cc"], ["limit"]], "grid": {"cc": ["reno", "cubic"], "limit": ["20000B", "100000B"]},
            "parameters": ["cc", "limit"]}
    rows = [{"flow": "voip", "cc": cc, "limit": lim, "seed": s, "delay_p95_s": 0.05 + 0.1 * (lim == "100000B") + 0.01 * s}
            for cc in ("reno", "cubic") for lim in ("20000B", "100000B") for s in (1, 2, 3)]
    ok = pd.DataFrame(rows)
    fig = metric_figure(ok, meta, ["cc"], "delay_p95_s")
    ax = fig.axes[0]
    bars = [c for c in ax.containers if isinstance(c, BarContainer)]
    assert len(bars) == 2  # one bar group per limit value
    assert [r.get_height() for r in bars[1]] == pytest.approx([170.0, 170.0])  # median of 160, 170, 180 ms
    assert [t.get_text() for t in ax.get_xticklabels()] == ["reno", "cubic"]
    assert len(fig.legends) == 1  # the groups' legend beside the panels
    fig = metric_figure(ok, meta, ["limit"], "delay_p95_s")
    ax = fig.axes[0]
    assert not [c for c in ax.containers if isinstance(c, BarContainer)]
    line = [c for c in ax.containers if isinstance(c, ErrorbarContainer)][0].lines[0]
    assert list(line.get_xdata()) == [20000.0, 100000.0]  # on a scale, "100000B" right of "20000B"


# ---- the demo ---------------------------------------------------------------------------------------
@needs_core
def test_demo_prints_voip_delay_alone_and_beside_the_download(tmp_path, capsys):
    from ccbench import demo

    scn = tmp_path / "demo.toml"
    scn.write_text(short_scenario_text())
    assert demo.main(["--scenario", str(scn), "--out", str(tmp_path / "demo")]) == 0
    out = capsys.readouterr().out
    assert "alone" in out and "+ download" in out and f"report: {tmp_path / 'demo' / 'report.html'}" in out
    assert (tmp_path / "demo" / "report.html").exists()
    from ccbench.run import Run

    t = demo.before_after(Run.load(tmp_path / "demo"), 2.0)
    down = t[t.flow == "voip.down"].set_index("window")
    # alone: 50 ms propagation + 200 B at 1.5 Mbit/s; beside the download: its queue
    assert down.at["before", "p95_s"] == pytest.approx(0.050 + 200 * 8 / 1.5e6, abs=2e-4)
    assert down.at["after", "p50_s"] > down.at["before", "p50_s"] + 0.03


def test_no_module_selects_a_backend_or_uses_pyplot():
    """Every figure of the package is drawn on its own canvas (plots.new_figure): no
    ``matplotlib.use`` and no pyplot, which would switch or clutter a user's session."""
    import re

    bad = []
    for path in sorted((ROOT / "python" / "ccbench").rglob("*.py")):
        for i, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split("#", 1)[0]
            if re.search(r"matplotlib\.use\(|import matplotlib\.pyplot|from matplotlib import pyplot", code):
                bad.append(f"{path.relative_to(ROOT)}:{i}: {line.strip()}")
    assert bad == []


def test_delivered_rate_sums_the_connections_of_a_flow():
    """A flow over two sockets: each socket's counter is interpolated on its own."""
    from ccbench.analysis import delivered_rate_series

    t = np.arange(0.0, 2.01, 0.1)
    cwnd = pd.concat([pd.DataFrame({"flow": "f", "conn": k, "t": t, "delivered_pkts": (k + 1) * 10 * t})
                      for k in (0, 1)]).sort_values("t", kind="stable")
    r = delivered_rate_series(cwnd, 1.0, 1000.0)
    # 10 + 20 packets/s of 1000 B = 240 kbit/s in each bin
    np.testing.assert_allclose(r["f"], [240e3, 240e3])
