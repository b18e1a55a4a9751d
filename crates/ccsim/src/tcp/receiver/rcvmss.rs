//! The receiver's estimate of the sender's segment size, `icsk_ack.rcv_mss`, as
//! Linux 6.18 keeps it (`tcp_initialize_rcv_mss` in tcp_output.c,
//! `tcp_measure_rcv_mss` in tcp_input.c).
//!
//! Linux does not trust the MSS option for this: it starts from 536 bytes and learns
//! from arrivals. `rcv_mss` then decides when "more than one full-sized segment" is
//! unacknowledged (`__tcp_ack_snd_check`, `tcp_cleanup_rbuf`), how many quick ACKs
//! half a window is (`tcp_incr_quickack`), which segments give a timestamp RTT sample
//! (`tcp_rcv_rtt_measure_ts`) and the silly-window floor (`__tcp_select_window`).
//!
//! Measured on the kernel through ccemu (10 Mbit/s, 40 ms, CUBIC, `TCP_NODELAY`, one
//! CBR flow of 724-, 1000- or 200-byte messages): every message was ACKed on its own
//! (each carries PSH and the reader drains the queue, `tcp_cleanup_rbuf`), and the
//! advertised window stayed at its first value (63 KB) for 724 and 1000 bytes, as a
//! re-measured `scaling_ratio` below the first one gives (a clamp below the window).

use crate::tcp::segment::Segment;

use super::window::RMEM_TO_WIN_SCALE;
use super::TcpReceiver;

/// `TCP_MSS_DEFAULT`: RFC 1122's 536 bytes, the first guess and the size from which a
/// shorter segment can still be a full-sized one.
const TCP_MSS_DEFAULT: u32 = 536;
/// `TCP_MIN_MSS`: the smallest `rcv_mss` (88 bytes).
const TCP_MIN_MSS: u32 = 88;
/// `sizeof(struct tcphdr)`.
const TCP_HEADER: u32 = 20;
/// `TCPOLEN_TSTAMP_ALIGNED`: the timestamp option, part of `tp->tcp_header_len`.
const TCP_TS_OPTION: u32 = 12;
/// A ratio of one: `scaling_ratio` is in 1 / 2^`TCP_RMEM_TO_WIN_SCALE`.
const RATIO_ONE: u64 = 1 << RMEM_TO_WIN_SCALE;

impl TcpReceiver {
    /// `tcp_initialize_rcv_mss`: the smaller of our MSS, half the first window and
    /// 536 bytes, at least 88.
    pub(super) fn initialize_rcv_mss(&mut self) {
        let hint = self.cfg.mss.min((self.rcv_wnd / 2).min(u32::MAX as u64) as u32).min(TCP_MSS_DEFAULT);
        self.rcv_mss = hint.max(TCP_MIN_MSS);
    }

    /// Buffer memory one arriving segment takes (`skb->truesize`). One size for every
    /// segment: the skb a full-sized segment needs at the configured ratio (2316 bytes
    /// for 1448 at 160/256, a 2 KiB data buffer plus the `sk_buff`), which is what
    /// ccemu's tun device gives segments down to about half an MSS.
    fn skb_truesize(&self) -> u64 {
        (self.cfg.mss as u64 * RATIO_ONE / self.cfg.scaling_ratio as u64).max(1)
    }

    /// `tcp_measure_rcv_mss` for an in-order data segment.
    pub(super) fn measure_rcv_mss(&mut self, seg: &Segment) {
        let lss = std::mem::take(&mut self.last_seg_size);
        let len = seg.len;
        if len >= self.rcv_mss {
            // A segment of a new size re-measures the payload share of its memory
            // ("only adjust scaling_ratio when we update icsk_ack.rcv_mss").
            if len != self.rcv_mss {
                let ratio = ((len as u64 * RATIO_ONE) / self.skb_truesize()).clamp(1, RATIO_ONE) as u32;
                if ratio != self.scaling_ratio {
                    self.scaling_ratio = ratio;
                    let clamp = self.win_from_space(self.sk_rcvbuf);
                    self.set_window_clamp(clamp);
                }
            }
            self.rcv_mss = len.min(self.cfg.mss);
            // 6.7+ ("tcp: fix delayed ACKs for MSS boundary condition"): a full-sized
            // segment with PSH ends a write too.
            if seg.psh {
                self.ack_pushed = true;
            }
            return;
        }
        // A shorter segment may still be full-sized for a sender with a smaller MSS:
        // one of at least 536 bytes, or of at least 88 without PSH. Two in a row of the
        // same length make that length the new `rcv_mss`. Header bytes count as Linux
        // counts them (TCP header plus the fixed timestamp option).
        let hdr = TCP_HEADER + if self.cfg.timestamps { TCP_TS_OPTION } else { 0 };
        let wire = len + hdr;
        if wire >= TCP_MSS_DEFAULT + TCP_HEADER || (wire >= TCP_MIN_MSS + TCP_HEADER && !seg.psh) {
            self.last_seg_size = len;
            if len == lss {
                self.rcv_mss = len;
                return;
            }
        }
        // "Pushed, when packet smaller than one MSS."
        self.ack_pushed = true;
    }

    /// `tcp_set_window_clamp` for a new clamp from the buffer: a smaller clamp pulls
    /// `rcv_ssthresh` down with it (`__tcp_adjust_rcv_ssthresh`), a larger one lets it
    /// reach the last advertised window; `rcvq_space` is kept within the clamp
    /// (`tcp_measure_rcv_mss`).
    fn set_window_clamp(&mut self, val: u64) {
        let clamp = val.max(2 * self.cfg.mss as u64);
        if clamp == self.window_clamp {
            return;
        }
        if clamp < self.window_clamp {
            self.rcv_ssthresh = self.rcv_ssthresh.min(clamp);
        } else {
            self.rcv_ssthresh = self.rcv_ssthresh.max(self.rcv_wnd.min(clamp));
        }
        self.window_clamp = clamp;
        self.rcvq_space = self.rcvq_space.min(clamp);
    }
}
