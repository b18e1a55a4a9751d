"""Path loss-process probe (ccprobe + ccbench.probe): server and client on loopback.

Losses and reordering are injected by the server's test-only ``--debug-loss`` /
``--debug-reorder`` options (seeded); nothing but 127.0.0.1 is ever contacted.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import socket
import struct
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd
import pytest
import typer
from typer.testing import CliRunner

from ccbench.run import Run

probe = pytest.importorskip("ccbench.probe")

try:
    EXE = str(probe.find_ccprobe())
except probe.ProbeError as e:  # pragma: no cover
    pytest.skip(f"{e}", allow_module_level=True)

FAST = 50_000.0  # per-client cap raised for loopback tests (allowed on loopback only)


def cli_app() -> typer.Typer:
    from ccbench.cli import probe as probe_cli

    app = typer.Typer()

    @app.callback()
    def _main() -> None:
        pass

    probe_cli.register(app)
    return app


# ---- raw protocol helpers (Python re-implementation of the v2 wire format) --------------

def hmac256(key: bytes, *parts: bytes) -> bytes:
    return hmac.new(key, b"".join(parts), hashlib.sha256).digest()


def handshake(s: socket.socket, token: bytes = b"") -> tuple[int, bytes]:
    """Protocol v2 handshake on a connected control socket: (session id, datagram key)."""
    cn = os.urandom(16)
    s.sendall(b"CCPHELLO" + struct.pack(">Q", 2) + cn)
    ty, ver, sn, flag = struct.unpack(">8sQ16sQ", recv_exact(s, 40))
    assert (ty, ver) == (b"CCPCHALL", 2), ty
    s.sendall(b"CCP_AUTH" + hmac256(token, b"ccprobe v2 client proof", cn, sn)[:16])
    ty = recv_exact(s, 8)
    assert ty == b"STARTUDP", (ty, recv_exact(s, 8))
    sid_b = recv_exact(s, 16)
    assert recv_exact(s, 16) == hmac256(token, b"ccprobe v2 server proof", cn, sn, sid_b)[:16]
    return int.from_bytes(sid_b, "big"), hmac256(token, b"ccprobe v2 datagram key", cn, sn, sid_b)


def udp_packet(sid: int, key: bytes, seq: int, size: int = 48) -> bytearray:
    head = b"CPU2" + sid.to_bytes(16, "big") + struct.pack(">QQ", seq, time.time_ns())
    pad = os.urandom(size - 48)
    return bytearray(head + hmac256(key, head, pad)[:12] + pad)


def recv_exact(s: socket.socket, n: int) -> bytes:
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            raise ConnectionError(f"closed after {len(b)} bytes")
        b += c
    return b


def read_until_stop(s: socket.socket) -> int:
    """Skips reports until a StopPacket; returns its error code."""
    while True:
        ty = recv_exact(s, 8)
        if ty == b"STOP_UDP":
            return struct.unpack(">Q", recv_exact(s, 8))[0]
        if ty == b"L_REPORT":
            head = recv_exact(s, 24)
            recv_exact(s, 16 * struct.unpack(">Q", head[16:24])[0])
        elif ty == b"RX_TIMES":
            recv_exact(s, 16 * struct.unpack(">Q", recv_exact(s, 8))[0])
        else:
            raise AssertionError(f"unexpected message {ty!r}")


# ---- tests -----------------------------------------------------------------------------

def test_loss_rate_matches_seeded_loss_over_100k_packets(tmp_path):
    p = 0.02
    t0 = time.monotonic()
    with probe.start_server(port=0, max_rate=FAST, debug_loss=p, debug_seed=7) as srv:
        run = probe.probe(srv.address, out=tmp_path / "run", packets=100_000, rate=20_000, max_rate=FAST, timeout=60)
    elapsed = time.monotonic() - t0
    pk, dr = run.packets, run.drops
    measured = len(dr) / len(pk)
    print(f"configured loss {p}, measured {measured:.5f} ({len(dr)} of {len(pk)}), {elapsed:.1f} s, "
          f"achieved {run.meta['probe']['achieved_rate_pps']:.0f} pkt/s, min RTT {run.meta['rtt_s'] * 1e6:.1f} us")
    assert len(pk) == 100_000
    assert abs(measured - p) <= 0.1 * p
    assert "debug-dropped" in srv.log()
    # tables in the usual layout
    assert set(dr["kind"].astype(str)) == {"drop"} and set(dr["reason"].astype(str)) == {"path"}
    lost = pk["lost"].to_numpy()
    assert np.isnan(pk.loc[lost, "t_arrive"]).all() and np.isnan(pk.loc[lost, "t_deliver"]).all()
    assert np.isfinite(pk.loc[~lost, "t_arrive"]).all()
    assert (pk.loc[~lost, "t_arrive"] >= pk.loc[~lost, "t_write"]).all()
    np.testing.assert_array_equal(dr["seq"].to_numpy(), pk.loc[lost, "msg"].to_numpy())
    np.testing.assert_allclose(dr["t"].to_numpy(), pk.loc[lost, "t_write"].to_numpy())
    assert run.meta["rtt_s"] > 0 and run.meta["backend"] == "probe"
    assert run.flows.loc[0, "loss_rate"] == pytest.approx(measured)
    back = Run.load(tmp_path / "run")
    pd.testing.assert_frame_equal(back.drops, dr)
    assert (tmp_path / "run" / "probe_records.csv").exists()


def test_reordering_inside_window_is_not_loss_outside_is():
    with probe.start_server(port=0, max_rate=FAST, debug_reorder=0.05, debug_reorder_depth=50, debug_seed=3,
                            exit_after=1) as srv:
        run = probe.probe(srv.address, packets=20_000, rate=20_000, max_rate=FAST, timeout=30)
        srv.process.wait(10)
    log = srv.log()
    reordered = int(log.split("reordered ")[1].split(",")[0])
    assert reordered > 500, log  # ~5 % of 20,000 held back by 50 packets
    assert len(run.drops) == 0, log
    # held back by 200 > 128 packets: those are declared lost (late)
    with probe.start_server(port=0, max_rate=FAST, debug_reorder=0.05, debug_reorder_depth=200, debug_seed=3) as srv:
        run = probe.probe(srv.address, packets=20_000, rate=20_000, max_rate=FAST, timeout=30)
    assert 0.04 < len(run.drops) / 20_000 < 0.06


def test_eleventh_client_refused_and_idle_clients_cut_off_after_default_10s():
    with probe.start_server(port=0, max_per_source=10) as srv:  # default idle timeout: 10 s
        socks = []
        t_conn = []
        for _ in range(10):
            s = socket.create_connection((srv.host, srv.port), timeout=20)
            handshake(s)
            t_conn.append(time.monotonic())
            socks.append(s)
        # the 11th, raw: a StopPacket with code 4 (server full)
        s11 = socket.create_connection((srv.host, srv.port), timeout=5)
        assert struct.unpack(">8sQ", recv_exact(s11, 16)) == (b"STOP_UDP", 4)
        s11.close()
        # the 11th, as a user sees it
        with pytest.raises(probe.ProbeError, match="refused.*maximum number of clients"):
            probe.run_client(srv.address, packets=10)
        cp = subprocess.run([EXE, "client", "--server", srv.address, "--out", "/dev/null", "--format", "csv"],
                            capture_output=True, text=True, timeout=20)
        assert cp.returncode == 2 and cp.stderr.startswith("error: server") and "refused" in cp.stderr
        # the ten idle clients: StopPacket code 2 after ~10 s
        with ThreadPoolExecutor(10) as ex:
            res = list(ex.map(lambda s: (read_until_stop(s), time.monotonic()), socks))
        for (code, t), tc in zip(res, t_conn):
            assert code == 2
            assert 9.9 <= t - tc <= 12.5, t - tc
        for s in socks:
            s.close()
        time.sleep(0.3)
        assert srv.log().count("abnormal stop (code 2") == 10
        # room again
        time.sleep(0.3)
        s = socket.create_connection((srv.host, srv.port), timeout=5)
        handshake(s)
        s.close()


def test_corrupt_packets_are_dropped_and_the_rate_cap_stops_the_session():
    with probe.start_server(port=0, idle_timeout=5) as srv:
        # a corrupted (or forged) packet fails its tag: dropped and counted, the session
        # goes on (v1 stopped it, so anyone could abort anyone's measurement)
        s = socket.create_connection((srv.host, srv.port), timeout=5)
        sid, key = handshake(s)
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        u.bind(("127.0.0.1", 0))
        for seq in range(20):
            u.sendto(udp_packet(sid, key, seq, 100), (srv.host, srv.port))
        bad = udp_packet(sid, key, 20, 100)
        bad[70] ^= 0x01
        u.sendto(bad, (srv.host, srv.port))
        u.sendto(udp_packet(sid, key, 20, 100), (srv.host, srv.port))
        time.sleep(0.2)
        s.sendall(b"STOP_UDP" + bytes(8))
        assert read_until_stop(s) == 0
        s.close()
        # faster than the cap (default 1000 pkt/s, bucket 0.25 s) -> abnormal stop, code 5
        s = socket.create_connection((srv.host, srv.port), timeout=5)
        sid, key = handshake(s)
        for seq in range(3000):
            u.sendto(udp_packet(sid, key, seq), (srv.host, srv.port))
        assert read_until_stop(s) == 5
        s.close()
        u.close()
        time.sleep(0.3)
        log = srv.log()
    assert "normal stop" in log and "received 21, lost 0" in log and "rejected (bad tag) 1" in log, log
    assert "abnormal stop (code 5" in log


def test_token_v1_peers_and_handshake_timeout(tmp_path):
    token = "correct horse battery"
    with probe.start_server(port=0, token=token, handshake_timeout=0.5, max_per_source=4) as srv:
        run = probe.probe(srv.address, packets=200, rate=2000, max_rate=5000, drain=0.1, timeout=30, token=token)
        assert len(run.packets) == 200 and run.meta["probe"]["authenticated"] is True
        assert run.meta["probe"]["protocol"] == 2 and len(run.meta["probe"]["session_id"]) == 32
        with pytest.raises(probe.ProbeError, match="requires a token: give --token or set CCBENCH_PROBE_TOKEN"):
            probe.run_client(srv.address, packets=10)
        with pytest.raises(probe.ProbeError, match="rejected the token"):
            probe.run_client(srv.address, packets=10, token="wrong token here")
        # a v1 client sends nothing and waits for a StartPacket: after the handshake
        # timeout it gets StopPacket 6, which it prints as a protocol error
        s = socket.create_connection((srv.host, srv.port), timeout=5)
        t = time.monotonic()
        assert struct.unpack(">8sQ", recv_exact(s, 16)) == (b"STOP_UDP", 6)
        assert 0.4 < time.monotonic() - t < 2
        s.close()
        # a client speaking a later version gets code 8
        s = socket.create_connection((srv.host, srv.port), timeout=5)
        s.sendall(b"CCPHELLO" + struct.pack(">Q", 3) + bytes(16))
        assert struct.unpack(">8sQ", recv_exact(s, 16)) == (b"STOP_UDP", 8)
        s.close()
        time.sleep(0.2)
        log = srv.log()
    assert "no v2 handshake within 0.500 s" in log and "wrong or missing token" in log
    assert token not in log
    # a token towards a server without one is refused by the client
    with probe.start_server(port=0) as srv:
        with pytest.raises(probe.ProbeError, match="does not use a token"):
            probe.run_client(srv.address, packets=10, token=token)
    # a v1 server (sends its 16-byte StartPacket at once): the v2 client says so
    lsn = socket.create_server(("127.0.0.1", 0))
    port = lsn.getsockname()[1]

    def v1_server():
        c, _ = lsn.accept()
        c.sendall(b"STARTUDP" + struct.pack(">Q", 12345))
        time.sleep(1)
        c.close()

    with ThreadPoolExecutor(1) as ex:
        ex.submit(v1_server)
        with pytest.raises(probe.ProbeError, match="speaks probe protocol v1.*upgrade the server"):
            probe.run_client(f"127.0.0.1:{port}", packets=10, timeout=10)
    lsn.close()


def test_patterns_never_exceed_the_rate(tmp_path):
    with probe.start_server(port=0, max_rate=5000) as srv:
        smooth = probe.probe(srv.address, packets=1000, rate=2000, max_rate=5000, drain=0.1, timeout=30)
        bursty = probe.probe(srv.address, packets=1000, rate=2000, max_rate=5000, pattern="bursty", burst_period=0.05,
                             drain=0.1, timeout=30, fmt="jsonl", out=tmp_path / "bursty")
        # a client faster than the server's cap is stopped; the user is told why
        with pytest.raises(probe.ProbeError, match="faster than the server's per-client rate limit .code 5.; results discarded"):
            probe.run_client(srv.address, packets=20_000, rate=8000, max_rate=10_000, timeout=30)
    assert (tmp_path / "bursty" / "probe_records.jsonl").exists()
    assert len(Run.load(tmp_path / "bursty").drops) == 0
    for run, allowance in ((smooth, 1 + 2), (bursty, 100)):
        t = run.packets["t_write"].to_numpy()
        assert len(run.drops) == 0
        # packets sent by time t: at most 2000 pkt/s x t + one burst (smooth: 1 ms catch-up)
        assert (np.arange(1, len(t) + 1) <= 2000 * (t - t[0]) + allowance + 1e-9).all()
    # and not much slower either. bursty keeps an absolute schedule, so its mean rate holds
    # even when the machine stalls the sender; smooth deliberately does not make up a stall
    # beyond 1 ms (no burst after it), so on a loaded CI machine its mean rate can sag:
    # check the pacing itself, the typical spacing while the sender runs.
    t = bursty.packets["t_write"].to_numpy()
    assert len(t) / (t[-1] - t[0]) > 1500
    gaps = np.diff(smooth.packets["t_write"].to_numpy())
    assert 0.45e-3 < np.median(gaps) < 0.55e-3
    running = gaps[gaps < 2e-3]  # a gap of 4 intervals or more is the OS, not the pacer
    assert len(running) > 0.9 * len(gaps) and len(running) / running.sum() > 1700
    # smooth: at most rate x 10 ms + 1 + 1 ms of catch-up in any 10 ms window
    t = smooth.packets["t_write"].to_numpy()
    assert (np.searchsorted(t, t + 0.01) - np.arange(len(t))).max() <= 23
    # bursty: 100 packets back-to-back every 50 ms
    t = bursty.packets["t_write"].to_numpy()
    gaps = np.diff(t)
    big = np.nonzero(gaps > 0.01)[0]
    assert len(big) == 9 and (np.diff(big) == 100).all()
    assert bursty.meta["probe"]["burst_packets"] == 100


@pytest.mark.parametrize(
    "args, msg",
    [
        (["client", "--server", "127.0.0.1:9", "--out", "x.csv", "--size", "1000"], "--size: must be between 48"),
        (["client", "--server", "localhost", "--out", "x.csv"], "--server: expected HOST:PORT"),
        (["client", "--server", "127.0.0.1:9", "--out", "x.csv", "--packets", "0"], "--packets: must be between 1 and"),
        (["client", "--server", "127.0.0.1:9", "--out", "x.csv", "--rate", "abc"], "--rate: expected packets per second"),
        (["client", "--server", "127.0.0.1:9", "--out", "x.csv", "--rate", "2000"], "above the cap --max-rate 1000"),
        (["client", "--server", "192.0.2.1:9", "--out", "x.csv", "--max-rate", "5000"], "only on loopback"),
        (["client", "--server", "127.0.0.1:9", "--out", "x.csv", "--pattern", "wavy"], "--pattern: expected smooth or bursty"),
        (["client", "--server", "127.0.0.1:9", "--out", "x.txt"], "end it in .csv or .jsonl"),
        (["client", "--server", "127.0.0.1:1", "--out", "x.csv"], "cannot connect to the probe server at 127.0.0.1:1"),
        (["server", "--max-clients", "11"], "--max-clients: must be between 1 and 10"),
        (["server", "--bind", "192.0.2.1", "--max-rate", "5000"], "only on loopback"),
        (["server", "--bind", "nowhere"], "--bind: expected an IP address"),
        (["server", "--idle-timeout", "-1"], "--idle-timeout"),
        (["server", "--debug-loss", "1.5"], "--debug-loss: a probability must be between 0 and 1"),
        (["server", "--token", "short"], "--token: a token must be 8 to 1024 bytes long, got 5"),
        (["server", "--max-per-source", "20"], "--max-per-source: must be between 1 and --max-clients (10)"),
        (["server", "--handshake-timeout", "0"], "--handshake-timeout"),
        (["client", "--server", "127.0.0.1:9", "--out", "x.csv", "--token", "abc"], "--token: a token must be 8"),
        (["server", "--bogus"], "unknown option '--bogus'"),
        (["frobnicate"], "unknown command 'frobnicate'"),
    ],
)
def test_bad_arguments_give_one_line_errors(args, msg, tmp_path):
    cp = subprocess.run([EXE, *args], capture_output=True, text=True, timeout=10, cwd=tmp_path)
    assert cp.returncode == 2
    lines = cp.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and msg in lines[0], cp.stderr


def test_cli_errors_and_missing_binary(tmp_path, monkeypatch):
    runner = CliRunner()
    app = cli_app()
    r = runner.invoke(app, ["probe", "client", "--server", "127.0.0.1:9", "--size", "9", "--out", str(tmp_path / "r")])
    assert r.exit_code == 2 and "error: --size: must be between 48" in r.output
    r = runner.invoke(app, ["probe", "client", "--server", "127.0.0.1:9", "--pattern", "wavy"])
    assert r.exit_code == 2 and "--pattern: expected smooth or bursty" in r.output
    r = runner.invoke(app, ["probe", "analyse", str(tmp_path / "nope")])
    assert r.exit_code == 2 and "not a ccbench run directory" in r.output
    monkeypatch.setenv("CCBENCH_CCPROBE", str(tmp_path / "missing"))
    with pytest.raises(probe.ProbeError, match="CCBENCH_CCPROBE=.* is not an executable file"):
        probe.find_ccprobe()


def _synthetic_run(loss_times, rtt=0.1, n=4000):
    t = np.arange(n) * 5e-4
    lost = np.zeros(n, bool)
    lost[np.searchsorted(t, loss_times)] = True
    rec = pd.DataFrame({"seq": np.arange(n), "t_send_s": t, "lost": lost,
                        "rtt_sample_s": np.where(np.arange(n) % 11 == 10, rtt, np.nan),
                        "rtt_est_s": rtt, "owd_s": np.where(lost, np.nan, rtt / 2)})
    return probe.records_to_run(rec, {"size_bytes": 48, "seed": 1, "packets": n})


def test_analyse_cli_on_probe_and_other_runs(tmp_path):
    from ccbench.analysis import loss_burstiness

    loss_t = np.array([0.1, 0.1005, 0.1015, 0.5, 0.55, 1.2, 1.9])
    run = _synthetic_run(loss_t)
    assert run.meta["rtt_s"] == pytest.approx(0.1)
    run.save(tmp_path / "p")
    want = loss_burstiness(run.drops["t"].to_numpy(), 0.1)
    assert want.frac_within[0.01] > 0
    app = cli_app()
    r = CliRunner().invoke(app, ["probe", "analyse", str(tmp_path / "p"), "--plot", str(tmp_path / "f.png")])
    assert r.exit_code == 0, r.output
    assert f"{100 * want.frac_within[0.01]:.1f}%" in r.output and f"{100 * want.frac_within[1.0]:.1f}%" in r.output
    assert f"{100 * want.poisson_within[1.0]:.1f}%" in r.output
    assert (tmp_path / "f.png").stat().st_size > 1000
    # a non-probe run (no meta.rtt_s): per-flow median RTT from the flows table
    other = Run(packets=run.packets, flows=run.flows.assign(rtt_p50_s=0.2), cwnd=run.cwnd, queue=run.queue,
                drops=run.drops, meta={"backend": "sim"})
    other.save(tmp_path / "s")
    lb = probe.loss_burstiness_of(tmp_path / "s")
    np.testing.assert_allclose(np.sort(lb.intervals_rtt), np.sort(np.diff(run.drops["t"].to_numpy()) / 0.2))
    r = CliRunner().invoke(app, ["probe", "analyse", str(tmp_path / "s"), "--rtt-ms", "50"])
    want = loss_burstiness(run.drops["t"].to_numpy(), 0.05)
    assert r.exit_code == 0 and f"{100 * want.frac_within[1.0]:.1f}%" in r.output
    json.loads((tmp_path / "s" / "meta.json").read_text())


def test_cli_end_to_end_with_token_then_analyse(tmp_path):
    """The PlanetLab-style workflow over protocol v2 with a token: server, `ccbench probe
    client` (token from the environment), `ccbench probe analyse` on the saved run."""
    token = "end-to-end shared token"
    app = cli_app()
    with probe.start_server(port=0, token=token, max_rate=FAST, debug_loss=0.03, debug_seed=5) as srv:
        r = CliRunner().invoke(app, ["probe", "client", "--server", srv.address, "--packets", "4000", "--rate", "4000",
                                     "--max-rate", str(FAST), "--out", str(tmp_path / "p")],
                               env={"CCBENCH_PROBE_TOKEN": token})
        assert r.exit_code == 0, r.output
        r2 = CliRunner().invoke(app, ["probe", "client", "--server", srv.address, "--packets", "10",
                                      "--out", str(tmp_path / "q")], env={"CCBENCH_PROBE_TOKEN": ""})
    assert "lost" in r.output and "saved to" in r.output
    assert r2.exit_code == 2 and "requires a token" in r2.output
    r3 = CliRunner().invoke(app, ["probe", "client", "--server", "127.0.0.1:9", "--token", "short"])
    assert r3.exit_code == 2 and "--token (or CCBENCH_PROBE_TOKEN): a token must be 8 to 1024 bytes long, got 5" in r3.output
    run = Run.load(tmp_path / "p")
    assert run.meta["probe"]["authenticated"] is True and 0.015 < len(run.drops) / 4000 < 0.045
    r = CliRunner().invoke(app, ["probe", "analyse", str(tmp_path / "p")])
    assert r.exit_code == 0, r.output
    lb = probe.loss_burstiness_of(tmp_path / "p")
    assert f"{lb.n_intervals} loss intervals" in r.output
    assert f"{100 * lb.frac_within[1.0]:.1f}%" in r.output
