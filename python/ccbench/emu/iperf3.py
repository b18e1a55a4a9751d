"""iperf3 as the emulator's traffic source for bulk TCP flows (``[emu] traffic_source =
"iperf3"``): the distribution's iperf3, with its default socket settings (no ``-w``: the
namespace's ``tcp_wmem``/``tcp_rmem`` and receive autotuning decide the buffers), in
place of ``ccemu probe tcp-send``/``tcp-recv``.

Per flow: ``iperf3 -s -1 -J`` bound to the flow's receiver address and port in the
receiver namespace; at the flow's start ``iperf3 -c`` in the sender namespace, its data
connection bound to the flow's sender address and port (``--cport``, so the bottleneck
maps its packets to the flow; the control connection uses an ephemeral port and is
forwarded as traffic of no flow). ``ccemu probe tcp-watch`` then samples ``TCP_INFO``
of iperf3's data socket (duplicated with pidfd_getfd) every ``info_interval`` into the
same files as the built-in sender, so the ``cwnd`` table, srtt percentiles,
retransmits and slow-start exit are measured by the same code and at the same
resolution as with the built-in source; iperf3's own JSON (0.1 s intervals) is kept in
``meta["emu"]["flows"][name]["iperf3"]`` (its socket buffers, totals, version).

iperf3 cannot start writing at a given instant: its client first opens the control
connection and exchanges parameters (about three RTTs), so the flow's ``start_s`` is
when the watched socket first sent data, and its goodput is over ``[start_s, end]``.
Flows iperf3 cannot drive (UDP, TCP CBR/on-off, transfers of ``bytes``) keep the
built-in source.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any, Optional

from ccbench.emu.system import EmulationError

SOURCES = ("ccemu", "iperf3")
#: bytes iperf3 writes on a data connection before the transfer (its stream cookie,
#: COOKIE_SIZE in iperf_api.h); the watcher counts data from past them
COOKIE_BYTES = 37
#: iperf3's smallest reporting interval (s)
INTERVAL_S = 0.1


def find() -> str:
    """The iperf3 binary, or one clear error naming how to install it."""
    path = shutil.which("iperf3")
    if path is None:
        raise EmulationError(
            'traffic source "iperf3": no `iperf3` command on this machine '
            "(install it: apt-get install iperf3; accepted sources: ccemu, iperf3)"
        )
    return path


def version(binary: str) -> str:
    r = subprocess.run([binary, "--version"], capture_output=True, text=True)
    return (r.stdout.splitlines() or [""])[0].strip()


def drives(p: dict[str, Any]) -> bool:
    """iperf3 drives a planned flow: greedy bulk TCP (no ``bytes`` to transfer)."""
    return p["transport"] == "tcp" and p["app"]["kind"] == "bulk" and not p["app"].get("bytes")


def server_cmd(binary: str, p: dict[str, Any]) -> list[str]:
    # -1: one test, then exit; -J: the receiver's JSON report on stdout
    return [binary, "-s", "-1", "-J", "-B", p["dst_ip"], "-p", str(p["dport"])]


def client_cmd(binary: str, p: dict[str, Any], tcp: dict[str, Any]) -> list[str]:
    """The client for flow ``p``: runs at least until the flow's stop (``-t`` is whole
    seconds from iperf3's own start of data)."""
    secs = max(1, math.ceil((p["stop_ns"] - p["start_ns"]) / 1e9))
    cmd = [binary, "-c", p["dst_ip"], "-p", str(p["dport"]), "-B", p["src_ip"], "--cport", str(p["sport"]),
           "-t", str(secs), "-i", str(INTERVAL_S), "-J"]
    if p["cc"]:
        cmd += ["-C", p["cc"]]
    if tcp.get("nagle") is False:
        cmd += ["-N"]
    if tcp.get("mss") is not None:
        cmd += ["-M", str(int(tcp["mss"]) + 12)]  # TCP_MAXSEG counts the timestamp option, as the probe's --mss
    return cmd


def listening(pid: int, port: int) -> bool:
    """Process ``pid`` (in its own namespace) has a TCP socket listening on ``port``:
    /proc/PID/net/tcp lists that namespace's sockets (state 0A = LISTEN)."""
    try:
        lines = Path(f"/proc/{pid}/net/tcp").read_text().splitlines()[1:]
    except OSError:
        return False
    want = f":{port:04X}"
    return any(f[1].endswith(want) and f[3] == "0A" for f in (ln.split() for ln in lines) if len(f) > 3)


def wait_listening(proc: subprocess.Popen, port: int, what: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if listening(proc.pid, port):
            return
        if proc.poll() is not None:
            raise EmulationError(f"{what} exited ({proc.returncode}) before listening: {report_error(proc)}")
        time.sleep(0.01)
    raise EmulationError(f"{what} did not listen on port {port} within {timeout:.0f} s")


def read_report(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def report_error(proc: subprocess.Popen) -> str:
    """iperf3's own error text: the ``error`` of its JSON report, else its stderr."""
    out = getattr(proc, "report_path", None)
    err = read_report(out).get("error") if out is not None else None
    if not err and proc.stderr is not None:
        try:
            err = proc.stderr.read().decode(errors="replace").strip()
        except (OSError, ValueError):
            err = ""
    return err or "(no message)"


def summary(client: dict, server: dict) -> dict:
    """What to keep of the two JSON reports: socket buffers, totals, intervals."""
    start, end = client.get("start") or {}, client.get("end") or {}
    ivals = client.get("intervals") or []
    streams = [(i.get("streams") or [{}])[0] for i in ivals]
    return {
        "version": start.get("version"),
        "sndbuf_actual": start.get("sndbuf_actual"),
        "rcvbuf_actual": start.get("rcvbuf_actual"),
        "sock_bufsize": start.get("sock_bufsize"),
        "tcp_mss_default": start.get("tcp_mss_default"),
        "test_start": start.get("test_start"),
        "sender_bytes": (end.get("sum_sent") or {}).get("bytes"),
        "sender_retransmits": (end.get("sum_sent") or {}).get("retransmits"),
        "receiver_bytes": (end.get("sum_received") or {}).get("bytes"),
        "server_rcvbuf_actual": (server.get("start") or {}).get("rcvbuf_actual"),
        "interval_s": INTERVAL_S,
        # per interval: end time from iperf3's start of data (s), bytes, retransmits, cwnd (bytes), rtt (us)
        "intervals": [[s.get("end"), s.get("bytes"), s.get("retransmits"), s.get("snd_cwnd"), s.get("rtt")] for s in streams],
        "error": client.get("error") or server.get("error"),
    }


def route_congctl(flows: list[dict[str, Any]]) -> dict[str, str]:
    """The route congestion control (``ip route ... congctl``) per sender side: the
    algorithm of its iperf3 flows when its TCP flows all use one.

    iperf3 sets ``-C`` on its data socket after connect() (iperf_create_streams), so the
    connection is set up by the namespace's default congestion control, which a new
    namespace inherits from the host and may only set to one of
    ``tcp_allowed_congestion_control``. A route's ``congctl`` applies at connect
    (``tcp_ca_dst_init``), as the flow's own algorithm as default would on a host of its
    own; the late ``-C`` then changes nothing. Without it a default BBR leaves
    ``sk_pacing_status`` at SK_PACING_NEEDED (``bbr_init``) for the flow's whole life:
    the kernel paces it (``tcp_needs_internal_pacing``) and CUBIC's HyStart does not
    halve its ACK-train threshold (``hystart_update``), so slow start usually ends at the
    first loss (docs/FIDELITY.md)."""
    out: dict[str, str] = {}
    for side in {p["src_side"] for p in flows if p["source"] == "iperf3" and p["cc"]}:
        ccs = {p["cc"] for p in flows if p["src_side"] == side and p["transport"] == "tcp"}
        if len(ccs) == 1 and None not in ccs:
            out[side] = ccs.pop()
    return out


def late_cc_notes(flows: list[dict[str, Any]], default_cc: str, route_opts: dict[str, list[str]]) -> list[str]:
    """iperf3 flows set up by another congestion control than their own (see
    :func:`route_congctl`): the route's ``congctl``, else the namespace default."""
    out = []
    for p in flows:
        route = dict(zip(route_opts.get(p["src_side"], [])[::2], route_opts.get(p["src_side"], [])[1::2]))
        setup = route.get("congctl", default_cc)
        if p["source"] == "iperf3" and p["cc"] and setup and p["cc"] != setup:
            pacing = " (BBR's initialisation leaves the kernel's pacing on for it)" if setup.startswith("bbr") else ""
            out.append(f"{p['name']}: iperf3 sets -C {p['cc']} after connecting; the connection was set up by "
                       f"{setup}{pacing}")
    return out


def source_of(scenario, override: Optional[str]) -> str:
    src = override if override is not None else scenario.emu.traffic_source
    if src not in SOURCES:
        raise EmulationError(f"traffic source: {src!r} is not accepted (accepted: {', '.join(SOURCES)})")
    return src
