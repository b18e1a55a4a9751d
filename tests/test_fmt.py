"""ccbench.fmt: one way to write a rate, time, size or fraction for a reader, and the
command line and the HTML report agree on it (issue 16: the CLI printed 74.4 kbit/s
where the report printed 74.35)."""

import math

import pytest

from ccbench.fmt import fmt_bits, fmt_bytes, fmt_number, fmt_pct, fmt_rate, fmt_time


@pytest.mark.parametrize(
    "value, text",
    [
        (74352.0, "74.35 kbit/s"),       # the example: 4 significant digits
        (1_500_000, "1.5 Mbit/s"),        # trailing zeros dropped
        (1_362_278.4, "1.362 Mbit/s"),
        (999_960.0, "1 Mbit/s"),          # rounded before the unit is chosen
        (999_940.0, "999.9 kbit/s"),
        (256_000, "256 kbit/s"),
        (10e9, "10 Gbit/s"),
        (12.0, "12 bit/s"),
        (0.0, "0 bit/s"),
        (-2e6, "-2 Mbit/s"),
        (math.nan, "-"),
        (math.inf, "-"),
        (None, "-"),
    ],
)
def test_rate(value, text):
    assert fmt_rate(value) == text


@pytest.mark.parametrize(
    "value, text",
    [
        (0.1177, "117.7 ms"),
        (0.05, "50 ms"),
        (1.0, "1 s"),
        (61.25, "61.25 s"),
        (3600.0, "3600 s"),
        (36000.0, "36000 s"),              # no exponent form
        (2.5e-5, "25 us"),
        (1e-7, "100 ns"),
        (0.00099996, "1 ms"),
        (0.0, "0 s"),
        (math.nan, "-"),
    ],
)
def test_time(value, text):
    assert fmt_time(value) == text


def test_time_in_a_fixed_unit():
    assert fmt_time(0.11774, unit="ms") == "117.7 ms"
    assert fmt_time(1.5, unit="ms") == "1500 ms"
    assert fmt_time(0.0, unit="ms") == "0 ms"
    assert fmt_time(float("nan"), unit="ms", missing="") == ""
    with pytest.raises(ValueError, match="unit: 'min' is not accepted"):
        fmt_time(1.0, unit="min")


@pytest.mark.parametrize(
    "value, text",
    [(20000, "20 kB"), (1448, "1.448 kB"), (186, "186 B"), (2_652_736, "2.653 MB"), (0, "0 B"), (4e9, "4 GB")],
)
def test_bytes(value, text):
    assert fmt_bytes(value) == text


def test_bits_pct_number():
    assert fmt_bits(500_000) == "500 kbit"
    assert fmt_pct(0.02238) == "2.238%"
    assert fmt_pct(0.0) == "0%"
    assert fmt_pct(1e-5) == "0.001%"
    assert fmt_number(12345.6) == "12350" and fmt_number(0.001234) == "0.001234" and fmt_number(100) == "100"
    assert fmt_rate(74352.0, digits=3) == "74.4 kbit/s"
    assert fmt_rate(float("nan"), missing="") == ""


def test_cli_and_report_print_the_same_numbers(tmp_path):
    """The per-flow table of `ccbench run` and the HTML report write the same goodput
    and delay strings for the same run."""
    from typer.testing import CliRunner

    from ccbench.cli import app
    from ccbench.report import write_report
    from ccbench.run import Run

    scn = tmp_path / "voip.toml"
    scn.write_text(
        '[run]\nduration = "5s"\n[topology]\nkind = "dumbbell"\n'
        '[topology.bottleneck]\ndown = "1.5Mbit"\nup = "256kbit"\ndelay = "50ms"\n'
        'queue = { kind = "droptail", limit = "20000B" }\n'
        '[[flows]]\nname = "voip"\ndirection = "both"\ntransport = { kind = "udp" }\n'
        'app = { kind = "cbr", size = "186B", interval = "20ms", jitter = { dist = "normal", sd = "1ms" } }\n'
    )
    out = tmp_path / "run"
    res = CliRunner().invoke(app, ["run", str(scn), "--out", str(out), "--quiet"], terminal_width=160)
    assert res.exit_code == 0, res.output
    run = Run.load(out)
    html = write_report(out).read_text()
    for r in run.flows.itertuples():
        rate = fmt_rate(r.goodput_bps)
        p95 = fmt_time(r.delay_p95_s, unit="ms")
        assert rate in res.output and rate in html, rate
        assert p95 in res.output and p95 in html, p95
