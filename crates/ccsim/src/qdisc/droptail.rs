//! Drop-tail FIFO with the three drop rules of Stewart et al. (Stewart note §1.4):
//!
//! | rule           | drop the arriving packet when            | Linux / dummynet    |
//! |----------------|------------------------------------------|---------------------|
//! | `packets`      | `pkts_in_q >= limit`                     | `pfifo`, dummynet   |
//! | `bytes-strict` | `bytes_in_q + pkt_len > limit`           | `bfifo`             |
//! | `bytes-loose`  | `bytes_in_q > limit` (may overfill by <1 packet) | dummynet bytes |
//!
//! `count_in_service` adds the packet being transmitted to the occupancy the rule
//! sees (old dummynet kept the head packet in its queue until its serialisation
//! finished; Linux hands it to the device, so it does not count: the default).

use super::{QItem, Qdisc, QdiscOut, Reason};
use crate::error::ConfigError;
use crate::time::Nanos;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "kebab-case")]
pub enum DropRule {
    /// PS: limit is a packet count.
    #[default]
    Packets,
    /// FB-strict: the queue never holds more than `limit` bytes.
    BytesStrict,
    /// FB-loose: a packet is accepted while the queue holds at most `limit` bytes.
    BytesLoose,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DropTailConfig {
    /// Packets for `rule = packets`, bytes otherwise. Linux `pfifo` default: 1000 packets
    /// (the device's `txqueuelen`).
    #[serde(default = "default_limit")]
    pub limit: u64,
    #[serde(default)]
    pub rule: DropRule,
    #[serde(default)]
    pub count_in_service: bool,
}

fn default_limit() -> u64 {
    1000
}

impl Default for DropTailConfig {
    fn default() -> Self {
        DropTailConfig { limit: default_limit(), rule: DropRule::Packets, count_in_service: false }
    }
}

#[derive(Debug)]
pub struct DropTail<P> {
    q: VecDeque<QItem<P>>,
    bytes: u64,
    limit: u64,
    rule: DropRule,
    count_in_service: bool,
    in_service_bytes: Option<u32>,
}

impl<P: Copy> DropTail<P> {
    pub fn new(cfg: &DropTailConfig, field: &str) -> Result<Self, ConfigError> {
        if cfg.limit == 0 {
            return Err(ConfigError::new(
                format!("{field}.limit"),
                "queue limit 0 would drop every packet; give at least 1 packet or 1 byte",
            ));
        }
        Ok(DropTail {
            q: VecDeque::new(),
            bytes: 0,
            limit: cfg.limit,
            rule: cfg.rule,
            count_in_service: cfg.count_in_service,
            in_service_bytes: None,
        })
    }

    /// Whether the rule drops an arriving packet of `len` bytes now.
    fn would_drop(&self, len: u32) -> bool {
        let (extra_pkts, extra_bytes) = match (self.count_in_service, self.in_service_bytes) {
            (true, Some(b)) => (1u64, b as u64),
            _ => (0, 0),
        };
        let pkts = self.q.len() as u64 + extra_pkts;
        let bytes = self.bytes + extra_bytes;
        match self.rule {
            DropRule::Packets => pkts >= self.limit,
            DropRule::BytesStrict => bytes + len as u64 > self.limit,
            DropRule::BytesLoose => bytes > self.limit,
        }
    }
}

impl<P: Copy> Qdisc<P> for DropTail<P> {
    fn enqueue(&mut self, mut item: QItem<P>, now: Nanos, out: &mut QdiscOut<P>) {
        if self.would_drop(item.bytes) {
            out.dropped.push((item.pkt, Reason::Overflow));
            return;
        }
        item.enq_ns = now;
        self.bytes += item.bytes as u64;
        self.q.push_back(item);
    }

    fn dequeue(&mut self, _now: Nanos, _out: &mut QdiscOut<P>) -> Option<QItem<P>> {
        let item = crate::fifo::pop_front_rewind(&mut self.q)?;
        self.bytes -= item.bytes as u64;
        Some(item)
    }

    fn backlog_bytes(&self) -> u64 {
        self.bytes
    }

    fn backlog_pkts(&self) -> u32 {
        self.q.len() as u32
    }

    fn tx_started(&mut self, bytes: u32) {
        self.in_service_bytes = Some(bytes);
    }

    fn tx_finished(&mut self) {
        self.in_service_bytes = None;
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::item;
    use super::*;

    fn dt(limit: u64, rule: DropRule, count_in_service: bool) -> DropTail<u32> {
        DropTail::new(&DropTailConfig { limit, rule, count_in_service }, "q").unwrap()
    }

    /// Offers packets of the given sizes; returns the ids that were dropped.
    fn offer(q: &mut DropTail<u32>, sizes: &[u32]) -> Vec<u32> {
        let mut out = QdiscOut::default();
        for (i, &s) in sizes.iter().enumerate() {
            q.enqueue(item(i as u32, s), 0, &mut out);
        }
        out.dropped.iter().map(|d| d.0).collect()
    }

    #[test]
    fn packets_rule_counts_slots_regardless_of_size() {
        let mut q = dt(3, DropRule::Packets, false);
        assert_eq!(offer(&mut q, &[1500, 40, 1500, 40]), vec![3]);
        assert_eq!(q.backlog_pkts(), 3);
        assert_eq!(q.backlog_bytes(), 3040);
    }

    #[test]
    fn strict_rule_never_exceeds_limit_and_leaves_room_for_small_packets() {
        // Stewart §3.2: Q = n*1500 + 1499 keeps room for int(1499/186) = 8 CBR packets.
        let mut q = dt(2 * 1500 + 1499, DropRule::BytesStrict, false);
        let mut sizes = vec![1500, 1500, 1500]; // the third does not fit
        sizes.extend(std::iter::repeat_n(186, 9)); // eight fit, the ninth does not
        let dropped = offer(&mut q, &sizes);
        assert_eq!(dropped, vec![2, 11]);
        assert_eq!(q.backlog_bytes(), 3000 + 8 * 186);
        assert!(q.backlog_bytes() <= 4499);
    }

    #[test]
    fn loose_rule_overfills_by_less_than_one_packet_then_blocks_everything() {
        // limit 4000: 1500+1500 = 3000 <= 4000 accepted, third 1500 accepted too
        // (3000 <= 4000) -> 4500 bytes: overfilled by 500. Then even a 186-byte
        // packet is dropped until the queue drains back to <= 4000.
        let mut q = dt(4000, DropRule::BytesLoose, false);
        let dropped = offer(&mut q, &[1500, 1500, 1500, 186, 1500]);
        assert_eq!(dropped, vec![3, 4]);
        assert_eq!(q.backlog_bytes(), 4500);
        let mut out = QdiscOut::default();
        q.dequeue(0, &mut out);
        assert_eq!(q.backlog_bytes(), 3000);
        q.enqueue(item(9, 186), 0, &mut out);
        assert!(out.dropped.is_empty());
    }

    #[test]
    fn loose_at_exact_multiple_overfills_by_a_full_packet() {
        // Q mod S == 0: overfill O = S (Stewart §3.2).
        let mut q = dt(3000, DropRule::BytesLoose, false);
        assert_eq!(offer(&mut q, &[1500, 1500, 1500, 1500]), vec![3]);
        assert_eq!(q.backlog_bytes(), 4500);
    }

    #[test]
    fn in_service_packet_counts_only_when_asked() {
        for (count, expect_drop) in [(false, false), (true, true)] {
            let mut q = dt(2, DropRule::Packets, count);
            let mut out = QdiscOut::default();
            q.enqueue(item(0, 1500), 0, &mut out);
            let head = q.dequeue(0, &mut out).unwrap();
            q.tx_started(head.bytes);
            q.enqueue(item(1, 1500), 0, &mut out);
            q.enqueue(item(2, 1500), 0, &mut out);
            assert_eq!(!out.dropped.is_empty(), expect_drop, "count_in_service={count}");
            q.tx_finished();
            q.enqueue(item(3, 1500), 0, &mut out);
        }
    }

    #[test]
    fn fifo_order_and_enqueue_time_stamped() {
        let mut q = dt(10, DropRule::Packets, false);
        let mut out = QdiscOut::default();
        q.enqueue(item(5, 100), 7, &mut out);
        q.enqueue(item(6, 100), 9, &mut out);
        let a = q.dequeue(10, &mut out).unwrap();
        let b = q.dequeue(10, &mut out).unwrap();
        assert_eq!((a.pkt, a.enq_ns, b.pkt, b.enq_ns), (5, 7, 6, 9));
        assert!(q.dequeue(10, &mut out).is_none());
    }

    #[test]
    fn zero_limit_is_a_config_error() {
        let e = DropTail::<u32>::new(&DropTailConfig { limit: 0, ..Default::default() }, "topology.bottleneck.queue")
            .unwrap_err();
        assert_eq!(e.field, "topology.bottleneck.queue.limit");
    }
}
