//! TCP Hybla (Caini, Firrincieli, Int. J. Satellite Commun. 2004), ported from Linux
//! `net/ipv4/tcp_hybla.c`.
//!
//! Hybla makes a long-RTT flow grow in time as a reference flow with RTT0 = 25 ms
//! would: with rho = max(RTT/RTT0, 1), slow start adds 2^rho - 1 segments per ACK
//! (cwnd x 2^rho per RTT) and congestion avoidance rho^2/cwnd per ACK (+rho^2 per RTT).
//! Losses are handled as Reno (ssthresh = cwnd/2), and outside the Open state the
//! growth is plain Reno.
//!
//! Fixed point as in Linux: rho is kept << 3 (`rho_3ls`, from `srtt_us`, which Linux
//! keeps x8: this port multiplies the socket's unscaled srtt by 8), 2^(fraction of
//! rho) comes from an 8-entry table << 7, fractions of segments accumulate in
//! `snd_cwnd_cents` << 7; rho is only recomputed when srtt reaches a new minimum, and
//! the slow-start exponent is capped at 16. Linux quirks kept: cwnd_clamp is set to
//! 65535, and RTTs below RTT0 give rho = 1 (Reno), not a slower growth.
//!
//! Divergence: Linux runs `hybla_init` once the handshake has given an RTT sample and
//! starts with cwnd = rho. The simulated connection starts established without an RTT
//! sample, so `init` leaves the initial window alone and rho is first computed from
//! the first smoothed RTT (minimum RTT seen starts at "none").

use super::{AnyCc, CaState, CcContext, CongAvoid, CongestionOps, ParamSpec, ParamValue, Params};
use crate::error::ConfigError;

pub const PARAMS: &[ParamSpec] =
    &[ParamSpec { name: "rtt0", default: ParamValue::Int(25), doc: "reference round-trip time RTT0 (ms)" }];

/// 2^(i/8) << 7 for i in 0..8.
const FRACTIONS: [u32; 8] = [128, 139, 152, 165, 181, 197, 215, 234];

/// `struct hybla`.
#[derive(Clone, Debug)]
pub struct Hybla {
    pub rtt0_ms: u32,
    pub hybla_en: bool,
    /// Fractions of a segment << 7.
    snd_cwnd_cents: u32,
    pub rho: u32,
    pub rho2: u32,
    /// rho << 3.
    pub rho_3ls: u32,
    /// rho^2 << 7.
    pub rho2_7ls: u32,
    /// Smallest `srtt_us` (x8, as Linux) seen; `u32::MAX` = none yet.
    minrtt_us: u32,
}

impl Hybla {
    pub fn new(rtt0_ms: u32) -> Self {
        Hybla {
            rtt0_ms,
            hybla_en: true,
            snd_cwnd_cents: 0,
            rho: 0,
            rho2: 0,
            rho_3ls: 0,
            rho2_7ls: 0,
            minrtt_us: u32::MAX,
        }
    }

    /// Linux's `tp->srtt_us` (8 x smoothed RTT).
    fn srtt8(cx: &CcContext<'_>) -> u32 {
        cx.sk.srtt_us.saturating_mul(8)
    }

    /// `hybla_recalc_param`.
    fn recalc_param(&mut self, srtt8: u32) {
        self.rho_3ls = (srtt8 / (self.rtt0_ms * 1000)).max(8);
        self.rho = self.rho_3ls >> 3;
        self.rho2_7ls = (self.rho_3ls * self.rho_3ls) << 1;
        self.rho2 = self.rho2_7ls >> 7;
    }
}

pub fn build(p: &Params<'_>) -> Result<AnyCc, ConfigError> {
    let rtt0 = p.int("rtt0")?;
    if !(1..=100_000).contains(&rtt0) {
        return Err(ConfigError::new(format!("{}.params.rtt0", p.field), format!("{rtt0} ms must be positive")));
    }
    Ok(AnyCc::Hybla(Hybla::new(rtt0 as u32)))
}

impl CongestionOps for Hybla {
    fn name(&self) -> &'static str {
        "hybla"
    }

    /// `hybla_init` (see the module note on the missing handshake RTT).
    fn init(&mut self, cx: &mut CcContext<'_>) {
        *self = Hybla::new(self.rtt0_ms);
        cx.sk.cwnd_clamp = 65535;
        if cx.sk.srtt_us != 0 {
            let srtt8 = Self::srtt8(cx);
            self.recalc_param(srtt8);
            self.minrtt_us = srtt8;
            cx.sk.cwnd = self.rho.max(1);
        }
    }

    fn ssthresh(&mut self, cx: &mut CcContext<'_>) -> u32 {
        (cx.sk.cwnd >> 1).max(2)
    }

    fn undo_cwnd(&mut self, cx: &mut CcContext<'_>) -> u32 {
        cx.sk.reno_undo_cwnd()
    }

    /// `hybla_state`: Hybla only in Open.
    fn set_state(&mut self, _cx: &mut CcContext<'_>, new: CaState) {
        self.hybla_en = new == CaState::Open;
    }
}

impl CongAvoid for Hybla {
    /// `hybla_cong_avoid`.
    fn cong_avoid(&mut self, cx: &mut CcContext<'_>, acked: u32) {
        let srtt8 = Self::srtt8(cx);
        if srtt8 != 0 && srtt8 < self.minrtt_us {
            self.recalc_param(srtt8);
            self.minrtt_us = srtt8;
        }
        if !cx.sk.is_cwnd_limited() {
            return;
        }
        if !self.hybla_en {
            super::reno::Reno.cong_avoid(cx, acked);
            return;
        }
        if self.rho == 0 {
            self.recalc_param(srtt8);
        }
        let sk = &mut *cx.sk;
        let rho_fractions = self.rho_3ls - (self.rho << 3);
        let slow_start = sk.in_slow_start();
        let increment = if slow_start {
            // INC = 2^rho - 1 (<< 7), 2^rho = 2^int x 2^frac.
            let f = FRACTIONS.get(rho_fractions as usize).copied().unwrap_or(128);
            (1u32 << self.rho.min(16)) * f - 128
        } else {
            // INC = rho^2 / cwnd (<< 7).
            let inc = self.rho2_7ls / sk.cwnd.max(1);
            if inc < 128 {
                sk.cwnd_cnt += 1;
            }
            inc
        };
        let odd = increment % 128;
        sk.cwnd = sk.cwnd.saturating_add(increment >> 7);
        self.snd_cwnd_cents += odd;
        while self.snd_cwnd_cents >= 128 {
            sk.cwnd += 1;
            self.snd_cwnd_cents -= 128;
            sk.cwnd_cnt = 0;
        }
        // cwnd not grown for a whole window of ACKs: +1.
        if increment == 0 && odd == 0 && sk.cwnd_cnt >= sk.cwnd {
            sk.cwnd += 1;
            sk.cwnd_cnt = 0;
        }
        if slow_start {
            sk.cwnd = sk.cwnd.min(sk.ssthresh);
        }
        sk.cwnd = sk.cwnd.min(sk.cwnd_clamp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::cc::testkit::AckClock;
    use crate::tcp::cc::INFINITE_SSTHRESH;

    fn hybla(ck: &mut AckClock) -> Hybla {
        let mut h = Hybla::new(25);
        h.init(&mut ck.cx());
        h
    }

    #[test]
    fn rho_is_rtt_over_rtt0_in_eighths() {
        for (rtt_ms, rho_3ls) in [(10u32, 8u32), (25, 8), (100, 32), (110, 35), (600, 192)] {
            let mut ck = AckClock::new(10, 5, rtt_ms * 1000);
            let h = hybla(&mut ck);
            assert_eq!((h.rho_3ls, h.rho), (rho_3ls, rho_3ls >> 3), "RTT {rtt_ms} ms");
        }
    }

    #[test]
    fn congestion_avoidance_adds_rho_squared_per_rtt() {
        for (rtt_ms, per_rtt) in [(25u32, 1u32), (50, 4), (100, 16), (200, 64)] {
            let mut ck = AckClock::new(200, 100, rtt_ms * 1000);
            let mut h = hybla(&mut ck);
            ck.sk.cwnd = 200;
            let mut gains = vec![];
            for _ in 0..4 {
                let c0 = ck.sk.cwnd;
                ck.round(&mut h);
                gains.push(ck.sk.cwnd - c0);
            }
            // rho^2 per RTT (the window grows within the RTT, so slightly less).
            for g in gains {
                assert!(g <= per_rtt && g as f64 >= per_rtt as f64 * 0.85 - 1.0, "RTT {rtt_ms}: +{g}, want {per_rtt}");
            }
        }
    }

    #[test]
    fn slow_start_multiplies_by_two_to_the_rho_per_rtt() {
        // RTT 50 ms: rho = 2, x4 per RTT; RTT 75 ms: x8.
        for (rtt_ms, factor) in [(50u32, 4u32), (75, 8), (25, 2)] {
            let mut ck = AckClock::new(10, INFINITE_SSTHRESH, rtt_ms * 1000);
            let mut h = hybla(&mut ck);
            ck.sk.cwnd = 4;
            ck.round(&mut h);
            assert_eq!(ck.sk.cwnd, 4 * factor, "RTT {rtt_ms}");
        }
        // Fractional rho: 110 ms, rho = 4 + 3/8: 2^rho - 1 = 16 x 165/128 - 1 = 19.6
        // per ACK.
        let mut ck = AckClock::new(10, INFINITE_SSTHRESH, 110_000);
        let mut h = hybla(&mut ck);
        ck.sk.cwnd = 5;
        ck.round(&mut h);
        assert_eq!(ck.sk.cwnd, 5 + (5 * (16 * 165 - 128)) / 128);
    }

    #[test]
    fn reno_outside_open_and_on_loss() {
        let mut ck = AckClock::new(100, 50, 100_000);
        let mut h = hybla(&mut ck);
        assert_eq!(ck.sk.cwnd, 4); // hybla_init: cwnd = rho
        ck.sk.cwnd = 100;
        assert_eq!(h.ssthresh(&mut ck.cx()), 50);
        h.set_state(&mut ck.cx(), CaState::Disorder);
        ck.sk.cwnd = 100;
        ck.round(&mut h);
        assert_eq!(ck.sk.cwnd, 101);
    }

    #[test]
    fn rho_from_first_rtt_sample_when_init_had_none() {
        let mut ck = AckClock::new(10, 5, 100_000);
        ck.sk.srtt_us = 0;
        let mut h = hybla(&mut ck);
        assert_eq!((h.rho, ck.sk.cwnd), (0, 10));
        ck.round(&mut h);
        assert_eq!(h.rho, 4);
    }
}
