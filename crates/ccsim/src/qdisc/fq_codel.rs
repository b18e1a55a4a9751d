//! FQ-CoDel (RFC 8290) as Linux implements it in `net/sched/sch_fq_codel.c`.
//!
//! * Packets are hashed into `flows` buckets (default 1024). Linux maps the 32-bit
//!   `skb_get_hash` with `reciprocal_scale(hash, flows)` (the *top* bits); we take
//!   `flow_hash % flows`, so that small flow ids, as a simulator may hand out, still land
//!   in distinct buckets. With a well-mixed 32-bit hash both are uniform.
//! * Deficit round robin with `quantum` bytes (default 1514, `psched_mtu`) over two lists:
//!   a flow that becomes non-empty while unlisted joins the tail of **new_flows** with a
//!   full quantum; a flow whose deficit is used up goes to the tail of **old_flows**
//!   with one more quantum. new_flows are always served first, so sparse flows (those
//!   that never build a queue) get priority (`fq_codel_dequeue`).
//! * When a flow empties, it leaves the lists, except that a flow emptied while on
//!   new_flows moves to old_flows first if old_flows is non-empty: this forces one pass
//!   through old_flows and stops a flow from starving the others by staying "new".
//! * Each flow runs its own CoDel state ([`super::codel::CodelVars`], the same code as
//!   `Codel`); like Linux the "backlog <= one MTU" test looks at the whole qdisc's
//!   backlog. ECN is on by default (`fq_codel_init`: `cparams.ecn = true`).
//! * Overflow: the arriving packet is queued first; if then the qdisc holds more than
//!   `limit` packets or more than `memory_limit` bytes, `fq_codel_drop` finds the flow
//!   with the largest byte backlog and drops packets from its *head*, up to
//!   `drop_batch_size` (64) packets or until half of that flow's backlog is gone, and
//!   adds the number dropped to that flow's CoDel `count` (a stronger signal next time).
//!   Linux measures memory by `skb->truesize` (buffer overhead included, default limit
//!   32 MiB); we count queued bytes, which is a lower bound on it.

use super::codel::{default_interval_us, default_mtu, default_target_us, CodelParams, CodelQueue, CodelVars};
use super::{QItem, Qdisc, QdiscOut, Reason};
use crate::error::ConfigError;
use crate::time::Nanos;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FqCodelConfig {
    /// Packets over all flows (default 10240).
    #[serde(default = "default_limit")]
    pub limit: u32,
    /// Number of hash buckets (default 1024; Linux accepts 1..=65536).
    #[serde(default = "default_flows")]
    pub flows: u32,
    /// DRR quantum, bytes (default 1514).
    #[serde(default = "default_quantum")]
    pub quantum: u32,
    #[serde(default = "default_target_us")]
    pub target_us: u64,
    #[serde(default = "default_interval_us")]
    pub interval_us: u64,
    #[serde(default)]
    pub ce_threshold_us: Option<u64>,
    /// Default on, as Linux's fq_codel.
    #[serde(default = "default_true")]
    pub ecn: bool,
    /// Bytes queued over all flows before overflow drops (default 32 MiB).
    #[serde(default = "default_memory_limit")]
    pub memory_limit: u64,
    /// Maximum packets dropped from the fattest flow per overflow (default 64).
    #[serde(default = "default_drop_batch")]
    pub drop_batch_size: u32,
    #[serde(default = "default_mtu")]
    pub mtu: u32,
}

fn default_limit() -> u32 {
    10_240
}
fn default_flows() -> u32 {
    1024
}
fn default_quantum() -> u32 {
    1514
}
fn default_true() -> bool {
    true
}
fn default_memory_limit() -> u64 {
    32 << 20
}
fn default_drop_batch() -> u32 {
    64
}

impl Default for FqCodelConfig {
    fn default() -> Self {
        FqCodelConfig {
            limit: default_limit(),
            flows: default_flows(),
            quantum: default_quantum(),
            target_us: default_target_us(),
            interval_us: default_interval_us(),
            ce_threshold_us: None,
            ecn: true,
            memory_limit: default_memory_limit(),
            drop_batch_size: default_drop_batch(),
            mtu: default_mtu(),
        }
    }
}

#[derive(Debug)]
struct Flow<P> {
    q: VecDeque<QItem<P>>,
    bytes: u64,
    deficit: i64,
    vars: CodelVars,
    /// On new_flows or old_flows (Linux: `!list_empty(&flow->flowchain)`).
    listed: bool,
}

/// A flow's queue seen by CoDel: popping also updates the qdisc-wide counters.
struct FlowQueue<'a, P> {
    q: &'a mut VecDeque<QItem<P>>,
    flow_bytes: &'a mut u64,
    total_bytes: &'a mut u64,
    total_pkts: &'a mut u32,
}

impl<P: Copy> CodelQueue<P> for FlowQueue<'_, P> {
    fn pop(&mut self) -> Option<QItem<P>> {
        let it = crate::fifo::pop_front_rewind(self.q)?;
        *self.flow_bytes -= it.bytes as u64;
        *self.total_bytes -= it.bytes as u64;
        *self.total_pkts -= 1;
        Some(it)
    }
    fn backlog_bytes(&self) -> u64 {
        *self.total_bytes
    }
}

#[derive(Debug)]
pub struct FqCodel<P> {
    flows: Vec<Flow<P>>,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    total_bytes: u64,
    total_pkts: u32,
    limit: u32,
    memory_limit: u64,
    quantum: u32,
    drop_batch: u32,
    params: CodelParams,
}

impl<P: Copy> FqCodel<P> {
    pub fn new(cfg: &FqCodelConfig, field: &str) -> Result<Self, ConfigError> {
        let err = |p: &str, m: String| Err(ConfigError::new(format!("{field}.{p}"), m));
        if cfg.limit == 0 {
            return err("limit", "limit 0 packets would drop everything; give at least 1 (default 10240)".into());
        }
        if cfg.flows == 0 || cfg.flows > 65536 {
            return err("flows", format!("flows {} must be in 1..=65536 (default 1024)", cfg.flows));
        }
        if !(256..=1 << 20).contains(&cfg.quantum) {
            // Linux raises a smaller quantum to 256 and rejects one above 1 MiB.
            return err("quantum", format!("quantum {} must be in 256..=1048576 bytes (default 1514)", cfg.quantum));
        }
        if cfg.memory_limit == 0 || cfg.memory_limit > 1 << 31 {
            return err(
                "memory_limit",
                format!("memory_limit {} must be in 1..=2^31 bytes (default 33554432)", cfg.memory_limit),
            );
        }
        if cfg.drop_batch_size == 0 {
            return err("drop_batch_size", "drop_batch_size must be >= 1 packet (default 64)".into());
        }
        let params = CodelParams::new(cfg.target_us, cfg.interval_us, cfg.ce_threshold_us, cfg.ecn, cfg.mtu, field)?;
        let flows = (0..cfg.flows)
            .map(|_| Flow { q: VecDeque::new(), bytes: 0, deficit: 0, vars: CodelVars::default(), listed: false })
            .collect();
        Ok(FqCodel {
            flows,
            new_flows: VecDeque::with_capacity(cfg.flows as usize),
            old_flows: VecDeque::with_capacity(cfg.flows as usize),
            total_bytes: 0,
            total_pkts: 0,
            limit: cfg.limit,
            memory_limit: cfg.memory_limit,
            quantum: cfg.quantum,
            drop_batch: cfg.drop_batch_size,
            params,
        })
    }

    /// The bucket a flow hash maps to.
    pub fn bucket(&self, flow_hash: u32) -> usize {
        (flow_hash % self.flows.len() as u32) as usize
    }

    /// Bytes queued in bucket `idx`.
    pub fn flow_backlog(&self, idx: usize) -> u64 {
        self.flows[idx].bytes
    }

    /// `fq_codel_drop`: drops from the head of the fattest flow.
    fn drop_from_fattest(&mut self, out: &mut QdiscOut<P>) {
        // First maximum wins, as Linux's `>` scan.
        let mut idx = 0;
        let mut max = 0u64;
        for (i, f) in self.flows.iter().enumerate() {
            if f.bytes > max {
                max = f.bytes;
                idx = i;
            }
        }
        let threshold = max / 2;
        let f = &mut self.flows[idx];
        let mut len = 0u64;
        let mut n = 0;
        while let Some(it) = f.q.pop_front() {
            f.bytes -= it.bytes as u64;
            self.total_bytes -= it.bytes as u64;
            self.total_pkts -= 1;
            len += it.bytes as u64;
            out.dropped.push((it.pkt, Reason::Overflow));
            n += 1;
            if n >= self.drop_batch || len >= threshold {
                break;
            }
        }
        // "Tell codel to increase its signal strength also" (Linux >= 4.10): the
        // flow's CoDel count grows by the packets just dropped.
        f.vars.count = f.vars.count.wrapping_add(n);
    }
}

impl<P: Copy> Qdisc<P> for FqCodel<P> {
    fn enqueue(&mut self, mut item: QItem<P>, now: Nanos, out: &mut QdiscOut<P>) {
        let idx = self.bucket(item.flow_hash);
        item.enq_ns = now;
        let f = &mut self.flows[idx];
        f.q.push_back(item);
        f.bytes += item.bytes as u64;
        if !f.listed {
            f.listed = true;
            f.deficit = self.quantum as i64;
            self.new_flows.push_back(idx as u32);
        }
        self.total_bytes += item.bytes as u64;
        self.total_pkts += 1;
        if self.total_pkts > self.limit || self.total_bytes > self.memory_limit {
            self.drop_from_fattest(out);
        }
    }

    fn dequeue(&mut self, now: Nanos, out: &mut QdiscOut<P>) -> Option<QItem<P>> {
        loop {
            let from_new = !self.new_flows.is_empty();
            let head = if from_new { self.new_flows.front() } else { self.old_flows.front() };
            let idx = *head? as usize;
            let list = if from_new { &mut self.new_flows } else { &mut self.old_flows };
            let f = &mut self.flows[idx];
            if f.deficit <= 0 {
                f.deficit += self.quantum as i64;
                list.pop_front();
                self.old_flows.push_back(idx as u32);
                continue;
            }
            let mut fq = FlowQueue {
                q: &mut f.q,
                flow_bytes: &mut f.bytes,
                total_bytes: &mut self.total_bytes,
                total_pkts: &mut self.total_pkts,
            };
            match f.vars.dequeue(&self.params, now, &mut fq, out) {
                Some(it) => {
                    f.deficit -= it.bytes as i64;
                    return Some(it);
                }
                None => {
                    list.pop_front();
                    if from_new && !self.old_flows.is_empty() {
                        self.old_flows.push_back(idx as u32);
                    } else {
                        f.listed = false;
                    }
                }
            }
        }
    }

    fn backlog_bytes(&self) -> u64 {
        self.total_bytes
    }

    fn backlog_pkts(&self) -> u32 {
        self.total_pkts
    }
}

#[cfg(test)]
mod tests {
    use super::super::codel::{Codel, CodelConfig};
    use super::super::testutil::{item, item_flow, overload_run};
    use super::*;
    use crate::time::NS_PER_MS;

    fn fq(cfg: FqCodelConfig) -> FqCodel<u32> {
        FqCodel::new(&cfg, "q").unwrap()
    }

    #[test]
    fn two_backlogged_flows_share_bytes_fairly() {
        // Flow 1 sends 1500-byte packets, flow 2 500-byte ones; both always backlogged.
        // DRR with quantum 1514 serves ~1514 bytes per round to each, so after many
        // rounds the byte counts differ by at most one quantum plus one packet.
        let mut q = fq(FqCodelConfig::default());
        let mut out = QdiscOut::default();
        let mut id = 0;
        for _ in 0..300 {
            q.enqueue(item_flow(id, 1500, 1, false), 0, &mut out);
            id += 1;
        }
        for _ in 0..900 {
            q.enqueue(item_flow(id, 500, 2, false), 0, &mut out);
            id += 1;
        }
        let (mut b1, mut b2) = (0u64, 0u64);
        // Sojourn stays below target (dequeue at t=0), so CoDel never interferes.
        for _ in 0..600 {
            let p = q.dequeue(0, &mut out).unwrap();
            if p.flow_hash == 1 {
                b1 += p.bytes as u64
            } else {
                b2 += p.bytes as u64
            }
        }
        assert!(out.dropped.is_empty());
        assert!(b1.abs_diff(b2) <= 1514 + 1500, "b1 {b1} b2 {b2}");
        assert!(b1 + b2 > 400_000);
    }

    #[test]
    fn drr_order_is_hand_computable() {
        // quantum 1514. Flow A (7): 1000-byte packets, flow B (8): 600-byte packets.
        // Round 1, both on new_flows with deficit 1514: A sends while deficit > 0:
        // 1514 -> 514 -> -486 (2 packets), then goes to old_flows with -486+1514 = 1028.
        // B: 1514 -> 914 -> 314 -> -286 (3 packets), to old_flows with 1228.
        // Round 2: A 1028 -> 28 -> -972 (2 packets); B 1228 -> 628 -> 28 -> -572 (3).
        let mut q = fq(FqCodelConfig::default());
        let mut out = QdiscOut::default();
        for i in 0..10 {
            q.enqueue(item_flow(i, 1000, 7, false), 0, &mut out);
            q.enqueue(item_flow(100 + i, 600, 8, false), 0, &mut out);
        }
        let order: Vec<u32> = (0..10).map(|_| q.dequeue(0, &mut out).unwrap().flow_hash).collect();
        assert_eq!(order, vec![7, 7, 8, 8, 8, 7, 7, 8, 8, 8]);
    }

    #[test]
    fn sparse_flow_is_served_before_backlogged_flows() {
        let mut q = fq(FqCodelConfig::default());
        let mut out = QdiscOut::default();
        for i in 0..50 {
            q.enqueue(item_flow(i, 1500, 1, false), 0, &mut out);
            q.enqueue(item_flow(100 + i, 1500, 2, false), 0, &mut out);
        }
        // Drain a few so both bulk flows sit on old_flows.
        for _ in 0..6 {
            q.dequeue(0, &mut out).unwrap();
        }
        q.enqueue(item_flow(999, 200, 3, false), 0, &mut out);
        assert_eq!(q.dequeue(0, &mut out).unwrap().pkt, 999);
        // Its queue is empty now; the next pass finds it empty and, old flows being
        // present, moves it to the tail of old_flows (fq_codel_dequeue's "force a pass
        // through old_flows"). Sending again, it no longer gets new-flow priority, while
        // a genuinely new flow 4 does.
        q.dequeue(0, &mut out).unwrap();
        q.enqueue(item_flow(1000, 200, 3, false), 0, &mut out);
        q.enqueue(item_flow(2000, 200, 4, false), 0, &mut out);
        assert_eq!(q.dequeue(0, &mut out).unwrap().pkt, 2000);
    }

    #[test]
    fn overflow_drops_half_of_the_fattest_flow_from_its_head() {
        let mut q = fq(FqCodelConfig { limit: 10, ..Default::default() });
        let mut out = QdiscOut::default();
        for i in 0..9 {
            q.enqueue(item_flow(i, 1000, 1, false), 0, &mut out);
        }
        q.enqueue(item_flow(20, 1000, 2, false), 0, &mut out);
        assert!(out.dropped.is_empty());
        // 11th packet (flow 2): fattest is flow 1 with 9000 B; drop from its head until
        // >= 4500 B are gone: packets 0..=4.
        q.enqueue(item_flow(21, 1000, 2, false), 0, &mut out);
        let ids: Vec<u32> = out.dropped.iter().map(|d| d.0).collect();
        assert_eq!(ids, vec![0, 1, 2, 3, 4]);
        assert!(out.dropped.iter().all(|d| d.1 == Reason::Overflow));
        assert_eq!(q.backlog_pkts(), 6);
        assert_eq!(q.flow_backlog(1), 4000);
        assert_eq!(q.flows[1].vars.count, 5);
        // Batch size caps the drop.
        let mut q = fq(FqCodelConfig { limit: 10, drop_batch_size: 2, ..Default::default() });
        out.clear();
        for i in 0..11 {
            q.enqueue(item(i, 1000), 0, &mut out);
        }
        assert_eq!(out.dropped.len(), 2);
    }

    #[test]
    fn memory_limit_in_bytes_also_triggers_fattest_flow_drop() {
        // 5000-byte memory limit: the 6th 1000-byte packet (flow 1 holds 4, flow 2 holds 2
        // then) pushes the total to 6000 > 5000; flow 1 (4000 B) loses 2000 B from its head.
        let mut q = fq(FqCodelConfig { memory_limit: 5000, ..Default::default() });
        let mut out = QdiscOut::default();
        for (i, f) in [1u32, 1, 1, 1, 2, 2].iter().enumerate() {
            q.enqueue(item_flow(i as u32, 1000, *f, false), 0, &mut out);
        }
        let ids: Vec<u32> = out.dropped.iter().map(|d| d.0).collect();
        assert_eq!(ids, vec![0, 1]);
        assert_eq!(q.backlog_bytes(), 4000);
    }

    #[test]
    fn per_flow_codel_drops_only_the_standing_flow() {
        // Flow 1 has a standing queue of 200 packets enqueued at t=0. Flow 2 sends one
        // packet per poll, dequeued right away. DRR alternates; only flow 1 sees drops.
        let mut q = fq(FqCodelConfig { ecn: false, ..Default::default() });
        let mut out = QdiscOut::default();
        for i in 0..200 {
            q.enqueue(item_flow(i, 1000, 1, false), 0, &mut out);
        }
        for ms in 1..400u64 {
            let now = ms * NS_PER_MS;
            q.enqueue(item_flow(1000 + ms as u32, 100, 2, false), now, &mut out);
            while q.backlog_pkts() > 0 && q.dequeue(now, &mut out).map(|p| p.flow_hash) != Some(2) {}
        }
        assert!(!out.dropped.is_empty());
        assert!(out.dropped.iter().all(|d| d.0 < 200 && d.1 == Reason::Codel));
    }

    /// Overflow drops raise a flow's CoDel count (Linux >= 4.10), but a first dropping
    /// cycle has no previous rate to resume: it starts at count 1 and drops again only
    /// an interval later, whether the clock started at 0 (the simulator) or long ago
    /// (the emulator's CLOCK_MONOTONIC). Resuming from "count - lastcount" with the
    /// zeroed reciprocal instead made every later drop due at once (codel.rs).
    #[test]
    fn a_first_codel_cycle_after_overflow_drops_starts_at_count_one() {
        let run = |t0: Nanos| {
            let mut q = fq(FqCodelConfig { limit: 40, ecn: false, ..Default::default() });
            let mut out = QdiscOut::default();
            // 41 packets of flow 1 at once: the 41st overflows and half of the flow goes.
            for i in 0..41 {
                q.enqueue(item_flow(i, 1500, 1, false), t0, &mut out);
            }
            let overflow = out.dropped.len();
            // Keep the flow's queue standing (one packet in per packet out) and serve
            // one packet every 2 ms: above target from the first dequeue on.
            let mut codel_drops = Vec::new();
            for k in 1..=150u32 {
                let now = t0 + k as u64 * 2 * NS_PER_MS;
                q.enqueue(item_flow(100 + k, 1500, 1, false), now, &mut out);
                let before = out.dropped.len();
                q.dequeue(now, &mut out);
                for _ in before..out.dropped.len() {
                    codel_drops.push(now - t0);
                }
            }
            (overflow, codel_drops, q.flows[1].vars.count)
        };
        let (overflow, drops, count) = run(0);
        assert!(overflow >= 2, "the overflow must raise the count by more than one: {overflow}");
        // The head's sojourn reaches target (5 ms) at the 6 ms poll, so the first drop is
        // at the first poll after 106 ms; the next one an interval later (count 1), the
        // third interval * 0.50002 after that (count 2): 108, 208, 258 ms.
        assert_eq!(&drops[..3], &[108 * NS_PER_MS, 208 * NS_PER_MS, 258 * NS_PER_MS], "{drops:?}");
        assert!(drops.windows(2).all(|w| w[1] > w[0]), "one drop per poll at most: {drops:?}");
        assert!(count <= drops.len() as u32 + 1, "count {count} after {} drops", drops.len());
        // An emulator host up for 12 days sees the same drops.
        let (overflow_late, drops_late, _) = run(1_000_000 * 1_000_000_000);
        assert_eq!((overflow_late, drops_late), (overflow, drops));
    }

    /// With a single flow FQ-CoDel is CoDel: the same state machine, the same drops.
    #[test]
    fn single_flow_behaves_exactly_like_codel() {
        let a = overload_run(&mut fq(FqCodelConfig { ecn: false, ..Default::default() }), 1.2, 5);
        let b = overload_run(&mut Codel::<u32>::new(&CodelConfig::default(), "q").unwrap(), 1.2, 5);
        assert_eq!(format!("{a:?}"), format!("{b:?}"));
        assert!(a.drop_frac > 0.1);
        // With ECN (the default) the ECT packets are marked instead.
        let c = overload_run(&mut fq(FqCodelConfig::default()), 1.2, 5);
        assert!(c.mark_frac > 0.0);
    }

    #[test]
    fn ecn_on_by_default_and_config_errors() {
        assert!(FqCodelConfig::default().ecn);
        let e = FqCodel::<u32>::new(&FqCodelConfig { flows: 0, ..Default::default() }, "l.q").unwrap_err();
        assert_eq!(e.field, "l.q.flows");
        let e = FqCodel::<u32>::new(&FqCodelConfig { quantum: 0, ..Default::default() }, "l.q").unwrap_err();
        assert_eq!(e.field, "l.q.quantum");
        let e = FqCodel::<u32>::new(&FqCodelConfig { target_us: 0, ..Default::default() }, "l.q").unwrap_err();
        assert_eq!(e.field, "l.q.target_us");
    }
}
