//! DCTCP as Linux's `tcp_dctcp` module (net/ipv4/tcp_dctcp.c; RFC 8257; Alizadeh et
//! al., SIGCOMM 2010).
//!
//! The switch marks CE when its instantaneous queue exceeds K; the receiver echoes
//! every mark exactly (the simulator's receiver runs DCTCP's ECE state machine when
//! the algorithm is `dctcp`, `EcnMode::Dctcp`); the sender keeps
//!
//! ```text
//! once per window of data:  F = delivered_ce / delivered
//!                           alpha <- (1 - g) alpha + g F          (g = 2^-shift_g)
//! on ECE (once per window):  ssthresh = cwnd (1 - alpha/2)
//! ```
//!
//! The reduction itself is the socket's: an ACK with ECE puts it in CWR
//! (`tcp_enter_cwr`) at most once per window, asks [`CongestionOps::ssthresh`] and
//! brings cwnd down with PRR. Growth is Reno's (`tcp_reno_cong_avoid`).
//!
//! Linux's fixed point: alpha in 1/1024 (`DCTCP_MAX_ALPHA` = 1024), so
//! `cwnd * alpha >> 11` is `cwnd * alpha/2`; the EWMA subtracts `alpha >> g` (at least 1
//! while alpha > 0, `min_not_zero`) and adds `(delivered_ce << (10 - g)) / delivered`.
//! Losses halve cwnd as Reno, once per RTT (Recovery entry or RTO), overriding the
//! alpha-based ssthresh (see [`Dctcp::set_state`]).
//! Without negotiated ECN the socket falls back to Reno (`dctcp_reno`).
//!
//! The sender calls `in_ack_event` before `clean_rtx_queue` as Linux did up to 6.x,
//! so the `delivered` counters an update reads stop at the previous ACK; the window
//! boundary (`snd_una >= next_seq`) uses this ACK's `snd_una`, as Linux.

use super::{AckFlags, AnyCc, CaEvent, CaState, CcContext, CongAvoid, CongestionOps, ParamSpec, ParamValue, Params};
use crate::error::ConfigError;

pub const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "dctcp_shift_g",
        default: ParamValue::Int(4),
        doc: "parameter g for updating dctcp_alpha (g = 1/2^shift_g), 0..=10",
    },
    ParamSpec {
        name: "dctcp_alpha_on_init",
        default: ParamValue::Int(1024),
        doc: "parameter for initial alpha value (1024 = 1.0)",
    },
];

/// `DCTCP_MAX_ALPHA`.
pub const MAX_ALPHA: u32 = 1024;

/// `struct dctcp` (sender side; the receiver's ECE state lives in the receiver).
#[derive(Clone, Debug)]
pub struct Dctcp {
    shift_g: u32,
    alpha_on_init: u32,
    /// Alpha in 1/1024.
    alpha: u32,
    next_seq: u64,
    old_delivered: u64,
    old_delivered_ce: u64,
    loss_cwnd: u32,
    /// ECN not negotiated: behave as `dctcp_reno`.
    reno_fallback: bool,
    /// Observation windows closed so far, and the sums of alpha and of F over them
    /// (both in 1/1024), for traces and tests (not in Linux).
    windows: u64,
    sum_alpha: u64,
    sum_f: u64,
}

pub fn build(p: &Params<'_>) -> Result<AnyCc, ConfigError> {
    let g = p.int("dctcp_shift_g")?;
    if !(0..=10).contains(&g) {
        return Err(ConfigError::new(format!("{}.params.dctcp_shift_g", p.field), format!("{g}; accepted: 0..=10")));
    }
    let a = p.int("dctcp_alpha_on_init")?;
    if !(0..=u32::MAX as i64).contains(&a) {
        return Err(ConfigError::new(
            format!("{}.params.dctcp_alpha_on_init", p.field),
            format!("{a}; accepted: 0..=1024 (larger values are capped at 1024 as in Linux)"),
        ));
    }
    Ok(AnyCc::Dctcp(Dctcp::new(g as u32, a as u32)))
}

impl Dctcp {
    pub fn new(shift_g: u32, alpha_on_init: u32) -> Self {
        Dctcp {
            shift_g: shift_g.min(10),
            alpha_on_init,
            alpha: alpha_on_init.min(MAX_ALPHA),
            next_seq: 0,
            old_delivered: 0,
            old_delivered_ce: 0,
            loss_cwnd: 0,
            reno_fallback: false,
            windows: 0,
            sum_alpha: 0,
            sum_f: 0,
        }
    }

    /// Alpha in 1/1024.
    pub fn alpha(&self) -> u32 {
        self.alpha
    }

    /// `(windows, mean alpha, mean marked fraction F)` over the observation windows so
    /// far (alpha and F as fractions).
    pub fn window_stats(&self) -> (u64, f64, f64) {
        let n = self.windows.max(1) as f64 * MAX_ALPHA as f64;
        (self.windows, self.sum_alpha as f64 / n, self.sum_f as f64 / n)
    }

    pub fn is_reno_fallback(&self) -> bool {
        self.reno_fallback
    }

    /// `dctcp_reset`: a new observation window starts at `snd_nxt`.
    fn reset(&mut self, cx: &CcContext<'_>) {
        self.next_seq = cx.sk.snd_nxt;
        self.old_delivered = cx.sk.delivered;
        self.old_delivered_ce = cx.sk.delivered_ce;
    }

    /// `dctcp_react_to_loss`.
    fn react_to_loss(&mut self, cx: &mut CcContext<'_>) {
        self.loss_cwnd = cx.sk.cwnd;
        cx.sk.ssthresh = (cx.sk.cwnd >> 1).max(2);
    }
}

impl CongestionOps for Dctcp {
    fn name(&self) -> &'static str {
        "dctcp"
    }

    /// `dctcp_init`.
    fn init(&mut self, cx: &mut CcContext<'_>) {
        if cx.sk.ecn_ok {
            self.alpha = self.alpha_on_init.min(MAX_ALPHA);
            self.loss_cwnd = 0;
            self.reset(cx);
        } else {
            self.reno_fallback = true;
        }
    }

    /// `dctcp_ssthresh`: cwnd (1 - alpha/2), at least 2.
    fn ssthresh(&mut self, cx: &mut CcContext<'_>) -> u32 {
        if self.reno_fallback {
            return (cx.sk.cwnd >> 1).max(2);
        }
        self.loss_cwnd = cx.sk.cwnd;
        let cwnd = cx.sk.cwnd;
        (cwnd - ((cwnd as u64 * self.alpha as u64) >> 11) as u32).max(2)
    }

    /// `dctcp_cwnd_undo`.
    fn undo_cwnd(&mut self, cx: &mut CcContext<'_>) -> u32 {
        if self.reno_fallback {
            return cx.sk.reno_undo_cwnd();
        }
        cx.sk.cwnd.max(self.loss_cwnd)
    }

    /// `dctcp_state`: a loss halves cwnd as Reno. The socket asks `ssthresh` (the
    /// alpha-based cut) and *then* enters Recovery, as `tcp_enter_recovery` does, so
    /// this overwrites it with cwnd/2: in Linux a loss halves DCTCP's window whatever
    /// alpha is.
    fn set_state(&mut self, cx: &mut CcContext<'_>, new: CaState) {
        if !self.reno_fallback && new == CaState::Recovery && new != cx.sk.ca_state {
            self.react_to_loss(cx);
        }
    }

    /// `dctcp_cwnd_event`: RTO handled here so that only one loss adjustment happens
    /// per RTT (the receiver-side ECN events are the receiver's).
    fn cwnd_event(&mut self, cx: &mut CcContext<'_>, ev: CaEvent) {
        if !self.reno_fallback && ev == CaEvent::Loss {
            self.react_to_loss(cx);
        }
    }

    /// `dctcp_update_alpha`.
    fn in_ack_event(&mut self, cx: &mut CcContext<'_>, _flags: AckFlags) {
        if self.reno_fallback || cx.sk.snd_una < self.next_seq {
            return;
        }
        let mut delivered_ce = (cx.sk.delivered_ce - self.old_delivered_ce) as u32;
        let mut alpha = self.alpha;
        // alpha -= alpha >> g, but at least 1 while alpha > 0 (`min_not_zero`).
        let dec = alpha >> self.shift_g;
        alpha -= if dec == 0 { alpha } else { alpha.min(dec) };
        if delivered_ce > 0 {
            let delivered = (cx.sk.delivered - self.old_delivered) as u32;
            delivered_ce <<= 10 - self.shift_g;
            delivered_ce /= delivered.max(1);
            alpha = (alpha + delivered_ce).min(MAX_ALPHA);
        }
        self.alpha = alpha;
        let ce = cx.sk.delivered_ce - self.old_delivered_ce;
        if let Some(f) = (ce * MAX_ALPHA as u64).checked_div(cx.sk.delivered - self.old_delivered) {
            self.windows += 1;
            self.sum_alpha += alpha as u64;
            self.sum_f += f;
        }
        self.reset(cx);
    }

    /// `TCP_CONG_NEEDS_ECN` (not for the `dctcp_reno` fallback).
    fn needs_ecn(&self) -> bool {
        !self.reno_fallback
    }
}

impl CongAvoid for Dctcp {
    /// `tcp_reno_cong_avoid`.
    fn cong_avoid(&mut self, cx: &mut CcContext<'_>, acked: u32) {
        cx.sk.reno_cong_avoid(acked);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;
    use crate::tcp::cc::SockState;
    use rand::SeedableRng;

    fn ecn_sock() -> SockState {
        let mut s = SockState::new(1448, 10);
        s.ecn_ok = true;
        s
    }

    /// One window: `n` segments delivered, `ce` of them marked.
    fn window(d: &mut Dctcp, sk: &mut SockState, n: u64, ce: u64) {
        let mut rng = Rng::seed_from_u64(1);
        sk.delivered += n;
        sk.delivered_ce += ce;
        sk.snd_una = d.next_seq;
        let mut cx = CcContext { now: 0, sk, rng: &mut rng };
        d.in_ack_event(&mut cx, AckFlags(0));
        cx.sk.snd_nxt += n * 1448;
    }

    #[test]
    fn alpha_is_an_ewma_of_the_marked_fraction_in_linux_fixed_point() {
        let mut d = Dctcp::new(4, 1024);
        let mut sk = ecn_sock();
        let mut rng = Rng::seed_from_u64(1);
        d.init(&mut CcContext { now: 0, sk: &mut sk, rng: &mut rng });
        assert_eq!(d.alpha, 1024);
        // No marks: 1024 - 64 = 960.
        window(&mut d, &mut sk, 100, 0);
        assert_eq!(d.alpha, 960);
        // 25% marked: 960 - 60 + (25 << 6) / 100 = 900 + 16 = 916.
        window(&mut d, &mut sk, 100, 25);
        assert_eq!(d.alpha, 916);
        // A constant fraction F: alpha -> about F * 1024 (truncations bias it low).
        for _ in 0..300 {
            window(&mut d, &mut sk, 100, 25);
        }
        assert!((d.alpha as i64 - 256).abs() <= 16, "alpha {}", d.alpha);
        // No marks for long: alpha decays to exactly 0 (min_not_zero).
        for _ in 0..200 {
            window(&mut d, &mut sk, 100, 0);
        }
        assert_eq!(d.alpha, 0);
    }

    #[test]
    fn ssthresh_cuts_by_alpha_over_two_and_falls_back_without_ecn() {
        let mut rng = Rng::seed_from_u64(1);
        let mut sk = ecn_sock();
        sk.cwnd = 100;
        let mut d = Dctcp::new(4, 1024);
        let mut cx = CcContext { now: 0, sk: &mut sk, rng: &mut rng };
        d.init(&mut cx);
        assert_eq!(d.ssthresh(&mut cx), 50);
        d.alpha = 256; // 1/4: cut by 1/8
        assert_eq!(d.ssthresh(&mut cx), 88);
        d.alpha = 0;
        assert_eq!(d.ssthresh(&mut cx), 100);
        assert!(d.needs_ecn());
        let mut sk = SockState::new(1448, 100);
        let mut cx = CcContext { now: 0, sk: &mut sk, rng: &mut rng };
        let mut d = Dctcp::new(4, 1024);
        d.init(&mut cx);
        assert!(d.is_reno_fallback() && !d.needs_ecn());
        assert_eq!(d.ssthresh(&mut cx), 50);
    }
}
