//! TCP Vegas as Linux's `tcp_vegas` module (net/ipv4/tcp_vegas.c; Brakmo & Peterson,
//! "TCP Vegas: End to End Congestion Avoidance on a Global Internet", JSAC 1995).
//!
//! Once per RTT (when the ACK passes `beg_snd_nxt`, the `snd_nxt` of the previous
//! decision) Vegas compares the window it has with the window the path would carry
//! without queueing, in Linux's integer arithmetic:
//!
//! ```text
//! rtt    = min RTT sample of the last round (µs, +1 so that 0 is never a sample)
//! diff   = cwnd * (rtt - baseRTT) / baseRTT          (u32 division, truncates)
//! target = cwnd * baseRTT / rtt                      (u64 division, truncates)
//! slow start:  diff > gamma  -> cwnd = min(cwnd, target + 1), leave slow start
//! avoidance:   diff > beta   -> cwnd - 1
//!              diff < alpha  -> cwnd + 1
//! ```
//!
//! `diff` estimates the segments this flow keeps queued: `cwnd/baseRTT` is the rate
//! the window would give without a queue, `(rtt - baseRTT)` the queueing delay, so
//! `diff = (cwnd/baseRTT) * queueing delay`. Note it divides by `baseRTT`, not by `rtt`
//! as Brakmo's `(Expected - Actual) * baseRTT` does; Linux's form is larger by the
//! factor `rtt/baseRTT` (see the Wei-thesis test for what that does to the equilibrium).
//!
//! As in Linux:
//! - Vegas only runs in the Open state (`tcp_vegas_state`); in Disorder, CWR,
//!   Recovery and Loss the window follows Reno (`tcp_reno_cong_avoid`), and a loss
//!   halves it (`tcp_reno_ssthresh`);
//! - rounds with at most 2 RTT samples are Reno rounds (mostly delayed ACKs);
//! - `baseRTT` is reset (and the round restarted) on TX_START and CWND_RESTART, i.e.
//!   after idle, when the path may have changed;
//! - between decisions, slow start grows cwnd per ACK; avoidance leaves it alone;
//! - the Vegas branch does not check `tcp_is_cwnd_limited` (only the Reno fallback
//!   does).
//!
//! `base_rtt_us` (not Linux) pins baseRTT instead of measuring it, as Wei's thesis did
//! for its Vegas validation (§2.1.6).
//!
//! `legacy_2_6 = true` (not current Linux) runs the 2.6.16-2.6.21 decision instead, the
//! Vegas of Wei's thesis: Brakmo's `diff = w - w*baseRTT/rtt` over the window sent in
//! the round that just ended, and cwnd stepped toward that round's cwnd +-1. Current
//! Linux decides on the current cwnd with a minimum RTT that lags one round, so a lone
//! flow cycles over three windows; the old decision settles inside Wei's Theorem
//! 2.1.5 bounds (tests/cc_delay.rs).

use super::{AckSample, AnyCc, CaEvent, CaState, CcContext, CongAvoid, CongestionOps, ParamSpec, ParamValue, Params};
use crate::error::ConfigError;

/// Linux module parameters (`module_param(alpha|beta|gamma, int, 0644)`).
pub const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "alpha",
        default: ParamValue::Int(2),
        doc: "lower bound of packets in network (grow cwnd below it)",
    },
    ParamSpec {
        name: "beta",
        default: ParamValue::Int(4),
        doc: "upper bound of packets in network (shrink cwnd above it)",
    },
    ParamSpec { name: "gamma", default: ParamValue::Int(1), doc: "limit on increase (scale by 2) in slow start" },
    ParamSpec {
        name: "legacy_2_6",
        default: ParamValue::Bool(false),
        doc: "the 2.6.16-2.6.21 decision (Wei's thesis): diff = w - w*baseRTT/rtt over the window sent in the \
              last round, cwnd stepped toward that round's cwnd +-1 (not Linux)",
    },
    ParamSpec {
        name: "base_rtt_us",
        default: ParamValue::Int(0),
        doc: "baseRTT pinned in µs: samples above it do not raise it (0 = the minimum RTT seen, as Linux); \
              Wei's thesis pinned it to the propagation delay to validate Theorem 2.1.5 (not Linux)",
    },
];

/// `struct vegas` (RTTs in µs).
#[derive(Clone, Debug)]
pub struct Vegas {
    alpha: u32,
    beta: u32,
    gamma: u32,
    /// Vegas is in charge (Open state); otherwise Reno.
    doing_vegas_now: bool,
    /// Right edge of the current round: the decision happens once snd_una passes it.
    beg_snd_nxt: u64,
    /// RTT samples in the current round.
    cnt_rtt: u32,
    /// Min RTT of the current round, µs.
    min_rtt: u32,
    /// Min RTT ever seen (propagation-delay estimate), µs.
    base_rtt: u32,
    /// The 2.6.16-era decision ([`Vegas::legacy_cong_avoid`]).
    legacy: bool,
    /// Left edge and cwnd of the current round (2.6.16's `beg_snd_una`, `beg_snd_cwnd`).
    beg_snd_una: u64,
    beg_snd_cwnd: u32,
    /// A baseRTT given by the scenario (µs; 0 = measured). Wei's thesis §2.1.6 hard-codes
    /// baseRTT to the propagation delay "to eliminate the effect of inaccurate base RTT
    /// estimation": flows starting together queue behind each other's first packets, so
    /// each measures a slightly different minimum and settles at a different window.
    fixed_base_rtt: u32,
}

pub fn build(p: &Params<'_>) -> Result<AnyCc, ConfigError> {
    let get = |name: &str| -> Result<u32, ConfigError> {
        let v = p.int(name)?;
        u32::try_from(v).map_err(|_| {
            ConfigError::new(format!("{}.params.{name}", p.field), format!("{v}; accepted: 0..=4294967295"))
        })
    };
    let mut v = Vegas::new(get("alpha")?, get("beta")?, get("gamma")?);
    v.legacy = p.bool("legacy_2_6")?;
    v.pin_base_rtt(get("base_rtt_us")?);
    Ok(AnyCc::Vegas(v))
}

impl Vegas {
    pub fn new(alpha: u32, beta: u32, gamma: u32) -> Self {
        Vegas {
            alpha,
            beta,
            gamma,
            doing_vegas_now: true,
            beg_snd_nxt: 0,
            cnt_rtt: 0,
            min_rtt: 0x7fff_ffff,
            base_rtt: 0x7fff_ffff,
            legacy: false,
            beg_snd_una: 0,
            beg_snd_cwnd: 0,
            fixed_base_rtt: 0,
        }
    }

    /// Pins baseRTT to `us` (0: measured, as Linux).
    pub fn pin_base_rtt(&mut self, us: u32) {
        self.fixed_base_rtt = us;
        self.base_rtt = if us > 0 { us } else { 0x7fff_ffff };
    }

    /// `baseRTT` estimate, µs (`0x7fffffff` before the first sample).
    pub fn base_rtt_us(&self) -> u32 {
        self.base_rtt
    }

    /// `vegas_enable`: start a fresh round at the current `snd_nxt`.
    fn enable(&mut self, cx: &CcContext<'_>) {
        self.doing_vegas_now = true;
        self.beg_snd_nxt = cx.sk.snd_nxt;
        self.beg_snd_una = cx.sk.snd_una;
        self.beg_snd_cwnd = cx.sk.cwnd;
        self.cnt_rtt = 0;
        self.min_rtt = 0x7fff_ffff;
    }

    /// `tcp_vegas_init`.
    fn reset(&mut self, cx: &CcContext<'_>) {
        self.pin_base_rtt(self.fixed_base_rtt);
        self.enable(cx);
    }

    /// `tcp_vegas_ssthresh` (not the `.ssthresh` hook: the value Vegas sets when it
    /// leaves slow start or shrinks cwnd).
    fn vegas_ssthresh(cx: &CcContext<'_>) -> u32 {
        // Linux can leave ssthresh at 1 here when cwnd has fallen to 1 after an RTO;
        // we keep the socket-wide floor of 2 (`tcp_reno_ssthresh`'s minimum) so every
        // algorithm keeps the same ssthresh invariant.
        cx.sk.ssthresh.min(cx.sk.cwnd).max(2)
    }

    /// `tcp_reno_cong_avoid`.
    fn reno(cx: &mut CcContext<'_>, acked: u32) {
        cx.sk.reno_cong_avoid(acked);
    }

    /// 2.6.16's `tcp_vegas_cong_avoid` while Vegas is in charge: the decision once per
    /// round, then, on every ACK, +1 in slow start (`cwnd <= ssthresh` as then).
    fn legacy_cong_avoid(&mut self, cx: &mut CcContext<'_>) {
        if cx.sk.snd_una > self.beg_snd_nxt {
            self.legacy_round_end(cx);
            self.cnt_rtt = 0;
            self.min_rtt = 0x7fff_ffff;
        }
        if cx.sk.cwnd <= cx.sk.ssthresh {
            cx.sk.cwnd += 1;
        }
        cx.sk.cwnd = cx.sk.cwnd.max(2).min(cx.sk.cwnd_clamp);
    }

    /// The end of a round in Linux 2.6.16-2.6.21 (the Vegas Wei's thesis
    /// measured), from that era's `tcp_vegas_cong_avoid`: `old_wnd` is the data sent in
    /// the round that just ended (in segments), `old_snd_cwnd` the cwnd then, and
    /// `diff = old_wnd - old_wnd*baseRTT/rtt` is Brakmo's queued-segments estimate with
    /// half-segment resolution (`V_PARAM_SHIFT` = 1). The target is `old_snd_cwnd`
    /// +-1 and cwnd moves one step toward it, so a decision already taken is not
    /// repeated on the next round's lagged RTT (current Linux's extra round of delay).
    fn legacy_round_end(&mut self, cx: &mut CcContext<'_>) {
        const SHIFT: u32 = 1;
        let old_wnd = (self.beg_snd_nxt - self.beg_snd_una) / cx.sk.mss.max(1) as u64;
        let old_snd_cwnd = self.beg_snd_cwnd;
        self.beg_snd_una = self.beg_snd_nxt;
        self.beg_snd_nxt = cx.sk.snd_nxt;
        self.beg_snd_cwnd = cx.sk.cwnd;
        let sk = &mut *cx.sk;
        if self.cnt_rtt <= 2 {
            // Too few samples: Reno's +1 per round in congestion avoidance.
            if sk.cwnd > sk.ssthresh {
                sk.cwnd += 1;
            }
            return;
        }
        let rtt = self.min_rtt as u64;
        let target = ((old_wnd * self.base_rtt as u64) << SHIFT) / rtt;
        let diff = (old_wnd << SHIFT).saturating_sub(target);
        if sk.cwnd <= sk.ssthresh {
            if diff > (self.gamma as u64) << SHIFT {
                // Going too fast: match the actual rate and leave slow start.
                sk.ssthresh = 2;
                sk.cwnd = sk.cwnd.min((target >> SHIFT) as u32 + 1);
            }
            return;
        }
        let next = if diff > (self.beta as u64) << SHIFT {
            old_snd_cwnd.saturating_sub(1)
        } else if diff < (self.alpha as u64) << SHIFT {
            old_snd_cwnd + 1
        } else {
            old_snd_cwnd
        };
        if next > sk.cwnd {
            sk.cwnd += 1;
        } else if next < sk.cwnd {
            sk.cwnd -= 1;
        }
    }
}

impl CongestionOps for Vegas {
    fn name(&self) -> &'static str {
        "vegas"
    }

    fn init(&mut self, cx: &mut CcContext<'_>) {
        self.reset(cx);
    }

    /// `tcp_reno_ssthresh`: Vegas reacts to loss like Reno.
    fn ssthresh(&mut self, cx: &mut CcContext<'_>) -> u32 {
        (cx.sk.cwnd >> 1).max(2)
    }

    fn undo_cwnd(&mut self, cx: &mut CcContext<'_>) -> u32 {
        cx.sk.reno_undo_cwnd()
    }

    /// `tcp_vegas_state`.
    fn set_state(&mut self, cx: &mut CcContext<'_>, new: CaState) {
        if new == CaState::Open {
            self.enable(cx);
        } else {
            self.doing_vegas_now = false;
        }
    }

    /// `tcp_vegas_cwnd_event`: after idle the path may have changed; forget baseRTT.
    fn cwnd_event(&mut self, cx: &mut CcContext<'_>, ev: CaEvent) {
        if matches!(ev, CaEvent::CwndRestart | CaEvent::TxStart) {
            self.reset(cx);
        }
    }

    /// `tcp_vegas_pkts_acked`: the `+1` keeps a 0 µs sample from looking like "none".
    fn pkts_acked(&mut self, _cx: &mut CcContext<'_>, sample: &AckSample) {
        if sample.rtt_us < 0 {
            return;
        }
        let vrtt = (sample.rtt_us as u64 + 1).min(u32::MAX as u64) as u32;
        // A pinned baseRTT is still lowered by a shorter sample: no RTT is below the
        // propagation delay, so such a sample means the pinned value was rounded up, and
        // Linux's u32 `rtt - baseRTT` would wrap on it.
        self.base_rtt = self.base_rtt.min(vrtt);
        self.min_rtt = self.min_rtt.min(vrtt);
        self.cnt_rtt += 1;
    }
}

impl CongAvoid for Vegas {
    /// `tcp_vegas_cong_avoid`.
    fn cong_avoid(&mut self, cx: &mut CcContext<'_>, acked: u32) {
        if !self.doing_vegas_now {
            Self::reno(cx, acked);
            return;
        }
        if self.legacy {
            self.legacy_cong_avoid(cx);
            return;
        }
        // `after(ack, beg_snd_nxt)`: the ACK covers the whole previous round.
        if cx.sk.snd_una > self.beg_snd_nxt {
            self.beg_snd_nxt = cx.sk.snd_nxt;
            if self.cnt_rtt <= 2 {
                // Too few samples to trust (they are likely all delayed ACKs).
                Self::reno(cx, acked);
            } else {
                let rtt = self.min_rtt;
                let base = self.base_rtt;
                let cwnd = cx.sk.cwnd;
                let target = (cwnd as u64 * base as u64 / rtt as u64) as u32;
                // u32 arithmetic as Linux (`cwnd * (rtt - baseRTT)` wraps only for
                // cwnd * queueing delay beyond 4e9 µs-segments).
                let diff = cwnd.wrapping_mul(rtt - base) / base;
                if diff > self.gamma && cx.sk.in_slow_start() {
                    // Going too fast: match the actual rate (+1 for the truncation)
                    // and leave slow start.
                    cx.sk.cwnd = cwnd.min(target + 1);
                    cx.sk.ssthresh = Self::vegas_ssthresh(cx);
                } else if cx.sk.in_slow_start() {
                    cx.sk.slow_start(acked);
                } else if diff > self.beta {
                    cx.sk.cwnd -= 1;
                    cx.sk.ssthresh = Self::vegas_ssthresh(cx);
                } else if diff < self.alpha {
                    cx.sk.cwnd += 1;
                }
                cx.sk.cwnd = cx.sk.cwnd.max(2).min(cx.sk.cwnd_clamp);
                cx.sk.ssthresh = cx.sk.current_ssthresh();
            }
            self.cnt_rtt = 0;
            self.min_rtt = 0x7fff_ffff;
        } else if cx.sk.in_slow_start() {
            cx.sk.slow_start(acked);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;
    use crate::tcp::cc::SockState;
    use rand::SeedableRng;

    /// One Vegas round: `n` RTT samples of `rtt_us`, then an ACK past the round edge.
    fn round(v: &mut Vegas, sk: &mut SockState, rtt_us: i64, n: u32) {
        let mut rng = Rng::seed_from_u64(1);
        let mut cx = CcContext { now: 0, sk, rng: &mut rng };
        for _ in 0..n {
            v.pkts_acked(&mut cx, &AckSample { pkts_acked: 1, rtt_us, in_flight: 0 });
        }
        cx.sk.snd_una = v.beg_snd_nxt + 1;
        cx.sk.snd_nxt = cx.sk.snd_una + 100_000;
        v.cong_avoid(&mut cx, 1);
    }

    fn ca_sock(cwnd: u32) -> SockState {
        let mut sk = SockState::new(1448, cwnd);
        sk.ssthresh = 2;
        sk
    }

    #[test]
    fn diff_below_alpha_grows_above_beta_shrinks_between_holds() {
        let mut v = Vegas::new(2, 4, 1);
        let mut sk = ca_sock(100);
        // baseRTT 10 000 µs (sample 9 999 + 1).
        round(&mut v, &mut sk, 9_999, 3);
        assert_eq!(v.base_rtt, 10_000);
        assert_eq!(sk.cwnd, 101, "diff 0 < alpha");
        // diff = 101 * 300 / 10000 = 3: between alpha and beta.
        round(&mut v, &mut sk, 10_299, 3);
        assert_eq!(sk.cwnd, 101);
        // diff = 101 * 500 / 10000 = 5 > beta.
        round(&mut v, &mut sk, 10_499, 3);
        assert_eq!(sk.cwnd, 100);
        // Integer truncation: 100 * 199 / 10000 = 1 < alpha although 1.99 packets queue.
        round(&mut v, &mut sk, 10_198, 3);
        assert_eq!(sk.cwnd, 101);
    }

    #[test]
    fn two_samples_per_round_fall_back_to_reno() {
        let mut v = Vegas::new(2, 4, 1);
        let mut sk = ca_sock(10);
        sk.is_cwnd_limited = true;
        round(&mut v, &mut sk, 9_999, 3);
        assert_eq!(sk.cwnd, 11);
        // A huge queueing delay, but only two samples: Reno credit, no decrease.
        round(&mut v, &mut sk, 50_000, 2);
        assert_eq!((sk.cwnd, sk.cwnd_cnt), (11, 1));
    }

    #[test]
    fn slow_start_exits_to_the_actual_rate_when_diff_exceeds_gamma() {
        let mut v = Vegas::new(2, 4, 1);
        let mut sk = SockState::new(1448, 40);
        round(&mut v, &mut sk, 9_999, 3);
        assert_eq!(sk.cwnd, 41, "slow start, one segment ACKed");
        // diff = 41 * 5000 / 10000 = 20 > gamma: target = 41 * 10000 / 15000 = 27.
        round(&mut v, &mut sk, 14_999, 3);
        assert_eq!(sk.cwnd, 28);
        assert_eq!(sk.ssthresh, 28, "tcp_current_ssthresh: max(28, 3/4 * 28)");
        assert!(!sk.in_slow_start());
    }

    #[test]
    fn outside_open_it_is_reno_and_restart_forgets_base_rtt() {
        let mut v = Vegas::new(2, 4, 1);
        let mut sk = ca_sock(10);
        let mut rng = Rng::seed_from_u64(1);
        round(&mut v, &mut sk, 9_999, 3);
        let mut cx = CcContext { now: 0, sk: &mut sk, rng: &mut rng };
        v.set_state(&mut cx, CaState::Recovery);
        assert!(!v.doing_vegas_now);
        v.set_state(&mut cx, CaState::Open);
        assert!(v.doing_vegas_now);
        v.cwnd_event(&mut cx, CaEvent::CwndRestart);
        assert_eq!(v.base_rtt, 0x7fff_ffff);
        assert_eq!(v.ssthresh(&mut cx), 5);
    }

    #[test]
    fn a_pinned_base_rtt_ignores_larger_samples_and_survives_restart() {
        let mut v = Vegas::new(2, 4, 1);
        v.pin_base_rtt(10_000);
        let mut sk = ca_sock(100);
        // Samples above the pinned value (queueing) do not raise it: diff is measured
        // against 10 000 µs, so 10 299 µs -> 100 * 300 / 10000 = 3, in [alpha, beta].
        round(&mut v, &mut sk, 10_299, 3);
        assert_eq!(v.base_rtt, 10_000);
        assert_eq!(sk.cwnd, 100);
        // A sample below it (the pinned value was rounded up) lowers it.
        round(&mut v, &mut sk, 9_989, 1);
        assert_eq!(v.base_rtt, 9_990);
        let mut rng = Rng::seed_from_u64(1);
        let mut cx = CcContext { now: 0, sk: &mut sk, rng: &mut rng };
        v.cwnd_event(&mut cx, CaEvent::CwndRestart);
        assert_eq!(v.base_rtt, 10_000, "a restart goes back to the pinned baseRTT");
    }
}
