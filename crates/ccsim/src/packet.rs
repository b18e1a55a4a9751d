//! Packets in flight and the pool that recycles their slots.

use crate::ids::{FlowId, NodeId, PacketId};
use crate::tcp::Segment;
use crate::time::Nanos;

#[derive(Clone, Copy, Debug, Default)]
pub struct Packet {
    pub flow: FlowId,
    /// Connection within the flow (parallel connections), 0 otherwise.
    pub conn: u8,
    pub src: NodeId,
    pub dst: NodeId,
    /// Size on the wire (IP packet), what queues count.
    pub bytes: u32,
    /// ECN-capable transport codepoint (ECT(0)).
    pub ect: bool,
    /// Congestion Experienced, set by a marking qdisc or loss element.
    pub ce: bool,
    /// Data direction (sender to receiver) rather than the ACK direction.
    pub to_receiver: bool,
    /// UDP: row of the message in the packets table.
    pub msg: u32,
    /// TCP header and payload description (unused for UDP).
    pub seg: Segment,
}

/// Slab of packets addressed by `PacketId`; freed slots are reused, so a
/// steady-state run allocates nothing per packet.
#[derive(Default)]
pub struct PacketPool {
    slots: Vec<Packet>,
    free: Vec<u32>,
}

impl PacketPool {
    #[inline]
    pub fn alloc(&mut self, p: Packet) -> PacketId {
        if let Some(i) = self.free.pop() {
            self.slots[i as usize] = p;
            PacketId(i)
        } else {
            self.slots.push(p);
            PacketId(self.slots.len() as u32 - 1)
        }
    }

    #[inline]
    pub fn free(&mut self, id: PacketId) {
        self.free.push(id.0);
    }

    #[inline]
    pub fn get(&self, id: PacketId) -> &Packet {
        &self.slots[id.idx()]
    }

    #[inline]
    pub fn get_mut(&mut self, id: PacketId) -> &mut Packet {
        &mut self.slots[id.idx()]
    }

    /// Slots ever allocated (the peak number of packets alive at once).
    pub fn capacity_used(&self) -> usize {
        self.slots.len()
    }
}

/// A timestamp that may be missing; `NEVER` marks "did not happen".
pub const NEVER: Nanos = Nanos::MAX;
