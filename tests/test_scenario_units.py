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


# --- every spelling, accepted and refused (issue 16: units) ------------------------------
# The lists are written out by hand, not derived from the parser's tables, and the
# last test checks that the parser accepts nothing else: adding a spelling to the
# parser means adding it here, with its meaning.

K, M, G, T = 10**3, 10**6, 10**9, 10**12
Ki, Mi, Gi, Ti = 2**10, 2**20, 2**30, 2**40

ACCEPTED_RATES = {  # unit -> bit/s per unit
    # bits per second: SI prefixes, k or K for kilo
    "bit": 1, "kbit": K, "Kbit": K, "Mbit": M, "Gbit": G, "Tbit": T,
    "bit/s": 1, "kbit/s": K, "Kbit/s": K, "Mbit/s": M, "Gbit/s": G, "Tbit/s": T,
    "bps": 1, "kbps": K, "Kbps": K, "Mbps": M, "Gbps": G, "Tbps": T,
    "b/s": 1, "kb/s": K, "Kb/s": K, "Mb/s": M, "Gb/s": G, "Tb/s": T,
    # tc(8)'s lower-case spellings of bits
    "mbit": M, "gbit": G, "tbit": T, "mbit/s": M, "gbit/s": G, "tbit/s": T,
    # binary bits, asked for explicitly (IEC)
    "Kibit": Ki, "Mibit": Mi, "Gibit": Gi, "Tibit": Ti,
    "Kibit/s": Ki, "Mibit/s": Mi, "Gibit/s": Gi, "Tibit/s": Ti,
    # bytes per second: converted, 8 bits per byte; decimal as for sizes (KB = kB = 1000 B)
    "B/s": 8, "kB/s": 8 * K, "KB/s": 8 * K, "MB/s": 8 * M, "GB/s": 8 * G, "TB/s": 8 * T,
    "Bps": 8, "kBps": 8 * K, "KBps": 8 * K, "MBps": 8 * M, "GBps": 8 * G, "TBps": 8 * T,
    "byte/s": 8, "bytes/s": 8,
    "KiB/s": 8 * Ki, "MiB/s": 8 * Mi, "GiB/s": 8 * Gi, "TiB/s": 8 * Ti,
    "KiBps": 8 * Ki, "MiBps": 8 * Mi, "GiBps": 8 * Gi, "TiBps": 8 * Ti,
}

REFUSED_RATES = {  # unit -> fragment of the message
    "mbps": 'write "Mbit" for bits or "MB/s"',  # tc: megabytes/s; most people: megabits/s
    "gbps": 'write "Gbit" for bits or "GB/s"',
    "tbps": 'write "Tbit" for bits or "TB/s"',
    "Mb": "is an amount, not a rate",
    "kb": "is an amount, not a rate",
    "MB": "is an amount, not a rate",
    "KB": "is an amount, not a rate",
    "B": "is an amount, not a rate",
    "b": "is an amount, not a rate",
    "MBIT": 'did you mean "Mbit"?',
    "KBIT": 'did you mean "kbit"?',
    "mb/s": "the case says bits or bytes",
    "MBPS": "the case says bits or bytes",
    "kibit": 'did you mean "Kibit"?',
    "Mbit/sec": "unknown unit",
    "Mbits": "unknown unit",
    "Mfurlong": "unknown unit",
    "ms": "unknown unit",
    "pkt/s": "unknown unit",
}

ACCEPTED_DURATIONS = {"ns": 1, "us": K, "µs": K, "μs": K, "ms": M, "s": G, "sec": G, "min": 60 * G}
REFUSED_DURATIONS = {
    "m": 'write "min" for minutes or "ms"',
    "MS": 'did you mean "ms"?',
    "S": 'did you mean "s"?',
    "Min": 'did you mean "min"?',
    "h": "unknown unit",
    "secs": "unknown unit",
    "msec": "unknown unit",
    "B": "unknown unit",
    "pkt": "unknown unit",
}

ACCEPTED_SIZES = {
    "B": 1, "byte": 1, "bytes": 1,
    "kB": K, "KB": K, "MB": M, "GB": G, "TB": T,
    "KiB": Ki, "MiB": Mi, "GiB": Gi, "TiB": Ti,
}
REFUSED_SIZES = {
    "b": "'b' would be bits",
    "kb": "'b' would be bits",
    "Mb": "'b' would be bits",
    "kbit": "'b' would be bits",
    "kib": "'b' would be bits",
    "mB": 'did you mean "MB"?',
    "KIB": 'did you mean "KiB"?',
    "MB/s": "that is a rate",
    "pkt": "a packet count is not accepted here",
    "k": "unknown unit",
}

ACCEPTED_PACKETS = ("pkt", "pkts", "packet", "packets")
REFUSED_PACKETS = {"PKT": "unknown unit", "p": "unknown unit", "pk": "unknown unit"}


@pytest.mark.parametrize("unit, mult", ACCEPTED_RATES.items())
def test_every_accepted_rate_spelling(unit, mult):
    assert parse_rate(f"3{unit}") == 3 * mult
    assert parse_rate(f"3 {unit}") == 3 * mult


@pytest.mark.parametrize("unit, fragment", REFUSED_RATES.items())
def test_every_refused_rate_spelling(unit, fragment):
    with pytest.raises(UnitError) as e:
        parse_rate(f"10{unit}")
    assert fragment in str(e.value) and "accepted:" in str(e.value) and "\n" not in str(e.value)


def test_bytes_per_second_are_eight_times_bits():
    """Issue 16: "10MB/s" used to be read as 10 Mbit/s, eight times off."""
    assert parse_rate("10MB/s") == parse_rate("10MBps") == 8 * parse_rate("10Mbit") == 80_000_000
    assert parse_rate("1KiB/s") == 8 * 1024 and parse_rate("1kB/s") == 8000


@pytest.mark.parametrize("unit, mult", ACCEPTED_DURATIONS.items())
def test_every_accepted_duration_spelling(unit, mult):
    assert parse_duration(f"3{unit}") == 3 * mult


@pytest.mark.parametrize("unit, fragment", REFUSED_DURATIONS.items())
def test_every_refused_duration_spelling(unit, fragment):
    with pytest.raises(UnitError) as e:
        parse_duration(f"3{unit}")
    assert fragment in str(e.value) and "accepted:" in str(e.value)


@pytest.mark.parametrize("unit, mult", ACCEPTED_SIZES.items())
def test_every_accepted_size_spelling(unit, mult):
    assert parse_size(f"3{unit}") == 3 * mult
    assert parse_queue_limit(f"3{unit}") == QLimit(3 * mult, "B")


@pytest.mark.parametrize("unit, fragment", REFUSED_SIZES.items())
def test_every_refused_size_spelling(unit, fragment):
    with pytest.raises(UnitError) as e:
        parse_size(f"3{unit}")
    assert fragment in str(e.value) and "accepted:" in str(e.value)


@pytest.mark.parametrize("unit", ACCEPTED_PACKETS)
def test_every_accepted_packet_spelling(unit):
    assert parse_queue_limit(f"3{unit}") == QLimit(3, "pkt")


@pytest.mark.parametrize("unit, fragment", REFUSED_PACKETS.items())
def test_every_refused_packet_spelling(unit, fragment):
    with pytest.raises(UnitError) as e:
        parse_queue_limit(f"3{unit}")
    assert fragment in str(e.value)


def test_the_parser_accepts_no_spelling_outside_these_lists():
    from ccbench.scenario import units

    assert set(units._RATE_UNITS) == set(ACCEPTED_RATES)
    assert set(units._TIME_UNITS) == set(ACCEPTED_DURATIONS)
    assert set(units._SIZE_UNITS) == set(ACCEPTED_SIZES)
    assert set(units._PKT_UNITS) == set(ACCEPTED_PACKETS)


@pytest.mark.parametrize(
    "parse, value, example",
    [(parse_duration, 30, '"30s"'), (parse_duration, "30", '"30s"'), (parse_rate, 24_000_000, '"24Mbit"'),
     (parse_size, 1500, '"1500B"'), (parse_queue_limit, "100", '"100pkt"')],
)
def test_a_bare_number_is_refused_with_a_unit_string_to_write(parse, value, example):
    """Never 30 ns: a number without a unit is an error that shows what to write."""
    with pytest.raises(UnitError) as e:
        parse(value)
    assert "a number needs a unit" in str(e.value) and example in str(e.value)


@pytest.mark.parametrize(
    "text, expected",
    [("20ms", (0.02, "s")), ("1.5Mbit", (1.5e6, "bit/s")), ("1MB/s", (8e6, "bit/s")), ("40kB", (40_000.0, "B")),
     ("14pkt", (14.0, "pkt")), ("cubic", None), ("10", None), (10, None), ("0Mbit", None)],
)
def test_si_value(text, expected):
    from ccbench.scenario.units import si_value

    assert si_value(text) == (pytest.approx(expected[0]), expected[1]) if expected else si_value(text) is None
