//! The textbook AIMD window of the analytical models, not a Linux module: the
//! congestion window is a real number `w` that grows by `a/w` per acknowledged
//! segment and is multiplied by `b` on *every* echoed ECN mark.
//!
//! This is the "ECN-AIMD" system of Lübben & Fidler, Sec. III-C2 (+1/w per unmarked
//! ACK, halved on a mark, one ACK per packet echoing its mark), and the chain whose
//! mean window Ott, Kemperman and Mathis (1996) give as 1.31/sqrt(p) segments per
//! RTT. Linux Reno with ECN differs in three ways this module removes, each of which
//! lowers the long-term rate a few per cent: it reduces at most once per window (CWR
//! state), it brings cwnd down gradually with PRR and does not grow during that RTT,
//! and its RFC 3168 receiver repeats ECE until it sees CWR. Here the receiver echoes
//! each segment's CE bit exactly (the DCTCP receiver of RFC 8257 §3.2, selected by
//! [`super::accurate_ecn`]), and a `cong_control` hook sees every ACK, so nothing of
//! the socket's CWR/PRR machinery touches the window.
//!
//! cwnd is `w` rounded to the nearest segment: the time-average window then equals
//! the model's (flooring would bias the rate down by about 1/(2w), 1.2 % at w = 41).
//!
//! Losses are handled as the models do: the first loss of an episode (entering
//! Recovery) multiplies `w` by `b` once; an RTO restarts from one segment with slow
//! start up to `b·w`. Before the first congestion signal the window doubles per RTT
//! (slow start, +1 per ACKed segment), unless `slow_start = false`.

use super::{AnyCc, CaState, CcContext, CongControl, CongestionOps, ParamSpec, ParamValue, Params, RateSample};
use crate::error::ConfigError;

pub const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "a",
        default: ParamValue::Float(1.0),
        doc: "additive increase, segments per window of ACKs (w += a/w per ACKed segment)",
    },
    ParamSpec {
        name: "b",
        default: ParamValue::Float(0.5),
        doc: "multiplicative decrease on each echoed mark or loss episode, in (0, 1)",
    },
    ParamSpec {
        name: "app_limited_growth",
        default: ParamValue::Bool(true),
        doc: "grow on every ACK as the models do; false grows only while cwnd-limited (Linux tcp_is_cwnd_limited)",
    },
    ParamSpec {
        name: "slow_start",
        default: ParamValue::Bool(true),
        doc: "double per RTT until the first congestion signal",
    },
];

#[derive(Clone, Debug)]
pub struct Aimd {
    a: f64,
    b: f64,
    app_limited_growth: bool,
    /// The model's window, segments.
    w: f64,
    /// Slow start ends at this window (infinite until the first signal).
    ssthresh: f64,
    /// Socket `delivered` / `delivered_ce` at the previous ACK.
    seen_delivered: u64,
    seen_delivered_ce: u64,
    /// Echoed marks acted on (each one multiplied `w` by `b`).
    pub marks: u64,
}

/// The window never goes below one segment.
const MIN_W: f64 = 1.0;

pub fn build(p: &Params<'_>) -> Result<AnyCc, ConfigError> {
    let a = p.float("a")?;
    if !(a > 0.0 && a <= 1e6) {
        return Err(ConfigError::new(format!("{}.params.a", p.field), format!("{a}; accepted: a number in (0, 1e6]")));
    }
    let b = p.float("b")?;
    if !(b > 0.0 && b < 1.0) {
        return Err(ConfigError::new(format!("{}.params.b", p.field), format!("{b}; accepted: a number in (0, 1)")));
    }
    let slow_start = p.bool("slow_start")?;
    Ok(AnyCc::Aimd(Aimd::new(a, b, p.bool("app_limited_growth")?, slow_start)))
}

impl Aimd {
    pub fn new(a: f64, b: f64, app_limited_growth: bool, slow_start: bool) -> Self {
        Aimd {
            a,
            b,
            app_limited_growth,
            w: 0.0,
            ssthresh: if slow_start { f64::INFINITY } else { 0.0 },
            seen_delivered: 0,
            seen_delivered_ce: 0,
            marks: 0,
        }
    }

    /// The model's current window, segments.
    pub fn window(&self) -> f64 {
        self.w
    }

    fn decrease(&mut self) {
        self.w = (self.w * self.b).max(MIN_W);
        self.ssthresh = self.w;
    }

    fn apply(&self, cx: &mut CcContext<'_>) {
        cx.sk.cwnd = (self.w.round() as u32).clamp(1, cx.sk.cwnd_clamp);
    }
}

impl CongestionOps for Aimd {
    fn name(&self) -> &'static str {
        "aimd"
    }

    fn init(&mut self, cx: &mut CcContext<'_>) {
        self.w = cx.sk.cwnd.max(1) as f64;
        self.seen_delivered = cx.sk.delivered;
        self.seen_delivered_ce = cx.sk.delivered_ce;
    }

    /// What the socket stores as ssthresh when it enters Recovery, CWR or Loss; the
    /// window itself is this module's.
    fn ssthresh(&mut self, _cx: &mut CcContext<'_>) -> u32 {
        ((self.w * self.b).round() as u32).max(2)
    }

    /// The model has no notion of a spurious reduction.
    fn undo_cwnd(&mut self, cx: &mut CcContext<'_>) -> u32 {
        cx.sk.cwnd
    }

    fn set_state(&mut self, cx: &mut CcContext<'_>, new: CaState) {
        let old = cx.sk.ca_state;
        match new {
            CaState::Recovery if old < CaState::Recovery => self.decrease(),
            CaState::Loss => {
                self.ssthresh = (self.w * self.b).max(2.0);
                self.w = MIN_W;
            }
            _ => return,
        }
        self.apply(cx);
    }
}

impl CongControl for Aimd {
    fn cong_control(&mut self, cx: &mut CcContext<'_>, _rs: &RateSample) {
        let delivered = cx.sk.delivered - self.seen_delivered;
        let marked = cx.sk.delivered_ce - self.seen_delivered_ce;
        self.seen_delivered = cx.sk.delivered;
        self.seen_delivered_ce = cx.sk.delivered_ce;
        // One ACK covers one segment here (no delayed ACK), so "per unmarked ACK" and
        // "per unmarked segment" agree; a stretch ACK counts each segment.
        for _ in 0..marked {
            self.decrease();
            self.marks += 1;
        }
        let unmarked = delivered.saturating_sub(marked);
        if unmarked > 0 && (self.app_limited_growth || cx.sk.is_cwnd_limited()) {
            for _ in 0..unmarked {
                self.w += if self.w < self.ssthresh { 1.0 } else { self.a / self.w };
            }
        }
        self.apply(cx);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;
    use crate::tcp::cc::SockState;
    use rand::SeedableRng;

    fn ack(cc: &mut Aimd, sk: &mut SockState, segs: u64, marked: u64) {
        let mut rng = Rng::seed_from_u64(1);
        sk.delivered += segs;
        sk.delivered_ce += marked;
        let mut cx = CcContext { now: 0, sk, rng: &mut rng };
        cc.cong_control(&mut cx, &RateSample::default());
    }

    fn fresh(cwnd: u32, slow_start: bool) -> (Aimd, SockState) {
        let mut sk = SockState::new(1448, cwnd);
        let mut cc = Aimd::new(1.0, 0.5, true, slow_start);
        let mut rng = Rng::seed_from_u64(1);
        cc.init(&mut CcContext { now: 0, sk: &mut sk, rng: &mut rng });
        (cc, sk)
    }

    #[test]
    fn one_segment_per_window_of_acks() {
        let (mut cc, mut sk) = fresh(40, false);
        for _ in 0..40 {
            ack(&mut cc, &mut sk, 1, 0);
        }
        // sum of 1/w over 40 ACKs starting at 40: a little under +1.
        let want = (0..40).fold(40.0, |w: f64, _| w + 1.0 / w);
        assert!((cc.window() - want).abs() < 1e-12);
        assert!((cc.window() - 40.99).abs() < 0.01);
        assert_eq!(sk.cwnd, 41);
    }

    #[test]
    fn every_mark_halves_even_within_one_window() {
        let (mut cc, mut sk) = fresh(40, false);
        ack(&mut cc, &mut sk, 1, 1);
        assert_eq!((cc.window(), sk.cwnd), (20.0, 20));
        ack(&mut cc, &mut sk, 1, 1);
        assert_eq!((cc.window(), sk.cwnd), (10.0, 10));
        assert_eq!(cc.marks, 2);
    }

    #[test]
    fn slow_start_until_the_first_mark_then_additive() {
        let (mut cc, mut sk) = fresh(10, true);
        ack(&mut cc, &mut sk, 10, 0);
        assert_eq!(sk.cwnd, 20);
        ack(&mut cc, &mut sk, 1, 1);
        assert_eq!(sk.cwnd, 10);
        ack(&mut cc, &mut sk, 1, 0);
        assert!((cc.window() - 10.1).abs() < 1e-12);
    }

    #[test]
    fn cwnd_rounds_to_nearest() {
        let (mut cc, mut sk) = fresh(3, false);
        // 3 -> 3.333 -> 3.633 (rounds up to 4)
        ack(&mut cc, &mut sk, 1, 0);
        assert_eq!(sk.cwnd, 3);
        ack(&mut cc, &mut sk, 1, 0);
        assert_eq!(sk.cwnd, 4);
    }

    #[test]
    fn cwnd_limited_switch_stops_growth_when_app_limited() {
        let mut sk = SockState::new(1448, 40);
        let mut cc = Aimd::new(1.0, 0.5, false, false);
        let mut rng = Rng::seed_from_u64(1);
        cc.init(&mut CcContext { now: 0, sk: &mut sk, rng: &mut rng });
        sk.ssthresh = 10; // out of the socket's slow start
        ack(&mut cc, &mut sk, 5, 0);
        assert_eq!(cc.window(), 40.0);
        sk.is_cwnd_limited = true;
        ack(&mut cc, &mut sk, 1, 0);
        assert!(cc.window() > 40.0);
    }

    #[test]
    fn loss_episode_decreases_once_and_rto_restarts() {
        let (mut cc, mut sk) = fresh(40, false);
        let mut rng = Rng::seed_from_u64(1);
        let mut cx = CcContext { now: 0, sk: &mut sk, rng: &mut rng };
        cc.set_state(&mut cx, CaState::Recovery);
        cx.sk.ca_state = CaState::Recovery;
        cc.set_state(&mut cx, CaState::Recovery);
        assert_eq!(cc.window(), 20.0);
        cc.set_state(&mut cx, CaState::Loss);
        assert_eq!((cc.window(), cx.sk.cwnd), (1.0, 1));
        cx.sk.ca_state = CaState::Loss;
        ack(&mut cc, &mut sk, 1, 0);
        assert_eq!(sk.cwnd, 2); // slow start towards 10
    }

    #[test]
    fn bad_parameters_name_the_field() {
        use crate::tcp::config::CcConfig;
        let mut params = std::collections::BTreeMap::new();
        params.insert("b".to_string(), serde_json::json!(1.5));
        let e = crate::tcp::cc::build(&CcConfig { name: "aimd".into(), params }, "flows.0.transport.cc").unwrap_err();
        assert_eq!(e.field, "flows.0.transport.cc.params.b");
        assert!(e.msg.contains("(0, 1)"), "{}", e.msg);
    }
}
