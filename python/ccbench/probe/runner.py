"""Driving the ``ccprobe`` binary: the server in the background, one client
measurement, and :func:`probe`, which turns it into a saved :class:`ccbench.run.Run`.
The token travels in the environment, never on a command line."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from ccbench.run import Run

from .tables import read_records, records_to_run

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
