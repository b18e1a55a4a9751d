"""The kernel's TCP MIB counters of an emulated run (``nstat``'s sources).

Every run has its own network namespaces, so the ``Tcp:`` and ``TcpExt:`` counters of
``/proc/net/snmp`` and ``/proc/net/netstat`` read inside one after the probes finished
are that run's totals over all its sockets on that side. They count what the sockets'
``TCP_INFO`` samples cannot show: ``TcpExt:TCPSackRecovery`` counts every entry into
Recovery (``tcp_enter_recovery``), also one that follows the end of the previous
episode on the same ACK and so never shows as Open in a sample; the simulator's flows
table counts the same entries as ``fast_recoveries``. ``run.meta["emu"]["tcp_mib"]``
keeps the nonzero counters per side (``srv``, ``cli``).
"""

from __future__ import annotations

import subprocess

__all__ = ["parse_mib", "namespace_tcp_mib"]

#: The protocols kept (IP, UDP and ICMP counters are not about TCP's behaviour).
_KEEP = ("Tcp", "TcpExt")


def parse_mib(text: str) -> dict[str, int]:
    """``{"Proto:Name": value}`` from ``/proc/net/netstat`` or ``/proc/net/snmp`` text,
    where each protocol has a line of names and then a line of values, both starting
    with ``"Proto:"``. A names line without its values line is skipped."""
    out: dict[str, int] = {}
    lines = [ln.split() for ln in text.splitlines() if ln.strip()]
    for names, values in zip(lines, lines[1:]):
        if not names or names[0] != values[0] or not names[0].endswith(":"):
            continue
        if all(v.lstrip("-").isdigit() for v in values[1:]) and not all(n.lstrip("-").isdigit() for n in names[1:]):
            for n, v in zip(names[1:], values[1:]):
                out[names[0] + n] = int(v)
    return out


def namespace_tcp_mib(ns: str) -> dict[str, int]:
    """The nonzero ``Tcp:``/``TcpExt:`` counters of network namespace ``ns`` (empty if
    it cannot be read)."""
    r = subprocess.run(
        ["ip", "netns", "exec", ns, "cat", "/proc/net/snmp", "/proc/net/netstat"], capture_output=True, text=True
    )
    if r.returncode != 0:
        return {}
    return {k: v for k, v in parse_mib(r.stdout).items() if k.split(":", 1)[0] in _KEEP and v}
