//! Columnar traces: one `Vec` per column, handed to Python as numpy arrays at the end
//! of a run without any per-row objects. Times are integer nanoseconds here; the
//! bindings convert them to float seconds, and `NEVER` to NaN.

use crate::packet::NEVER;
use crate::time::Nanos;

/// One row per application message (UDP datagram or TCP write).
#[derive(Default, Debug, Clone)]
pub struct PacketTrace {
    pub flow: Vec<u32>,
    pub msg: Vec<u64>,
    pub bytes: Vec<u32>,
    pub t_write: Vec<Nanos>,
    pub t_first_tx: Vec<Nanos>,
    pub t_arrive: Vec<Nanos>,
    pub t_deliver: Vec<Nanos>,
}

impl PacketTrace {
    /// Adds a message row; returns its index.
    pub fn push(&mut self, flow: u32, msg: u64, bytes: u32, t_write: Nanos) -> u32 {
        self.flow.push(flow);
        self.msg.push(msg);
        self.bytes.push(bytes);
        self.t_write.push(t_write);
        self.t_first_tx.push(NEVER);
        self.t_arrive.push(NEVER);
        self.t_deliver.push(NEVER);
        self.flow.len() as u32 - 1
    }

    pub fn len(&self) -> usize {
        self.flow.len()
    }

    pub fn is_empty(&self) -> bool {
        self.flow.is_empty()
    }
}

/// Queue occupancy samples of monitored links.
#[derive(Default, Debug, Clone)]
pub struct QueueTrace {
    pub link: Vec<u32>,
    pub t: Vec<Nanos>,
    pub backlog_bytes: Vec<u64>,
    pub backlog_pkts: Vec<u32>,
}

/// Drops and ECN marks, wherever they happen.
#[derive(Default, Debug, Clone)]
pub struct DropTrace {
    pub link: Vec<u32>,
    pub t: Vec<Nanos>,
    pub flow: Vec<u32>,
    /// UDP: message number; TCP: first sequence number of the segment.
    pub seq: Vec<u64>,
    /// 0 = drop, 1 = mark.
    pub kind: Vec<u8>,
    /// `qdisc::Reason` as its index in `Reason::ALL`.
    pub reason: Vec<u8>,
}

/// TCP state samples.
#[derive(Default, Debug, Clone)]
pub struct StateTrace {
    pub flow: Vec<u32>,
    /// Connection within the flow (parallel connections).
    pub conn: Vec<u8>,
    pub t: Vec<Nanos>,
    pub cwnd_pkts: Vec<f64>,
    pub ssthresh_pkts: Vec<f64>,
    pub srtt_ns: Vec<Nanos>,
    pub rttvar_ns: Vec<Nanos>,
    pub rto_ns: Vec<Nanos>,
    pub inflight_pkts: Vec<u32>,
    pub sacked_pkts: Vec<u32>,
    pub lost_pkts: Vec<u32>,
    pub retrans_pkts: Vec<u32>,
    pub ca_state: Vec<u8>,
    pub pacing_rate_bps: Vec<f64>,
    pub delivered_pkts: Vec<u64>,
}

/// Every packet that finished serialisation on a logged link.
#[derive(Default, Debug, Clone)]
pub struct LinkLog {
    pub link: Vec<u32>,
    /// End of serialisation (the packet is on the wire).
    pub t: Vec<Nanos>,
    pub flow: Vec<u32>,
    pub bytes: Vec<u32>,
    /// Data direction (true) or ACK direction (false).
    pub data: Vec<bool>,
    /// TCP: data sequence number (data) or cumulative ACK (ACK); UDP: message number.
    pub seq: Vec<u64>,
}

/// Per-flow totals at the end of a run.
#[derive(Default, Debug, Clone)]
pub struct FlowSummary {
    pub name: String,
    pub transport: &'static str,
    pub cc: String,
    pub start_ns: Nanos,
    pub end_ns: Nanos,
    pub msgs_sent: u64,
    pub msgs_delivered: u64,
    pub bytes_sent: u64,
    pub bytes_delivered: u64,
    /// Data packets sent (UDP datagrams, TCP data segments incl. retransmissions) and
    /// those dropped on the way (queues and loss models).
    pub pkts_sent: u64,
    pub pkts_dropped: u64,
    pub retrans_bytes: u64,
    pub loss_events: u64,
    pub timeouts: u64,
    pub fast_recoveries: u64,
    pub rtt_p50_ns: Nanos,
    pub rtt_p95_ns: Nanos,
    pub completion_ns: Nanos,
}

/// All traces of a run.
#[derive(Default, Debug, Clone)]
pub struct Traces {
    pub packets: PacketTrace,
    pub queue: QueueTrace,
    pub drops: DropTrace,
    pub state: StateTrace,
    pub link_log: LinkLog,
}

/// Percentile (nearest-rank on the sorted samples) of `v`; sorts in place.
pub fn percentile(v: &mut [u32], q: f64) -> Option<u32> {
    if v.is_empty() {
        return None;
    }
    v.sort_unstable();
    let rank = ((q / 100.0) * v.len() as f64).ceil().max(1.0) as usize;
    Some(v[rank.min(v.len()) - 1])
}
