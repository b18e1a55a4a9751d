//! A unidirectional link: a queue discipline feeding a serialiser at `rate_bps`, then
//! a propagation pipe of `delay_ns`, with an optional loss model on the wire.
//!
//! Packets leave the pipe in the order they entered it (constant delay), so the pipe
//! is a FIFO and only its head needs an event in the global queue: the heap holds at
//! most one delivery event per link instead of one per packet in flight.
//!
//! A link may instead have a time-varying rate (`link_rate`: Mahimahi trace or
//! schedule) or a random delay (`link_jitter`); both live behind one pointer
//! (`var`) and are flagged in the fields the hot path reads anyway (`rate_bps = 0`,
//! `delay_ns = DELAY_VARIES`), so constant links do no extra work. An order-keeping
//! random delay still fills the FIFO (its delivery times never decrease); a
//! reordering one keeps its packets in a heap and gives each its own delivery event,
//! which finds the FIFO empty.

use crate::ids::{NodeId, PacketId};
use crate::link_jitter::DelayModel;
use crate::link_rate::RateModel;
use crate::loss::LossModel;
use crate::qdisc::AnyQdisc;
use crate::time::Nanos;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// `Link::delay_ns` of a link whose delay is drawn by its `DelayModel`.
pub const DELAY_VARIES: Nanos = Nanos::MAX;

pub struct Link {
    pub name: String,
    pub from: NodeId,
    pub to: NodeId,
    /// 0: the rate model in `var` serialises.
    pub rate_bps: u64,
    /// `DELAY_VARIES`: the delay model in `var` draws each packet's delay.
    pub delay_ns: Nanos,
    pub qdisc: AnyQdisc<PacketId>,
    /// Boxed: most links have none, and the link stays a few cache lines.
    pub loss: Option<Box<LossModel>>,
    pub monitor: bool,
    /// Log every departure into the link log.
    pub log: bool,
    /// Write every departure to the link's packet capture.
    pub pcap: bool,
    /// The packet being serialised, if any.
    pub in_service: Option<PacketId>,
    /// Packets on the wire with their arrival times, oldest first.
    pub pipe: VecDeque<(Nanos, PacketId)>,
    /// Packets and bytes that finished serialisation (offered to the wire).
    pub tx_pkts: u64,
    pub tx_bytes: u64,
    /// Time-varying rate and/or random delay; `None` on constant links.
    pub var: Option<Box<LinkVar>>,
}

/// The rarely used parts of a link.
pub struct LinkVar {
    pub rate: Option<RateModel>,
    pub delay: Option<DelayModel>,
    /// Reordering delay: packets on the wire by (arrival, entry number).
    pub heap: BinaryHeap<Reverse<(Nanos, u64, PacketId)>>,
    pub entered: u64,
}

impl LinkVar {
    /// `None` when the link has neither (the fast path).
    pub fn new(rate: Option<RateModel>, delay: Option<DelayModel>) -> Option<Box<LinkVar>> {
        if rate.is_none() && delay.is_none() {
            return None;
        }
        Some(Box::new(LinkVar { rate, delay, heap: BinaryHeap::new(), entered: 0 }))
    }

    /// Whether packets may overtake each other on this link's wire.
    #[inline]
    pub fn reorders(&self) -> bool {
        self.delay.as_ref().is_some_and(|d| d.reorder)
    }
}
