"""The wei-sync path in ns-2 (the thesis's own simulator), for Table 3.1's DropTail row.

Wei's Ch. 3 numbers come from ns-2 with NS-2 TCP-Linux (§4.2): ``Agent/TCP/Linux`` running
Linux's congestion-control modules. ns-2.35 ships that agent (Debian/Ubuntu package
``ns2``), so the thesis's setup can be run as it was and measured with *our* counting
(:func:`ccbench.analysis.losses.loss_sync_rate`, the study's 200 ms window, events from every
bottleneck loss, λ averaged over the TCP flows). This separates what ns-2 does from what our
simulator does (docs/REPRODUCTIONS.md, "DropTail: the ACK clock's phase").

The ns-2 scenario is :mod:`ccbench.studies.wei_sync`'s: 100 Mbit/s, 100 ms each way,
DropTail 1680 packets, 1 Gbit/s access links, N TCP-Linux flows (1460-byte payload,
timestamps; 1510 B on the wire) started within the first 10 ms, 50 UDP
``Application/Traffic/Exponential`` sources (1500 B, on 500 ms / off 500 ms, 400 kbit/s
peak: 10 % of the link). Two things are switches, because they decide the result:

* ``receiver``: ``ack`` is ``Agent/TCPSink/Sack1``, one ACK per packet (the sink NS-2
  TCP-Linux's own examples use); ``delack`` is ``Agent/TCPSink/Sack1/DelAck`` (an ACK per
  two packets, or after 100 ms), as a Linux receiver does;
* ``spread_ms``: each sender's access link gets a one-way delay drawn from U(0, spread_ms).
  With 0 every flow has the same RTT and nothing in ns-2 varies it, so every ACK-clocked
  arrival lands at the same offset after the bottleneck's departures (a phase effect, Floyd
  & Jacobson 1992); 1 ms is enough to spread those offsets over many packet times.

``ns`` must be on ``PATH`` (``apt install ns2``; ``scripts/system-deps.sh`` installs it).
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import numpy as np
import pandas as pd

from . import wei_sync as W

#: ns-2's sinks for the two receivers
RECEIVERS = {"ack": "Agent/TCPSink/Sack1", "delack": "Agent/TCPSink/Sack1/DelAck"}
#: bottleneck queues: ns-2's DropTail, and ns-2's RED with its own defaults (automatic
#: thresholds and EWMA from ``mean_pktsize_`` 500 B, gentle, fixed max_p 0.1) without and with
#: ``adaptive_`` (Floyd, Gummadi & Shenker's max_p adaptation)
QUEUES = {"droptail": ("DropTail", ""), "red": ("RED", "Queue/RED set adaptive_ 0"),
          "ared": ("RED", "Queue/RED set adaptive_ 1"),
          # one default changed each: drops no longer spaced at least 1/p apart (``wait_``), and
          # the drop probability no longer scaled by packet size (``bytes_``)
          "red-nowait": ("RED", "Queue/RED set adaptive_ 0\nQueue/RED set wait_ 0"),
          "red-packets": ("RED", "Queue/RED set adaptive_ 0\nQueue/RED set bytes_ 0")}
#: TCP-Linux module names (``select_ca``) of the study's algorithms
NS2_CA = {"reno": "reno", "highspeed": "highspeed", "scalable": "scalable"}
PAYLOAD_BYTES = 1460
NOISE_FID0 = 1000

_TCL = r"""
# ccbench: the wei-sync path in ns-2 (written by ccbench.studies.wei_ns2)
set ns [new Simulator]
global defaultRNG
$defaultRNG seed @SEED@
set rng [new RNG]
$rng seed @SEED@
set r1 [$ns node]
set r2 [$ns node]
@QUEUE_SETUP@
$ns duplex-link $r1 $r2 @RATE@ @DELAY@ @QUEUE@
$ns queue-limit $r1 $r2 @BUFFER@
$ns queue-limit $r2 $r1 @BUFFER@
set tf [open "|grep ^d > @DROPS@" w]
$ns trace-queue $r1 $r2 $tf
Agent/TCP set packetSize_ @PAYLOAD@
Agent/TCP set window_ 1000000
Agent/TCP set maxcwnd_ 1000000
Agent/TCP set timestamps_ true
Agent/TCPSink set ts_echo_rfc1323_ true
for {set i 0} {$i < @N@} {incr i} {
  set s($i) [$ns node]
  set d($i) [$ns node]
  set ad [$rng uniform 0 @SPREAD@]
  $ns duplex-link $s($i) $r1 @ACCESS@ ${ad}ms DropTail
  $ns duplex-link $r2 $d($i) @ACCESS@ 0ms DropTail
  $ns queue-limit $s($i) $r1 100000
  $ns queue-limit $r2 $d($i) 100000
  $ns queue-limit $d($i) $r2 100000
  set tcp($i) [new Agent/TCP/Linux]
  $tcp($i) set fid_ $i
  $ns attach-agent $s($i) $tcp($i)
  set sink($i) [new @SINK@]
  $ns attach-agent $d($i) $sink($i)
  $ns connect $tcp($i) $sink($i)
  $ns at 0 "$tcp($i) select_ca @CA@"
  set ftp($i) [new Application/FTP]
  $ftp($i) attach-agent $tcp($i)
  $ns at [$rng uniform 0 0.01] "$ftp($i) start"
}
for {set j 0} {$j < @NNOISE@} {incr j} {
  set u($j) [$ns node]
  set v($j) [$ns node]
  $ns duplex-link $u($j) $r1 @ACCESS@ 0ms DropTail
  $ns duplex-link $r2 $v($j) @ACCESS@ 0ms DropTail
  set udp($j) [new Agent/UDP]
  $udp($j) set fid_ [expr @FID0@ + $j]
  $udp($j) set packetSize_ @PKT@
  $ns attach-agent $u($j) $udp($j)
  set null($j) [new Agent/Null]
  $ns attach-agent $v($j) $null($j)
  $ns connect $udp($j) $null($j)
  set e($j) [new Application/Traffic/Exponential]
  $e($j) set packetSize_ @PKT@
  $e($j) set burst_time_ @ON@
  $e($j) set idle_time_ @OFF@
  $e($j) set rate_ @PEAK@
  $e($j) attach-agent $udp($j)
  $ns at [$rng uniform 0 1] "$e($j) start"
}
proc acks {tag} {
  global tcp ns
  set l {}
  for {set i 0} {$i < @N@} {incr i} { lappend l [$tcp($i) set ack_] }
  puts "ACKS $tag [$ns now] $l"
}
proc finish {} { global ns tf; acks end; $ns flush-trace; close $tf; exit 0 }
$ns at @WARMUP@ "acks warmup"
$ns at @DURATION@ "finish"
$ns run
"""


@dataclass(frozen=True)
class Ns2Run:
    algorithm: str
    receiver: str
    spread_ms: float
    seed: int
    n_flows: int = 16
    duration_s: float = 400.0
    warmup_s: float = 40.0
    queue: str = "droptail"


def available() -> bool:
    """Whether ns-2 (``ns``) is installed."""
    return shutil.which("ns") is not None


def tcl(run: Ns2Run, drops_path: Path) -> str:
    """The ns-2 script of one run; bottleneck drops go to ``drops_path``."""
    if run.algorithm not in NS2_CA:
        raise ValueError(f"algorithm {run.algorithm!r} is not one of {sorted(NS2_CA)}")
    if run.receiver not in RECEIVERS:
        raise ValueError(f"receiver {run.receiver!r} is not one of {sorted(RECEIVERS)}")
    if run.queue not in QUEUES:
        raise ValueError(f"queue {run.queue!r} is not one of {sorted(QUEUES)}")
    values = {
        "SEED": run.seed, "RATE": f"{W.CAPACITY_BPS / 1e6:g}Mb", "DELAY": f"{W.RTT_S / 2 * 1e3:g}ms",
        "BUFFER": W.BUFFER_PKTS, "DROPS": str(drops_path), "PAYLOAD": PAYLOAD_BYTES, "N": run.n_flows,
        "SPREAD": f"{run.spread_ms:g}", "ACCESS": "1Gb", "SINK": RECEIVERS[run.receiver],
        "CA": NS2_CA[run.algorithm], "NNOISE": W.N_NOISE, "FID0": NOISE_FID0, "PKT": W.PKT_BYTES,
        "ON": f"{W.NOISE_ON_S:g}", "OFF": f"{W.NOISE_OFF_S:g}", "PEAK": f"{W.NOISE_PEAK_BPS / 1e3:g}k",
        "WARMUP": f"{run.warmup_s:g}", "DURATION": f"{run.duration_s:g}",
        "QUEUE": QUEUES[run.queue][0], "QUEUE_SETUP": QUEUES[run.queue][1],
    }
    text = _TCL
    for k, v in values.items():
        text = text.replace(f"@{k}@", str(v))
    return text


def read_drops(path: Path, warmup_s: float) -> pd.DataFrame:
    """ns-2 queue-trace drop lines (``d time from to type size flags fid src dst seq id``)
    as the drops table the analysis functions take (``t, flow, kind, link``)."""
    cols = ["ev", "t", "from", "to", "type", "size", "flags", "fid", "src", "dst", "seq", "id"]
    try:
        d = pd.read_csv(path, sep=r"\s+", header=None, names=cols, usecols=["ev", "t", "fid"])
    except pd.errors.EmptyDataError:
        d = pd.DataFrame({"ev": [], "t": [], "fid": []})
    d = d[(d["ev"] == "d") & (d["t"] >= warmup_s)]
    fid = d["fid"].astype(int).to_numpy()
    flow = np.where(fid < NOISE_FID0, "tcp" + fid.astype(str), "noise" + (fid - NOISE_FID0).astype(str))
    return pd.DataFrame({"t": d["t"].to_numpy(float), "flow": flow, "kind": "drop", "link": "bottleneck_down"})


def read_acks(stdout: str) -> dict[str, list[int]]:
    """The ``ACKS <tag> <time> a0 a1 ...`` lines: each flow's highest cumulative ACK."""
    out = {}
    for line in stdout.splitlines():
        p = line.split()
        if len(p) >= 3 and p[0] == "ACKS":
            out[p[1]] = [int(x) for x in p[3:]]
    return out


def measure(run: Ns2Run) -> dict:
    """Runs ns-2 once and returns λ (the study's counting), the noise's share of the drops,
    events, TCP goodput and Jain's index over the TCP flows after the warm-up."""
    from ccbench.analysis._common import AnalysisError
    from ccbench.analysis.goodput import jain_index
    from ccbench.analysis.losses import loss_sync_rate

    if not available():
        raise RuntimeError("ns-2 is not installed: `apt install ns2` (scripts/system-deps.sh installs it)")
    with tempfile.TemporaryDirectory(prefix="ccbench-ns2-") as tmp:
        drops_path = Path(tmp) / "drops.tr"
        script = Path(tmp) / "run.tcl"
        script.write_text(tcl(run, drops_path))
        res = subprocess.run(["ns", str(script)], capture_output=True, text=True, timeout=3600)
        if res.returncode != 0:
            raise RuntimeError(f"ns-2 failed ({res.returncode}): {res.stderr.strip()[-500:]}")
        drops = read_drops(drops_path, run.warmup_s)
    acks = read_acks(res.stdout)
    tcp = [f"tcp{i}" for i in range(run.n_flows)]
    names = tcp + [f"noise{j}" for j in range(W.N_NOISE)]
    try:
        sr = loss_sync_rate(drops, W.RTT_S, flows=names)
        sync, events = float(sr.per_flow[tcp].mean()), sr.n_events
    except AnalysisError:  # no loss after the warm-up (a short run)
        sync, events = float("nan"), 0
    span = run.duration_s - run.warmup_s
    good = (np.array(acks["end"]) - np.array(acks["warmup"])) * PAYLOAD_BYTES * 8 / span
    try:
        jain = jain_index(good)
    except AnalysisError:  # every flow stalled: the index is undefined
        jain = float("nan")
    return {
        "algorithm": run.algorithm, "queue": run.queue, "receiver": run.receiver, "spread_ms": run.spread_ms, "seed": run.seed,
        "n_flows": run.n_flows, "duration_s": run.duration_s, "sync": sync,
        "events": events, "drops": len(drops),
        "noise_drop_share": float((~drops["flow"].str.startswith("tcp")).mean()) if len(drops) else float("nan"),
        "tcp_goodput_mbps": float(good.sum() / 1e6),
        "jain": jain,
    }


def grid(algorithms: Iterable[str], receivers: Iterable[str], spreads: Iterable[float], seeds: Iterable[int],
         n_flows: int = 16, duration_s: float = 400.0, warmup_s: float = 40.0,
         queues: Iterable[str] = ("droptail",)) -> list[Ns2Run]:
    return [Ns2Run(a, r, float(sp), s, n_flows, duration_s, warmup_s, q)
            for q in queues for a in algorithms for r in receivers for sp in spreads for s in seeds]
