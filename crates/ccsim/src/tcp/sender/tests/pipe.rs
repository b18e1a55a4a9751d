//! A deterministic sans-IO test harness: sender -> (optional bottleneck rate) ->
//! one-way delay -> scripted dropper/marker/delayer -> a minimal receiver -> one-way
//! delay back. The receiver here is a test double (cumulative ACK + SACK blocks, one
//! ACK per segment, RFC 2883 DSACK, RFC 3168 ECE echo, RFC 7323 timestamp echo); the
//! simulator's real receiver lives in `tcp/receiver/`.

use crate::tcp::cc;
use crate::tcp::config::TcpConfig;
use crate::tcp::segment::{SackBlock, Segment, MAX_SACK_BLOCKS};
use crate::tcp::sender::TcpSender;
use crate::time::{tx_time_ns, Nanos, NS_PER_MS};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

pub const MS: Nanos = NS_PER_MS;

/// What the network does to one transmission.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Drop,
    /// Deliver `extra` ns late (reordering).
    Delay(Nanos),
    /// Set CE (ECN mark).
    MarkCe,
}

/// Log entries, asserted on by tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ev {
    /// New data segment sent: (seq, len, cwr flag).
    Tx(u64, u32, bool),
    /// Retransmission sent.
    Rtx(u64),
    /// Segment dropped by the script.
    Drop(u64),
    /// ACK arrived at the sender: (ack, first SACK block start or 0, dsack).
    Ack(u64, u64, bool),
    /// The sender's retransmission timer fired.
    Rto,
}

#[derive(Clone, Copy, Debug)]
enum Item {
    Data(Segment, bool),
    Ack(Segment),
    Write(u64),
    SetRwnd(u64),
}

/// Minimal receiver.
#[derive(Default)]
pub struct TestReceiver {
    pub sack: bool,
    rcv_nxt: u64,
    /// Out-of-order ranges, most recently changed first.
    ooo: Vec<(u64, u64)>,
    ts_recent: Nanos,
    last_ack_sent: u64,
    ece: bool,
    pub rwnd: u64,
}

impl TestReceiver {
    fn on_data(&mut self, seg: &Segment, ce: bool) -> Segment {
        let (s, e) = (seg.seq, seg.end_seq());
        // RFC 7323 §4.3: update TS.Recent only from segments at or left of the ACK
        // point, so an out-of-order arrival echoes the older timestamp.
        if s <= self.last_ack_sent && seg.tsval >= self.ts_recent {
            self.ts_recent = seg.tsval;
        }
        if seg.cwr {
            self.ece = false;
        }
        if ce {
            self.ece = true;
        }
        let mut dsack = None;
        if seg.len > 0 {
            let dup = e <= self.rcv_nxt || self.ooo.iter().any(|&(a, b)| a <= s && e <= b);
            if dup {
                dsack = Some(SackBlock { start: s, end: e });
            } else {
                // Merge into the out-of-order list, the merged block moving to front.
                let (mut ns, mut ne) = (s, e);
                self.ooo.retain(|&(a, b)| {
                    if b < ns || a > ne {
                        true
                    } else {
                        ns = ns.min(a);
                        ne = ne.max(b);
                        false
                    }
                });
                self.ooo.insert(0, (ns, ne));
                // Advance the cumulative ACK.
                loop {
                    let pos = self.ooo.iter().position(|&(a, _)| a <= self.rcv_nxt);
                    match pos {
                        Some(p) => {
                            let (_, b) = self.ooo.remove(p);
                            self.rcv_nxt = self.rcv_nxt.max(b);
                        }
                        None => break,
                    }
                }
            }
        }
        let mut ack =
            Segment { ack: self.rcv_nxt, tsecr: self.ts_recent, rwnd: self.rwnd, ece: self.ece, ..Default::default() };
        if self.sack {
            // Linux sends at most 3 blocks next to the timestamps option.
            let mut n = 0;
            if let Some(d) = dsack {
                ack.sack[0] = d;
                ack.dsack = true;
                n = 1;
            }
            for &(a, b) in &self.ooo {
                if n == 3 || n == MAX_SACK_BLOCKS {
                    break;
                }
                ack.sack[n] = SackBlock { start: a, end: b };
                n += 1;
            }
            ack.n_sack = n as u8;
        }
        self.last_ack_sent = self.rcv_nxt;
        ack
    }
}

pub struct Pipe {
    pub s: TcpSender,
    pub r: TestReceiver,
    pub now: Nanos,
    owd: Nanos,
    rate_bps: Option<u64>,
    header: u32,
    link_free: Nanos,
    q: BinaryHeap<Reverse<(Nanos, u64, usize)>>,
    items: Vec<Item>,
    seqno: u64,
    /// (seq, nth transmission starting at 1) -> action.
    script: HashMap<(u64, u32), Action>,
    tx_count: HashMap<u64, u32>,
    pub log: Vec<(Nanos, Ev)>,
    /// Sender snapshots taken after every ACK: (time, cwnd, ssthresh, ca_state).
    pub trace: Vec<(Nanos, u32, u32, cc::CaState)>,
}

impl Pipe {
    /// `owd`: one-way delay each way; `rate_bps`: forward bottleneck (None = no
    /// serialization, all segments of a burst arrive together).
    pub fn new(cfg: TcpConfig, owd: Nanos, rate_bps: Option<u64>) -> Self {
        let cc = cc::build(&cfg.cc, "cc").unwrap();
        Self::with_cc(cfg, cc, owd, rate_bps)
    }

    pub fn with_cc(cfg: TcpConfig, cc: cc::AnyCc, owd: Nanos, rate_bps: Option<u64>) -> Self {
        let r = TestReceiver { sack: cfg.sack, rwnd: 64 << 20, ..Default::default() };
        Pipe {
            s: TcpSender::new(&cfg, cc, 0),
            r,
            now: 0,
            owd,
            rate_bps,
            header: cfg.header_bytes,
            link_free: 0,
            q: BinaryHeap::new(),
            items: Vec::new(),
            seqno: 0,
            script: HashMap::new(),
            tx_count: HashMap::new(),
            log: Vec::new(),
            trace: Vec::new(),
        }
    }

    /// Apply `a` to the `nth` (1 = first) transmission of the segment at `seq`.
    pub fn on(&mut self, seq: u64, nth: u32, a: Action) {
        self.script.insert((seq, nth), a);
    }

    pub fn write_at(&mut self, t: Nanos, bytes: u64) {
        self.push(t, Item::Write(bytes));
    }

    /// The receiver advertises `rwnd` from `t` on.
    pub fn set_rwnd_at(&mut self, t: Nanos, rwnd: u64) {
        self.push(t, Item::SetRwnd(rwnd));
    }

    fn push(&mut self, t: Nanos, it: Item) {
        self.items.push(it);
        self.q.push(Reverse((t, self.seqno, self.items.len() - 1)));
        self.seqno += 1;
    }

    fn flush(&mut self) {
        while let Some(seg) = self.s.poll_transmit(self.now) {
            if seg.len == 0 {
                // Zero-window probe: straight to the receiver.
                self.push(self.now + self.owd, Item::Data(seg, false));
                continue;
            }
            let n = self.tx_count.entry(seg.seq).or_insert(0);
            *n += 1;
            let nth = *n;
            self.log.push((self.now, if seg.retrans { Ev::Rtx(seg.seq) } else { Ev::Tx(seg.seq, seg.len, seg.cwr) }));
            let act = self.script.get(&(seg.seq, nth)).copied();
            let depart = match self.rate_bps {
                Some(r) => {
                    let d = self.now.max(self.link_free) + tx_time_ns(seg.wire_bytes(self.header), r);
                    self.link_free = d;
                    d
                }
                None => self.now,
            };
            match act {
                Some(Action::Drop) => self.log.push((self.now, Ev::Drop(seg.seq))),
                Some(Action::Delay(x)) => self.push(depart + self.owd + x, Item::Data(seg, false)),
                Some(Action::MarkCe) => self.push(depart + self.owd, Item::Data(seg, true)),
                None => self.push(depart + self.owd, Item::Data(seg, false)),
            }
        }
    }

    /// Runs until `t_end` or until nothing is left to do.
    pub fn run_until(&mut self, t_end: Nanos) {
        loop {
            self.flush();
            let tq = self.q.peek().map(|Reverse((t, _, _))| *t);
            let tt = self.s.next_timer();
            let next = match (tq, tt) {
                (Some(a), Some(b)) => a.min(b),
                (Some(a), None) => a,
                (None, Some(b)) => b,
                (None, None) => break,
            };
            if next > t_end {
                break;
            }
            self.now = next;
            if tq == Some(next) {
                let Reverse((_, _, idx)) = self.q.pop().unwrap();
                match self.items[idx] {
                    Item::Write(b) => {
                        let acc = self.s.write(self.now, b);
                        assert_eq!(acc, b, "test writes must fit the send buffer");
                    }
                    Item::SetRwnd(w) => self.r.rwnd = w,
                    Item::Data(seg, ce) => {
                        let ack = self.r.on_data(&seg, ce);
                        self.push(self.now + self.owd, Item::Ack(ack));
                    }
                    Item::Ack(a) => {
                        let first = if a.n_sack > 0 { a.sack[0].start } else { 0 };
                        self.log.push((self.now, Ev::Ack(a.ack, first, a.dsack)));
                        self.s.on_ack(self.now, &a);
                        let st = self.s.state();
                        self.trace.push((self.now, st.cwnd, st.ssthresh, st.ca_state));
                    }
                }
            } else {
                let before = self.s.stats().timeouts;
                self.s.on_timer(self.now);
                if self.s.stats().timeouts > before {
                    self.log.push((self.now, Ev::Rto));
                }
            }
        }
    }

    /// (time, seq) of every retransmission.
    pub fn rtx(&self) -> Vec<(Nanos, u64)> {
        self.log.iter().filter_map(|&(t, e)| if let Ev::Rtx(s) = e { Some((t, s)) } else { None }).collect()
    }

    pub fn rtos(&self) -> Vec<Nanos> {
        self.log.iter().filter_map(|&(t, e)| (e == Ev::Rto).then_some(t)).collect()
    }

    /// Number of data transmissions (new + retransmitted) in [from, to).
    pub fn sends_between(&self, from: Nanos, to: Nanos) -> usize {
        self.log.iter().filter(|&&(t, e)| t >= from && t < to && matches!(e, Ev::Tx(..) | Ev::Rtx(_))).count()
    }

    /// New-data transmissions grouped by send time: (time, count).
    pub fn tx_bursts(&self) -> Vec<(Nanos, usize)> {
        let mut v: Vec<(Nanos, usize)> = Vec::new();
        for &(t, e) in &self.log {
            if let Ev::Tx(..) = e {
                match v.last_mut() {
                    Some((lt, c)) if *lt == t => *c += 1,
                    _ => v.push((t, 1)),
                }
            }
        }
        v
    }
}
