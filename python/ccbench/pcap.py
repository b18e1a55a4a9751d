"""Packet captures (pcap) of links, from the simulator and the emulator.

Both backends write the classic libpcap format (nanosecond timestamps, link type
``LINKTYPE_RAW``: each record is an IPv4 packet), which Wireshark, tshark, tcpdump,
scapy and dpkt read. The simulator builds real IPv4/TCP/UDP headers for its packets
(``crates/ccsim/src/sim/capture.rs``: addresses per host, ports per flow and
connection, sequence/ACK numbers as byte offsets, SACK and timestamps options, ECN
bits, valid checksums, zero-filled payload); the emulator writes the kernel's packets
as its bottleneck forwards them. Each capture is one file, ``DIR/<spec>.pcap``, of one
link or of several joined with ``+`` (``bottleneck_down+bottleneck_up``: a tap on
both directions, so that Wireshark sees data and ACKs together).

>>> from ccbench.pcap import PcapOptions
>>> opts = PcapOptions(links=("bottleneck_down+bottleneck_up",), directory="runs/x")
>>> opts.entries()[0]["links"], opts.entries()[0]["path"]
(['bottleneck_down', 'bottleneck_up'], 'runs/x/bottleneck_down+bottleneck_up.pcap')
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["PcapOptions", "DEFAULT_SNAPLEN", "MAX_SNAPLEN", "summary_lines", "file_name", "split_spec"]

#: Bytes kept per packet by default: IPv4 (20) + TCP with timestamps and three SACK
#: blocks (60) fit, so a capture holds every header and no payload.
DEFAULT_SNAPLEN = 96
#: libpcap's own ceiling (``MAXIMUM_SNAPLEN``).
MAX_SNAPLEN = 262_144


def file_name(spec: str) -> str:
    """The capture file of ``spec`` (``LINK`` or ``LINK+LINK``): the spec with
    characters a file name should not hold replaced (a graph link may be ``a->b``)."""
    return re.sub(r"[^A-Za-z0-9._+-]", "_", spec) + ".pcap"


def split_spec(spec: str) -> list[str]:
    """The link names of a capture spec: ``"a+b"`` -> ``["a", "b"]``."""
    return [name.strip() for name in spec.split("+")]


@dataclass(frozen=True)
class PcapOptions:
    """Which links to capture, where, and how much of each packet. ``links`` holds one
    spec per file: a link name, or names joined with ``+``.

    ``max_bytes`` bounds each file (0 = no bound): the capture stops when the next
    packet would not fit, and the run's ``meta["pcap"]`` says when that happened.
    """

    links: tuple[str, ...]
    directory: str | Path
    snaplen: int = DEFAULT_SNAPLEN
    max_bytes: int = 0

    def __post_init__(self):
        if not 1 <= self.snaplen <= MAX_SNAPLEN:
            raise ValueError(f"snaplen {self.snaplen}: accepted 1..{MAX_SNAPLEN} bytes")
        if self.max_bytes < 0:
            raise ValueError(f"max_bytes {self.max_bytes}: accepted 0 (no limit) or a positive size")
        object.__setattr__(self, "links", tuple(dict.fromkeys(self.links)))

    def entries(self) -> list[dict]:
        """The ``pcap`` list of the simulator/emulator config (one entry per link)."""
        d = Path(self.directory)
        return [
            {"links": split_spec(spec), "path": str(d / file_name(spec)), "snaplen": self.snaplen, "max_bytes": self.max_bytes}
            for spec in self.links
        ]


def summary_lines(captures: list[dict]) -> list[tuple[str, bool]]:
    """One line per capture for the command line: ``(text, is_warning)``."""
    from ccbench.fmt import fmt_bytes, fmt_time

    lines = []
    for c in captures:
        lines.append((f"pcap {c['link']}: {c['path']} ({c['packets']:,} packets, {fmt_bytes(c['bytes'])})", False))
        if c.get("error"):
            lines.append((f"pcap {c['link']}: writing stopped: {c['error']} ({c['skipped']:,} packets not written)", True))
        elif c.get("limit_reached_s") is not None:
            lines.append(
                (
                    f"pcap {c['link']}: size limit reached at {fmt_time(c['limit_reached_s'])}; "
                    f"the last {c['skipped']:,} packets are not in the file (raise --pcap-max-size)",
                    True,
                )
            )
    return lines
