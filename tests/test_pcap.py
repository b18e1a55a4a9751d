"""Packet captures from the simulator (``ccbench run --pcap``): the files parse with
dpkt, every checksum verifies, sequence and ACK numbers follow the simulator, the
retransmissions in a capture at the sender are the simulator's retransmissions byte
for byte, ECN and SACK appear where the simulated segments carry them, and (when
tshark is installed) Wireshark's TCP analysis finds nothing malformed and flags
exactly the retransmitted frames."""

from __future__ import annotations

import json
import shutil
import subprocess
import textwrap
from collections import defaultdict

import numpy as np
import pytest

from conftest import needs_core

pytestmark = needs_core
dpkt = pytest.importorskip("dpkt", reason="dpkt is in the test extra: pip install 'ccbench[test]'")

SCENARIO = """
[run]
duration = "3s"

[topology]
kind = "dumbbell"
bottleneck = { down = "10Mbit", up = "10Mbit", delay = "10ms", queue = { kind = "codel", limit = "100pkt", ecn = true } }

[[flows]]
name = "bulk"                       # srv0 -> cli0: CoDel drops (not ECN-capable)
transport = { kind = "tcp", cc = "cubic" }
app = { kind = "bulk" }

[[flows]]
name = "ecn"                        # srv1 -> cli1: CoDel marks CE instead
transport = { kind = "tcp", cc = "reno", ecn = true }
app = { kind = "bulk" }

[[flows]]
name = "par"                        # srv2 -> cli2: two connections, short segments
connections = 2
transport = { kind = "tcp", cc = "cubic" }
app = { kind = "cbr", size = "3000B", interval = "10ms" }

[[flows]]
name = "voip"                       # srv3 -> cli3
transport = { kind = "udp" }
app = { kind = "cbr", size = "160B", interval = "20ms" }
"""

SPECS = ("bottleneck_down+bottleneck_up", "srv0_up+srv0_down", "srv2_up", "cli1_down")


@pytest.fixture(scope="module")
def captured(tmp_path_factory):
    """One simulation with four capture files (whole packets, so checksums can be
    checked over the zero-filled payload)."""
    from ccbench import load_scenario
    from ccbench.backends.sim import simulate
    from ccbench.pcap import PcapOptions

    d = tmp_path_factory.mktemp("pcap")
    (d / "s.toml").write_text(SCENARIO)
    run = simulate(load_scenario(d / "s.toml"), seed=1, pcap=PcapOptions(links=SPECS, directory=d, snaplen=2000))
    files = {c["link"]: c for c in run.meta["pcap"]}
    return run, files


def read(path):
    """[(t, orig_len, ip)] of a capture file."""
    with open(path, "rb") as f:
        r = dpkt.pcap.Reader(f)
        assert r.datalink() == 101  # LINKTYPE_RAW
        return [(t, len(buf), dpkt.ip.IP(buf)) for t, buf in r]


def ones_complement_ok(data: bytes) -> bool:
    """A received header (or pseudo-header + segment) with its checksum sums to 0xffff."""
    if len(data) % 2:
        data += b"\0"
    s = int(np.frombuffer(data, dtype=">u2").astype(np.uint64).sum())
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s == 0xFFFF


def transport_ok(ip) -> bool:
    seg = bytes(ip.data)
    pseudo = ip.src + ip.dst + bytes([0, ip.p]) + len(seg).to_bytes(2, "big")
    return ones_complement_ok(pseudo + seg)


def data_segments(pkts, flow_port):
    """Per connection (sender port), the data segments (seq, len) in capture order."""
    conns = defaultdict(list)
    for _, _, ip in pkts:
        tcp = ip.data
        if isinstance(tcp, dpkt.tcp.TCP) and tcp.dport == 30000 + flow_port and len(tcp.data):
            conns[tcp.sport].append((tcp.seq, len(tcp.data)))
    return conns


def retransmitted(segments):
    """Bytes of each segment at or below the highest sequence number sent before it."""
    top, out = 0, []
    for seq, n in segments:
        out.append(max(0, min(seq + n, top) - seq))
        top = max(top, seq + n)
    return out


def test_files_parse_with_valid_checksums_and_the_simulated_sizes(captured):
    run, files = captured
    assert set(files) == set(SPECS)
    duration = 3.0
    for spec, c in files.items():
        pkts = read(c["path"])
        assert len(pkts) == c["packets"] > 100, spec
        assert c["skipped"] == 0 and c["error"] is None
        times = np.array([t for t, _, _ in pkts])
        assert np.all(np.diff(times) >= 0) and 0 <= times[0] and times[-1] < duration
        for _, n, ip in pkts:
            assert ip.len == n and ip.v == 4 and ip.df
            assert ones_complement_ok(bytes(ip)[:20]), "IP header checksum"
            assert transport_ok(ip), f"{spec}: TCP/UDP checksum"


def test_addresses_and_ports_name_hosts_flows_and_connections(captured):
    _, files = captured
    pkts = read(files["bottleneck_down+bottleneck_up"]["path"])
    seen = {(ip.src, ip.data.sport, ip.dst, ip.data.dport, ip.p) for _, _, ip in pkts}
    a = lambda side, i: bytes([10, 77 + side, 0, i + 1])  # noqa: E731 - the emulator's addresses
    assert (a(1, 0), 20000, a(2, 0), 30000, 6) in seen  # bulk data
    assert (a(2, 0), 30000, a(1, 0), 20000, 6) in seen  # bulk ACKs
    assert (a(1, 2), 20002, a(2, 2), 30002, 6) in seen and (a(1, 2), 20003, a(2, 2), 30002, 6) in seen  # par's 2 conns
    assert (a(1, 3), 20003, a(2, 3), 30003, 17) in seen  # voip over UDP
    voip = [ip for _, _, ip in pkts if ip.p == 17]
    assert {ip.len for ip in voip} == {160}  # the app size is the whole packet (no header = "28B")
    assert {len(ip.data.data) for ip in voip} == {160 - 28}


def test_sequence_numbers_and_retransmissions_at_the_sender_are_the_simulators(captured):
    run, files = captured
    flows = run.flows.set_index("flow")
    sender = read(files["srv0_up+srv0_down"]["path"])
    (segs,) = data_segments(sender, 0).values()
    # sequence numbers are byte offsets from 0, new data contiguous: no gap at the sender
    new = [(s, n) for (s, n), r in zip(segs, retransmitted(segs)) if r == 0]
    assert new[0][0] == 0 and all(a + n == b for (a, n), (b, _) in zip(new, new[1:]))
    assert sum(retransmitted(segs)) == flows.loc["bulk", "retrans_bytes"] > 0
    assert len(segs) == flows.loc["bulk", "pkts_sent"]
    par = data_segments(read(files["srv2_up"]["path"]), 2)
    assert sorted(par) == [20002, 20003]
    assert sum(sum(retransmitted(s)) for s in par.values()) == flows.loc["par", "retrans_bytes"] > 0
    # cumulative ACKs never go back, fall on segment boundaries, acknowledge only
    # what was sent before them, and never more than the receiver got
    ends, top, acks = set(), 0, []
    for _, _, ip in sender:
        tcp = ip.data
        if tcp.sport == 20000:
            ends.add(tcp.seq + len(tcp.data))
            top = max(top, tcp.seq + len(tcp.data))
        else:
            assert tcp.ack in ends and tcp.ack <= top
            acks.append(tcp.ack)
    assert np.all(np.diff(acks) >= 0)
    assert 0 < acks[-1] <= flows.loc["bulk", "bytes_delivered"]


def test_sack_blocks_and_timestamps_are_in_the_options(captured):
    _, files = captured
    pkts = read(files["srv0_up+srv0_down"]["path"])
    acks = [ip.data for _, _, ip in pkts if ip.data.sport == 30000]
    sack_acks = 0
    for tcp in acks:
        opts = dict(dpkt.tcp.parse_opts(tcp.opts))
        tsval, tsecr = np.frombuffer(opts[dpkt.tcp.TCP_OPT_TIMESTAMP], dtype=">u4")
        if dpkt.tcp.TCP_OPT_SACK in opts:
            blocks = np.frombuffer(opts[dpkt.tcp.TCP_OPT_SACK], dtype=">u4").reshape(-1, 2)
            assert np.all(blocks[:, 1] > blocks[:, 0])
            # a SACK block lies above the cumulative ACK, or is a DSACK (RFC 2883) below it
            assert blocks[0, 0] > tcp.ack or blocks[0, 1] <= tcp.ack
            sack_acks += 1
    assert sack_acks > 0
    data = [ip.data for _, _, ip in pkts if ip.data.sport == 20000]
    ts = [np.frombuffer(dict(dpkt.tcp.parse_opts(t.opts))[8], dtype=">u4")[0] for t in data]
    assert np.all(np.diff(ts) >= 0) and ts[-1] <= 3000  # TSval in ms of simulated time


def test_ecn_bits_follow_the_marks(captured):
    run, files = captured
    down = read(files["cli1_down"]["path"])  # the ECN flow after the bottleneck
    data = [ip for _, _, ip in down if ip.p == 6 and len(ip.data.data)]
    ecn = np.array([ip.tos & 3 for ip in data])
    assert set(ecn) <= {2, 3}  # ECT(0) or CE, nothing Not-ECT
    marks = run.drops[(run.drops["flow"] == "ecn") & (run.drops["kind"] == "mark")]
    # every packet marked at least the bottleneck's 10 ms before the 3 s end reached the
    # client's link (a later one is still on the wire when the run stops)
    early = marks[marks["t"] <= 3.0 - 0.011]
    assert len(early) <= (ecn == 3).sum() <= len(marks) and len(early) > 0
    assert any(ip.data.flags & dpkt.tcp.TH_CWR for ip in data)
    tap = read(files["bottleneck_down+bottleneck_up"]["path"])
    ecn_acks = [ip.data for _, _, ip in tap if ip.data.sport == 30001]
    assert any(t.flags & dpkt.tcp.TH_ECE for t in ecn_acks)
    bulk = [ip for _, _, ip in tap if ip.data.sport == 20000]
    assert all(ip.tos & 3 == 0 for ip in bulk)  # not ECN-capable


def test_cli_writes_captures_and_stops_at_the_size_limit(tmp_path, ccbench_cli):
    scn = tmp_path / "s.toml"
    scn.write_text(SCENARIO)
    out = tmp_path / "run"
    r = ccbench_cli("run", str(scn), "--out", str(out), "-q", "--pcap", "bottleneck_down", "--pcap-max-size", "20kB")
    assert r.returncode == 0, r.stderr
    path = out / "bottleneck_down.pcap"
    assert f"pcap bottleneck_down: {path}" in r.stdout
    assert "size limit reached" in r.stderr
    size = path.stat().st_size
    assert 20_000 - (16 + 96) < size <= 20_000
    meta = json.loads((out / "meta.json").read_text())
    (c,) = meta["pcap"]
    assert c["bytes"] == size and c["skipped"] > 0 and 0 < c["limit_reached_s"] < 3
    assert "pcap" not in meta["sim_config"]  # re-running the saved config writes no file
    assert len(read(path)) == c["packets"]
    r = ccbench_cli("run", str(scn), "--no-save", "--pcap", "bottleneck_sideways")
    assert r.returncode == 2 and r.stderr.startswith("error: --pcap: no link named")


needs_tshark = pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark not installed (apt-get install tshark)")


def tshark(*args: str) -> str:
    r = subprocess.run(["tshark", *args], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout


RETRANS = "tcp.analysis.retransmission || tcp.analysis.fast_retransmission || tcp.analysis.spurious_retransmission || tcp.analysis.out_of_order"


@needs_tshark
@pytest.mark.parametrize("spec", ["srv0_up+srv0_down", "bottleneck_down+bottleneck_up"])
def test_tshark_finds_nothing_malformed_and_flags_the_retransmissions(captured, spec):
    run, files = captured
    path = files[spec]["path"]
    checks = ["-o", "tcp.check_checksum:TRUE", "-o", "ip.check_checksum:TRUE", "-o", "udp.check_checksum:TRUE"]
    expert = tshark("-r", path, *checks, "-q", "-z", "expert")
    assert "Malformed" not in expert and "Errors (" not in expert, expert
    good = tshark("-r", path, *checks, "-Y", "tcp.checksum.status == 1 && ip.checksum.status == 1", "-T", "fields", "-e", "frame.number")
    assert len(good.split()) == files[spec]["packets"] - sum(1 for _, _, ip in read(path) if ip.p == 17)
    # Wireshark's flags (retransmission, fast retransmission, or out-of-order: a
    # retransmission within 3 ms of the newest segment) fall on exactly the frames
    # that resend bytes already sent.
    flagged = {int(x) for x in tshark("-r", path, "-Y", RETRANS, "-T", "fields", "-e", "frame.number").split()}
    pkts = read(path)
    top: dict = defaultdict(int)
    expected = set()
    for i, (_, _, ip) in enumerate(pkts, 1):
        tcp = ip.data
        if ip.p == 6 and len(tcp.data):
            key = (tcp.sport, tcp.dport)
            if tcp.seq < top[key]:
                expected.add(i)
            top[key] = max(top[key], tcp.seq + len(tcp.data))
    assert flagged == expected and len(expected) > 0
    if spec.startswith("srv0"):
        # at the sender, the flagged frames are the simulator's retransmissions
        assert len(flagged) * 1448 == run.flows.set_index("flow").loc["bulk", "retrans_bytes"]


def test_headers_only_by_default(tmp_path):
    from ccbench import load_scenario
    from ccbench.backends.sim import simulate
    from ccbench.pcap import PcapOptions

    (tmp_path / "s.toml").write_text(SCENARIO)
    run = simulate(load_scenario(tmp_path / "s.toml"), pcap=PcapOptions(links=("bottleneck_down+bottleneck_up",), directory=tmp_path))
    with open(run.meta["pcap"][0]["path"], "rb") as f:
        r = dpkt.pcap.Reader(f)
        assert r.snaplen == 96
        caplens = {len(buf) for _, buf in r}
    assert max(caplens) == 96 and min(caplens) == 52  # full-sized packets cut, pure ACKs whole


def test_format_json_one_seed_and_several(tmp_path, ccbench_cli):
    scn = tmp_path / "s.toml"
    scn.write_text(textwrap.dedent(SCENARIO).replace('duration = "3s"', 'duration = "1s"'))
    r = ccbench_cli("run", str(scn), "--format", "json", "--no-save", "-q", "--seed", "5")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert list(doc) == ["schema", "meta", "runs", "summary"] and doc["schema"] == "ccbench.run/1"
    meta = doc["meta"]
    assert meta["scenario"] == "s" and meta["backend"] == "sim" and meta["seeds"] == [5]
    assert meta["duration_s"] == 1.0 and meta["saved_to"] is None and meta["ccbench_version"]
    (one,) = doc["runs"]
    names = [f["flow"] for f in one["flows"]]
    assert names == ["bulk", "ecn", "par", "voip"] and one["pcap"] == []
    bulk = one["flows"][0]
    for key in ("transport", "cc", "bytes_sent", "bytes_delivered", "goodput_bps", "loss_rate", "retrans_bytes",
                "rtt_p50_s", "delay_p50_s", "delay_p95_s", "delay_p99_s", "completion_s"):
        assert key in bulk
    assert bulk["delay_p50_s"] is None  # a bulk flow has no messages: NaN -> null
    assert bulk["goodput_bps"] > 1e6
    assert doc["summary"][0]["goodput_bps_ci"] is None and doc["summary"][0]["n"] == 1
    r = ccbench_cli("run", str(scn), "--format", "json", "--seeds", "2", "--out", str(tmp_path / "runs"), "-q")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["meta"]["seeds"] == [1, 2] and [x["seed"] for x in doc["runs"]] == [1, 2]
    s = {x["flow"]: x for x in doc["summary"]}
    gp = [x["flows"][3]["goodput_bps"] for x in doc["runs"]]
    assert s["voip"]["goodput_bps_mean"] == pytest.approx(np.mean(gp)) and s["voip"]["n"] == 2
    assert s["bulk"]["goodput_bps_ci"] is not None
    assert doc["meta"]["saved_to"] == str(tmp_path / "runs")
