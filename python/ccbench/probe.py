"""Path loss-process probe after Wei's PlanetLab UDP loss-measurement system (thesis
§4.3), driving the ``ccprobe`` binary (``crates/ccprobe``).

A ``ccprobe server`` receives UDP test packets (sequence number, timestamp, HMAC tag;
probe protocol v2) and reports losses over a TCP control connection, with a 128-packet
reordering window;
a ``ccprobe client`` sends them smooth (paced CBR) or bursty (TCP-like on/off within an
RTT) and writes one record per packet. This module finds the binary, runs server and
client, and turns the client's records into a :class:`ccbench.run.Run`:

- ``packets``: one row per probe packet; ``t_write`` = ``t_first_tx`` = send time
  (seconds from the client's start); ``t_arrive`` = ``t_deliver`` = send time + one-way
  delay (server receive clock minus client send clock; exact on one host, NaN for
  lost packets, and NaN for all if the clocks are visibly offset, i.e. a negative
  delay); an extra boolean column ``lost``.
- ``drops``: one row per lost packet, ``link = "path"``, ``t`` = its send time,
  ``kind = "drop"``, ``reason = "path"``.
- ``flows``: one row (``flow = "probe"``, ``transport = "udp"``).
- ``cwnd``, ``queue``: empty.
- ``meta["rtt_s"]``: the RTT estimate, the minimum of the RTT samples (report arrival
  minus the timestamp of the packet that triggered it), as in the thesis (it
  underestimates the RTT, hence also sub-RTT burstiness). ``meta["probe"]`` holds the
  client's summary (rates, sizes, pattern, counts, request id).

Example::

    with start_server(port=0) as srv:
        run = probe(srv.address, packets=2000, out="runs/probe-lo")
    print(loss_burstiness_of(run).frac_within)
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd

from ccbench.run import CA_STATES, Run, delay_stats, versions

__all__ = [
    "ProbeError",
    "find_ccprobe",
    "ProbeServer",
    "server_args",
    "start_server",
    "client_args",
    "run_client",
    "read_records",
    "records_to_run",
    "probe",
    "run_rtt",
    "loss_burstiness_of",
]

FLOW = "probe"
#: Environment variable carrying the shared token to ``ccprobe`` (never on its command
#: line, where other users of the machine could read it).
TOKEN_ENV = "CCBENCH_PROBE_TOKEN"


class ProbeError(RuntimeError):
    """The probe could not run; the message is one line saying why (bad argument,
    missing binary, refused by a full server, abnormal stop, ...)."""


def find_ccprobe() -> Path:
    """The ``ccprobe`` binary: ``$CCBENCH_CCPROBE``, else ``target/release/ccprobe`` of this
    repository, else ``ccprobe`` on PATH."""
    from ccbench.binaries import find_binary

    return find_binary("ccprobe", ProbeError)


def _err_line(stderr: str, fallback: str) -> str:
    for line in stderr.splitlines():
        if line.startswith("error: "):
            return line[len("error: "):].strip()
    last = [ln for ln in stderr.splitlines() if ln.strip()]
    return last[-1].strip() if last else fallback


# ---- server -------------------------------------------------------------------------

def check_token(token: str | None, option: str = "--token") -> None:
    """Raises :class:`ProbeError` naming ``option`` unless ``token`` is None or 8 to
    1024 bytes long (the binary's rule; checked here so the message names the option the
    user gave, not the environment variable it travels in)."""
    if token is not None and not 8 <= len(token.encode()) <= 1024:
        raise ProbeError(f"{option}: a token must be 8 to 1024 bytes long, got {len(token.encode())} "
                         "(the token itself is not shown)")


def probe_env(token: str | None) -> dict[str, str]:
    """The environment of a ``ccprobe`` process: the token, if any, in ``TOKEN_ENV``;
    without one the variable is removed so an inherited value does not apply."""
    env = dict(os.environ)
    env.pop(TOKEN_ENV, None)
    if token:
        env[TOKEN_ENV] = token
    return env


def server_args(
    bind: str = "127.0.0.1",
    port: int = 9000,
    max_clients: int = 10,
    max_rate: float = 1000.0,
    idle_timeout: float = 10.0,
    exit_after: int | None = None,
    max_per_source: int | None = None,
    handshake_timeout: float = 5.0,
    max_duration: float = 3600.0,
    quiet: bool = False,
    debug_loss: float = 0.0,
    debug_seed: int = 1,
    debug_reorder: float = 0.0,
    debug_reorder_depth: int = 50,
) -> list[str]:
    """Arguments of ``ccprobe server`` (without the binary; the token goes through the
    environment, see :func:`start_server`). ``max_per_source`` defaults to the server's
    own default (3, or ``max_clients`` if lower)."""
    a = ["server", "--bind", str(bind), "--port", str(port), "--max-clients", str(max_clients),
         "--max-rate", repr(float(max_rate)), "--idle-timeout", repr(float(idle_timeout)),
         "--handshake-timeout", repr(float(handshake_timeout)), "--max-duration", repr(float(max_duration))]
    if max_per_source is not None:
        a += ["--max-per-source", str(max_per_source)]
    if exit_after is not None:
        a += ["--exit-after", str(exit_after)]
    if quiet:
        a.append("--quiet")
    if debug_loss:
        a += ["--debug-loss", repr(float(debug_loss))]
    if debug_reorder:
        a += ["--debug-reorder", repr(float(debug_reorder)), "--debug-reorder-depth", str(debug_reorder_depth)]
    if debug_loss or debug_reorder:
        a += ["--debug-seed", str(debug_seed)]
    return a


@dataclass
class ProbeServer:
    """A running ``ccprobe server`` (context manager; :meth:`stop` kills it)."""

    process: subprocess.Popen
    host: str
    port: int
    log_path: Path

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    def log(self) -> str:
        """What the server wrote on stderr so far (one line per session)."""
        try:
            return self.log_path.read_text()
        except OSError:
            return ""

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def __enter__(self) -> "ProbeServer":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def start_server(*, log_path: str | Path | None = None, startup_timeout: float = 10.0, token: str | None = None,
                 **kw) -> ProbeServer:
    """Starts ``ccprobe server`` in the background (options of :func:`server_args`;
    ``port=0`` picks a free port; ``token``: clients must know it) and returns once it
    listens."""
    exe = find_ccprobe()
    if log_path is None:
        fd, name = tempfile.mkstemp(prefix="ccprobe-server-", suffix=".log")
        os.close(fd)
        log_path = name
    log_path = Path(log_path)
    err = open(log_path, "w")
    proc = subprocess.Popen([str(exe), *server_args(**kw)], stdout=subprocess.PIPE, stderr=err, text=True,
                            env=probe_env(token))
    err.close()
    line = proc.stdout.readline() if proc.stdout else ""
    if "listening on" not in line:
        try:
            proc.wait(startup_timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
        raise ProbeError(f"ccprobe server did not start: {_err_line(log_path.read_text(), 'no output')}")
    addr = line.split("listening on", 1)[1].split()[0]
    host, port = addr.rsplit(":", 1)
    return ProbeServer(process=proc, host=host, port=int(port), log_path=log_path)


# ---- client -------------------------------------------------------------------------

def client_args(
    server: str,
    out: str | Path,
    packets: int = 10_000,
    size: int = 48,
    rate: float = 500.0,
    pattern: str = "smooth",
    burst_period: float = 0.1,
    max_rate: float = 1000.0,
    seed: int = 1,
    drain: float = 0.5,
    summary: str | Path | None = None,
    quiet: bool = True,
) -> list[str]:
    """Arguments of ``ccprobe client`` (without the binary)."""
    a = ["client", "--server", str(server), "--out", str(out), "--packets", str(packets), "--size", str(size),
         "--rate", repr(float(rate)), "--pattern", str(pattern), "--burst-period", repr(float(burst_period)),
         "--max-rate", repr(float(max_rate)), "--seed", str(seed), "--drain", repr(float(drain))]
    if summary is not None:
        a += ["--summary", str(summary)]
    if quiet:
        a.append("--quiet")
    return a


def read_records(path: str | Path) -> pd.DataFrame:
    """The client's per-packet records (``.csv`` or ``.jsonl``): ``seq, t_send_s, lost,
    rtt_sample_s, rtt_est_s, owd_s`` (NaN where unknown)."""
    p = Path(path)
    if p.suffix == ".csv":
        df = pd.read_csv(p)
    else:
        df = pd.read_json(p, lines=True)
    df["lost"] = df["lost"].astype(bool)
    for c in ("t_send_s", "rtt_sample_s", "rtt_est_s", "owd_s"):
        df[c] = pd.to_numeric(df[c], errors="coerce").astype(float)
    df["seq"] = df["seq"].astype(np.int64)
    return df


def run_client(server: str, workdir: str | Path | None = None, timeout: float | None = None, fmt: str = "csv",
               token: str | None = None, **kw) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Runs one ``ccprobe client`` measurement against ``server`` (``HOST:PORT``;
    options of :func:`client_args`; ``token`` if the server requires one, passed
    through the environment); returns (records, summary). Raises
    :class:`ProbeError` with the client's one-line message on any failure."""
    exe = find_ccprobe()
    tmp = None
    if workdir is None:
        tmp = tempfile.TemporaryDirectory(prefix="ccprobe-")
        workdir = tmp.name
    work = Path(workdir)
    work.mkdir(parents=True, exist_ok=True)
    rec = work / f"probe_records.{fmt}"
    summ = work / "probe_summary.json"
    try:
        try:
            cp = subprocess.run([str(exe), *client_args(server, rec, summary=summ, **kw)], capture_output=True, text=True,
                                timeout=timeout, env=probe_env(token))
        except subprocess.TimeoutExpired:
            raise ProbeError(f"ccprobe client did not finish within {timeout} s") from None
        if cp.returncode != 0:
            raise ProbeError(_err_line(cp.stderr, f"ccprobe client failed with exit code {cp.returncode}"))
        return read_records(rec), json.loads(summ.read_text())
    finally:
        if tmp is not None:
            tmp.cleanup()


def records_to_run(records: pd.DataFrame, summary: Mapping[str, Any]) -> Run:
    """A :class:`Run` from the client's records and summary (see the module doc)."""
    r = records.sort_values("seq").reset_index(drop=True)
    n = len(r)
    size = int(summary.get("size_bytes", 48))
    t = r["t_send_s"].to_numpy(dtype=float)
    lost = r["lost"].to_numpy(dtype=bool)
    owd = r["owd_s"].to_numpy(dtype=float)
    owd_ok = owd[~lost & np.isfinite(owd)]
    clocks_offset = bool(owd_ok.size and owd_ok.min() < 0)
    arrive = np.where(lost | clocks_offset, np.nan, t + owd)
    packets = pd.DataFrame({
        "flow": pd.Categorical([FLOW] * n, categories=[FLOW]),
        "msg": r["seq"].to_numpy(dtype=np.int64),
        "bytes": np.full(n, size, dtype=np.int64),
        "t_write": t,
        "t_first_tx": t,
        "t_arrive": arrive,
        "t_deliver": arrive.copy(),
        "lost": lost,
    })
    drops = pd.DataFrame({
        "link": pd.Categorical(["path"] * int(lost.sum()), categories=["path"]),
        "t": t[lost],
        "flow": pd.Categorical([FLOW] * int(lost.sum()), categories=[FLOW]),
        "seq": r["seq"].to_numpy(dtype=np.int64)[lost],
        "kind": pd.Categorical(["drop"] * int(lost.sum()), categories=["drop", "mark"]),
        "reason": pd.Categorical(["path"] * int(lost.sum()), categories=["path"]),
    })
    samples = r["rtt_sample_s"].to_numpy(dtype=float)
    samples = samples[np.isfinite(samples)]
    rtt_min = float(samples.min()) if samples.size else math.nan
    n_lost = int(lost.sum())
    duration = float(t[-1] - t[0]) if n > 1 else math.nan
    delivered = (n - n_lost) * size
    loss_events = 0
    if n_lost and math.isfinite(rtt_min) and rtt_min > 0:
        from ccbench.analysis import loss_events as _loss_events

        loss_events = len(_loss_events(drops, rtt_min))
    flows = pd.DataFrame([{
        "flow": FLOW, "transport": "udp", "cc": "none",
        "bytes_sent": n * size, "bytes_delivered": delivered,
        "goodput_bps": delivered * 8.0 / duration if duration and duration > 0 else math.nan,
        "retrans_bytes": 0, "loss_events": loss_events, "timeouts": 0, "fast_recoveries": 0,
        "rtt_p50_s": float(np.percentile(samples, 50)) if samples.size else math.nan,
        "rtt_p95_s": float(np.percentile(samples, 95)) if samples.size else math.nan,
        "completion_s": float(t[-1]) if n else math.nan,
        "pkts_sent": n, "pkts_dropped": n_lost,
        "loss_rate": n_lost / n if n else math.nan,
    }])
    flows = flows.merge(delay_stats(packets, [FLOW]), on="flow", how="left")
    cwnd = pd.DataFrame({
        "flow": pd.Categorical([], categories=[FLOW]), "t": np.array([], float), "cwnd_pkts": np.array([], float),
        "ssthresh_pkts": np.array([], float), "srtt_s": np.array([], float), "rttvar_s": np.array([], float),
        "rto_s": np.array([], float), "inflight_pkts": np.array([], float),
        "ca_state": pd.Categorical([], categories=list(CA_STATES)), "pacing_rate_bps": np.array([], float),
        "delivered_pkts": np.array([], float),
    })
    queue = pd.DataFrame({"link": pd.Categorical([], categories=["path"]), "t": np.array([], float),
                          "backlog_bytes": np.array([], float), "backlog_pkts": np.array([], float)})
    meta = {
        "backend": "probe",
        "seed": summary.get("seed"),
        "rtt_s": rtt_min if math.isfinite(rtt_min) else None,
        "rtt_estimate": "minimum RTT sample (report arrival minus the timestamp of the packet that triggered it; "
                        "Wei thesis §4.3: underestimates the RTT)",
        "loss_time": "send time of the lost packet",
        "one_way_delay": ("NaN: server and client clocks are offset (negative one-way delay seen)" if clocks_offset
                          else "server receive clock minus client send clock (exact on one host)"),
        "probe": dict(summary),
        "versions": versions(),
    }
    return Run(packets=packets, flows=flows, cwnd=cwnd, queue=queue, drops=drops, meta=meta)


def probe(server: str, out: str | Path | None = None, timeout: float | None = None, **kw) -> Run:
    """One measurement against ``server`` (``HOST:PORT``) as a :class:`Run`; saved to
    ``out`` (with the raw ``probe_records.csv`` and ``probe_summary.json``) if given."""
    if out is None:
        records, summary = run_client(server, timeout=timeout, **kw)
        return records_to_run(records, summary)
    out = Path(out)
    records, summary = run_client(server, workdir=out, timeout=timeout, **kw)
    run = records_to_run(records, summary)
    run.save(out)
    return run


# ---- analysis -----------------------------------------------------------------------

def run_rtt(run: Run) -> float | dict[str, float]:
    """RTT used to normalise loss intervals: a probe run's ``meta["rtt_s"]`` (minimum
    RTT); otherwise each flow's median RTT (``flows.rtt_p50_s``), a mapping flow ->
    RTT over the flows that have one."""
    rtt = run.meta.get("rtt_s")
    if rtt is not None and math.isfinite(float(rtt)) and float(rtt) > 0:
        return float(rtt)
    if "rtt_p50_s" in run.flows.columns:
        m = {str(f): float(v) for f, v in zip(run.flows["flow"], run.flows["rtt_p50_s"])
             if v is not None and np.isfinite(v) and v > 0}
        if m:
            return m
    raise ProbeError("this run has no RTT estimate (no meta.rtt_s and no flows.rtt_p50_s): give one (--rtt)")


def loss_burstiness_of(run: Run | str | Path, rtt_s: float | None = None, thresholds_rtt=(0.01, 1.0), label: str = ""):
    """Loss-process burstiness (:func:`ccbench.analysis.loss_burstiness`) of the drops
    of any run (simulator, emulator or probe; a :class:`Run` or a run directory).

    With ``rtt_s`` the whole loss process is normalised by it. Otherwise a probe run
    uses its minimum RTT, and other runs use per-flow intervals, each normalised by the
    flow's median RTT (flows without one are left out)."""
    from ccbench.analysis import loss_burstiness

    if not isinstance(run, Run):
        run = Run.load(run)
    drops = run.drops
    if rtt_s is not None:
        return loss_burstiness(drops, float(rtt_s), thresholds_rtt=thresholds_rtt, label=label)
    rtt = run_rtt(run)
    if isinstance(rtt, float):
        return loss_burstiness(drops, rtt, thresholds_rtt=thresholds_rtt, label=label)
    keep = drops["flow"].astype(str).isin(list(rtt))
    return loss_burstiness(drops[keep.to_numpy()], rtt, thresholds_rtt=thresholds_rtt, per_flow=True, label=label)

