//! ACKs going out, as `tcp_output.c`: the advertised window (`tcp_select_window`),
//! the delayed-ACK timer's arming (`tcp_send_delayed_ack`) and the ACK segment with
//! its SACK blocks and timestamps (`__tcp_send_ack`).

use crate::tcp::segment::Segment;
use crate::time::Nanos;

use super::{EcnMode, TcpReceiver, MAX_ATO_BULK};

impl TcpReceiver {
    /// The next ACK to send at `now`, if one is due: queued by an arrival or a read,
    /// or produced by a timer that has expired. Call until it returns `None`
    /// (DCTCP can emit two ACKs for one arrival).
    pub fn poll_ack(&mut self, now: Nanos) -> Option<Segment> {
        if self.out.is_empty() && self.next_timer().is_some_and(|t| t <= now) {
            self.on_timer(now);
        }
        crate::fifo::pop_front_rewind(&mut self.out)
    }

    /// `tcp_send_delayed_ack`.
    pub(super) fn send_delayed_ack(&mut self, now: Nanos) {
        let min = self.cfg.delack_min_ns;
        let mut ato = self.ato;
        if ato > min {
            // Slow path: the inter-segment interval is "high".
            let mut max_ato = if self.ack_pushed { self.cfg.delack_max_ns } else { MAX_ATO_BULK };
            if let Some(srtt) = self.cfg.srtt_ns {
                let rtt = srtt.max(min);
                if rtt < max_ato {
                    max_ato = rtt;
                }
            }
            ato = ato.min(max_ato);
        }
        ato = ato.min(self.cfg.delack_max_ns);
        // on the kernel tick (`sk_reset_timer(.., jiffies + ato)`), or exactly without one
        let mut timeout = crate::time::jiffies_timer(now, ato, self.cfg.jiffy_ns, self.cfg.jiffy_phase_ns);
        if let Some(old) = self.delack_at {
            // "If delack timer is about to expire, send ACK now."
            if old <= now + ato / 4 {
                self.send_ack(now);
                return;
            }
            // Use the new timeout only if it is earlier.
            timeout = timeout.min(old);
        }
        self.ack_scheduled = true;
        self.delack_at = Some(timeout);
    }

    /// `tcp_receive_window`: what is left of the last advertised window.
    pub(super) fn receive_window(&self) -> u64 {
        (self.rcv_wup + self.rcv_wnd).saturating_sub(self.rcv_nxt)
    }

    /// `__tcp_select_window`: the window the free buffer allows, at most
    /// `rcv_ssthresh`. Below half the full window quick-ack mode ends, and receiver
    /// silly-window avoidance (RFC 1122 §4.2.3.3) advertises zero rather than less
    /// than one `rcv_mss` or 1/16 of it. (Linux also rounds to the window-scale unit.)
    pub(super) fn select_window_raw(&mut self) -> u64 {
        let full = self.full_space();
        let free = self.space();
        if free < full / 2 {
            self.quick = 0;
            // `mss = icsk_ack.rcv_mss`, at most the full space.
            if free < full / 16 || free < (self.rcv_mss as u64).min(full) {
                return 0;
            }
        }
        free.min(self.rcv_ssthresh)
    }

    /// `tcp_select_window`: the window to put on an ACK. The right edge never moves
    /// left (RFC 9293 §3.8.6: a receiver should not shrink the window).
    fn select_window(&mut self) -> u64 {
        let cur = self.receive_window();
        let new = self.select_window_raw().max(cur);
        self.rcv_wnd = new;
        self.rcv_wup = self.rcv_nxt;
        new
    }

    pub(super) fn send_ack(&mut self, now: Nanos) {
        self.send_ack_for(now, self.rcv_nxt);
    }

    /// `__tcp_send_ack` + `tcp_established_options` + `tcp_event_ack_sent`.
    pub(super) fn send_ack_for(&mut self, now: Nanos, ack: u64) {
        let rwnd = self.select_window();
        let mut seg = Segment {
            ack,
            rwnd,
            tsval: if self.cfg.timestamps { now } else { 0 },
            tsecr: if self.cfg.timestamps { self.ts_recent } else { 0 },
            ece: self.cfg.ecn_mode != EcnMode::Off && self.demand_cwr,
            ..Segment::default()
        };
        if self.cfg.sack {
            // DSACK first (RFC 2883 §4), then the SACK blocks, as many as fit.
            let max = self.cfg.max_sack_blocks();
            let mut n = 0;
            if let Some(d) = self.dsack.take() {
                seg.sack[0] = d;
                seg.dsack = true;
                n = 1;
            }
            for b in &self.sacks[..self.num_sacks] {
                if n == max {
                    break;
                }
                seg.sack[n] = *b;
                n += 1;
            }
            seg.n_sack = n as u8;
        }
        self.out.push_back(seg);
        self.acks_sent += 1;

        // `tcp_event_ack_sent`.
        if self.compressed_ack > 0 {
            self.compressed_ack = 0;
            self.comp_at = None;
        }
        if ack != self.rcv_nxt {
            // DCTCP's extra ACK for earlier data: the pending ACK is still owed.
            return;
        }
        // `tcp_dec_quickack_mode`: only ACKs covering new data use up a quick ACK.
        if self.quick > 0 && self.ack_scheduled {
            self.quick -= 1;
            if self.quick == 0 {
                // "Leaving quickack mode we deflate ATO."
                self.ato = self.cfg.delack_min_ns;
            }
        }
        self.ack_scheduled = false;
        self.ack_now = false;
        self.ack_pushed = false;
        self.delack_at = None;
    }
}
