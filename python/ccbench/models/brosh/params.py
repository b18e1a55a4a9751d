"""Parameters of the Brosh et al. CBR-over-TCP delay model.

All inputs are in scenario units: sizes in bytes, times in seconds, rates in bit/s,
the loss probability ``loss`` is a plain probability ``p`` in ``[0, 1)``.

Every place where the paper (Brosh, Baset, Misra, Rubenstein, Schulzrinne, "The
Delay-Friendliness of TCP", Appendix A / Table 6) is garbled or silent is resolved by a
documented default, and the other reading is selectable with a keyword. See
:class:`BroshParams` for the list.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace

__all__ = ["BroshParams", "VOIP", "VIDEO"]

_CHOICES: dict[str, tuple[str, ...]] = {
    "loss_model": ("random", "correlated"),
    "queue": ("packet", "byte"),
    "accounting": ("conserving", "table"),
    "al_fr_delays": ("table", "eq1"),
    "fr_window": ("table", "rfc"),
    "loss_window": ("cwnd", "sent"),
    "binomial_exponent": ("derived", "literal"),
    "lt_formula": ("derived", "literal"),
    "byte_loss_ref": ("mss", "packet", "literal"),
    "rounding": ("split", "nearest"),
    "overflow": ("clip", "reject"),
    "split_metric": ("piece", "packet"),
    "parallel_merge": ("independent", "in_order"),
}


def _bad(name: str, value, accepted: str) -> ValueError:
    return ValueError(f"{name}={value!r} is invalid: expected {accepted}")


@dataclass(frozen=True)
class BroshParams:
    """Inputs of the Brosh CBR-over-TCP Markov delay model (paper Sec. 4, App. A).

    Traffic and path (paper Table 1 symbols in brackets):

    * ``size_bytes`` [a]: application packet size, bytes (the TCP payload per write).
    * ``interval_s`` [1/f] or ``rate_bps`` [8·a·f]: packetization interval in seconds,
      or the application bit rate in bit/s counted over ``size_bytes``. Give one (the
      other is derived); giving both requires them to agree. Default: 20 ms.
      Note the paper's "64 kb/s VoIP" label excludes 14 header bytes: it is
      ``size_bytes=174, interval_s=0.02`` (69.6 kbit/s over 174-byte writes).
    * ``rtt_s`` [RTT]: round-trip time, s (constant; queueing only through it).
    * ``loss`` [p]: segment loss probability (MSS-segment loss for ``queue="byte"``,
      see ``byte_loss_ref``).
    * ``mss_bytes`` [MSS]: 1448 in the paper's set-ups.
    * ``one_way_s`` [L]: one-way network delay; default ``rtt_s/2`` (symmetric path).
    * ``rto_s`` [T_0]: base retransmission timeout; default ``4·rtt_s`` (the value
      implied by b_m = 4·T_0·f = 16r, App. A.3).

    Model variants (paper App. A.1/A.2):

    * ``loss_model``: ``"random"`` (independent segment loss, [37] SACK expressions) or
      ``"correlated"`` (a loss drops the rest of the round; PFTK [29] A(w,k), Eq. 22).
    * ``queue``: ``"packet"`` (every segment dropped w.p. p) or ``"byte"`` (drop
      probability proportional to segment size, App. A.1 last paragraph).
    * ``limited_transmit``: RFC 3042 limited transmit (App. A.2, Eqs. 6/7). Default on
      (Linux 2.6 / XP default, the paper's testbed).
    * ``window_max`` [w_m] / ``backlog_max_pkts`` [b_m]: truncation; defaults
      ``ceil(8 r)`` and ``ceil(4·T_0·f)`` (= 16 r for T_0 = 4 RTT), App. A.3.
    * ``backoff_stages``: timeout back-off stages (6 in the paper, Table 2).

    Documented resolutions of the note's ambiguities (default first, then the switch):

    * ``accounting="conserving"``: every generated packet is sent exactly once:
      packets that arrive during an RTT round and leave in the same round (the window
      had room) are counted, with TCP delay 0 (or the fast-recovery HOL delay
      RTT+3/f when the round ends in fast recovery); an AL->FR transition sends the r
      packets generated in the RTT with the Table 6 delay list and keeps the 3 packets
      generated during the 3/f wait as the Table 6 backlog "3". ``"table"``: Eq. 2 and
      Table 6 literally (n = floor(min(b, w MSS)/a), AL->FR sends w+3 packets); this
      loses in-round arrivals, so the long-run packet rate is below f.
    * ``al_fr_delays="table"``: AL->FR delays L+RTT+i/f (Table 6); ``"eq1"``:
      L+RTT+(3+i)/f (Eq. 1 with b = 0).
    * ``fr_window="table"``: window after fast retransmit floor((r+3)/2) from AL and
      floor((w+3)/2) from NL, as printed; ``"rfc"``: max(floor(flight/2), 2) with
      flight r (AL) or w (NL).
    * ``grow_when_cleared=True``: a network-limited round (w < r) that clears the
      backlog (b' = 0) still grows the window ({w+1|2w}); ``False`` keeps w. A round
      with w >= r that clears the backlog keeps w (the state becomes AL).
    * ``loss_window="cwnd"``: loss probabilities use the window w even if fewer
      segments are sent (as the paper); ``"sent"``: use the number of MSS segments
      the round actually sends, min(w, ceil((b + r a)/MSS)) (NL states only).
    * ``binomial_exponent="derived"``: AL fast-retransmit probability
      sum C(w-1,i-1) p^i (1-p)^(w-i) (what p·P_{w-1}(i-1) gives) and NL
      sum C(w,i) p^i (1-p)^(w-i); ``"literal"``: exponent w as extracted.
    * ``lt_formula="derived"``: limited-transmit terms re-derived from first
      principles (Eq. 6 without the extra (1-p)^(w-1), (1-p)^(w-2) factors; Eq. 7
      with the k=1 case needing two LT successes and k=2 one); ``"literal"``: Eqs. 6
      and 7 as printed (Eq. 7 clipped to [0, P(loss)]).
    * ``byte_loss_ref="mss"``: for ``queue="byte"``, ``loss`` is the loss probability
      of an MSS segment and a segment of M bytes is lost w.p. p·M/MSS;
      ``"packet"``: ``loss`` is that of an a-byte packet, p·M/a (capped at 1);
      ``"literal"``: p·a/M_s as extracted.
    * ``max_backoff_exp=6``: leaving timeout stage l costs 2^min(l, 6)·T_0 of time and
      backlog (Table 6, "does not exceed 64 times"); 5 gives Eq. 5's 32·T_0 cap.
    * Byte backlog on a packet grid (note pitfall 4, MSS/a = 8.32 for VoIP): b = k·a
      with integer k; a round with window w may send w·MSS bytes = w·MSS/a packets
      (real); whole backlogged packets sent are floor(min(b, w MSS)/a) (Eq. 2) and the
      fractional remainder of the capacity serves newly arriving data (conserving).
    * Resolved without a switch (no coherent second reading): the missing Table 6
      probabilities are 1-p (AL->AL), 1 (FR->) and p (TO->TO); timeout states have
      w = 0 (Table 2, not the extracted "1"); NL means b > 0 or w < r (Table 2, not
      the extracted "r < w"); the AL->FR backlog "3" is 3 packets (generated during
      the 3/f wait for three duplicate ACKs).
    * ``rounding="split"``: a real-valued next backlog (in packets) is split between
      the two neighbouring integer levels with probabilities that preserve its mean;
      ``"nearest"`` rounds (biased, not rate-conserving).
    * ``overflow="clip"``: backlog beyond b_m is clipped to b_m (those packets are
      dropped and reported as ``overflow_pps``); ``"reject"``: transitions that would
      exceed b_m are removed and the row renormalised (a row left empty keeps its
      clipped branches); when the flow cannot sustain f this can trap the chain in a
      second closed class at b_m, and the solver raises ValueError.

    Application-level schemes (note Sec. 5):

    * ``split`` = N: each packet split into N pieces: modelled as a -> a/N, f -> N·f.
      ``split_metric="piece"`` reports the per-piece delay (the paper's model, Fig. 25);
      ``"packet"`` approximates the application-packet delay (its last piece, written
      back-to-back with the others) by shifting by (N-1)/(N f).
    * ``parallel`` = N: blind round-robin over N connections: N independent, identical
      chains with f/N each. ``parallel_merge="independent"``: a packet's delay is its
      own connection's (receiver merges by sequence number without cross-connection
      HOL); ``"in_order"``: in-order delivery across connections, approximated by the
      max over N independent connection delays, CDF^N.
    """

    size_bytes: float = 174.0
    interval_s: float | None = None
    rate_bps: float | None = None
    rtt_s: float = 0.1
    loss: float = 0.01
    mss_bytes: float = 1448.0
    one_way_s: float | None = None
    rto_s: float | None = None
    loss_model: str = "random"
    queue: str = "packet"
    limited_transmit: bool = True
    window_max: int | None = None
    backlog_max_pkts: int | None = None
    backoff_stages: int = 6
    max_backoff_exp: int = 6
    accounting: str = "conserving"
    al_fr_delays: str = "table"
    fr_window: str = "table"
    grow_when_cleared: bool = True
    loss_window: str = "cwnd"
    binomial_exponent: str = "derived"
    lt_formula: str = "derived"
    byte_loss_ref: str = "mss"
    rounding: str = "split"
    overflow: str = "clip"
    split: int = 1
    split_metric: str = "piece"
    parallel: int = 1
    parallel_merge: str = "independent"
    _derived: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    # ------------------------------------------------------------------ validation
    def __post_init__(self) -> None:
        def pos(name: str, v, allow_none=False) -> None:
            if v is None and allow_none:
                return
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
                raise _bad(name, v, "a finite number > 0" + (" or None" if allow_none else ""))

        pos("size_bytes", self.size_bytes)
        pos("interval_s", self.interval_s, allow_none=True)
        pos("rate_bps", self.rate_bps, allow_none=True)
        pos("rtt_s", self.rtt_s)
        pos("mss_bytes", self.mss_bytes)
        pos("rto_s", self.rto_s, allow_none=True)
        if self.one_way_s is not None and (
            isinstance(self.one_way_s, bool)
            or not isinstance(self.one_way_s, (int, float))
            or not math.isfinite(self.one_way_s)
            or self.one_way_s < 0
        ):
            raise _bad("one_way_s", self.one_way_s, "a finite number >= 0 (seconds) or None")
        if isinstance(self.loss, bool) or not isinstance(self.loss, (int, float)) or not (0.0 <= self.loss < 1.0):
            raise _bad("loss", self.loss, "a probability 0 <= p < 1")
        if self.size_bytes > self.mss_bytes * (1 + 1e-12) and self.split == 1:
            raise _bad("size_bytes", self.size_bytes, f"a packet size <= mss_bytes ({self.mss_bytes})")
        for name, choices in _CHOICES.items():
            v = getattr(self, name)
            if v not in choices:
                raise _bad(name, v, "one of " + ", ".join(repr(c) for c in choices))
        for name in ("limited_transmit", "grow_when_cleared"):
            if not isinstance(getattr(self, name), bool):
                raise _bad(name, getattr(self, name), "True or False")
        for name, lo in (("split", 1), ("parallel", 1), ("backoff_stages", 1), ("max_backoff_exp", 0)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < lo:
                raise _bad(name, v, f"an integer >= {lo}")
        for name, lo in (("window_max", 1), ("backlog_max_pkts", 1)):
            v = getattr(self, name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < lo):
                raise _bad(name, v, f"an integer >= {lo} or None")
        # rate <-> interval
        if self.interval_s is None and self.rate_bps is None:
            interval = 0.02
        elif self.interval_s is None:
            interval = 8.0 * self.size_bytes / self.rate_bps
        else:
            interval = float(self.interval_s)
            if self.rate_bps is not None:
                implied = 8.0 * self.size_bytes / interval
                if abs(implied - self.rate_bps) > 1e-6 * implied:
                    raise _bad(
                        "rate_bps",
                        self.rate_bps,
                        f"8*size_bytes/interval_s = {implied:g} bit/s when interval_s is also given (give only one)",
                    )
        object.__setattr__(self, "interval_s", interval)
        object.__setattr__(self, "rate_bps", 8.0 * self.size_bytes / interval)
        if self.size_bytes / self.split > self.mss_bytes * (1 + 1e-12):
            raise _bad("split", self.split, f"a split giving pieces <= mss_bytes ({self.mss_bytes})")
        c = self.chain_params()
        r = c.f_pps * c.rtt_s
        if r > 200:
            raise _bad("rate_bps", self.rate_bps, f"a load of at most 200 packets per RTT per connection (got r={r:.4g})")

    # ------------------------------------------------------------------ derived
    @property
    def f_pps(self) -> float:
        """CBR rate f in packets per second (paper Table 1)."""
        return 1.0 / self.interval_s

    @property
    def r(self) -> float:
        """Load r = f·RTT in packets per round-trip time (may be non-integer)."""
        return self.f_pps * self.rtt_s

    @property
    def L(self) -> float:
        """One-way network delay L (s); default RTT/2."""
        return self.rtt_s / 2.0 if self.one_way_s is None else float(self.one_way_s)

    @property
    def T0(self) -> float:
        """Base retransmission timeout T_0 (s); default 4·RTT."""
        return 4.0 * self.rtt_s if self.rto_s is None else float(self.rto_s)

    @property
    def w_max(self) -> int:
        """Window truncation w_m (default ceil(8 r), App. A.3; at least 4)."""
        if self.window_max is not None:
            return self.window_max
        return max(4, math.ceil(8.0 * self.r - 1e-9))

    @property
    def b_max(self) -> int:
        """Backlog truncation b_m in packets (default ceil(4·T_0·f), App. A.3)."""
        if self.backlog_max_pkts is not None:
            return self.backlog_max_pkts
        return max(4, math.ceil(4.0 * self.T0 * self.f_pps - 1e-9))

    @property
    def loss_al(self) -> float:
        """Segment loss probability in AL states (M_s = a), after byte-queue scaling."""
        return self._scaled_loss(self.size_bytes)

    @property
    def loss_nl(self) -> float:
        """Segment loss probability in NL/FR/TO states (M_s = MSS)."""
        return self._scaled_loss(self.mss_bytes)

    def _scaled_loss(self, m_s: float) -> float:
        p = float(self.loss)
        if self.queue == "packet":
            return p
        if self.byte_loss_ref == "mss":
            return min(1.0, p * m_s / self.mss_bytes)
        if self.byte_loss_ref == "packet":
            return min(1.0, p * m_s / self.size_bytes)
        return min(1.0, p * self.size_bytes / m_s)  # literal p^a_{M_s}

    def chain_params(self) -> "BroshParams":
        """Parameters of the single chain actually solved (split/parallel applied).

        split N: a -> a/N, f -> N f; parallel N: f -> f/N (note Sec. 5).
        """
        if self.split == 1 and self.parallel == 1:
            return self
        key = "chain"
        if key not in self._derived:
            f = self.f_pps * self.split / self.parallel
            self._derived[key] = replace(
                self,
                size_bytes=self.size_bytes / self.split,
                interval_s=1.0 / f,
                rate_bps=None,
                split=1,
                parallel=1,
            )
        return self._derived[key]

    def with_(self, **changes) -> "BroshParams":
        """Copy with changes; ``interval_s``/``rate_bps`` are re-derived consistently."""
        if "rate_bps" in changes and "interval_s" not in changes:
            changes["interval_s"] = None
        if "interval_s" in changes and "rate_bps" not in changes:
            changes["rate_bps"] = None
        if "size_bytes" in changes and "rate_bps" not in changes and "interval_s" not in changes:
            changes["rate_bps"] = None
        return replace(self, **changes)

    def as_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self) if f.init}


#: The paper's default VoIP flow: 174-byte writes every 20 ms ("64 kb/s", Sec. 5).
VOIP = BroshParams(size_bytes=174.0, interval_s=0.02)
#: The paper's default live-video flow: 1448-byte writes every 20 ms ("573 kb/s").
VIDEO = BroshParams(size_bytes=1448.0, interval_s=0.02)
