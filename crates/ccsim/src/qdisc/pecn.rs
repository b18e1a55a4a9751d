//! Persistent ECN (Wei, PhD thesis, Algorithm 3; Wei note §3.7).
//!
//! A drop-tail FIFO with a marking switch `o`:
//! * on each **arrival**, if the queue `q` (before the arrival) is `>= upper`, `o <- 1`;
//!   then, if `o = 1`, the arriving packet is CE-marked (if it is ECT and is queued);
//! * on each **departure**, if the queue left behind is `<= lower`, `o <- 0`.
//!
//! So once the buffer fills, *every* packet is marked until the queue has drained to the
//! lower watermark, which synchronises all flows' reactions (the point of the scheme:
//! loss-synchronisation rate close to 1, thesis Table 3.2). Defaults as the thesis:
//! `upper = limit` (the buffer size B) and `lower = upper / 2`. `upper = lower = limit`
//! reduces it to drop-tail with marks only at a full buffer.
//!
//! Non-ECT packets are never marked and never dropped early: they only see the
//! drop-tail limit (the thesis assumes every flow is ECN-capable and does not say).
//! `unit = "packets"` counts packets (`q >= limit` drops, as pfifo); `"bytes"` counts
//! bytes (`q + len > limit` drops, as bfifo).

use super::{QItem, Qdisc, QdiscOut, Reason};
use crate::error::ConfigError;
use crate::time::Nanos;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum PecnUnit {
    #[default]
    Packets,
    Bytes,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PecnConfig {
    /// Buffer size B in `unit`s (default 1000 packets).
    #[serde(default = "default_limit")]
    pub limit: u64,
    #[serde(default)]
    pub unit: PecnUnit,
    /// Upper watermark: the switch turns on at an arrival seeing `q >= upper`
    /// (default `limit`).
    #[serde(default)]
    pub upper: Option<u64>,
    /// Lower watermark: the switch turns off at a departure leaving `q <= lower`
    /// (default `upper / 2`, rounded down).
    #[serde(default)]
    pub lower: Option<u64>,
}

fn default_limit() -> u64 {
    1000
}

impl Default for PecnConfig {
    fn default() -> Self {
        PecnConfig { limit: default_limit(), unit: PecnUnit::Packets, upper: None, lower: None }
    }
}

#[derive(Debug)]
pub struct Pecn<P> {
    q: VecDeque<QItem<P>>,
    bytes: u64,
    limit: u64,
    unit: PecnUnit,
    upper: u64,
    lower: u64,
    on: bool,
}

impl<P: Copy> Pecn<P> {
    pub fn new(cfg: &PecnConfig, field: &str) -> Result<Self, ConfigError> {
        if cfg.limit == 0 {
            return Err(ConfigError::new(
                format!("{field}.limit"),
                "limit 0 would drop every packet; give at least 1 packet or byte",
            ));
        }
        let upper = cfg.upper.unwrap_or(cfg.limit);
        if upper == 0 || upper > cfg.limit {
            return Err(ConfigError::new(
                format!("{field}.upper"),
                format!(
                    "upper watermark {upper} must be in 1..=limit ({}); a queue never exceeds its limit",
                    cfg.limit
                ),
            ));
        }
        let lower = cfg.lower.unwrap_or(upper / 2);
        if lower > upper {
            return Err(ConfigError::new(
                format!("{field}.lower"),
                format!("lower watermark {lower} must be <= upper watermark {upper}"),
            ));
        }
        Ok(Pecn { q: VecDeque::new(), bytes: 0, limit: cfg.limit, unit: cfg.unit, upper, lower, on: false })
    }

    /// The marking switch `o`.
    pub fn marking(&self) -> bool {
        self.on
    }

    fn occupancy(&self) -> u64 {
        match self.unit {
            PecnUnit::Packets => self.q.len() as u64,
            PecnUnit::Bytes => self.bytes,
        }
    }
}

impl<P: Copy> Qdisc<P> for Pecn<P> {
    fn enqueue(&mut self, mut item: QItem<P>, now: Nanos, out: &mut QdiscOut<P>) {
        let q = self.occupancy();
        if q >= self.upper {
            self.on = true;
        }
        let full = match self.unit {
            PecnUnit::Packets => q >= self.limit,
            PecnUnit::Bytes => q + item.bytes as u64 > self.limit,
        };
        if full {
            out.dropped.push((item.pkt, Reason::Overflow));
            return;
        }
        if self.on && item.ect {
            out.marked.push((item.pkt, Reason::Persistent));
        }
        item.enq_ns = now;
        self.bytes += item.bytes as u64;
        self.q.push_back(item);
    }

    fn dequeue(&mut self, _now: Nanos, _out: &mut QdiscOut<P>) -> Option<QItem<P>> {
        let item = crate::fifo::pop_front_rewind(&mut self.q)?;
        self.bytes -= item.bytes as u64;
        if self.occupancy() <= self.lower {
            self.on = false;
        }
        Some(item)
    }

    fn backlog_bytes(&self) -> u64 {
        self.bytes
    }

    fn backlog_pkts(&self) -> u32 {
        self.q.len() as u32
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::item_flow;
    use super::*;

    fn ect(id: u32, bytes: u32) -> QItem<u32> {
        item_flow(id, bytes, 0, true)
    }

    /// Runs a script of arrivals (`A`) and departures (`D`) and returns, per step,
    /// (marked?, dropped?, switch after the step, queue after the step).
    fn run(q: &mut Pecn<u32>, script: &str, bytes: u32) -> Vec<(bool, bool, bool, u32)> {
        let mut out = QdiscOut::default();
        let mut id = 0;
        let mut res = Vec::new();
        for c in script.chars() {
            out.clear();
            match c {
                'A' => {
                    q.enqueue(ect(id, bytes), 0, &mut out);
                    id += 1;
                }
                'D' => {
                    q.dequeue(0, &mut out).unwrap();
                }
                _ => continue,
            }
            res.push((!out.marked.is_empty(), !out.dropped.is_empty(), q.marking(), q.backlog_pkts()));
        }
        res
    }

    #[test]
    fn hysteresis_with_default_watermarks() {
        // B = 4: upper 4, lower 2.
        let mut q = Pecn::new(&PecnConfig { limit: 4, ..Default::default() }, "q").unwrap();
        let r = run(&mut q, "AAAA A D A D D A D A", 1500);
        let want = vec![
            (false, false, false, 1),
            (false, false, false, 2),
            (false, false, false, 3),
            (false, false, false, 4),
            (false, true, true, 4),  // arrival sees q = 4 >= upper: switch on, dropped (full)
            (false, false, true, 3), // departure leaves 3 > 2: still on
            (true, false, true, 4),  // arrival sees 3: marked because the switch is on
            (false, false, true, 3),
            (false, false, false, 2), // departure leaves 2 <= lower: off
            (false, false, false, 3), // not marked any more
            (false, false, false, 2),
            (false, false, false, 3),
        ];
        assert_eq!(r, want);
    }

    #[test]
    fn lower_upper_below_limit_marks_without_dropping() {
        // B = 10, upper 3, lower 1: marking starts with the arrival that sees 3 queued.
        let mut q =
            Pecn::new(&PecnConfig { limit: 10, upper: Some(3), lower: Some(1), ..Default::default() }, "q").unwrap();
        let r = run(&mut q, "AAAAA DDD A DA", 100);
        let marks: Vec<bool> = r.iter().map(|x| x.0).collect();
        // A A A (see 0,1,2) unmarked; A (sees 3): on, marked; A marked; D D D leave
        // 4,3,2 (> 1: still on); A marked; D leaves 2; A marked.
        assert_eq!(marks, vec![false, false, false, true, true, false, false, false, true, false, true]);
        assert!(r.iter().all(|x| !x.1));
        // Now drain to 1: switch off.
        let mut out = QdiscOut::default();
        while q.backlog_pkts() > 1 {
            q.dequeue(0, &mut out);
        }
        assert!(!q.marking());
    }

    #[test]
    fn non_ect_is_never_marked() {
        let mut q =
            Pecn::new(&PecnConfig { limit: 10, upper: Some(1), lower: Some(0), ..Default::default() }, "q").unwrap();
        let mut out = QdiscOut::default();
        q.enqueue(item_flow(0, 100, 0, false), 0, &mut out);
        q.enqueue(item_flow(1, 100, 0, false), 0, &mut out);
        q.enqueue(item_flow(2, 100, 0, true), 0, &mut out);
        assert!(q.marking());
        assert_eq!(out.marked, vec![(2, Reason::Persistent)]);
        assert!(out.dropped.is_empty());
    }

    #[test]
    fn byte_units() {
        // limit 3000 B, upper 3000, lower 1500. 1000-byte packets.
        let mut q = Pecn::new(&PecnConfig { limit: 3000, unit: PecnUnit::Bytes, ..Default::default() }, "q").unwrap();
        let r = run(&mut q, "AAA A D A DD A", 1000);
        let want = vec![
            (false, false, false, 1),
            (false, false, false, 2),
            (false, false, false, 3),
            (false, true, true, 3),  // sees 3000 >= 3000: on; 3000+1000 > 3000: dropped
            (false, false, true, 2), // leaves 2000 > 1500
            (true, false, true, 3),
            (false, false, true, 2),
            (false, false, false, 1), // leaves 1000 <= 1500: off
            (false, false, false, 2),
        ];
        assert_eq!(r, want);
    }

    #[test]
    fn config_errors() {
        let e = Pecn::<u32>::new(&PecnConfig { upper: Some(2000), ..Default::default() }, "l.q").unwrap_err();
        assert_eq!(e.field, "l.q.upper");
        let e = Pecn::<u32>::new(&PecnConfig { upper: Some(10), lower: Some(11), ..Default::default() }, "l.q")
            .unwrap_err();
        assert_eq!(e.field, "l.q.lower");
        let e = Pecn::<u32>::new(&PecnConfig { limit: 0, ..Default::default() }, "l.q").unwrap_err();
        assert_eq!(e.field, "l.q.limit");
    }
}
