//! One running measurement on the server (thesis Fig 4.14, RUNNING state): the loss
//! window, the per-client token bucket, the reports, and the bounded output buffer of
//! the control connection.
//!
//! Amplification bound: the server queues at most [`AMP_SLACK`] bytes more than it has
//! received from the client (authenticated datagrams and complete control messages).
//! By construction it stays far below: per delivered datagram (≥ 48 bytes) one
//! receive-time entry (16 B), at most one new loss range amortised (16 B, see
//! `window`), and a 48-byte report + receive-times header every 11 datagrams, so
//! under 37 bytes back per 48 in; the slack covers the handshake (80 B for 56 B) and the
//! final flush of the window (≤ 64 ranges). [`Outbox::queue`] enforces it anyway.

use std::time::Instant;

use crate::auth::Key;
use crate::proto::{code, Ctrl, Report, Rng, UdpTest, MAX_RANGES, MAX_RX};
use crate::window::{Arrival, LossWindow};

/// Bytes the server may send beyond what it received from the client.
pub const AMP_SLACK: u64 = 4096;
/// While this many bytes wait to be written to a client's control connection, its
/// datagrams are not processed (backpressure: they are dropped as a full socket buffer
/// would drop them, and no more reports are generated).
pub const OUT_HIGH: usize = 64 * 1024;

/// Bytes waiting to be written to one control connection, and the byte counts of the
/// amplification bound.
#[derive(Debug, Default)]
pub struct Outbox {
    pub buf: Vec<u8>,
    /// Bytes queued so far (written or waiting).
    pub queued: u64,
    /// Bytes received from the client that count towards the bound.
    pub received: u64,
    /// Since when the buffer has been non-empty without any write progress.
    pub stalled_since: Option<Instant>,
}

impl Outbox {
    /// Queues a message unless it would break the amplification bound (returns false).
    pub fn queue(&mut self, m: &Ctrl) -> bool {
        let b = m.encode();
        if self.queued + b.len() as u64 > self.received + AMP_SLACK {
            return false;
        }
        self.force(&b);
        true
    }

    /// Queues without the bound: only the final 16-byte StopPacket.
    pub fn force(&mut self, b: &[u8]) {
        self.queued += b.len() as u64;
        self.buf.extend_from_slice(b);
    }
}

pub struct Session {
    pub sid: u128,
    pub key: Key,
    pub window: LossWindow,
    since_report: u32,
    pub last_activity: Instant,
    pub started: Instant,
    tokens: f64,
    tokens_t: Instant,
    pub rng: Rng,
    /// Test only (`--debug-reorder`): held-back datagrams, with how many later ones
    /// they still wait for.
    pub held: Vec<(UdpTest, u64, u64)>,
    rx_times: Vec<(u64, u64)>,
    last_ts: u64,
    /// Set when the session must end abnormally with this code.
    pub abort: Option<u64>,
    pub debug_dropped: u64,
    /// Datagrams naming this session whose tag was wrong (forged or corrupted): dropped.
    pub rejected: u64,
    /// Datagrams not processed because the client did not read its reports.
    pub backlogged: u64,
}

impl Session {
    pub fn new(sid: u128, key: Key, now: Instant, bucket: f64, rng: Rng) -> Self {
        Session {
            sid,
            key,
            window: LossWindow::new(),
            since_report: 0,
            last_activity: now,
            started: now,
            tokens: bucket,
            tokens_t: now,
            rng,
            held: Vec::new(),
            rx_times: Vec::new(),
            last_ts: 0,
            abort: None,
            debug_dropped: 0,
            rejected: 0,
            backlogged: 0,
        }
    }

    /// Token bucket (rate `max_rate`, depth `depth`): false if the datagram exceeds it.
    pub fn take_token(&mut self, now: Instant, max_rate: f64, depth: f64) -> bool {
        self.tokens = (self.tokens + max_rate * now.duration_since(self.tokens_t).as_secs_f64()).min(depth);
        self.tokens_t = now;
        if self.tokens < 1.0 {
            return false;
        }
        self.tokens -= 1.0;
        true
    }

    fn send(&mut self, out: &mut Outbox, m: &Ctrl) {
        if !out.queue(m) {
            self.abort.get_or_insert(code::AMPLIFICATION);
        }
    }

    /// Reports every pending loss range (in reports of at most [`MAX_RANGES`]) and the
    /// receive times since the last report.
    pub fn report(&mut self, out: &mut Outbox, ts_ns: u64) {
        loop {
            let losses = self.window.take_pending(MAX_RANGES);
            self.send(out, &Ctrl::Report(Report { ts_ns, ack: self.window.highest(), losses }));
            if self.window.pending_len() == 0 {
                break;
            }
        }
        let rx = std::mem::take(&mut self.rx_times);
        for chunk in rx.chunks(MAX_RX) {
            self.send(out, &Ctrl::RxTimes(chunk.to_vec()));
        }
        self.since_report = 0;
    }

    /// Loss detection for one datagram; a report after more than 10 received packets or
    /// once a report's worth of loss ranges is pending (thesis: more than 128 losses;
    /// v2 counts ranges, which bound the report's size).
    pub fn deliver(&mut self, out: &mut Outbox, p: UdpTest, rx_ns: u64) {
        if matches!(self.window.on_seq(p.seq), Arrival::New | Arrival::Reordered) {
            self.rx_times.push((p.seq, rx_ns));
            self.since_report += 1;
        }
        self.last_ts = p.ts_ns;
        if self.since_report > 10 || self.window.pending_len() >= MAX_RANGES || self.rx_times.len() >= MAX_RX {
            self.report(out, p.ts_ns);
        }
    }

    /// Test only: releases held-back datagrams whose wait is over (or all of them).
    pub fn release_held(&mut self, out: &mut Outbox, all: bool) {
        let mut i = 0;
        while i < self.held.len() {
            if all || self.held[i].2 == 0 {
                let (p, rx, _) = self.held.remove(i);
                self.deliver(out, p, rx);
            } else {
                i += 1;
            }
        }
    }

    /// Normal end (StopPacket 0 from the client): every missing number is lost; the last
    /// report carries the timestamp of the last datagram.
    pub fn finish(&mut self, out: &mut Outbox) {
        self.release_held(out, true);
        self.window.flush();
        let ts = self.last_ts;
        self.report(out, ts);
    }

    /// The log line's counts.
    pub fn summary(&self) -> String {
        let w = &self.window;
        let mut s = format!(
            "after {:.2} s: received {}, lost {}, reordered {}, late {}, duplicates {}",
            self.started.elapsed().as_secs_f64(),
            w.received,
            w.lost,
            w.reordered,
            w.late,
            w.duplicates
        );
        for (what, n) in [
            ("rejected (bad tag)", self.rejected),
            ("backlogged", self.backlogged),
            ("debug-dropped", self.debug_dropped),
        ] {
            if n > 0 {
                s += &format!(", {what} {n}");
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_stay_under_the_amplification_bound_for_any_pattern() {
        // alternate received and missing numbers: the pattern with most loss ranges
        let now = Instant::now();
        for step in [1u64, 2, 3, 130, 1 << 19] {
            let mut s = Session::new(1, [0; 32], now, 1e9, Rng::new(1));
            let mut out = Outbox::default();
            for i in 0..5000u64 {
                out.received += 48;
                s.deliver(&mut out, UdpTest { sid: 1, seq: i * step, ts_ns: i }, i);
                out.buf.clear();
            }
            out.received += 16;
            s.finish(&mut out);
            assert_eq!(s.abort, None, "step {step}");
            assert!(out.queued <= out.received, "step {step}: {} > {}", out.queued, out.received);
        }
    }

    #[test]
    fn the_bound_is_enforced() {
        let mut out = Outbox { received: 10, ..Default::default() };
        assert!(out.queue(&Ctrl::Stop { code: 0 }));
        out.queued = AMP_SLACK;
        assert!(!out.queue(&Ctrl::Stop { code: 0 }));
    }
}
