//! Queue disciplines.
//!
//! A qdisc is generic over its payload `P` (a packet id in the simulator, a buffer
//! index in the emulator) and takes `now` as an argument: it never reads a clock,
//! so the emulator runs the very same code in real time.
//!
//! Drops and ECN marks decided inside `enqueue`/`dequeue` are reported through a
//! reusable [`QdiscOut`] sink, because some disciplines drop a packet other than the
//! one arriving (FQ-CoDel drops from the fattest flow) or drop at dequeue (CoDel).
//! A packet reported in `marked` is still queued (enqueue-time marks) or is the one
//! returned (dequeue-time marks): the caller sets its CE bit. Only ECT packets are
//! ever marked.
//!
//! | `kind`     | file          | follows                                              |
//! |------------|---------------|------------------------------------------------------|
//! | `droptail` | `droptail.rs` | pfifo/bfifo/dummynet (Stewart note §1.4)              |
//! | `red`      | `red.rs`      | Linux `sch_red` + gentle/byte mode from Floyd, ns-2   |
//! | `codel`    | `codel.rs`    | Linux `sch_codel`, `codel_impl.h`                     |
//! | `fq_codel` | `fq_codel.rs` | Linux `sch_fq_codel`                                  |
//! | `pie`      | `pie.rs`      | Linux `sch_pie`/`pie.h`, RFC 8033                     |
//! | `pecn`     | `pecn.rs`     | Persistent ECN, Wei thesis Algorithm 3                |
//!
//! Config fields that are durations carry their unit in the name (`target_us`), as
//! Linux's netlink attributes do.

pub mod codel;
pub mod droptail;
pub mod fq_codel;
pub mod pecn;
pub mod pie;
pub mod red;

use crate::error::ConfigError;
use crate::rng::Rng;
use crate::time::Nanos;
use serde::{Deserialize, Serialize};

pub use codel::{Codel, CodelConfig};
pub use droptail::{DropRule, DropTail, DropTailConfig};
pub use fq_codel::{FqCodel, FqCodelConfig};
pub use pecn::{Pecn, PecnConfig, PecnUnit};
pub use pie::{Pie, PieConfig};
pub use red::{Red, RedConfig, RedUnit};

/// What a qdisc needs to know about a packet.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QItem<P> {
    pub pkt: P,
    /// Bytes the packet occupies in the queue (IP length).
    pub bytes: u32,
    /// Flow hash for per-flow scheduling (FQ-CoDel).
    pub flow_hash: u32,
    /// ECN-capable transport: the qdisc may mark instead of dropping.
    pub ect: bool,
    /// Set by `enqueue` to the arrival time; CoDel and PIE use it for sojourn time.
    pub enq_ns: Nanos,
}

/// Why a qdisc dropped or marked a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reason {
    /// Queue limit reached (tail drop).
    Overflow,
    /// Random early drop/mark (RED between min and max threshold, PIE).
    Early,
    /// Forced drop/mark (RED above max threshold, or non-gentle RED).
    Forced,
    /// CoDel's control law.
    Codel,
    /// Persistent-ECN marking switch on.
    Persistent,
    /// A link's loss model (not a queue decision; listed so one enum names every drop).
    LossModel,
}

impl Reason {
    /// Every reason, in the order used for its numeric code in traces.
    pub const ALL: [Reason; 6] =
        [Reason::Overflow, Reason::Early, Reason::Forced, Reason::Codel, Reason::Persistent, Reason::LossModel];

    /// Numeric code of this reason (its index in `ALL`).
    pub fn code(self) -> u8 {
        self as u8
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Reason::Overflow => "overflow",
            Reason::Early => "early",
            Reason::Forced => "forced",
            Reason::Codel => "codel",
            Reason::Persistent => "persistent",
            Reason::LossModel => "loss_model",
        }
    }
}

/// Sink for drop and mark decisions. Cleared by the caller after each call; its
/// vectors keep their capacity, so steady state allocates nothing.
#[derive(Debug)]
pub struct QdiscOut<P> {
    pub dropped: Vec<(P, Reason)>,
    pub marked: Vec<(P, Reason)>,
}

impl<P> Default for QdiscOut<P> {
    fn default() -> Self {
        QdiscOut { dropped: Vec::new(), marked: Vec::new() }
    }
}

impl<P> QdiscOut<P> {
    pub fn clear(&mut self) {
        self.dropped.clear();
        self.marked.clear();
    }
}

/// The interface every queue discipline implements (shaped like Linux's
/// `Qdisc_ops`: enqueue, dequeue, and the backlog counters).
pub trait Qdisc<P: Copy> {
    /// Offers a packet; it is either queued or reported in `out.dropped`
    /// (possibly along with other packets the discipline chose to drop).
    fn enqueue(&mut self, item: QItem<P>, now: Nanos, out: &mut QdiscOut<P>);
    /// Takes the next packet to transmit, if any. May drop (CoDel) or mark packets
    /// on the way, reported in `out`.
    fn dequeue(&mut self, now: Nanos, out: &mut QdiscOut<P>) -> Option<QItem<P>>;
    /// Bytes queued (not counting the packet in transmission).
    fn backlog_bytes(&self) -> u64;
    /// Packets queued (not counting the packet in transmission).
    fn backlog_pkts(&self) -> u32;
    /// The link started transmitting a packet of `bytes` taken from this qdisc.
    fn tx_started(&mut self, _bytes: u32) {}
    /// The link finished transmitting that packet.
    fn tx_finished(&mut self) {}
}

/// Scenario description of a queue discipline; `kind` selects the variant.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum QdiscConfig {
    Droptail(DropTailConfig),
    Red(RedConfig),
    Codel(CodelConfig),
    FqCodel(FqCodelConfig),
    Pie(PieConfig),
    Pecn(PecnConfig),
}

impl Default for QdiscConfig {
    fn default() -> Self {
        QdiscConfig::Droptail(DropTailConfig::default())
    }
}

/// Every built-in discipline behind one enum: static dispatch on the hot path. The
/// disciplines with much state are boxed so that a link stays small (the enum was
/// 216 bytes for a 64-byte drop-tail, and every packet-hop touches its link).
#[derive(Debug)]
pub enum AnyQdisc<P> {
    DropTail(DropTail<P>),
    Red(Box<Red<P>>),
    Codel(Box<Codel<P>>),
    FqCodel(Box<FqCodel<P>>),
    Pie(Box<Pie<P>>),
    Pecn(Box<Pecn<P>>),
}

impl<P: Copy> AnyQdisc<P> {
    /// Builds the discipline described by `cfg` for a link of `rate_bps`. `rng` is the
    /// discipline's own random stream; `field` names the config path for errors.
    pub fn build(cfg: &QdiscConfig, rate_bps: u64, rng: Rng, field: &str) -> Result<Self, ConfigError> {
        Ok(match cfg {
            QdiscConfig::Droptail(c) => AnyQdisc::DropTail(DropTail::new(c, field)?),
            QdiscConfig::Red(c) => AnyQdisc::Red(Box::new(Red::new(c, rate_bps, rng, field)?)),
            QdiscConfig::Codel(c) => AnyQdisc::Codel(Box::new(Codel::new(c, field)?)),
            QdiscConfig::FqCodel(c) => AnyQdisc::FqCodel(Box::new(FqCodel::new(c, field)?)),
            QdiscConfig::Pie(c) => AnyQdisc::Pie(Box::new(Pie::new(c, rng, field)?)),
            QdiscConfig::Pecn(c) => AnyQdisc::Pecn(Box::new(Pecn::new(c, field)?)),
        })
    }
}

macro_rules! dispatch {
    ($self:ident, $q:ident => $e:expr) => {
        match $self {
            AnyQdisc::DropTail($q) => $e,
            AnyQdisc::Red($q) => $e,
            AnyQdisc::Codel($q) => $e,
            AnyQdisc::FqCodel($q) => $e,
            AnyQdisc::Pie($q) => $e,
            AnyQdisc::Pecn($q) => $e,
        }
    };
}

impl<P: Copy> Qdisc<P> for AnyQdisc<P> {
    #[inline]
    fn enqueue(&mut self, item: QItem<P>, now: Nanos, out: &mut QdiscOut<P>) {
        dispatch!(self, q => q.enqueue(item, now, out))
    }
    #[inline]
    fn dequeue(&mut self, now: Nanos, out: &mut QdiscOut<P>) -> Option<QItem<P>> {
        dispatch!(self, q => q.dequeue(now, out))
    }
    #[inline]
    fn backlog_bytes(&self) -> u64 {
        dispatch!(self, q => q.backlog_bytes())
    }
    #[inline]
    fn backlog_pkts(&self) -> u32 {
        dispatch!(self, q => q.backlog_pkts())
    }
    #[inline]
    fn tx_started(&mut self, bytes: u32) {
        dispatch!(self, q => q.tx_started(bytes))
    }
    #[inline]
    fn tx_finished(&mut self) {
        dispatch!(self, q => q.tx_finished())
    }
}

#[cfg(test)]
pub(crate) mod testutil {
    //! Helpers shared by the qdisc unit tests.
    use super::*;

    pub fn item(id: u32, bytes: u32) -> QItem<u32> {
        QItem { pkt: id, bytes, flow_hash: 0, ect: false, enq_ns: 0 }
    }

    pub fn item_flow(id: u32, bytes: u32, flow: u32, ect: bool) -> QItem<u32> {
        QItem { pkt: id, bytes, flow_hash: flow, ect, enq_ns: 0 }
    }

    /// Outcome of [`overload_run`], measured after the warm-up.
    #[derive(Debug)]
    pub struct OverloadResult {
        pub drop_frac: f64,
        pub mark_frac: f64,
        pub mean_delay_ms: f64,
        pub overflow: u64,
    }

    /// Drives `q` as the queue of a 12 Mbit/s link (1500-byte packets, 1 ms each) fed
    /// by unresponsive Poisson arrivals at `load` times the link rate, for 80 s, and
    /// measures drops, marks and queueing delay over the last 60 s. Packets are ECT
    /// (marks are counted, the packet still goes through).
    pub fn overload_run<Q: Qdisc<u32>>(q: &mut Q, load: f64, seed: u64) -> OverloadResult {
        use crate::rng::stream;
        use crate::time::NS_PER_MS;
        use rand_distr::{Distribution, Exp};
        let mut out = QdiscOut::default();
        let mut rng = stream(seed, "overload/arrivals");
        let gap = Exp::new(load * 1000.0 / 1e9).unwrap(); // per ns
        let tx = NS_PER_MS;
        let (warmup, end) = (20_000 * NS_PER_MS, 80_000 * NS_PER_MS);
        let mut t_arr = gap.sample(&mut rng) as u64;
        let mut busy_until: Option<Nanos> = None;
        let (mut arrivals, mut drops, mut marks, mut sent, mut delay_sum, mut overflow) =
            (0u64, 0u64, 0u64, 0u64, 0u64, 0u64);
        let mut id = 0u32;
        while t_arr < end {
            out.clear();
            let now;
            match busy_until {
                Some(b) if b <= t_arr => {
                    now = b;
                    busy_until = q.dequeue(b, &mut out).map(|p| {
                        if b >= warmup {
                            sent += 1;
                            delay_sum += b - p.enq_ns;
                        }
                        b + tx
                    });
                }
                _ => {
                    now = t_arr;
                    q.enqueue(item_flow(id, 1500, 1, true), now, &mut out);
                    id = id.wrapping_add(1);
                    if now >= warmup {
                        arrivals += 1;
                    }
                    if busy_until.is_none() {
                        busy_until = q.dequeue(now, &mut out).map(|_| now + tx);
                    }
                    t_arr += gap.sample(&mut rng) as u64;
                }
            }
            if now >= warmup {
                drops += out.dropped.len() as u64;
                marks += out.marked.len() as u64;
                overflow += out.dropped.iter().filter(|d| d.1 == Reason::Overflow).count() as u64;
            }
        }
        OverloadResult {
            drop_frac: drops as f64 / arrivals as f64,
            mark_frac: marks as f64 / arrivals as f64,
            mean_delay_ms: delay_sum as f64 / sent.max(1) as f64 / 1e6,
            overflow,
        }
    }
}

#[cfg(test)]
mod config_tests {
    use super::*;
    use crate::rng::stream;

    fn parse(s: &str) -> Result<QdiscConfig, serde_json::Error> {
        serde_json::from_str(s)
    }

    #[test]
    fn every_kind_parses_with_defaults_and_builds() {
        let cases = [
            (r#"{"kind":"droptail"}"#, QdiscConfig::Droptail(DropTailConfig::default())),
            (r#"{"kind":"red"}"#, QdiscConfig::Red(RedConfig::default())),
            (r#"{"kind":"codel"}"#, QdiscConfig::Codel(CodelConfig::default())),
            (r#"{"kind":"fq_codel"}"#, QdiscConfig::FqCodel(FqCodelConfig::default())),
            (r#"{"kind":"pie"}"#, QdiscConfig::Pie(PieConfig::default())),
            (r#"{"kind":"pecn"}"#, QdiscConfig::Pecn(PecnConfig::default())),
        ];
        for (s, want) in cases {
            let c = parse(s).unwrap();
            assert_eq!(c, want, "{s}");
            let back = serde_json::to_string(&c).unwrap();
            assert_eq!(parse(&back).unwrap(), c);
            AnyQdisc::<u32>::build(&c, 10_000_000, stream(1, "q"), "q").unwrap();
        }
    }

    #[test]
    fn fields_parse_and_unknown_fields_are_rejected() {
        let c = parse(r#"{"kind":"red","min_th":5,"max_th":15,"unit":"packets","ecn":true,"gentle":true,"w_q":0.002}"#)
            .unwrap();
        match c {
            QdiscConfig::Red(r) => {
                assert_eq!(
                    (r.min_th, r.max_th, r.unit, r.ecn, r.gentle),
                    (Some(5.0), Some(15.0), RedUnit::Packets, true, true)
                )
            }
            _ => panic!(),
        }
        let c = parse(r#"{"kind":"pecn","limit":100,"upper":80,"lower":20,"unit":"bytes"}"#).unwrap();
        assert_eq!(
            c,
            QdiscConfig::Pecn(PecnConfig { limit: 100, unit: PecnUnit::Bytes, upper: Some(80), lower: Some(20) })
        );
        for bad in [
            r#"{"kind":"red","maxp":0.1}"#,
            r#"{"kind":"codel","target":5}"#,
            r#"{"kind":"fq_codel","quantum":1514,"bogus":1}"#,
            r#"{"kind":"pie","alpha":0.125,"gamma":1}"#,
            r#"{"kind":"pecn","high":3}"#,
            r#"{"kind":"sfq"}"#,
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn build_reports_the_field_path() {
        let c = parse(r#"{"kind":"pie","alpha":5}"#).unwrap();
        let e = AnyQdisc::<u32>::build(&c, 1_000_000, stream(1, "q"), "topology.links[0].queue").unwrap_err();
        assert_eq!(e.field, "topology.links[0].queue.alpha");
    }
}
