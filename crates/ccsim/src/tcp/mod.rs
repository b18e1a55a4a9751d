//! TCP that behaves like Linux: sender, receiver, congestion control.

pub mod config;
pub mod segment;

pub use config::TcpConfig;
pub use segment::{SackBlock, Segment, MAX_SACK_BLOCKS};
