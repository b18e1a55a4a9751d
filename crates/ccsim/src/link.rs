//! A unidirectional link: a queue discipline feeding a serialiser at `rate_bps`, then
//! a propagation pipe of `delay_ns`, with an optional loss model on the wire.
//!
//! Packets leave the pipe in the order they entered it (constant delay), so the pipe
//! is a FIFO and only its head needs an event in the global queue: the heap holds at
//! most one delivery event per link instead of one per packet in flight.

use crate::ids::{NodeId, PacketId};
use crate::loss::LossModel;
use crate::qdisc::AnyQdisc;
use crate::time::Nanos;
use std::collections::VecDeque;

pub struct Link {
    pub name: String,
    pub from: NodeId,
    pub to: NodeId,
    pub rate_bps: u64,
    pub delay_ns: Nanos,
    pub qdisc: AnyQdisc<PacketId>,
    /// Boxed: most links have none, and the link stays a few cache lines.
    pub loss: Option<Box<LossModel>>,
    pub monitor: bool,
    /// Log every departure into the link log.
    pub log: bool,
    /// The packet being serialised, if any.
    pub in_service: Option<PacketId>,
    /// Packets on the wire with their arrival times, oldest first.
    pub pipe: VecDeque<(Nanos, PacketId)>,
    /// Packets and bytes that finished serialisation (offered to the wire).
    pub tx_pkts: u64,
    pub tx_bytes: u64,
}
