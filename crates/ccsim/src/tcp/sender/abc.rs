//! Appropriate Byte Counting (RFC 3465) and per-ACK counting: the "acked" count the
//! congestion control's `cong_avoid` sees for one ACK, by [`AbcMode`]. The default
//! (`off`) passes the segments the ACK delivered, as Linux since ABC's removal (3.9);
//! the other modes are Linux 2.6's `tcp_abc` sysctl (0, 1, 2), see [`AbcMode`] for the
//! table. Linux 2.6 kept the counter in `tp->bytes_acked`; cwnd stays in segments, so
//! byte counting is expressed as whole-SMSS credits handed to the unchanged `cong_avoid`
//! (`tcp_slow_start` / `tcp_cong_avoid_ai` semantics), which is what 2.6's
//! `tcp_reno_cong_avoid` did with them.

use crate::tcp::cc::CaState;
use crate::tcp::config::AbcMode;

use super::TcpSender;

impl TcpSender {
    /// `tcp_ack` (2.6): add the cumulative ACK's advance to the byte counter: all of it
    /// while Open or Disorder, at most one SMSS in Loss ("we assume just one segment
    /// left network"), nothing during Recovery or CWR.
    pub(super) fn abc_count_acked(&mut self, advanced_bytes: u64) {
        if !matches!(self.abc, AbcMode::L1 | AbcMode::L2) {
            return;
        }
        match self.sk.ca_state {
            CaState::Open | CaState::Disorder => self.bytes_acked += advanced_bytes,
            CaState::Loss => self.bytes_acked += advanced_bytes.min(self.mss as u64),
            CaState::Cwr | CaState::Recovery => {}
        }
    }

    /// The growth credit, in segments, of an ACK that delivered `delivered` segments.
    /// `None`: no growth call at all (byte counting below one SMSS, or not
    /// cwnd-limited: 2.6's `tcp_reno_cong_avoid` returned before touching
    /// `bytes_acked`, so the bytes wait for the next cwnd-limited ACK).
    pub(super) fn abc_credit(&mut self, delivered: u32) -> Option<u32> {
        let mss = self.mss as u64;
        match self.abc {
            AbcMode::Off => Some(delivered),
            AbcMode::PerAck => Some(delivered.min(1)),
            AbcMode::L1 | AbcMode::L2 => {
                if !self.sk.is_cwnd_limited() || self.bytes_acked < mss {
                    return None;
                }
                if self.sk.in_slow_start() {
                    // 2.6 `tcp_slow_start`: +1 per SMSS ACKed, +2 with tcp_abc = 2 if
                    // two SMSS were; the counter restarts from 0 either way.
                    let n = if self.abc == AbcMode::L2 && self.bytes_acked >= 2 * mss { 2 } else { 1 };
                    self.bytes_acked = 0;
                    Some(n)
                } else {
                    // 2.6 `tcp_reno_cong_avoid`: +1 per cwnd x SMSS bytes ACKed, the
                    // excess carried; here as whole-SMSS credits to snd_cwnd_cnt, at
                    // most one window's worth per ACK (2.6 grew at most +1 per ACK;
                    // bytes counted while application-limited wait in the counter).
                    let n = (self.bytes_acked / mss).min(self.sk.cwnd.max(1) as u64);
                    self.bytes_acked -= n * mss;
                    Some(n as u32)
                }
            }
        }
    }
}
