//! One direction of the emulated bottleneck as a pure event machine, with no clock and
//! no I/O, so it is unit-tested without root.
//!
//! A packet read from the sending side's TUN device at time `t` goes through:
//!
//! 1. the sender's access delay (`pre_ns`, per source address) — a delay line;
//! 2. the ccsim queue discipline (`enqueue` at `t + pre_ns`), then the link
//!    transmitter at `rate_bps` (`dequeue`, `tx_started`, `tx_finished`, exactly the
//!    calls the simulator makes), or at the simulator's Mahimahi trace or rate
//!    schedule (`ccsim::link_rate`);
//! 3. the link's loss model (decided when transmission ends, as in the simulator);
//! 4. the propagation delay (or the simulator's netem-like random delay,
//!    `ccsim::link_jitter`) plus the receiver's access delay (`post_ns`) — a delay line;
//!
//! and leaves as [`Out::Deliver`] with its scheduled departure time; the I/O thread
//! writes it to the receiving side's TUN device as soon as the monotonic clock reaches
//! that time. Access links are pure delays here (their 10 Gbit/s serialisation and
//! their queues are left out: the bottleneck dominates).
//!
//! Events are processed strictly in time order (ties: ingress before transmitter
//! before egress, then insertion order), and queue samples are taken on the grid
//! `k * sample_ns` after the state at that instant is settled.

use ccsim::link_jitter::DelayModel;
use ccsim::link_rate::RateModel;
use ccsim::loss::{Fate, LossModel};
use ccsim::qdisc::{AnyQdisc, QItem, Qdisc, QdiscOut, Reason};
use ccsim::time::tx_time_ns;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Per-packet facts the pipe needs (the payload bytes stay in the caller's pool).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Meta {
    /// Index of the packet buffer in the caller's pool (the qdisc payload `P`).
    pub idx: u32,
    pub bytes: u32,
    pub flow_hash: u32,
    pub ect: bool,
    /// Access delay before the bottleneck queue.
    pub pre_ns: u64,
    /// Access delay after the bottleneck (added to the propagation delay).
    pub post_ns: u64,
}

/// What the pipe tells the I/O side.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Out {
    /// Write buffer `idx` at (or as soon as possible after) time `at`.
    Deliver { idx: u32, at: u64 },
    /// Buffer `idx` was dropped at `t` (free it); `reason` from the qdisc or the loss model.
    Drop { idx: u32, t: u64, reason: Reason },
    /// Buffer `idx` was ECN-marked (CE) at `t`; it still travels on.
    Mark { idx: u32, t: u64, reason: Reason },
    /// Queue occupancy at the sample instant `t`.
    Sample { t: u64, backlog_bytes: u64, backlog_pkts: u32 },
}

pub struct Pipe {
    qdisc: AnyQdisc<u32>,
    loss: Option<LossModel>,
    rate_bps: u64,
    delay_ns: u64,
    /// Time-varying rate and random delay, as in the simulator's link.
    rate: Option<RateModel>,
    delay: Option<DelayModel>,
    /// (time the packet reaches the queue, insertion number), meta
    ingress: BinaryHeap<Reverse<(u64, u64, MetaKey)>>,
    /// Packet in transmission: (end of transmission, meta).
    in_service: Option<(u64, Meta)>,
    egress: BinaryHeap<Reverse<(u64, u64, u32)>>,
    metas: Vec<Option<Meta>>,
    seqno: u64,
    sample_ns: u64,
    next_sample: u64,
    sink: QdiscOut<u32>,
    /// Packets handed to the qdisc, transmitted, dropped, marked.
    pub n_in: u64,
    pub n_tx: u64,
    pub n_drop: u64,
    pub n_mark: u64,
}

/// A `Meta` stored by index so the heap holds only plain integers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct MetaKey(u32);

impl Pipe {
    /// `start` is the time origin of the queue-sample grid; `sample_ns = 0` disables samples.
    pub fn new(
        qdisc: AnyQdisc<u32>,
        loss: Option<LossModel>,
        rate_bps: u64,
        delay_ns: u64,
        sample_ns: u64,
        start: u64,
    ) -> Self {
        assert!(rate_bps > 0, "link rate must be positive");
        Pipe {
            qdisc,
            loss,
            rate_bps,
            delay_ns,
            rate: None,
            delay: None,
            ingress: BinaryHeap::new(),
            in_service: None,
            egress: BinaryHeap::new(),
            metas: Vec::new(),
            seqno: 0,
            sample_ns,
            next_sample: if sample_ns > 0 { start } else { u64::MAX },
            sink: QdiscOut::default(),
            n_in: 0,
            n_tx: 0,
            n_drop: 0,
            n_mark: 0,
        }
    }

    /// The link's trace or schedule and its random delay (`None`: constant).
    pub fn with_variation(mut self, rate: Option<RateModel>, delay: Option<DelayModel>) -> Self {
        self.rate = rate;
        self.delay = delay;
        self
    }

    fn store(&mut self, m: Meta) {
        let i = m.idx as usize;
        if self.metas.len() <= i {
            self.metas.resize(i + 1, None);
        }
        self.metas[i] = Some(m);
    }

    /// Time of the next internal event (`u64::MAX` when idle and not sampling).
    pub fn next_event(&self) -> u64 {
        let mut t = self.next_sample;
        if let Some(Reverse((ti, _, _))) = self.ingress.peek() {
            t = t.min(*ti);
        }
        if let Some((te, _)) = self.in_service {
            t = t.min(te);
        }
        if let Some(Reverse((to, _, _))) = self.egress.peek() {
            t = t.min(*to);
        }
        t
    }

    /// A packet was read at `now`. The caller must have called `advance(now, ..)` first
    /// (so every event before `now` is settled); `advance` is called again here so a
    /// zero access delay enqueues at once.
    pub fn arrive(&mut self, m: Meta, now: u64, out: &mut Vec<Out>) {
        self.store(m);
        self.seqno += 1;
        self.ingress.push(Reverse((now.saturating_add(m.pre_ns), self.seqno, MetaKey(m.idx))));
        self.advance(now, out);
    }

    /// Processes every event with time `<= now`, in time order, appending outputs.
    pub fn advance(&mut self, now: u64, out: &mut Vec<Out>) {
        loop {
            let ti = self.ingress.peek().map(|Reverse((t, _, _))| *t).unwrap_or(u64::MAX);
            let tt = self.in_service.map(|(t, _)| t).unwrap_or(u64::MAX);
            let to = self.egress.peek().map(|Reverse((t, _, _))| *t).unwrap_or(u64::MAX);
            let ts = self.next_sample;
            let t = ti.min(tt).min(to).min(ts);
            if t > now || t == u64::MAX {
                break;
            }
            if ti == t {
                let Reverse((_, _, MetaKey(idx))) = self.ingress.pop().unwrap();
                self.enqueue(idx, t, out);
            } else if tt == t {
                self.tx_done(t, out);
            } else if to == t {
                let Reverse((_, _, idx)) = self.egress.pop().unwrap();
                self.metas[idx as usize] = None;
                out.push(Out::Deliver { idx, at: t });
            } else {
                out.push(Out::Sample {
                    t,
                    backlog_bytes: self.qdisc.backlog_bytes(),
                    backlog_pkts: self.qdisc.backlog_pkts(),
                });
                self.next_sample = t + self.sample_ns;
            }
        }
    }

    fn flush_sink(&mut self, t: u64, out: &mut Vec<Out>) {
        for &(idx, reason) in &self.sink.dropped {
            self.metas[idx as usize] = None;
            self.n_drop += 1;
            out.push(Out::Drop { idx, t, reason });
        }
        for &(idx, reason) in &self.sink.marked {
            self.n_mark += 1;
            out.push(Out::Mark { idx, t, reason });
        }
        self.sink.clear();
    }

    fn enqueue(&mut self, idx: u32, t: u64, out: &mut Vec<Out>) {
        let m = self.metas[idx as usize].expect("meta of a queued packet");
        self.n_in += 1;
        let item = QItem { pkt: idx, bytes: m.bytes, flow_hash: m.flow_hash, ect: m.ect, enq_ns: t };
        self.qdisc.enqueue(item, t, &mut self.sink);
        self.flush_sink(t, out);
        if self.in_service.is_none() {
            self.start_tx(t, out);
        }
    }

    fn start_tx(&mut self, t: u64, out: &mut Vec<Out>) {
        let next = self.qdisc.dequeue(t, &mut self.sink);
        self.flush_sink(t, out);
        if let Some(item) = next {
            let m = self.metas[item.pkt as usize].expect("meta of a dequeued packet");
            self.qdisc.tx_started(item.bytes);
            let done = match self.rate.as_mut() {
                None => t + tx_time_ns(item.bytes, self.rate_bps),
                Some(r) => r.finish(item.bytes, t),
            };
            self.in_service = Some((done, m));
        }
    }

    fn tx_done(&mut self, t: u64, out: &mut Vec<Out>) {
        let (_, m) = self.in_service.take().unwrap();
        self.qdisc.tx_finished();
        self.n_tx += 1;
        let fate = match self.loss.as_mut() {
            Some(l) => l.decide(m.ect),
            None => Fate::Pass,
        };
        match fate {
            Fate::Drop => {
                self.metas[m.idx as usize] = None;
                self.n_drop += 1;
                out.push(Out::Drop { idx: m.idx, t, reason: Reason::LossModel });
            }
            Fate::Pass | Fate::Mark => {
                if fate == Fate::Mark {
                    self.n_mark += 1;
                    out.push(Out::Mark { idx: m.idx, t, reason: Reason::LossModel });
                }
                self.seqno += 1;
                let wire = match self.delay.as_mut() {
                    None => t + self.delay_ns,
                    Some(d) => d.arrival(t),
                };
                self.egress.push(Reverse((wire + m.post_ns, self.seqno, m.idx)));
            }
        }
        self.start_tx(t, out);
    }

    pub fn backlog_bytes(&self) -> u64 {
        self.qdisc.backlog_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ccsim::qdisc::{DropRule, DropTailConfig, QdiscConfig};

    fn pipe(limit: u64, rule: DropRule, rate: u64, delay: u64) -> Pipe {
        let cfg = QdiscConfig::Droptail(DropTailConfig { limit, rule, count_in_service: false });
        let q = AnyQdisc::build(&cfg, rate, ccsim::rng::stream(1, "q"), "q").unwrap();
        Pipe::new(q, None, rate, delay, 0, 0)
    }

    fn meta(idx: u32, bytes: u32) -> Meta {
        Meta { idx, bytes, flow_hash: 0, ect: false, pre_ns: 0, post_ns: 0 }
    }

    fn delivers(out: &[Out]) -> Vec<(u32, u64)> {
        out.iter().filter_map(|o| if let Out::Deliver { idx, at } = o { Some((*idx, *at)) } else { None }).collect()
    }

    #[test]
    fn single_packet_departs_after_tx_time_plus_delay() {
        // 1500 B at 100 Mbit/s = 120 us; delay 10 ms.
        let mut p = pipe(100, DropRule::Packets, 100_000_000, 10_000_000);
        let mut out = Vec::new();
        p.arrive(meta(0, 1500), 1_000, &mut out);
        assert_eq!(p.next_event(), 1_000 + 120_000);
        p.advance(1_000 + 120_000, &mut out);
        assert!(delivers(&out).is_empty());
        assert_eq!(p.next_event(), 1_000 + 120_000 + 10_000_000);
        p.advance(u64::MAX - 1, &mut out);
        assert_eq!(delivers(&out), vec![(0, 10_121_000)]);
    }

    #[test]
    fn back_to_back_packets_are_spaced_by_serialisation() {
        let mut p = pipe(100, DropRule::Packets, 10_000_000, 0);
        let mut out = Vec::new();
        for i in 0..3 {
            p.arrive(meta(i, 1250), 0, &mut out); // 1 ms each at 10 Mbit/s
        }
        p.advance(10_000_000, &mut out);
        assert_eq!(delivers(&out), vec![(0, 1_000_000), (1, 2_000_000), (2, 3_000_000)]);
    }

    #[test]
    fn late_processing_keeps_virtual_times() {
        // The I/O thread may wake late; the schedule is computed from event times,
        // not from when `advance` is called.
        let mut p = pipe(100, DropRule::Packets, 10_000_000, 5_000_000);
        let mut out = Vec::new();
        p.arrive(meta(0, 1250), 0, &mut out);
        p.advance(500_000, &mut out);
        p.arrive(meta(1, 1250), 500_000, &mut out);
        p.advance(100_000_000, &mut out);
        assert_eq!(delivers(&out), vec![(0, 6_000_000), (1, 7_000_000)]);
    }

    #[test]
    fn droptail_overflow_drops_and_reports() {
        let mut p = pipe(2, DropRule::Packets, 1_000_000, 0);
        let mut out = Vec::new();
        // first goes into service, two queue, the fourth is dropped
        for i in 0..4 {
            p.arrive(meta(i, 1000), 0, &mut out);
        }
        let drops: Vec<_> = out.iter().filter(|o| matches!(o, Out::Drop { .. })).collect();
        assert_eq!(drops.len(), 1);
        assert!(matches!(drops[0], Out::Drop { idx: 3, t: 0, reason: Reason::Overflow }));
        assert_eq!(p.n_drop, 1);
    }

    #[test]
    fn access_delays_reorder_only_by_time() {
        let mut p = pipe(100, DropRule::Packets, 1_000_000_000, 1_000);
        let mut out = Vec::new();
        p.arrive(Meta { pre_ns: 5_000, ..meta(0, 125) }, 0, &mut out); // 1 us tx
        p.arrive(Meta { pre_ns: 1_000, post_ns: 100, ..meta(1, 125) }, 0, &mut out);
        p.advance(1_000_000, &mut out);
        assert_eq!(delivers(&out), vec![(1, 1_000 + 1_000 + 1_000 + 100), (0, 5_000 + 1_000 + 1_000)]);
    }

    #[test]
    fn a_trace_link_delivers_at_its_opportunities() {
        use ccsim::link_rate::RateVarConfig;
        let rate = RateModel::new(&RateVarConfig::Trace { ms: vec![2, 3, 10], bytes: 1500 }, "t").unwrap();
        let mut p = pipe(100, DropRule::Packets, 1_000_000, 1_000).with_variation(Some(rate), None);
        let mut out = Vec::new();
        for i in 0..4 {
            p.arrive(meta(i, 1500), 0, &mut out);
        }
        p.advance(100_000_000, &mut out);
        let at: Vec<u64> = delivers(&out).iter().map(|d| d.1).collect();
        assert_eq!(at, vec![2_001_000, 3_001_000, 10_001_000, 12_001_000]);
    }

    #[test]
    fn jitter_reorders_only_when_asked() {
        use ccsim::link_jitter::{JitterConfig, JitterDist};
        for reorder in [false, true] {
            let cfg = JitterConfig { sigma_ns: 5_000_000, dist: JitterDist::Normal, correlation: 0.0, reorder };
            let d = DelayModel::new(&cfg, 20_000_000, ccsim::rng::stream(1, "j"), "j").unwrap();
            let mut p = pipe(1000, DropRule::Packets, 1_000_000_000, 20_000_000).with_variation(None, Some(d));
            let mut out = Vec::new();
            for i in 0..500 {
                p.arrive(meta(i, 125), i as u64 * 100_000, &mut out);
            }
            p.advance(u64::MAX - 1, &mut out);
            let order: Vec<u32> = delivers(&out).iter().map(|d| d.0).collect();
            let swaps = order.windows(2).filter(|w| w[1] < w[0]).count();
            assert_eq!(order.len(), 500);
            if reorder {
                assert!(swaps > 50, "{swaps} reorderings");
            } else {
                assert_eq!(swaps, 0);
            }
        }
    }

    #[test]
    fn samples_on_grid() {
        let cfg = QdiscConfig::Droptail(DropTailConfig::default());
        let q = AnyQdisc::build(&cfg, 1_000_000, ccsim::rng::stream(1, "q"), "q").unwrap();
        let mut p = Pipe::new(q, None, 1_000_000, 0, 1_000_000, 1);
        let mut out = Vec::new();
        for i in 0..3 {
            p.arrive(meta(i, 1000), 0, &mut out); // 8 ms each
        }
        p.advance(2_500_000, &mut out);
        let s: Vec<_> = out
            .iter()
            .filter_map(|o| if let Out::Sample { t, backlog_pkts, .. } = o { Some((*t, *backlog_pkts)) } else { None })
            .collect();
        assert_eq!(s, vec![(1, 2), (1_000_001, 2), (2_000_001, 2)]);
    }
}
