//! The server's loss detector: a reordering window of [`WINDOW`] = 128 packets (Wei
//! thesis §4.3). A missing sequence number is declared lost only once a packet at least
//! 128 sequence numbers higher has arrived (or at the end of the measurement), so a
//! packet reordered by fewer than 128 positions is not counted as lost. A packet that
//! arrives after it was declared lost is counted as `late` and stays lost.
//!
//! Losses are kept as ascending ranges (protocol v2): a jump far ahead costs one range
//! and constant time, not one entry per skipped number. Every range but the one a jump
//! opens ends just below a received packet, so there are never more ranges than
//! received packets plus one (this bounds the server's reply volume, see `server`).

pub const WINDOW: u64 = 128;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrival {
    /// Highest sequence number so far.
    New,
    /// Below the highest, inside the window, not seen before: reordered, not lost.
    Reordered,
    Duplicate,
    /// More than the window below the highest: already declared lost.
    Late,
}

#[derive(Clone, Debug)]
pub struct LossWindow {
    /// Highest sequence number received; -1 before the first packet.
    hi: i64,
    /// Bit i set: sequence number `hi - i` has been received (or is below 0).
    bits: u128,
    /// Declared losses not yet reported: ascending, disjoint, non-adjacent (first, count).
    pending: Vec<(u64, u64)>,
    pub received: u64,
    pub lost: u64,
    pub reordered: u64,
    pub duplicates: u64,
    pub late: u64,
}

impl Default for LossWindow {
    fn default() -> Self {
        Self::new()
    }
}

impl LossWindow {
    pub fn new() -> Self {
        LossWindow {
            hi: -1,
            bits: u128::MAX,
            pending: Vec::new(),
            received: 0,
            lost: 0,
            reordered: 0,
            duplicates: 0,
            late: 0,
        }
    }

    /// Highest sequence number received so far.
    pub fn highest(&self) -> Option<u64> {
        (self.hi >= 0).then_some(self.hi as u64)
    }

    /// Declares `first..=last` lost (the part at or above 0); always above every range
    /// declared before, so it extends the last range or starts a new one.
    fn lose(&mut self, first: i64, last: i64) {
        let first = first.max(0);
        if last < first {
            return;
        }
        let (first, n) = (first as u64, (last - first) as u64 + 1);
        self.lost += n;
        match self.pending.last_mut() {
            Some((f, c)) if *f + *c == first => *c += n,
            _ => self.pending.push((first, n)),
        }
    }

    /// Declares lost every missing number among the `k` oldest of the window.
    fn expire_oldest(&mut self, k: u64) {
        for i in ((WINDOW - k)..WINDOW).rev() {
            if self.bits >> i & 1 == 0 {
                let q = self.hi - i as i64;
                self.lose(q, q);
            }
        }
    }

    /// Accounts for a received sequence number (must be < 2^62; callers also bound the
    /// jump above the highest).
    pub fn on_seq(&mut self, seq: u64) -> Arrival {
        let s = seq as i64;
        if s > self.hi {
            let shift = (s - self.hi) as u64;
            if shift >= WINDOW {
                self.expire_oldest(WINDOW);
                self.lose(self.hi + 1, s - WINDOW as i64);
                self.bits = 0;
            } else {
                // bits i >= WINDOW - shift leave the window, oldest first
                self.expire_oldest(shift);
                self.bits <<= shift;
            }
            self.bits |= 1;
            self.hi = s;
            self.received += 1;
            return Arrival::New;
        }
        let d = (self.hi - s) as u64;
        if d >= WINDOW {
            self.late += 1;
            Arrival::Late
        } else if self.bits >> d & 1 == 1 {
            self.duplicates += 1;
            Arrival::Duplicate
        } else {
            self.bits |= 1u128 << d;
            self.received += 1;
            self.reordered += 1;
            Arrival::Reordered
        }
    }

    /// End of the measurement: every missing number up to the highest is lost.
    pub fn flush(&mut self) {
        self.expire_oldest(WINDOW);
        self.bits = u128::MAX;
    }

    /// At most `max` of the oldest pending loss ranges, ascending.
    pub fn take_pending(&mut self, max: usize) -> Vec<(u64, u64)> {
        let k = max.min(self.pending.len());
        self.pending.drain(..k).collect()
    }

    /// Number of pending loss ranges.
    pub fn pending_len(&self) -> usize {
        self.pending.len()
    }
}

/// Every sequence number of a list of ranges, ascending (tests and small reports).
pub fn expand(ranges: &[(u64, u64)]) -> Vec<u64> {
    ranges.iter().flat_map(|&(f, n)| f..f + n).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(seqs: &[u64]) -> (LossWindow, Vec<u64>) {
        let mut w = LossWindow::new();
        for &s in seqs {
            w.on_seq(s);
        }
        w.flush();
        let l = expand(&w.take_pending(usize::MAX));
        (w, l)
    }

    #[test]
    fn in_order_has_no_loss() {
        let seqs: Vec<u64> = (0..1000).collect();
        let (w, l) = run(&seqs);
        assert!(l.is_empty());
        assert_eq!(w.received, 1000);
        assert_eq!(w.highest(), Some(999));
    }

    #[test]
    fn gap_declared_lost_only_after_window() {
        let mut w = LossWindow::new();
        for s in (0..10).chain(11..138) {
            w.on_seq(s);
        }
        // 137 - 10 = 127 < 128: 10 may still be reordered
        assert_eq!(w.pending_len(), 0);
        w.on_seq(138);
        assert_eq!(w.take_pending(64), vec![(10, 1)]);
        assert_eq!(w.lost, 1);
    }

    /// Every 50th packet arrives right after the packet `delay` sequence numbers above it.
    fn delayed_order(n: u64, delay: u64) -> Vec<u64> {
        let mut order = Vec::new();
        let mut held: Vec<u64> = Vec::new();
        for s in 0..n {
            if s % 50 == 7 {
                held.push(s);
            } else {
                order.push(s);
            }
            while let Some(&h) = held.first() {
                if s >= h + delay {
                    order.push(h);
                    held.remove(0);
                } else {
                    break;
                }
            }
        }
        order.extend(held);
        order
    }

    #[test]
    fn reordering_within_window_is_not_loss() {
        let (w, l) = run(&delayed_order(10_000, 127));
        assert!(l.is_empty(), "{l:?}");
        assert_eq!(w.reordered, 200);
        assert_eq!(w.received, 10_000);
        // one more position and every delayed packet is lost (arrives late), except the
        // last two, which arrive after the final packet within the window
        let (w, l) = run(&delayed_order(10_000, 128));
        assert_eq!(l.len(), 198);
        assert_eq!(w.late, 198);
    }

    #[test]
    fn reordering_beyond_window_is_late_and_lost() {
        let mut seqs: Vec<u64> = (1..=128).collect();
        seqs.push(0);
        let (w, l) = run(&seqs);
        assert_eq!(l, vec![0]);
        assert_eq!(w.late, 1);
        assert_eq!(w.reordered, 0);
    }

    #[test]
    fn duplicates_big_jumps_and_start_offset() {
        let (w, l) = run(&[3, 3, 4, 1000, 999]);
        assert_eq!(w.duplicates, 1);
        let mut want: Vec<u64> = vec![0, 1, 2];
        want.extend(5..999);
        assert_eq!(l, want);
        assert_eq!(w.lost as usize, want.len());
    }

    #[test]
    fn a_jump_far_ahead_is_one_range_in_constant_time() {
        let mut w = LossWindow::new();
        w.on_seq(0);
        w.on_seq(1 << 40);
        w.flush();
        assert_eq!(w.take_pending(64), vec![(1, (1 << 40) - 1)]);
        assert_eq!(w.lost, (1 << 40) - 1);
        // ranges never outnumber received packets + 1
        let mut w = LossWindow::new();
        for s in (0..10_000).step_by(2) {
            w.on_seq(s);
        }
        w.flush();
        assert!(w.pending_len() as u64 <= w.received + 1);
        let mut taken = 0;
        while w.pending_len() > 0 {
            let t = w.take_pending(64);
            assert!(t.len() <= 64);
            taken += t.len();
        }
        assert_eq!(taken, 4999);
    }

    #[test]
    fn matches_bruteforce_on_random_orders() {
        let mut rng = crate::proto::Rng::new(5);
        for _ in 0..50 {
            let n = 2000u64;
            // drop some, then locally shuffle by up to +-200 positions
            let mut v: Vec<(f64, u64)> = Vec::new();
            for s in 0..n {
                if rng.next_f64() > 0.1 {
                    v.push((s as f64 + 200.0 * rng.next_f64(), s));
                }
            }
            v.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap());
            let order: Vec<u64> = v.iter().map(|x| x.1).collect();
            // brute force: seq lost iff not received before some seq >= it + 128 arrived
            let mut hi: i64 = -1;
            let mut seen = vec![false; n as usize];
            let mut lost = vec![false; n as usize];
            for &s in &order {
                if (s as i64) > hi {
                    for q in 0..n {
                        if (q as i64) <= s as i64 - 128 && !seen[q as usize] {
                            lost[q as usize] = true;
                        }
                    }
                    hi = s as i64;
                }
                if !lost[s as usize] {
                    seen[s as usize] = true;
                }
            }
            for q in 0..=hi.max(-1) {
                if !seen[q as usize] {
                    lost[q as usize] = true;
                }
            }
            let want: Vec<u64> = (0..n).filter(|&q| lost[q as usize]).collect();
            let (_, got) = run(&order);
            assert_eq!(got, want);
        }
    }
}
