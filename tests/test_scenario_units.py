"""Unit strings: parsing, rejection messages, formatting round trips."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from ccbench.scenario.units import (
    Duration,
    PositiveDuration,
    QLimit,
    QueueLimit,
    Rate,
    Size,
    UnitError,
    format_duration,
    format_queue_limit,
    format_rate,
    format_size,
    parse_duration,
    parse_queue_limit,
    parse_rate,
    parse_size,
)


@pytest.mark.parametrize(
    "text, bps",
    [
        ("24Mbit", 24_000_000),
        ("1.5Mbps", 1_500_000),
        ("1.5Mbit", 1_500_000),
        ("256kbit", 256_000),
        ("256kbps", 256_000),
        ("10Gbit", 10_000_000_000),
        ("1Gbit/s", 1_000_000_000),
        ("64000bit", 64_000),
        ("100 Mbit", 100_000_000),
        ("1e3kbit", 1_000_000),
        ("1Mibit", 1_048_576),
    ],
)
def test_rates(text, bps):
    assert parse_rate(text) == bps


@pytest.mark.parametrize(
    "text, ns",
    [
        ("100ms", 100_000_000),
        ("1.5s", 1_500_000_000),
        ("20us", 20_000),
        ("20µs", 20_000),
        ("7ns", 7),
        ("0ms", 0),
        ("0.5ms", 500_000),
        ("2min", 120_000_000_000),
    ],
)
def test_durations(text, ns):
    assert parse_duration(text) == ns


@pytest.mark.parametrize(
    "text, nbytes",
    [
        ("40000B", 40_000),
        ("40kB", 40_000),
        ("40KB", 40_000),
        ("1.5kB", 1_500),
        ("4MB", 4_000_000),
        ("1KiB", 1024),
        ("4MiB", 4 * 2**20),
        ("1GiB", 2**30),
        ("186 bytes", 186),
    ],
)
def test_sizes(text, nbytes):
    assert parse_size(text) == nbytes


@pytest.mark.parametrize(
    "text, q",
    [
        ("167pkt", QLimit(167, "pkt")),
        ("14 packets", QLimit(14, "pkt")),
        ("40000B", QLimit(40_000, "B")),
        ("40kB", QLimit(40_000, "B")),
        ("64KiB", QLimit(65_536, "B")),
    ],
)
def test_queue_limits(text, q):
    assert parse_queue_limit(text) == q


@pytest.mark.parametrize(
    "parse, value, fragment",
    [
        (parse_rate, "24", "a number needs a unit"),
        (parse_rate, 24_000_000, "a number needs a unit"),
        (parse_rate, "-1Mbit", "negative"),
        (parse_rate, "0Mbit", "must be positive"),
        (parse_rate, "24Mfurlong", "unknown unit 'Mfurlong'"),
        (parse_rate, "fast", "is not a valid rate"),
        (parse_rate, True, "is not a valid rate"),
        (parse_duration, "100", "a number needs a unit"),
        (parse_duration, 0.1, "a number needs a unit"),
        (parse_duration, "-5ms", "negative"),
        (parse_duration, "5 parsecs", "unknown unit 'parsecs'"),
        (parse_duration, "5pkt", "unknown unit 'pkt'"),
        (parse_size, "40000", "a number needs a unit"),
        (parse_size, "40000b", "'b' would be bits"),
        (parse_size, "1.5B", "not a whole number of bytes"),
        (parse_size, "10pkt", "a packet count is not accepted here"),
        (parse_queue_limit, "0pkt", "a limit of 0 would drop every packet"),
        (parse_queue_limit, "0B", "a limit of 0 would drop every packet"),
        (parse_queue_limit, "1.5pkt", "not a whole number of packets"),
        (parse_queue_limit, "100", "a number needs a unit"),
        (parse_queue_limit, "10ms", "unknown unit 'ms'"),
    ],
)
def test_rejected(parse, value, fragment):
    with pytest.raises(UnitError) as e:
        parse(value)
    msg = str(e.value)
    assert fragment in msg
    assert "accepted:" in msg and "\n" not in msg


def test_rejection_lists_the_accepted_units():
    with pytest.raises(UnitError, match=r"unit ns, us, ms, s"):
        parse_duration("20")
    with pytest.raises(UnitError, match=r"bit, kbit, Mbit, Gbit"):
        parse_rate("20")
    with pytest.raises(UnitError, match=r"KiB, MiB"):
        parse_size("20")


def test_positive_duration():
    assert parse_duration("0s") == 0
    with pytest.raises(UnitError, match="must be positive"):
        parse_duration("0s", positive=True)


@pytest.mark.parametrize(
    "value, text",
    [(1_500_000, "1.5Mbit"), (256_000, "256kbit"), (10**10, "10Gbit"), (64_001, "64.001kbit"), (7, "7bit"),
     (1_234_567, "1234.567kbit"), (999, "999bit")],
)
def test_format_rate(value, text):
    assert format_rate(value) == text
    assert parse_rate(text) == value


@pytest.mark.parametrize(
    "value, text",
    [(100_000_000, "100ms"), (1_500_000_000, "1.5s"), (20_000, "20us"), (0, "0s"), (60 * 10**9, "60s"),
     (1_000_001, "1000.001us"), (999, "999ns")],
)
def test_format_duration(value, text):
    assert format_duration(value) == text
    assert parse_duration(text) == value


@pytest.mark.parametrize("value, text", [(40_000, "40000B"), (4 * 2**20, "4MiB"), (4_000_000, "4MB"), (186, "186B")])
def test_format_size(value, text):
    assert format_size(value) == text
    assert parse_size(text) == value


@pytest.mark.parametrize("text", ["24Mbit", "1.5Mbps", "256kbit", "3.333333Mbit", "123456789bit"])
def test_rate_round_trip(text):
    v = parse_rate(text)
    assert parse_rate(format_rate(v)) == v


@pytest.mark.parametrize("text", ["100ms", "1.5s", "20us", "1.234567s", "3ns"])
def test_duration_round_trip(text):
    v = parse_duration(text)
    assert parse_duration(format_duration(v)) == v


def test_queue_limit_format():
    assert format_queue_limit(QLimit(167, "pkt")) == "167pkt"
    assert format_queue_limit(QLimit(20000, "B")) == "20000B"


class _M(BaseModel):
    rate: Rate
    delay: Duration
    gap: PositiveDuration
    size: Size
    limit: QueueLimit


def test_annotated_types_parse_and_serialise():
    m = _M(rate="1.5Mbit", delay="50ms", gap="20ms", size="40kB", limit="14pkt")
    assert (m.rate, m.delay, m.gap, m.size, m.limit) == (1_500_000, 50_000_000, 20_000_000, 40_000, QLimit(14, "pkt"))
    dumped = m.model_dump()
    assert dumped == {"rate": "1.5Mbit", "delay": "50ms", "gap": "20ms", "size": "40000B", "limit": "14pkt"}
    assert _M.model_validate(dumped) == m
    assert m.model_dump(mode="json") == dumped


def test_annotated_types_reject_bare_numbers():
    with pytest.raises(Exception) as e:
        _M(rate=1_500_000, delay="50ms", gap="20ms", size="40kB", limit="14pkt")
    assert "a number needs a unit" in str(e.value)
