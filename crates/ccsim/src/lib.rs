//! ccsim: the packet-level discrete-event simulator behind ccbench.
//!
//! Time is integer nanoseconds; events are a plain enum in one binary heap keyed by
//! `(time, insertion sequence)`; entities live in arenas addressed by typed ids; and
//! every random process draws from its own stream derived from the run seed.

pub mod error;
pub mod ids;
pub mod loss;
pub mod qdisc;
pub mod rng;
pub mod time;
pub mod tcp;
