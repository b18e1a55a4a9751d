//! Delivery-rate sampling, as Linux net/ipv4/tcp_rate.c (draft-cheng-iccrg-delivery-rate-estimation).
//!
//! At each transmission the socket snapshots its delivery state into the segment
//! (`tcp_rate_skb_sent`). When a segment is (S)ACKed, the most recently *sent* of the
//! segments this ACK delivered provides the sample (`tcp_rate_skb_delivered`): the
//! number of segments delivered since it was sent, over the longer of its send
//! interval and the ACK interval (`tcp_rate_gen`). Taking the longer of the two keeps
//! ACK compression from producing rates above the bottleneck.
//!
//! Timestamps are kept in ns here; the sample reports µs as Linux does, because BBR's
//! integer arithmetic is written for µs.

use crate::tcp::cc::RateSample;
use crate::time::{Nanos, NS_PER_US};

/// Delivery state snapshotted into a segment when it is (re)transmitted
/// (`tcp_skb_cb.tx`). Packed into 32 bytes so that a scoreboard segment is one cache
/// line: SACK processing touches segments sent an RTT ago, which are rarely cached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TxRateInfo {
    /// Socket `delivered` at send time.
    pub delivered: u64,
    /// Socket `delivered_mstamp` at send time, or `CONSUMED` once this segment has been
    /// counted by a SACK (so the cumulative ACK that follows does not count it again;
    /// Linux zeroes the stamp, but 0 is a valid time here).
    delivered_mstamp: Nanos,
    /// Send time of the first segment of the current flight.
    pub first_tx_mstamp: Nanos,
    /// Low 32 bits of the socket's `delivered_ce` at send time: only differences are
    /// used, taken modulo 2^32 (Linux keeps 20 bits, `TCPCB_DELIVERED_CE_MASK`).
    pub delivered_ce: u32,
    /// The sender was application-limited when this was sent.
    pub is_app_limited: bool,
}

const CONSUMED: Nanos = Nanos::MAX;

impl Default for TxRateInfo {
    /// A snapshot that yields no sample (as a consumed one).
    fn default() -> Self {
        TxRateInfo {
            delivered: 0,
            delivered_mstamp: CONSUMED,
            first_tx_mstamp: 0,
            delivered_ce: 0,
            is_app_limited: false,
        }
    }
}

impl TxRateInfo {
    /// The snapshot's `delivered_mstamp`; `None` once a SACK has counted the segment.
    pub fn delivered_mstamp(&self) -> Option<Nanos> {
        (self.delivered_mstamp != CONSUMED).then_some(self.delivered_mstamp)
    }
}

/// The socket's side of rate sampling (fields of `struct tcp_sock`).
#[derive(Clone, Debug, Default)]
pub struct RateSampler {
    /// Segments delivered (SACKed or cumulatively ACKed) so far.
    pub delivered: u64,
    pub delivered_ce: u64,
    /// When `delivered` last increased.
    pub delivered_mstamp: Nanos,
    /// Send time of the segment that started the current sampling flight.
    pub first_tx_mstamp: Nanos,
    /// Nonzero: the sender is application-limited until `delivered` passes this.
    pub app_limited: u64,
    /// The last sample kept for `tcp_get_info`-style reporting (rate_delivered /
    /// rate_interval_us).
    pub rate_delivered: u64,
    pub rate_interval_us: u64,
    pub rate_app_limited: bool,
}

impl RateSampler {
    /// `tcp_rate_skb_sent`: snapshot at (re)transmission. When nothing is in flight a
    /// new flight starts now, so idle time is not counted as send interval.
    pub fn on_send(&mut self, now: Nanos, packets_out: u32) -> TxRateInfo {
        if packets_out == 0 {
            self.first_tx_mstamp = now;
            self.delivered_mstamp = now;
        }
        TxRateInfo {
            delivered: self.delivered,
            delivered_ce: self.delivered_ce as u32,
            delivered_mstamp: self.delivered_mstamp,
            first_tx_mstamp: self.first_tx_mstamp,
            is_app_limited: self.app_limited != 0,
        }
    }

    /// `tcp_rate_skb_delivered`: a segment sent at `tx_time`, ending at `end_seq`, was
    /// just delivered. `sacked` tells whether it was delivered by a SACK (then its
    /// snapshot is consumed).
    pub fn on_delivered(
        &mut self,
        rs: &mut RateSample,
        info: &mut TxRateInfo,
        tx_time: Nanos,
        end_seq: u64,
        retrans: bool,
        sacked: bool,
    ) {
        let Some(dmstamp) = info.delivered_mstamp() else { return };
        // Is this segment sent after the one currently providing the sample?
        // (`tcp_skb_sent_after`: later send time, ties broken by sequence.)
        let sent_after = rs.prior_mstamp.is_none()
            || tx_time > self.first_tx_mstamp
            || (tx_time == self.first_tx_mstamp && end_seq > rs.last_end_seq);
        if sent_after {
            rs.prior_delivered = info.delivered;
            rs.prior_delivered_ce = info.delivered_ce as u64;
            rs.prior_mstamp = Some(dmstamp);
            rs.is_app_limited = info.is_app_limited;
            rs.is_retrans = retrans;
            rs.last_end_seq = end_seq;
            // The send interval: from the first send of this segment's flight to
            // this segment's send; the next flight starts here.
            self.first_tx_mstamp = tx_time;
            rs.snd_interval_us = (tx_time.saturating_sub(info.first_tx_mstamp) / NS_PER_US) as i64;
        }
        if sacked {
            info.delivered_mstamp = CONSUMED;
        }
    }

    /// `tcp_rate_gen`: completes the sample after all segments of this ACK were
    /// processed. `delivered_now` segments were newly delivered and `lost` newly marked
    /// lost by this ACK.
    pub fn generate(&mut self, now: Nanos, delivered_now: u32, lost: u32, min_rtt_us: u32, rs: &mut RateSample) {
        // The app-limited phase ends once the data sent in it is delivered.
        if self.app_limited != 0 && self.delivered > self.app_limited {
            self.app_limited = 0;
        }
        if delivered_now > 0 {
            self.delivered_mstamp = now;
        }
        rs.acked_sacked = delivered_now;
        rs.losses = lost;
        let Some(prior) = rs.prior_mstamp else {
            rs.delivered = -1;
            rs.interval_us = -1;
            return;
        };
        rs.delivered = (self.delivered - rs.prior_delivered) as i64;
        rs.delivered_ce = (self.delivered_ce as u32).wrapping_sub(rs.prior_delivered_ce as u32) as i64;
        let snd_us = rs.snd_interval_us;
        let ack_us = (now.saturating_sub(prior) / NS_PER_US) as i64;
        rs.interval_us = snd_us.max(ack_us);
        rs.rcv_interval_us = ack_us;
        // An interval shorter than min_rtt is implausible (ACK compression or a
        // spurious sample); Linux discards it.
        if rs.interval_us < min_rtt_us as i64 {
            rs.interval_us = -1;
            return;
        }
        // Keep the fastest sample, but let an app-limited one through only if it is
        // at least as fast as the last (it is then a lower bound we can trust).
        if !rs.is_app_limited
            || (rs.delivered as u128) * (self.rate_interval_us as u128)
                >= (self.rate_delivered as u128) * (rs.interval_us as u128)
        {
            self.rate_delivered = rs.delivered as u64;
            self.rate_interval_us = rs.interval_us as u64;
            self.rate_app_limited = rs.is_app_limited;
        }
    }

    /// `tcp_rate_check_app_limited`: called when the sender ran out of data to send
    /// (less than one MSS queued) while cwnd had room and nothing was lost. Marks the
    /// samples until everything now in flight is delivered as app-limited.
    pub fn check_app_limited(&mut self, unsent_bytes: u64, mss: u32, in_flight: u32, cwnd: u32, lost_out: u32) {
        if unsent_bytes < mss as u64 && in_flight < cwnd && lost_out == 0 {
            self.app_limited = (self.delivered + in_flight as u64).max(1);
        }
    }

    /// Delivery rate of the last kept sample, bytes/s (0 if none).
    pub fn rate_bps(&self, mss: u32) -> u64 {
        if self.rate_interval_us == 0 {
            return 0;
        }
        (self.rate_delivered as u128 * mss as u128 * 8 * 1_000_000 / self.rate_interval_us as u128) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::NS_PER_MS;

    #[test]
    fn sample_counts_deliveries_since_send_over_longer_interval() {
        let mut r = RateSampler::default();
        // Ten segments sent back to back at t = 0..9 ms, first flight.
        let mut infos: Vec<TxRateInfo> = (0..10).map(|i| r.on_send(i * NS_PER_MS, i as u32)).collect();
        // All ten delivered by one ACK at 100 ms.
        let mut rs = RateSample::default();
        for (i, info) in infos.iter_mut().enumerate() {
            r.delivered += 1;
            r.on_delivered(&mut rs, info, i as u64 * NS_PER_MS, (i as u64 + 1) * 1000, false, false);
        }
        r.generate(100 * NS_PER_MS, 10, 0, 50_000, &mut rs);
        // Sampled segment: the last sent (t = 9 ms), sent when delivered = 0.
        assert_eq!(rs.delivered, 10);
        assert_eq!(rs.snd_interval_us, 9_000);
        assert_eq!(rs.rcv_interval_us, 100_000);
        assert_eq!(rs.interval_us, 100_000);
        assert_eq!(r.rate_bps(1000), 10 * 1000 * 8 * 10);
    }

    #[test]
    fn sacked_segment_is_not_counted_twice() {
        let mut r = RateSampler::default();
        let mut info = r.on_send(0, 0);
        let mut rs = RateSample::default();
        r.on_delivered(&mut rs, &mut info, 0, 1000, false, true);
        assert!(info.delivered_mstamp().is_none());
        let mut rs2 = RateSample::default();
        r.on_delivered(&mut rs2, &mut info, 0, 1000, false, false);
        assert!(rs2.prior_mstamp.is_none());
    }

    #[test]
    fn app_limited_marks_until_inflight_delivered() {
        let mut r = RateSampler { delivered: 5, ..Default::default() };
        r.check_app_limited(0, 1448, 3, 10, 0);
        assert_eq!(r.app_limited, 8);
        let mut rs = RateSample::default();
        r.delivered = 9;
        r.generate(1, 1, 0, 0, &mut rs);
        assert_eq!(r.app_limited, 0);
    }
}
