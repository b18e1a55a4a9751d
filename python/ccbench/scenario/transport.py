"""Transports: UDP, and TCP that behaves like Linux.

User side::

    transport = { kind = "udp" }                      # header = "28B" adds IP+UDP headers;
                                                      # default 0: the app size is the IP packet
    transport = { kind = "tcp", cc = "cubic" }
    transport = { kind = "tcp", cc = { name = "cubic", beta = 0.8, hystart = false },
                  mss = 1448, init_cwnd = 10, init_ssthresh = 20, sack = true, nagle = false,
                  delayed_ack = true, ecn = false, pacing = false, recovery = "prr",
                  sndbuf = "4MB", rcvbuf = "6MB", min_rto = "200ms" }

``stack = "textbook-reno"`` starts from a legacy textbook stack instead of today's
Linux (see ``STACKS``); keys set next to it override the profile's values.

Only the keys the user sets reach the simulator, which applies Linux's defaults to the
rest (so a scenario written today keeps meaning "Linux as the simulator models it").
Times go to the simulator in whole milliseconds (``min_rto`` -> ``min_rto_ms``), sizes in
bytes (``sndbuf`` -> ``sndbuf_bytes``). Congestion-control parameters are checked here
against the simulator's registry, in user units or Linux's form
(:mod:`ccbench.scenario.cc_params`); an unknown algorithm name is left to the simulator,
which lists the registered ones.
"""

from __future__ import annotations

import copy
import re
from typing import Any, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, PlainSerializer, PlainValidator, model_serializer, model_validator
from typing_extensions import Annotated

from .base import Table, tagged
from .cc_params import check_params, to_linux
from .errors import fail
from .units import Duration, PositiveSize, Size, UnitError, format_duration, parse_size

__all__ = ["Udp", "Tcp", "CongestionControl", "Transport"]

_IDENT = re.compile(r"^[a-z][a-z0-9_]*$")


def _mss(value: Any) -> int:
    from pydantic_core import PydanticCustomError

    accepted = 'a positive whole number of bytes, e.g. 1448 or "1448B"'
    if isinstance(value, bool):
        raise PydanticCustomError("ccbench_unit", "{text}", {"text": f"is not a valid MSS (accepted: {accepted})"})
    if isinstance(value, int):
        n = value
    else:
        try:
            n = parse_size(value)
        except UnitError:
            raise PydanticCustomError(
                "ccbench_unit", "{text}", {"text": f"is not a valid MSS (accepted: {accepted})"}
            ) from None
    if n <= 0:
        raise PydanticCustomError(
            "ccbench_unit", "{text}", {"text": f"is not a valid MSS: it must be positive (accepted: {accepted})"}
        )
    return n


Mss = Annotated[int, PlainValidator(_mss), PlainSerializer(lambda v: v, return_type=int)]
"""Maximum segment size in bytes: ``1448`` or ``"1448B"``."""

def _pacing(value: Any) -> Union[bool, str]:
    from pydantic_core import PydanticCustomError

    if isinstance(value, bool) or (isinstance(value, str) and _IDENT.match(value)):
        return value
    raise PydanticCustomError(
        "ccbench_unit", "{text}", {"text": 'is not a pacing setting (accepted: true, false, or a pacing mode name, e.g. "fq")'}
    )


Pacing = Annotated[Union[bool, str], PlainValidator(_pacing)]

Param = Union[bool, int, float, str]


class CongestionControl(BaseModel):
    """``cc = "cubic"`` or ``cc = { name = "cubic", beta = 0.8 }``: parameters in user
    units (``beta = 0.8``, ``c = 0.4``) or Linux's module form (``beta = 819``); see
    :mod:`ccbench.scenario.cc_params`. They are kept as written and translated to
    Linux's form for the simulator."""

    model_config = ConfigDict(extra="forbid", strict=True)

    name: str
    params: dict[str, Param] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _shape(cls, data: Any) -> Any:
        if isinstance(data, BaseModel):
            return data
        if isinstance(data, str):
            data = {"name": data}
        if not isinstance(data, dict):
            raise fail('is not a congestion control (accepted: a name, e.g. "cubic", or a table { name = "cubic", ... })', value=data)
        data = dict(data)
        if "name" not in data:
            raise fail('is missing (accepted: a congestion-control name, e.g. "cubic")', at=("name",))
        name = data.pop("name")
        if not isinstance(name, str) or not _IDENT.match(name):
            raise fail(
                'is not a congestion-control name (accepted: lower-case letters, digits and _, e.g. "cubic")',
                at=("name",),
                value=name,
            )
        params = data.pop("params") if isinstance(data.get("params"), dict) and len(data) == 1 else data
        for k, v in params.items():
            if not _IDENT.match(str(k)):
                raise fail("is not a parameter name (accepted: lower-case letters, digits and _)", at=(k,))
            if not isinstance(v, (bool, int, float, str)):
                raise fail("is not a parameter value (accepted: a number, true/false or a string)", at=(k,), value=v)
        for key, text, value in check_params(name, params):
            if value is None:
                raise fail(text, at=(key,))
            raise fail(text, at=(key,), value=value)
        return {"name": name, "params": params}

    @model_serializer
    def _dump(self) -> Any:
        return self.name if not self.params else {"name": self.name, **self.params}

    def to_json(self) -> dict[str, Any]:
        """The simulator's form: Linux's parameter names and integer units."""
        return {"name": self.name, "params": to_linux(self.name, self.params)}


class Udp(Table):
    kind: Literal["udp"] = "udp"
    #: IP + UDP header bytes added to each payload; 0 = the app size is the whole packet.
    header: Optional[Size] = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": "udp"}
        if self.header is not None:
            out["header_bytes"] = self.header
        return out

    def describe(self) -> str:
        return "UDP"


#: user key -> (Rust key, converter); only keys the user sets are emitted.
_TCP_KEYS: dict[str, str] = {
    "mss": "mss",
    "header": "header_bytes",
    "init_cwnd": "init_cwnd",
    "init_ssthresh": "init_ssthresh",
    "sndbuf": "sndbuf_bytes",
    "sndbuf_mode": "sndbuf_mode",
    "skb_overhead": "skb_overhead_bytes",
    "rcvbuf": "rcvbuf_bytes",
    "rcvbuf_initial": "rcvbuf_initial_bytes",
    "moderate_rcvbuf": "moderate_rcvbuf",
    "rcv_scaling_ratio": "rcv_scaling_ratio",
    "sack": "sack",
    "dsack": "dsack",
    "nagle": "nagle",
    "delayed_ack": "delayed_ack",
    "quickack_segments": "quickack_segments",
    "ecn": "ecn",
    "recovery": "recovery",
    "abc": "abc",
    "slow_start_after_idle": "slow_start_after_idle",
    "pacing": "pacing",
    "min_rto": "min_rto_ms",
    "max_rto": "max_rto_ms",
    "initial_rto": "initial_rto_ms",
    "kernel_hz": "kernel_hz",
    "delack_min": "delack_min_ms",
    "delack_max": "delack_max_ms",
    "tlp": "tlp",
    "frto": "frto",
    "tso_autosize": "tso_autosize",
    "tso_defer": "tso_defer",
    "rto": "rto",
    "fast_recovery": "fast_recovery",
}
#: Stack profiles (simulator keys): the defaults a ``stack`` puts under the user's keys.
#: ``textbook-reno`` is the TCP of the older analytical-model papers and of ns-2's
#: ``Agent/TCP/Newreno`` with a non-delaying ``TCPSink``: no SACK (so loss detection is
#: the 3-duplicate-ACK rule, not RACK) with Reno's fast recovery (a partial ACK ends it; a
#: second loss in the window waits for the RTO; ``fast_recovery = "newreno"`` for RFC 6582),
#: no tail-loss probe, no F-RTO, no delayed ACKs, initial window 1, 1460-byte segments with 40-byte
#: headers (no timestamps option), Reno's AIMD, and the RFC 6298 RTO with ns-2's
#: minimum ``minrto_`` = 200 ms (RFC 6298's own 1 s: add ``min_rto = "1s"``).
STACKS: dict[str, dict[str, Any]] = {
    "linux": {},
    "textbook-reno": {
        "sack": False, "dsack": False, "tlp": False, "frto": False, "delayed_ack": False,
        "init_cwnd": 1, "mss": 1460, "header_bytes": 40, "rto": "rfc6298", "min_rto_ms": 200,
        "fast_recovery": "reno",
        "sndbuf_mode": "window",  # ns-2's window_: a hard cap on the flight
        "handshake_rtt": False,  # ns-2's agents have no SYN exchange
        "tso_defer": False,  # ns-2's agents send what the window allows, per ACK
        "kernel_hz": 100,  # ns-2's timer granularity, tcpTick_ = 10 ms
        "cc": {"name": "reno", "params": {}},
    },
}
_MS_FIELDS = ("min_rto", "max_rto", "initial_rto", "delack_min", "delack_max")


class Tcp(Table):
    kind: Literal["tcp"] = "tcp"
    cc: Optional[CongestionControl] = None
    mss: Optional[Mss] = None
    header: Optional[Size] = None
    init_cwnd: Optional[int] = Field(None, ge=1)
    #: Initial ssthresh in segments, as Linux's ``ssthresh`` route metric (default: none,
    #: slow start until the first loss); at or below ``init_cwnd`` the flow starts in
    #: congestion avoidance.
    init_ssthresh: Optional[int] = Field(None, ge=1)
    sndbuf: Optional[PositiveSize] = None
    #: What ``sndbuf`` limits. "linux" (default): Linux's soft limit for an application
    #: that blocks or polls (``tcp_sendmsg_locked`` checks the buffer only when a write
    #: needs a new skb, so what the window can send at once passes a full buffer, and a
    #: refused writer resumes when 2/3 of it are free). "window": a hard cap on
    #: unacknowledged data, the W_max of the analytical models and ns-2's ``window_``.
    sndbuf_mode: Optional[Literal["linux", "window"]] = None
    #: Send-buffer memory each skb costs beyond its payload, which Linux counts against
    #: ``sndbuf`` (``sk_wmem_queued`` sums skb truesize): default "832B", measured on
    #: Linux 6.18 (truesize - length of every transmitted skb); "0B" counts data only.
    #: Simulator only: the kernel has its own.
    skb_overhead: Optional[Size] = None
    #: Largest receive buffer (Linux ``tcp_rmem[2]``: 32 MiB since 6.18). Buffer
    #: memory, as in Linux: the window it allows is rcv_scaling_ratio/256 of it.
    rcvbuf: Optional[PositiveSize] = None
    #: Receive buffer at the start (``tcp_rmem[1]`` = 128 KiB); autotuning grows it.
    rcvbuf_initial: Optional[PositiveSize] = None
    #: Receive-buffer autotuning (``net.ipv4.tcp_moderate_rcvbuf``; on).
    moderate_rcvbuf: Optional[bool] = None
    #: Payload share of receive-buffer memory in 256ths (Linux's per-socket
    #: ``scaling_ratio`` = segment length / skb truesize; 160: 1448-byte segments in 2304-byte skbs, as through ccemu).
    #: Simulator only: the kernel measures it from the path.
    rcv_scaling_ratio: Optional[int] = Field(None, ge=1, le=256)
    sack: Optional[bool] = None
    dsack: Optional[bool] = None
    nagle: Optional[bool] = None
    delayed_ack: Optional[bool] = None
    quickack_segments: Optional[int] = Field(None, ge=0)
    ecn: Optional[bool] = None
    recovery: Optional[Literal["prr", "rate-halving"]] = None
    #: Window growth per ACK (RFC 3465 Appropriate Byte Counting): "off" (default, today's
    #: Linux: each ACK counts the segments it covers, whatever their size), "per-ack"
    #: (Linux 2.6 with net.ipv4.tcp_abc = 0: one per ACK), "l1" / "l2" (tcp_abc = 1 / 2:
    #: byte counting with L = 1 / 2 SMSS; sub-MSS segments grow cwnd by their share of
    #: an MSS). Linux removed tcp_abc in 3.9; see the simulator's ``AbcMode``.
    abc: Optional[Literal["off", "per-ack", "l1", "l2"]] = None
    slow_start_after_idle: Optional[bool] = None
    #: true/false, or a pacing mode name the simulator knows.
    pacing: Optional[Pacing] = None
    min_rto: Optional[Duration] = None
    max_rto: Optional[Duration] = None
    initial_rto: Optional[Duration] = None
    #: The RTT sample of the SYN exchange (simulator only; the kernel measures its own).
    #: The simulator has no handshake, but a Linux connection starts with this sample:
    #: srtt, RTO and min-RTT are set before its first data segment (a lost first flight
    #: is recovered after a few hundred ms, not the 1 s initial RTO) and the receiver
    #: bounds its delayed ACKs by it. "path" (default with the linux stack): measured on
    #: the path when the flow starts, the queues ahead included (a connection opened
    #: then); "idle": on the path without its queues (a connection opened earlier, or
    #: pooled; ccemu's probes connect before the run); "off" (textbook-reno's default,
    #: as ns-2's agents): none, the first data ACK gives the first sample; or a fixed
    #: duration.
    syn_rtt: Optional[Union[Literal["path", "idle", "off"], Duration]] = None
    #: The kernel's timer frequency (CONFIG_HZ; default 250, mainline's and Debian's):
    #: the RTO is a whole number of its ticks and the tail-loss-probe and RACK timers
    #: wait 2 ticks more (simulator only: the emulator records its kernel's).
    kernel_hz: Optional[Literal[100, 250, 300, 1000]] = None
    delack_min: Optional[Duration] = None
    delack_max: Optional[Duration] = None
    #: Tail loss probes (RFC 8985 §7; Linux >= 3.10) and F-RTO (RFC 5682): both on as in
    #: current Linux; off to match older kernels (2.6-era studies).
    tlp: Optional[bool] = None
    frto: Optional[bool] = None
    #: Paced flows (fq pacing, BBR) send Linux's autosized GSO bursts (about 1 ms of
    #: data, at least 2 segments) per pacing slot; false: one segment per slot.
    tso_autosize: Optional[bool] = None
    #: TSO deferral (Linux's ``tcp_tso_should_defer``): an unpaced sender holds back a
    #: partial skb while the next ACK is due within 1 ms, so it sends whole autosized
    #: skbs (4-5 segments at 50 Mbit/s); false: what the window allows, at once.
    tso_defer: Optional[bool] = None
    #: RTO estimator: Linux's (default) or RFC 6298's ("rfc6298": the minimum bounds
    #: SRTT + 4 RTTVAR rather than the variance term).
    rto: Optional[Literal["linux", "rfc6298"]] = None
    #: Partial ACKs without SACK: "newreno" (RFC 6582, Linux; default) or "reno" (ns-2's
    #: Agent/TCP/Reno: the first partial ACK ends recovery).
    fast_recovery: Optional[Literal["newreno", "reno"]] = None
    #: A stack profile under the keys above: "linux" (default) or "textbook-reno".
    stack: Optional[Literal["linux", "textbook-reno"]] = None

    @model_validator(mode="after")
    def _check(self):
        for name in _MS_FIELDS:
            v = getattr(self, name)
            if v is not None and v % 1_000_000:
                raise fail(
                    'is not a whole number of milliseconds (accepted: e.g. "200ms")', at=(name,), value=format_duration(v)
                )
        if self.min_rto is not None and self.max_rto is not None and self.min_rto > self.max_rto:
            raise fail(f'must not exceed max_rto = "{format_duration(self.max_rto)}"', at=("min_rto",), value=format_duration(self.min_rto))
        return self

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": "tcp", **copy.deepcopy(STACKS[self.stack or "linux"])}
        for key, rust in _TCP_KEYS.items():
            v = getattr(self, key)
            if v is None:
                continue
            out[rust] = v // 1_000_000 if key in _MS_FIELDS else v
        if self.syn_rtt is not None:
            out["handshake_rtt"] = self.syn_rtt in ("path", "idle")
            if self.syn_rtt == "idle":
                out["handshake_queues"] = False
            if not isinstance(self.syn_rtt, str):
                out["syn_rtt_us"] = max(1, self.syn_rtt // 1_000)
        if self.cc is not None:
            out["cc"] = self.cc.to_json()
        return out

    def describe(self) -> str:
        cc = self.cc.name if self.cc else STACKS[self.stack or "linux"].get("cc", {}).get("name", "(default cc)")
        return f"TCP {cc}" + (f" ({self.stack})" if self.stack and self.stack != "linux" else "")


Transport = tagged(Udp, Tcp)
"""``{ kind = "udp" }`` or ``{ kind = "tcp", ... }``."""
