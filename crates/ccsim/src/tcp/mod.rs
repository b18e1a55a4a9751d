//! TCP that behaves like Linux: sender, receiver, congestion control.

pub mod segment;

pub use segment::{SackBlock, Segment, MAX_SACK_BLOCKS};
