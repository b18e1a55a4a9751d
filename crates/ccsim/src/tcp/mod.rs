//! TCP that behaves like Linux: sender, receiver, congestion control.

pub mod receiver;
pub mod segment;

pub use receiver::{Arrival, EcnMode, ReceiverConfig, TcpReceiver, TCP_MAX_QUICKACKS};
pub use segment::{SackBlock, Segment, MAX_SACK_BLOCKS};
