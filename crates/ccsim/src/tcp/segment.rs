//! The TCP segment as the simulator carries it: the header fields Linux TCP uses,
//! with 64-bit sequence numbers (no wrap-around to handle in a simulation).
//!
//! A segment travels inside a simulator packet; its on-the-wire size is
//! [`Segment::wire_bytes`].

use crate::time::Nanos;

/// One SACK block `[start, end)` in sequence space.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SackBlock {
    pub start: u64,
    pub end: u64,
}

/// At most four SACK blocks fit in the 40-byte option space next to no timestamps;
/// Linux sends at most three when timestamps are on (RFC 2018 §3). We keep room
/// for four (the first may be a DSACK block, RFC 2883).
pub const MAX_SACK_BLOCKS: usize = 4;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Segment {
    /// First payload byte (sender to receiver direction).
    pub seq: u64,
    /// Payload bytes; 0 for a pure ACK.
    pub len: u32,
    /// Cumulative acknowledgement: next byte expected (receiver to sender).
    pub ack: u64,
    /// SACK blocks, `sack[..n_sack]` are valid.
    pub sack: [SackBlock; MAX_SACK_BLOCKS],
    pub n_sack: u8,
    /// `sack[0]` is a DSACK block (RFC 2883): it reports a duplicate.
    pub dsack: bool,
    /// ECN-Echo (receiver tells the sender it saw CE), RFC 3168 §6.1.3.
    pub ece: bool,
    /// Congestion Window Reduced (sender tells the receiver it reacted).
    pub cwr: bool,
    /// Timestamps option (RFC 7323): sender's clock when sent, and the echoed value.
    pub tsval: Nanos,
    pub tsecr: Nanos,
    /// Receive window the receiver advertises, in bytes (already scaled).
    pub rwnd: u64,
    /// Set by the sender on retransmissions (for traces only; the receiver ignores it).
    pub retrans: bool,
    /// PSH: the segment ends the data the application has written so far (Linux
    /// `tcp_push` marks the last skb of a write). The receiver treats it as the end of
    /// a message (`tcp_measure_rcv_mss` sets `ICSK_ACK_PUSHED`).
    pub psh: bool,
}

impl Segment {
    /// End of the payload in sequence space.
    #[inline]
    pub fn end_seq(&self) -> u64 {
        self.seq + self.len as u64
    }

    /// The SACK blocks carried.
    #[inline]
    pub fn sacks(&self) -> &[SackBlock] {
        &self.sack[..self.n_sack as usize]
    }

    /// IP packet size: payload + `header_bytes` (IP 20 + TCP 20 + timestamps 12 = 52 by
    /// default, so a 1448-byte MSS makes a 1500-byte packet) + the SACK option
    /// (2 bytes + 8 per block, padded to 4 bytes) when blocks are present.
    #[inline]
    pub fn wire_bytes(&self, header_bytes: u32) -> u32 {
        let sack = if self.n_sack > 0 { (2 + 8 * self.n_sack as u32).div_ceil(4) * 4 } else { 0 };
        self.len + header_bytes + sack
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_segment_is_1500_bytes_with_default_header() {
        let s = Segment { len: 1448, ..Default::default() };
        assert_eq!(s.wire_bytes(52), 1500);
    }

    #[test]
    fn sack_option_is_padded() {
        let mut s = Segment::default();
        s.n_sack = 1;
        assert_eq!(s.wire_bytes(52), 52 + 12);
        s.n_sack = 3;
        assert_eq!(s.wire_bytes(52), 52 + 28);
    }
}
