//! Scalable TCP (Kelly 2003), ported from Linux `net/ipv4/tcp_scalable.c`.
//!
//! Multiplicative increase, multiplicative decrease: cwnd += 0.01 per ACKed segment
//! (+1 per `TCP_SCALABLE_AI_CNT` = 100 segments) and cwnd -= cwnd/8 on loss. Linux
//! implements the increase as `tcp_cong_avoid_ai(min(cwnd, 100))`, so below 100
//! segments the increase is Reno's +1 per RTT: that minimum is Scalable's "legacy"
//! low window; there is no separate threshold constant. The decrease to 7/8 applies at
//! every window (Linux does not switch back to 1/2 below the low window, unlike the
//! paper's legacy mode and Weigle et al.'s mapping).
//!
//! Linux 2.6 used 50 for the AI count ("50 instead of 100 to account for delayed
//! ack"), from when `cong_avoid` counted ACKs rather than segments; since the hook
//! counts ACKed segments the constant is 100, the paper's a = 0.01. The non-Linux
//! parameter `ai_cnt` reproduces the older kernels.

use super::{AnyCc, CcContext, CongAvoid, CongestionOps, ParamSpec, ParamValue, Params};
use crate::error::ConfigError;

/// `TCP_SCALABLE_MD_SCALE`: the decrease is cwnd >> 3.
const MD_SCALE: u32 = 3;

pub const PARAMS: &[ParamSpec] = &[ParamSpec {
    name: "ai_cnt",
    default: ParamValue::Int(100),
    doc: "TCP_SCALABLE_AI_CNT (not a module parameter): +1 segment per this many ACKed once cwnd >= it; Linux 2.6 used 50",
}];

#[derive(Clone, Debug)]
pub struct Scalable {
    pub ai_cnt: u32,
}

impl Default for Scalable {
    fn default() -> Self {
        Scalable { ai_cnt: 100 }
    }
}

pub fn build(p: &Params<'_>) -> Result<AnyCc, ConfigError> {
    let ai_cnt = p.int("ai_cnt")?;
    if !(1..=1 << 20).contains(&ai_cnt) {
        return Err(ConfigError::new(format!("{}.params.ai_cnt", p.field), format!("{ai_cnt} must be positive")));
    }
    Ok(AnyCc::Scalable(Scalable { ai_cnt: ai_cnt as u32 }))
}

impl CongestionOps for Scalable {
    fn name(&self) -> &'static str {
        "scalable"
    }

    /// `tcp_scalable_ssthresh`: cwnd - cwnd/8.
    fn ssthresh(&mut self, cx: &mut CcContext<'_>) -> u32 {
        let cwnd = cx.sk.cwnd;
        (cwnd - (cwnd >> MD_SCALE)).max(2)
    }

    fn undo_cwnd(&mut self, cx: &mut CcContext<'_>) -> u32 {
        cx.sk.reno_undo_cwnd()
    }
}

impl CongAvoid for Scalable {
    /// `tcp_scalable_cong_avoid`.
    fn cong_avoid(&mut self, cx: &mut CcContext<'_>, acked: u32) {
        let sk = &mut *cx.sk;
        let acked = sk.acked_for_cong_avoid(acked);
        if acked == 0 {
            return;
        }
        let w = sk.cwnd.min(self.ai_cnt);
        sk.cong_avoid_ai(w, acked);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::cc::testkit::AckClock;

    #[test]
    fn multiplicative_increase_above_the_low_window() {
        // cwnd 1000: +1 per 100 ACKed, +10 per RTT, i.e. 1% per RTT.
        let mut ck = AckClock::new(1000, 10, 50_000);
        let mut s = Scalable::default();
        ck.round(&mut s);
        assert_eq!(ck.sk.cwnd, 1010);
        // Growth per RTT stays ~1% of cwnd: 20 RTTs multiply cwnd by ~1.01^20.
        for _ in 0..20 {
            ck.round(&mut s);
        }
        let want = 1010.0 * 1.01f64.powi(20);
        assert!((ck.sk.cwnd as f64 - want).abs() / want < 0.01, "{} vs {want}", ck.sk.cwnd);
    }

    #[test]
    fn reno_increase_below_the_low_window() {
        let mut ck = AckClock::new(40, 10, 50_000);
        let mut s = Scalable::default();
        ck.round(&mut s);
        assert_eq!(ck.sk.cwnd, 41);
        // The 2.6-era constant: Reno only below 50, then +1 per 50.
        let mut ck = AckClock::new(500, 10, 50_000);
        let mut s = Scalable { ai_cnt: 50 };
        ck.round(&mut s);
        assert_eq!(ck.sk.cwnd, 510);
    }

    #[test]
    fn back_off_to_seven_eighths() {
        let mut ck = AckClock::new(1000, 10, 50_000);
        let mut s = Scalable::default();
        for (cwnd, want) in [(1000, 875), (80, 70), (9, 8), (2, 2)] {
            ck.sk.cwnd = cwnd;
            assert_eq!(s.ssthresh(&mut ck.cx()), want);
        }
        let (before, after) = ck.loss(&mut s);
        assert_eq!((before, after), (2, 2));
        ck.sk.cwnd = 800;
        let (before, after) = ck.loss(&mut s);
        assert_eq!(after as f64 / before as f64, 0.875);
    }
}
