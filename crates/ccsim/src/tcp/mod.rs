//! TCP that behaves like Linux: sender, receiver, congestion control.
//!
//! Sender and receiver are sans-IO ([`sender::TcpSender`], [`receiver::TcpReceiver`]):
//! no clock, no event queue, no packets; the simulator passes `now` and carries
//! [`Segment`]s between them.

pub mod cc;
pub mod config;
pub mod minmax;
pub mod pacing;
pub mod rate;
pub mod receiver;
pub mod rtt;
pub mod scoreboard;
pub mod segment;
pub mod sender;

pub use config::{CcConfig, RecoveryMode, SndbufMode, TcpConfig};
pub use pacing::PacingMode;
pub use receiver::{Arrival, EcnMode, ReceiverConfig, TcpReceiver};
pub use segment::{SackBlock, Segment, MAX_SACK_BLOCKS};
pub use sender::{SenderState, SenderStats, TcpSender};
