"""What the emulator needs from the machine, and namespace housekeeping.

Every run creates network namespaces named ``ccb-<runid>-srv`` and ``ccb-<runid>-cli``
and a pid file ``/run/ccbench-emu/<runid>.pid``. :func:`clean` removes namespaces with
the ``ccb-`` prefix whose run is no longer alive (all of them with ``force=True``).
Nothing outside the namespaces is touched.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

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


def check() -> dict:
    """What this machine supports, and the list of problems (empty when all is well)."""
    info: dict = {
        "root": os.geteuid() == 0,
        "tun": Path("/dev/net/tun").exists(),
        "ip": shutil.which("ip"),
        "sysctl": shutil.which("sysctl"),
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


def _run_alive(run_id: str) -> bool:
    pid_file = PID_DIR / f"{run_id}.pid"
    try:
        pid = int(pid_file.read_text().strip())
    except (OSError, ValueError):
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


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


def clean(force: bool = False) -> list[str]:
    """Deletes leftover ``ccb-*`` namespaces (of runs that are no longer alive, or all
    with ``force``); returns the names removed."""
    removed = []
    for ns in list_namespaces():
        rid = run_id_of(ns)
        if not force and _run_alive(rid):
            continue
        delete_namespace(ns)
        removed.append(ns)
        try:
            (PID_DIR / f"{rid}.pid").unlink()
        except OSError:
            pass
    return removed
