"""The ``--pcap`` options ``ccbench run`` and ``ccbench emu run`` share, and how their
results are reported."""

from __future__ import annotations

from pathlib import Path

import typer

from ccbench.cli.errors import fail

PCAP = typer.Option(
    None,
    "--pcap",
    help=(
        "Write a packet capture (pcap, for Wireshark/tshark) of this link into the run "
        "directory as LINK.pcap; links are named as in the queue and drops tables "
        "(bottleneck_down, bottleneck_up, srv0_up, ...). LINK+LINK puts several in one "
        "file (bottleneck_down+bottleneck_up: data and ACKs together). Repeatable."
    ),
    show_default=False,
)
SNAPLEN = typer.Option("96B", "--pcap-snaplen", help="Bytes kept of each packet (headers come first; the default keeps IPv4+TCP headers with options, no payload).")
MAX_SIZE = typer.Option("1GB", "--pcap-max-size", help="Each capture file stops growing at this size (a warning says when), e.g. \"200MB\".")

#: ccbench's config field of a capture -> the option a user set it with
_FIELD_OPTION = {"links": "--pcap", "snaplen": "--pcap-snaplen", "path": "--out", "max_bytes": "--pcap-max-size"}


def pcap_options(specs: list[str] | None, snaplen: str, max_size: str, directory: Path):
    """:class:`ccbench.pcap.PcapOptions` for the options given (None without ``--pcap``);
    a bad value exits with the option's name."""
    if not specs:
        return None
    from ccbench.cli.quantities import size_bytes
    from ccbench.pcap import MAX_SNAPLEN, PcapOptions, split_spec

    for spec in specs:
        if any(not name for name in split_spec(spec)):
            raise fail(f"--pcap: {spec!r} is not a link name (accepted: LINK or LINK+LINK, e.g. bottleneck_down)")
    n = size_bytes(snaplen, "--pcap-snaplen")
    if n > MAX_SNAPLEN:
        raise fail(f"--pcap-snaplen: {snaplen!r} is more than {MAX_SNAPLEN} bytes (accepted: 1B..{MAX_SNAPLEN}B)")
    return PcapOptions(links=tuple(specs), directory=directory, snaplen=n, max_bytes=size_bytes(max_size, "--pcap-max-size"))


def option_error(e) -> typer.Exit | None:
    """The one-line error for a simulator error about a capture (``pcap[0].links: ...``),
    naming the option instead; None for any other error."""
    field = getattr(e, "field", None) or ""
    if not field.startswith("pcap["):
        return None
    option = _FIELD_OPTION.get(field.rsplit(".", 1)[-1], "--pcap")
    msg = str(e).split(": ", 1)[-1]
    return fail(f"{option}: {msg}")


def print_captures(captures: list[dict], console) -> None:
    """One line per capture file: where it is and what it holds."""
    from ccbench.pcap import summary_lines

    for text, warning in summary_lines(captures):
        if not warning:
            console.print(text)


def warn_captures(captures: list[dict]) -> None:
    """Size-limit and write problems of the captures, as warnings on stderr."""
    from ccbench.pcap import summary_lines

    for text, warning in summary_lines(captures):
        if warning:
            typer.echo(f"warning: {text}", err=True)
