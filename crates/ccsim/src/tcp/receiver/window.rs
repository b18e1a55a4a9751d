//! The receive window as Linux grows it (kernel 6.18), from `tcp_input.c`:
//! `rcv_ssthresh` raised per in-order segment (`tcp_grow_window`), the receive buffer
//! autotuned once per receiver RTT (`tcp_rcv_space_adjust`, `tcp_rcvbuf_grow`), and
//! the buffer's memory charged per segment, so that only `scaling_ratio / 256` of it
//! holds payload (`tcp_win_from_space`).
//!
//! Why it matters beyond the window itself: while `rcv_ssthresh` grows,
//! `tcp_grow_window` sets `icsk_ack.quick |= 1`, so the segment is ACKed at once.
//! A flow ramping up in slow start is therefore ACKed segment by segment for much of
//! each round (measured on the kernel through ccemu: 10 Mbit/s, 40 ms, runs of 20-30
//! single-segment ACKs, then a few per-two ACKs once the clamp is reached, again next
//! round when autotuning raises the clamp). Those ACK trains are what CUBIC's HyStart
//! ACK-train detection sees; with one ACK per two segments it never fires at
//! 10 Mbit/s (2.4 ms ACK spacing > `hystart_ack_delta_us` = 2 ms).

use crate::time::Nanos;

use super::TcpReceiver;

/// `TCP_RMEM_TO_WIN_SCALE`: `scaling_ratio` is in 1/256.
pub(super) const RMEM_TO_WIN_SCALE: u32 = 8;
/// `TCP_INIT_CWND`: `rcvq_space.space` starts at ten segments.
const TCP_INIT_CWND: u64 = 10;

impl TcpReceiver {
    /// `tcp_win_from_space`: payload bytes a buffer of `space` bytes holds.
    #[inline]
    pub(super) fn win_from_space(&self, space: u64) -> u64 {
        (space * self.scaling_ratio as u64) >> RMEM_TO_WIN_SCALE
    }

    /// `tcp_space_from_win`: buffer bytes needed for `win` bytes of payload.
    #[inline]
    fn space_from_win(&self, win: u64) -> u64 {
        (win << RMEM_TO_WIN_SCALE) / self.scaling_ratio as u64
    }

    /// Initial window state, as `tcp_select_initial_window` and
    /// `tcp_init_buffer_space` leave it: the buffer starts at `tcp_rmem[1]`; the first
    /// advertised window is what it holds at the default ratio (one half), at most
    /// 64 KB (no window scaling on the SYN), rounded down to whole segments (Linux's
    /// SYN-ACK: 65160 = 45 × 1448); the clamp is what the buffer holds at the measured
    /// ratio (Linux updates it on the first data segment, `tcp_measure_rcv_mss`).
    pub(super) fn init_window(&mut self) {
        let mss = self.cfg.mss as u64;
        self.sk_rcvbuf = self.cfg.rcvbuf_initial_bytes.min(self.cfg.rcvbuf_bytes);
        self.window_clamp = self.win_from_space(self.sk_rcvbuf).max(2 * mss);
        let first = (self.sk_rcvbuf / 2).min(u16::MAX as u64);
        self.rcv_ssthresh = (first / mss * mss).max(2 * mss).min(self.window_clamp);
        self.rcv_wnd = self.rcv_ssthresh;
        self.rcvq_space = self.rcv_ssthresh.min(TCP_INIT_CWND * mss);
    }

    /// `tcp_space`: payload bytes the buffer can still take.
    #[inline]
    pub(super) fn space(&self) -> u64 {
        self.win_from_space(self.sk_rcvbuf).saturating_sub(self.unread_bytes() + self.ofo_bytes)
    }

    /// `tcp_full_space` capped by the clamp: the window when the buffer is empty.
    #[inline]
    pub(super) fn full_space(&self) -> u64 {
        self.window_clamp.min(self.win_from_space(self.sk_rcvbuf))
    }

    /// `tcp_grow_window`, called for in-order data of at least 128 bytes: raise
    /// `rcv_ssthresh` by two of our segments (`2 * advmss`, at least twice this one)
    /// while the buffer has room, and ACK this segment at once so the sender learns of
    /// the larger window.
    ///
    /// Linux's "check #2" grows the window by only `2 * rcv_mss` (`__tcp_grow_window`)
    /// when the segment's memory, after `truesize_adjust`, holds less payload than the
    /// ratio promises. Through ccemu it passes even for small segments: a stream of
    /// 200-byte messages grew the kernel's window by about 3 KB per segment (+3
    /// window-scale units per ACK), i.e. `2 * advmss`, not `2 * rcv_mss` = 1072 bytes.
    pub(super) fn grow_window(&mut self, len: u32) {
        let room = self.window_clamp.min(self.space()).saturating_sub(self.rcv_ssthresh);
        if room == 0 {
            return;
        }
        let incr = 2 * (self.cfg.mss.max(len)) as u64;
        self.rcv_ssthresh += room.min(incr);
        self.quick |= 1;
    }

    /// `tcp_rcv_space_adjust`, after the application read: once per receiver RTT,
    /// if it read more in the last RTT than in any before, let the buffer grow.
    pub(super) fn rcv_space_adjust(&mut self, now: Nanos) {
        if self.rcv_rtt8 == 0 || now.saturating_sub(self.rcvq_time) < self.rcv_rtt8 / 8 {
            return;
        }
        // Bytes read in the last RTT, less what still waits in the queue (6.16+).
        let copied = (self.copied_seq - self.rcvq_seq).saturating_sub(self.unread_bytes());
        if copied > self.rcvq_space {
            let old = self.rcvq_space;
            self.rcvq_space = copied;
            self.rcvbuf_grow(old);
        }
        self.rcvq_seq = self.copied_seq;
        self.rcvq_time = now;
    }

    /// `tcp_rcvbuf_grow(sk, newval)` as of Linux 6.18 ("tcp: fix too slow
    /// tcp_rcvbuf_grow() action"): room for twice what was read in the last RTT
    /// ("DRS is always one RTT late"), plus twice that again scaled by how much the
    /// reading rate grew since the RTT before (a sender in slow start doubles its
    /// rate), plus the span of the out-of-order queue; at most `tcp_rmem[2]`. The clamp
    /// follows the buffer. `old` is the previous `rcvq_space` (equal to the current one
    /// when out-of-order data calls it). Nothing with `tcp_moderate_rcvbuf = 0`.
    ///
    /// Checked against the kernel through ccemu (10 Mbit/s, 40 ms): the clamp went
    /// 79 → 148 → 338 KB over the first rounds, which this rule gives for the bytes
    /// read per receiver RTT (about 20 and then 40 segments).
    pub(super) fn rcvbuf_grow(&mut self, old: u64) {
        if !self.cfg.moderate_rcvbuf {
            return;
        }
        let new = self.rcvq_space;
        let mut rcvwin = 2 * new;
        if old > 0 && new > old {
            rcvwin += 2 * (rcvwin as u128 * (new - old) as u128 / old as u128) as u64;
        }
        if let Some(last) = self.ofo.last() {
            rcvwin += last.end - self.rcv_nxt;
        }
        let rcvbuf = self.space_from_win(rcvwin).min(self.cfg.rcvbuf_bytes);
        if rcvbuf > self.sk_rcvbuf {
            self.sk_rcvbuf = rcvbuf;
            self.window_clamp = self.win_from_space(rcvbuf);
        }
    }

    /// A receiver whose window has finished growing: the buffer at `rcvbuf_bytes`,
    /// `rcv_ssthresh` at the clamp. For tests of what happens after the ramp.
    #[cfg(test)]
    pub(crate) fn with_grown_window(cfg: super::ReceiverConfig) -> Self {
        let mut r = TcpReceiver::new(cfg);
        r.sk_rcvbuf = r.cfg.rcvbuf_bytes;
        r.window_clamp = r.win_from_space(r.sk_rcvbuf);
        r.rcv_ssthresh = r.window_clamp;
        r.rcv_wnd = r.window_clamp;
        r
    }
}
