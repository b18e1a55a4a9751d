"""What the emulator needs from the machine, and namespace housekeeping.

Every run creates network namespaces named ``ccb-<runid>-srv`` and ``ccb-<runid>-cli``,
a work directory (``/tmp/ccbench-emu-<runid>-*``, removed at the end unless kept) and a
pid file ``/run/ccbench-emu/<runid>.pid`` (JSON: the run's pid and its start time, so a
recycled pid is not taken for the run, its work directory and whether to keep it).
:func:`clean` removes namespaces with the ``ccb-`` prefix whose run is no longer alive
(all of them with ``force=True``), the pid files of dead runs and the work directories
they were to remove; every run calls it first, so a SIGKILLed run's leftovers go at the
start of the next one. Nothing outside the namespaces, ``/run/ccbench-emu`` and those
work directories is touched.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Optional

NS_PREFIX = "ccb-"
PID_DIR = Path("/run/ccbench-emu")
CC_FILE = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")


class EmulationError(RuntimeError):
    """The emulator cannot run this scenario on this machine; the message names what is
    missing or unsupported."""


def find_ccemu() -> Path:
    """The ``ccemu`` binary: ``$CCBENCH_CCEMU``, else ``target/release/ccemu`` of this
    repository, else ``ccemu`` on PATH."""
    from ccbench.binaries import find_binary

    return find_binary("ccemu", EmulationError)


def available_cc() -> list[str]:
    """Congestion controls the running kernel offers."""
    try:
        return CC_FILE.read_text().split()
    except OSError:
        return []


def default_cc() -> str:
    """The host's default congestion control, which a new network namespace inherits."""
    try:
        return Path("/proc/sys/net/ipv4/tcp_congestion_control").read_text().strip()
    except OSError:
        return ""


def kernel_hz() -> Optional[int]:
    """The running kernel's CONFIG_HZ (its timer tick, which TCP's timers count in), from
    /boot/config-<release> or /proc/config.gz; None when neither says."""
    import gzip
    import re

    release = os.uname().release
    for path, opener in ((Path(f"/boot/config-{release}"), open), (Path("/proc/config.gz"), gzip.open)):
        try:
            with opener(path, "rt") as f:
                m = re.search(r"^CONFIG_HZ=(\d+)$", f.read(), re.M)
        except OSError:
            continue
        if m:
            return int(m.group(1))
    return None


def check() -> dict:
    """What this machine supports, and the list of problems (empty when all is well)."""
    info: dict = {
        "root": os.geteuid() == 0,
        "tun": Path("/dev/net/tun").exists(),
        "ip": shutil.which("ip"),
        "sysctl": shutil.which("sysctl"),
        "iperf3": shutil.which("iperf3"),  # optional: the iperf3 traffic source
        "congestion_controls": available_cc(),
        "kernel": os.uname().release,
    }
    try:
        info["ccemu"] = str(find_ccemu())
    except EmulationError as e:
        info["ccemu"] = None
        info["ccemu_error"] = str(e)
    netns = False
    if info["ip"] and info["root"]:
        r = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True)
        netns = r.returncode == 0
    info["netns"] = netns
    problems = []
    if not info["root"]:
        problems.append("not running as root (the emulator creates network namespaces and TUN devices)")
    if not info["tun"]:
        problems.append("no /dev/net/tun (load the tun module or run the container with --device /dev/net/tun)")
    if not info["ip"]:
        problems.append("no `ip` command (install iproute2)")
    elif info["root"] and not netns:
        problems.append("`ip netns` does not work here")
    if not info["sysctl"]:
        problems.append("no `sysctl` command (install procps)")
    if info["ccemu"] is None:
        problems.append(info["ccemu_error"])
    if not info["congestion_controls"]:
        problems.append(f"cannot read {CC_FILE}")
    info["problems"] = problems
    return info


def require() -> dict:
    """Like :func:`check` but raises :class:`EmulationError` naming every missing piece."""
    info = check()
    if info["problems"]:
        raise EmulationError("cannot emulate on this machine: " + "; ".join(info["problems"]))
    return info


def list_namespaces(prefix: str = NS_PREFIX) -> list[str]:
    """Network namespaces whose name starts with ``prefix``."""
    if not shutil.which("ip"):
        return []
    r = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True)
    names = [line.split()[0] for line in r.stdout.splitlines() if line.strip()]
    return sorted(n for n in names if n.startswith(prefix))


def proc_start(pid: int) -> Optional[str]:
    """Start time of ``pid`` (clock ticks since boot, ``/proc/<pid>/stat`` field 22), or
    None if there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]  # the name in parentheses may hold spaces


def write_pid_file(run_id: str, workdir: Optional[Path], keep: bool) -> Path:
    PID_DIR.mkdir(parents=True, exist_ok=True)
    path = PID_DIR / f"{run_id}.pid"
    me = os.getpid()
    path.write_text(json.dumps({"pid": me, "start": proc_start(me), "workdir": str(workdir) if workdir else None, "keep": keep}))
    return path


def read_pid_file(run_id: str) -> Optional[dict]:
    try:
        text = (PID_DIR / f"{run_id}.pid").read_text().strip()
    except OSError:
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if isinstance(data, int):  # the format before JSON: the pid alone
        return {"pid": data}
    return data if isinstance(data, dict) else None


def _run_alive(run_id: str) -> bool:
    rec = read_pid_file(run_id)
    pid = rec.get("pid") if rec else None
    if not isinstance(pid, int) or pid <= 0:
        return False
    start = proc_start(pid)
    if start is None:
        return False
    return rec.get("start") in (None, start)


def run_id_of(ns: str) -> str:
    rest = ns[len(NS_PREFIX):]
    return rest.rsplit("-", 1)[0]


def delete_namespace(ns: str) -> None:
    """Kills every process left in ``ns`` and deletes it."""
    r = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True)
    for tok in r.stdout.split():
        try:
            os.kill(int(tok), 9)
        except (ValueError, ProcessLookupError, PermissionError):
            pass
    subprocess.run(["ip", "netns", "delete", ns], capture_output=True, text=True)


def _remove_run_files(rid: str) -> None:
    """The pid file of a dead run and the work directory it was to remove."""
    rec = read_pid_file(rid) or {}
    wd = rec.get("workdir")
    if wd and not rec.get("keep"):
        p = Path(wd)
        # only what a run made: a ccbench-emu-<id>-* directory
        if p.name.startswith(f"ccbench-emu-{rid}-") and p.is_dir():
            shutil.rmtree(p, ignore_errors=True)
    try:
        (PID_DIR / f"{rid}.pid").unlink()
    except OSError:
        pass


def clean(force: bool = False) -> list[str]:
    """Deletes leftover ``ccb-*`` namespaces (of runs that are no longer alive, or all
    with ``force``), the pid files of dead runs and their work directories; returns the
    names of the namespaces removed."""
    removed = []
    for ns in list_namespaces():
        rid = run_id_of(ns)
        if not force and _run_alive(rid):
            continue
        delete_namespace(ns)
        removed.append(ns)
    try:
        pid_files = list(PID_DIR.glob("*.pid"))
    except OSError:
        pid_files = []
    for pf in pid_files:
        rid = pf.stem
        if force or not _run_alive(rid):
            _remove_run_files(rid)
    return removed
