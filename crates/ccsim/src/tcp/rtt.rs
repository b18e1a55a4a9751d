//! RTT estimation and the retransmission timeout, as Linux does it
//! (net/ipv4/tcp_input.c `tcp_rtt_estimator`, `tcp_set_rto`, `tcp_update_rtt_min`;
//! include/net/tcp.h `__tcp_set_rto`).
//!
//! RFC 6298 computes `RTO = SRTT + max(G, 4*RTTVAR)` and clamps the *result* to at
//! least 1 s (Linux: 200 ms). Linux differs in two ways that change real numbers, and
//! this estimator follows Linux:
//! - the 200 ms floor applies to the variance term, not the sum: `RTO = SRTT +
//!   max(4*RTTVAR, rto_min)`, so a 100 ms path gets RTO >= 300 ms, not 200 ms;
//! - `rttvar` is not the raw mean deviation: it tracks the largest `mdev` seen in the
//!   last RTT (`mdev_max`) and decays towards it only once per RTT, so a burst of
//!   stable samples does not collapse the RTO within one window (Linux's comment calls
//!   the RFC behaviour "too fast" to react to sudden delay increases).
//!
//! When the RTT *falls*, Linux gives the deviation 1/8 of its usual weight (the
//! `m >>= 3` branch), so a sudden improvement does not inflate the RTO.
//!
//! Arithmetic is Linux's fixed point: `srtt_us` is 8x, `mdev_us` 4x (both in µs).
//! The RTO is rounded up to the kernel timer tick (`usecs_to_jiffies`, HZ = 1000).
//!
//! `RtoMode::Rfc6298` (legacy stacks, ns-2) computes RFC 6298 §2 instead: RTTVAR
//! updated symmetrically, `RTO = max(min_rto, SRTT + max(G, 4*RTTVAR))`, G = 1 ms.
//!
//! Karn's rule is the caller's job: the sender feeds only samples from segments that
//! were never retransmitted, or from the timestamp echo (RFC 7323 RTTM), which is
//! unambiguous, exactly as `tcp_ack_update_rtt` does.

use crate::tcp::config::RtoMode;
use crate::tcp::minmax::MinMax;
use crate::time::{Nanos, NS_PER_MS, NS_PER_SEC, NS_PER_US};

/// `net.ipv4.tcp_min_rtt_wlen` = 300 s: window of the socket's min-RTT filter. (BBR
/// keeps its own 10 s filter.)
pub const MIN_RTT_WINDOW_NS: Nanos = 300 * NS_PER_SEC;

/// Kernel timer granularity for the RTO unless `with_jiffy` sets it (HZ = 1000).
const JIFFY_NS: Nanos = NS_PER_MS;

#[derive(Clone, Debug)]
pub struct RttEstimator {
    /// Smoothed RTT, µs << 3; 0 = no sample yet.
    srtt_us8: u64,
    /// Mean deviation, µs << 2.
    mdev_us4: u64,
    /// Largest `mdev` in the current RTT.
    mdev_max_us: u64,
    /// The variance term of the RTO (>= rto_min), µs.
    rttvar_us: u64,
    /// `snd_nxt` when the current per-RTT `mdev_max` period started.
    rtt_seq: u64,
    /// Current RTO without backoff, ns.
    base_rto_ns: Nanos,
    /// Exponential backoff exponent (`icsk_backoff`).
    backoff: u32,
    min_rto_us: u64,
    max_rto_ns: Nanos,
    min_rtt: MinMax,
    has_min_rtt: bool,
    latest_us: u64,
    mode: RtoMode,
    /// One kernel timer tick (`1 s / CONFIG_HZ`): the RTO is kept in jiffies.
    jiffy_ns: Nanos,
}

impl RttEstimator {
    pub fn new(initial_rto: Nanos, min_rto: Nanos, max_rto: Nanos) -> Self {
        RttEstimator {
            srtt_us8: 0,
            mdev_us4: 0,
            mdev_max_us: 0,
            rttvar_us: 0,
            rtt_seq: 0,
            base_rto_ns: initial_rto.min(max_rto),
            backoff: 0,
            min_rto_us: min_rto / NS_PER_US,
            max_rto_ns: max_rto,
            min_rtt: MinMax::default(),
            has_min_rtt: false,
            latest_us: 0,
            mode: RtoMode::Linux,
            jiffy_ns: JIFFY_NS,
        }
    }

    /// The kernel's timer tick (`TcpConfig::kernel_hz`).
    pub fn with_jiffy(mut self, jiffy_ns: Nanos) -> Self {
        self.jiffy_ns = jiffy_ns.max(1);
        self
    }

    /// One kernel timer tick, ns (the TLP and RACK timers count in it too).
    pub fn jiffy(&self) -> Nanos {
        self.jiffy_ns
    }

    /// Chooses the RTO computation (Linux's by default).
    pub fn with_mode(mut self, mode: RtoMode) -> Self {
        self.mode = mode;
        self
    }

    /// Feeds one RTT measurement (`tcp_ack_update_rtt`): `seq_rtt_us` updates SRTT
    /// and the RTO, `ca_rtt_us` (the RTT of the most recently sent segment ACKed)
    /// updates the min-RTT filter. `snd_una`/`snd_nxt` delimit Linux's once-per-RTT
    /// rttvar decay. A valid sample also resets the backoff (RFC 6298 §5.7).
    pub fn on_sample(&mut self, now: Nanos, seq_rtt_us: u64, ca_rtt_us: u64, snd_una: u64, snd_nxt: u64) {
        self.update_min_rtt(now, ca_rtt_us);
        self.estimate(seq_rtt_us, snd_una, snd_nxt);
        self.set_rto();
        self.backoff = 0;
    }

    /// `tcp_update_rtt_min` (Linux also skips samples from suspected delayed ACKs; the
    /// simulator's receiver reports none, so every sample counts).
    fn update_min_rtt(&mut self, now: Nanos, rtt_us: u64) {
        let v = rtt_us.clamp(1, u32::MAX as u64) as u32;
        if !self.has_min_rtt {
            self.min_rtt.reset(now, v);
            self.has_min_rtt = true;
        } else {
            self.min_rtt.running_min(MIN_RTT_WINDOW_NS, now, v);
        }
    }

    /// `tcp_rtt_estimator`.
    fn estimate(&mut self, mrtt_us: u64, snd_una: u64, snd_nxt: u64) {
        let m_raw = mrtt_us as i64;
        self.latest_us = mrtt_us;
        if self.srtt_us8 != 0 && self.mode == RtoMode::Rfc6298 {
            // RFC 6298 §2.3: RTTVAR = 3/4 RTTVAR + 1/4 |SRTT - R'| (4x units: += |err| -
            // RTTVAR), then SRTT = 7/8 SRTT + 1/8 R'.
            let err = m_raw - (self.srtt_us8 >> 3) as i64;
            let m = err.abs() - (self.mdev_us4 >> 2) as i64;
            self.mdev_us4 = (self.mdev_us4 as i64 + m).max(0) as u64;
            self.srtt_us8 = (self.srtt_us8 as i64 + err).max(1) as u64;
        } else if self.srtt_us8 != 0 {
            let mut m = m_raw - (self.srtt_us8 >> 3) as i64; // error
            let srtt = (self.srtt_us8 as i64 + m).max(1); // srtt += err/8 (in 8x units)
            if m < 0 {
                // RTT fell: the deviation counts 1/8 as much, so a sudden drop does
                // not inflate the RTO (Linux's "Eifel" remark).
                m = -m - (self.mdev_us4 >> 2) as i64;
                if m > 0 {
                    m >>= 3;
                }
            } else {
                m -= (self.mdev_us4 >> 2) as i64;
            }
            self.mdev_us4 = (self.mdev_us4 as i64 + m).max(0) as u64; // mdev = 3/4 mdev + |err|/4
            if self.mdev_us4 > self.mdev_max_us {
                self.mdev_max_us = self.mdev_us4;
                if self.mdev_max_us > self.rttvar_us {
                    self.rttvar_us = self.mdev_max_us;
                }
            }
            if snd_una > self.rtt_seq {
                // Once per RTT: let rttvar decay towards this RTT's max deviation.
                if self.mdev_max_us < self.rttvar_us {
                    self.rttvar_us -= (self.rttvar_us - self.mdev_max_us) >> 2;
                }
                self.rtt_seq = snd_nxt;
                self.mdev_max_us = self.min_rto_us;
            }
            self.srtt_us8 = srtt as u64;
        } else {
            // First sample: SRTT = R, RTTVAR = R/2 (stored as 4x = 2R).
            self.srtt_us8 = (mrtt_us << 3).max(1);
            self.mdev_us4 = mrtt_us << 1;
            self.rttvar_us = self.mdev_us4.max(self.min_rto_us);
            self.mdev_max_us = self.rttvar_us;
            self.rtt_seq = snd_nxt;
        }
    }

    /// `tcp_set_rto` / `__tcp_set_rto`: srtt + rttvar, rounded up to a jiffy, bounded
    /// by `TCP_RTO_MAX`.
    fn set_rto(&mut self) {
        let us = match self.mode {
            RtoMode::Linux => (self.srtt_us8 >> 3) + self.rttvar_us,
            // RFC 6298 §2.4 with G = one jiffy; the minimum bounds the sum (§2.4).
            RtoMode::Rfc6298 => ((self.srtt_us8 >> 3) + self.mdev_us4.max(self.jiffy_ns / NS_PER_US)).max(self.min_rto_us),
        };
        let ns = (us * NS_PER_US).div_ceil(self.jiffy_ns) * self.jiffy_ns;
        self.base_rto_ns = ns.min(self.max_rto_ns);
    }

    /// Doubles the RTO after a timeout (`icsk_backoff++`, `icsk_rto << 1`, capped at
    /// `TCP_RTO_MAX`).
    pub fn back_off(&mut self) {
        self.backoff = self.backoff.saturating_add(1);
    }

    /// Current RTO including backoff.
    pub fn rto(&self) -> Nanos {
        let shift = self.backoff.min(40);
        self.base_rto_ns.saturating_mul(1u64 << shift).min(self.max_rto_ns)
    }

    /// RTO without backoff (what the next valid sample would keep).
    pub fn base_rto(&self) -> Nanos {
        self.base_rto_ns
    }

    pub fn backoff(&self) -> u32 {
        self.backoff
    }

    /// Smoothed RTT in ns (0 before the first sample).
    pub fn srtt(&self) -> Nanos {
        (self.srtt_us8 * NS_PER_US) >> 3
    }

    /// Linux's `srtt_us` (8x µs), for pacing arithmetic that uses it directly.
    pub fn srtt_us8(&self) -> u64 {
        self.srtt_us8
    }

    /// The RTO's variance term (Linux `rttvar_us`, i.e. 4 x RTTVAR floored at
    /// rto_min), ns.
    pub fn rttvar(&self) -> Nanos {
        self.rttvar_us * NS_PER_US
    }

    /// Mean deviation (RFC 6298 RTTVAR), ns.
    pub fn mdev(&self) -> Nanos {
        (self.mdev_us4 * NS_PER_US) >> 2
    }

    pub fn has_sample(&self) -> bool {
        self.srtt_us8 != 0
    }

    /// Windowed minimum RTT, µs (`u32::MAX` before any sample, as `tcp_min_rtt` reads
    /// ~0U then).
    pub fn min_rtt_us(&self) -> u32 {
        if self.has_min_rtt {
            self.min_rtt.get()
        } else {
            u32::MAX
        }
    }

    pub fn latest_us(&self) -> u64 {
        self.latest_us
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est() -> RttEstimator {
        RttEstimator::new(1000 * NS_PER_MS, 200 * NS_PER_MS, 120 * NS_PER_SEC)
    }

    #[test]
    fn initial_rto_until_first_sample() {
        let e = est();
        assert_eq!(e.rto(), NS_PER_SEC);
        assert!(!e.has_sample());
    }

    #[test]
    fn first_sample_matches_rfc6298() {
        // RFC 6298 §2.2: SRTT = R, RTTVAR = R/2, RTO = SRTT + 4*RTTVAR = 3R.
        let mut e = est();
        e.on_sample(0, 100_000, 100_000, 0, 10);
        assert_eq!(e.srtt(), 100 * NS_PER_MS);
        assert_eq!(e.mdev(), 50 * NS_PER_MS);
        assert_eq!(e.rto(), 300 * NS_PER_MS);
    }

    #[test]
    fn second_sample_srtt_and_mdev_match_rfc6298_rto_uses_linux_rttvar() {
        let mut e = est();
        e.on_sample(0, 100_000, 100_000, 0, 10);
        // R' = 140 ms. RFC 6298 §2.3: RTTVAR = 3/4*50 + 1/4*|100-140| = 47.5 ms,
        // SRTT = 7/8*100 + 1/8*140 = 105 ms, RTO = 105 + 4*47.5 = 295 ms.
        // Linux keeps the larger per-RTT variance term (rttvar = 200 ms from the
        // first sample, not yet decayed since snd_una has not passed rtt_seq), so its
        // RTO is 105 + 200 = 305 ms.
        e.on_sample(1, 140_000, 140_000, 5, 20);
        assert_eq!(e.srtt(), 105 * NS_PER_MS);
        assert_eq!(e.mdev(), 47_500 * NS_PER_US);
        assert_eq!(e.rto(), 305 * NS_PER_MS);
    }

    #[test]
    fn rfc6298_mode_bounds_the_sum_and_updates_rttvar_symmetrically() {
        let rfc = || RttEstimator::new(1000 * NS_PER_MS, 200 * NS_PER_MS, 120 * NS_PER_SEC).with_mode(RtoMode::Rfc6298);
        // 100 ms then 140 ms: RFC 6298 §2.3 gives SRTT 105 ms, RTTVAR 47.5 ms,
        // RTO = 105 + 190 = 295 ms (Linux: 305 ms, previous test).
        let mut e = rfc();
        e.on_sample(0, 100_000, 100_000, 0, 10);
        assert_eq!(e.rto(), 300 * NS_PER_MS);
        e.on_sample(1, 140_000, 140_000, 5, 20);
        assert_eq!(e.srtt(), 105 * NS_PER_MS);
        assert_eq!(e.mdev(), 47_500 * NS_PER_US);
        assert_eq!(e.rto(), 295 * NS_PER_MS);
        // A falling RTT counts fully in RTTVAR (Linux weighs it 1/8): 105 -> 65 ms
        // gives |err| = 40 ms, RTTVAR = 3/4*47.5 + 10 = 45.625 ms.
        e.on_sample(2, 65_000, 65_000, 10, 30);
        assert_eq!(e.mdev(), 45_625 * NS_PER_US);
        // Stable 10 ms path: SRTT + 4*RTTVAR shrinks below 200 ms, the minimum holds
        // the sum (Linux: SRTT + 200 ms).
        let mut e = rfc();
        for i in 0..200 {
            e.on_sample(i, 10_000, 10_000, i, i + 1);
        }
        assert_eq!(e.rto(), 200 * NS_PER_MS);
    }

    #[test]
    fn small_rtt_gets_srtt_plus_200ms() {
        // 10 ms path: RFC would give max(1 s, 30 ms) = 1 s (or 200 ms with Linux's
        // minimum applied to the sum); Linux gives 10 + max(20, 200) = 210 ms.
        let mut e = est();
        e.on_sample(0, 10_000, 10_000, 0, 10);
        assert_eq!(e.rto(), 210 * NS_PER_MS);
    }

    #[test]
    fn rttvar_decays_once_per_rtt_towards_max_mdev() {
        let mut e = est();
        e.on_sample(0, 400_000, 400_000, 0, 10); // rttvar = mdev4 = 800 ms
        assert_eq!(e.rttvar(), 800 * NS_PER_MS);
        // Same RTT again, and snd_una passed rtt_seq: mdev4 = 800 - 800/4 = 600;
        // mdev_max (800) > 600, rttvar unchanged by the max rule; then the per-RTT
        // decay: mdev_max 800 is not below rttvar 800, so no decay; mdev_max resets
        // to rto_min (200 ms).
        e.on_sample(1, 400_000, 400_000, 11, 20);
        assert_eq!(e.mdev(), 150 * NS_PER_MS);
        assert_eq!(e.rttvar(), 800 * NS_PER_MS);
        // Next RTT: mdev4 = 600 - 150 = 450 > mdev_max (200) -> mdev_max = 450; decay:
        // rttvar -= (800 - 450) / 4 = 87.5 ms -> 712.5 ms.
        e.on_sample(2, 400_000, 400_000, 21, 30);
        assert_eq!(e.rttvar(), 712_500 * NS_PER_US);
        assert_eq!(e.rto(), (400 + 713) * NS_PER_MS); // rounded up to the jiffy
    }

    #[test]
    fn backoff_doubles_and_caps_and_sample_resets() {
        let mut e = est();
        e.on_sample(0, 100_000, 100_000, 0, 10);
        e.back_off();
        assert_eq!(e.rto(), 600 * NS_PER_MS);
        e.back_off();
        assert_eq!(e.rto(), 1200 * NS_PER_MS);
        for _ in 0..20 {
            e.back_off();
        }
        assert_eq!(e.rto(), 120 * NS_PER_SEC);
        e.on_sample(1, 100_000, 100_000, 20, 30);
        assert_eq!(e.backoff(), 0);
        assert!(e.rto() < NS_PER_SEC);
    }

    #[test]
    fn min_rtt_is_windowed_minimum() {
        let mut e = est();
        e.on_sample(0, 100_000, 100_000, 0, 1);
        e.on_sample(NS_PER_SEC, 80_000, 80_000, 1, 2);
        e.on_sample(2 * NS_PER_SEC, 120_000, 120_000, 2, 3);
        assert_eq!(e.min_rtt_us(), 80_000);
        e.on_sample(400 * NS_PER_SEC, 120_000, 120_000, 3, 4);
        assert_eq!(e.min_rtt_us(), 120_000);
    }
}
