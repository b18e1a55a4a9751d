//! ccsim: the packet-level discrete-event simulator behind ccbench.
//!
//! Time is integer nanoseconds; events are a plain enum in one binary heap keyed by
//! `(time, insertion sequence)`; entities live in arenas addressed by typed ids; and
//! every random process draws from its own stream derived from the run seed.

pub mod app;
pub mod config;
pub mod error;
pub mod estimate;
pub mod event;
pub mod fabric;
pub mod fifo;
pub mod ids;
pub mod link;
pub mod link_jitter;
pub mod link_rate;
pub mod loss;
pub mod packet;
pub mod pcap;
pub mod qdisc;
pub mod rng;
pub mod routing;
pub mod sim;
pub mod tcp;
pub mod time;
pub mod topology;
pub mod trace;

pub use config::SimConfig;
pub use error::ConfigError;
pub use sim::{run_json, Finished, RunStats, Simulation};
