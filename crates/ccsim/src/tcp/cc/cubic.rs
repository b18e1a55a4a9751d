//! CUBIC with HyStart, ported from Linux `net/ipv4/tcp_cubic.c` (v2.3, as in Linux
//! 5.7+ where HyStart's round reset moved into `hystart_update` and the ACK-train
//! threshold gained `hystart_ack_delay`).
//!
//! Window: W(t) = C (t - K)^3 + W_max, K = cbrt(W_max (1 - beta) / C), t measured from
//! the first ACK after a reduction (Ha, Rhee, Xu, SIGOPS OSR 2008; RFC 9438). The port
//! keeps the kernel's fixed-point arithmetic, because it is what makes Linux curves
//! what they are: time in 1/1024 s (`BICTCP_HZ`), C = `bic_scale * 10 / 1024` =
//! 0.4004, beta = `beta / 1024`, K from the table-plus-Newton cube root, and the
//! per-ACK growth expressed as `cnt` (ACKs per +1 segment) fed to `tcp_cong_avoid_ai`.
//!
//! Where Linux and the paper/RFC differ, this follows Linux:
//! - t includes `delay_min` (the target is the window one RTT ahead);
//! - the TCP-friendly estimate grows by 1 per `8 (1024 + beta) / 3 / (1024 - beta)`/8
//!   ACKed segments (`beta_scale`), i.e. 3 (1 - b)/(1 + b) per RTT, and only bounds
//!   `cnt` (no separate W_est state machine as in RFC 9438 §4.3);
//! - `cnt` is recomputed at most once per jiffy and growth is capped at 1.5x per RTT;
//! - before the first loss (`last_max_cwnd == 0`) growth is at least 5% per RTT.
//!
//! Time: Linux keeps `epoch_start` and friends in jiffies. This port counts them at
//! the socket's `CONFIG_HZ` (`SockState::hz`, from `TcpConfig::kernel_hz`; 250 by
//! default, 1000 in the unit-test kit; see [`jiffies32_at`]), the other state in
//! microseconds as the kernel does.

use super::{AckSample, AnyCc, CaEvent, CaState, CcContext, CongAvoid, CongestionOps, ParamSpec, ParamValue, Params};
use crate::error::ConfigError;
use crate::time::Nanos;

/// Kernel tick rate assumed for jiffies-based state (CONFIG_HZ=1000).
pub const HZ: u32 = 1000;

/// `tcp_jiffies32` at simulated time `now`. Offset by one tick so that 0 stays free as
/// the "unset" marker the kernel code uses (Linux starts jiffies at -300 s instead).
pub fn jiffies32(now: Nanos) -> u32 {
    jiffies32_at(now, HZ)
}

/// `tcp_jiffies32` for a kernel ticking at `hz`.
pub fn jiffies32_at(now: Nanos, hz: u32) -> u32 {
    ((now / (1_000_000_000 / hz.max(1) as u64)) as u32).wrapping_add(1)
}

/// `usecs_to_jiffies` (rounds up).
pub fn usecs_to_jiffies(us: u32) -> u32 {
    usecs_to_jiffies_at(us, HZ)
}

/// `usecs_to_jiffies` for a kernel ticking at `hz`.
pub fn usecs_to_jiffies_at(us: u32, hz: u32) -> u32 {
    us.div_ceil(1_000_000 / hz.max(1))
}

/// `tcp_clock_us()` / `tp->tcp_mstamp` truncated to 32 bits, as HyStart stores it.
fn clock_us(now: Nanos) -> u32 {
    (now / 1000) as u32
}

/// `after(a, b)` for 32-bit sequence-like counters.
fn after32(a: u32, b: u32) -> bool {
    (b.wrapping_sub(a) as i32) < 0
}

const BICTCP_BETA_SCALE: u32 = 1024;
/// Time unit of K and t: 2^10 per second.
const BICTCP_HZ: u32 = 10;
const HYSTART_ACK_TRAIN: i64 = 0x1;
const HYSTART_DELAY: i64 = 0x2;
/// Delay samples per round before the delay test may fire.
const HYSTART_MIN_SAMPLES: u8 = 8;
const HYSTART_DELAY_MIN: u32 = 4000;
const HYSTART_DELAY_MAX: u32 = 16000;
/// `sk_gso_max_size` Linux defaults to (GSO_LEGACY_MAX_SIZE), used by
/// `hystart_ack_delay`'s TSO/GRO cushion.
const GSO_MAX_SIZE: u64 = 65536;

pub const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "fast_convergence",
        default: ParamValue::Bool(true),
        doc: "lower W_max to cwnd*(1+beta)/2 when a loss comes below the previous W_max",
    },
    ParamSpec { name: "beta", default: ParamValue::Int(717), doc: "multiplicative decrease, /1024 (717 = 0.7)" },
    ParamSpec {
        name: "initial_ssthresh",
        default: ParamValue::Int(0),
        doc: "initial ssthresh in segments when hystart is off (0 = infinite)",
    },
    ParamSpec { name: "bic_scale", default: ParamValue::Int(41), doc: "C = bic_scale*10/1024 (41 = 0.4)" },
    ParamSpec {
        name: "tcp_friendliness",
        default: ParamValue::Bool(true),
        doc: "grow at least as fast as a Reno flow with the same beta would",
    },
    ParamSpec {
        name: "hystart",
        default: ParamValue::Bool(true),
        doc: "hybrid slow start (leave slow start on ACK-train or delay increase)",
    },
    ParamSpec {
        name: "hystart_detect",
        default: ParamValue::Int(3),
        doc: "HyStart detectors: 1 ACK train, 2 delay, 3 both",
    },
    ParamSpec {
        name: "hystart_low_window",
        default: ParamValue::Int(16),
        doc: "HyStart only acts when cwnd >= this (segments)",
    },
    ParamSpec {
        name: "hystart_ack_delta_us",
        default: ParamValue::Int(2000),
        doc: "max ACK spacing (us) still counted as one train",
    },
];

/// Module parameters plus the scale factors `cubictcp_register` precomputes.
#[derive(Clone, Debug)]
pub struct CubicParams {
    pub fast_convergence: bool,
    pub beta: u32,
    pub initial_ssthresh: u32,
    pub tcp_friendliness: bool,
    pub hystart: bool,
    pub hystart_detect: i64,
    pub hystart_low_window: u32,
    pub hystart_ack_delta_us: u32,
    /// 8 (1024 + beta) / 3 / (1024 - beta): ACKs per +1 of the Reno estimate, x8.
    beta_scale: u32,
    /// 1024 C / RTT_ref with RTT_ref folded in: `bic_scale * 10`.
    cube_rtt_scale: u32,
    /// 2^40 / (bic_scale * 10): K^3 = cube_factor * (W_max - cwnd), K in 1/1024 s.
    cube_factor: u64,
}

impl CubicParams {
    pub fn new(bic_scale: u32, beta: u32) -> Self {
        CubicParams {
            fast_convergence: true,
            beta,
            initial_ssthresh: 0,
            tcp_friendliness: true,
            hystart: true,
            hystart_detect: HYSTART_ACK_TRAIN | HYSTART_DELAY,
            hystart_low_window: 16,
            hystart_ack_delta_us: 2000,
            beta_scale: 8 * (BICTCP_BETA_SCALE + beta) / 3 / (BICTCP_BETA_SCALE - beta),
            cube_rtt_scale: bic_scale * 10,
            cube_factor: (1u64 << (10 + 3 * BICTCP_HZ)) / (bic_scale as u64 * 10),
        }
    }
}

impl Default for CubicParams {
    fn default() -> Self {
        CubicParams::new(41, 717)
    }
}

/// `struct bictcp`.
#[derive(Clone, Debug)]
pub struct Cubic {
    pub p: CubicParams,
    /// ACKed segments per +1 segment (`tcp_cong_avoid_ai`'s w).
    pub cnt: u32,
    /// W_max, segments.
    pub last_max_cwnd: u32,
    last_cwnd: u32,
    last_time: u32,
    pub bic_origin_point: u32,
    /// K in 1/1024 s.
    pub bic_k: u32,
    /// Minimum RTT, µs (0 = none yet).
    pub delay_min: u32,
    /// Jiffies at the start of the current epoch (0 = none).
    pub epoch_start: u32,
    ack_cnt: u32,
    /// Reno-equivalent window estimate.
    pub tcp_cwnd: u32,
    sample_cnt: u8,
    /// HyStart found its exit point.
    pub found: bool,
    round_start: u32,
    end_seq: u64,
    last_ack: u32,
    curr_rtt: u32,
}

impl Cubic {
    pub fn new(p: CubicParams) -> Self {
        Cubic {
            p,
            cnt: 0,
            last_max_cwnd: 0,
            last_cwnd: 0,
            last_time: 0,
            bic_origin_point: 0,
            bic_k: 0,
            delay_min: 0,
            epoch_start: 0,
            ack_cnt: 0,
            tcp_cwnd: 0,
            sample_cnt: 0,
            found: false,
            round_start: 0,
            end_seq: 0,
            last_ack: 0,
            curr_rtt: 0,
        }
    }

    /// `bictcp_reset`: everything but the HyStart round bookkeeping.
    fn reset(&mut self) {
        *self = Cubic {
            round_start: self.round_start,
            end_seq: self.end_seq,
            last_ack: self.last_ack,
            curr_rtt: self.curr_rtt,
            ..Cubic::new(self.p.clone())
        };
    }

    /// `bictcp_hystart_reset`: start a new HyStart round at `snd_nxt`.
    fn hystart_reset(&mut self, cx: &CcContext<'_>) {
        self.round_start = clock_us(cx.now);
        self.last_ack = self.round_start;
        self.end_seq = cx.sk.snd_nxt;
        self.curr_rtt = u32::MAX;
        self.sample_cnt = 0;
    }

    /// `bictcp_update`: recompute `cnt` from the cubic curve and the Reno estimate.
    fn update(&mut self, now: Nanos, hz: u32, cwnd: u32, acked: u32) {
        let jiffies = jiffies32_at(now, hz);
        self.ack_cnt = self.ack_cnt.wrapping_add(acked);

        if self.last_cwnd == cwnd && (jiffies.wrapping_sub(self.last_time) as i32) <= (hz / 32) as i32 {
            return;
        }

        // cnt is recomputed at most once per jiffy; a reduction clears epoch_start and
        // so forces a recomputation.
        if !(self.epoch_start != 0 && jiffies == self.last_time) {
            self.last_cwnd = cwnd;
            self.last_time = jiffies;

            if self.epoch_start == 0 {
                self.epoch_start = jiffies;
                self.ack_cnt = acked;
                self.tcp_cwnd = cwnd;
                if self.last_max_cwnd <= cwnd {
                    self.bic_k = 0;
                    self.bic_origin_point = cwnd;
                } else {
                    // K = cbrt((W_max - cwnd) / C) in 1/1024 s.
                    self.bic_k = cubic_root(self.p.cube_factor * (self.last_max_cwnd - cwnd) as u64);
                    self.bic_origin_point = self.last_max_cwnd;
                }
            }

            // t = now - epoch_start + delay_min, in 1/1024 s: the target is where the
            // curve will be one RTT from now.
            let mut t = jiffies.wrapping_sub(self.epoch_start) as i32 as i64 as u64;
            t = t.wrapping_add(usecs_to_jiffies_at(self.delay_min, hz) as u64);
            t <<= BICTCP_HZ;
            t /= hz as u64;

            let k = self.bic_k as u64;
            let offs = t.abs_diff(k);
            // C (t - K)^3 with C = cube_rtt_scale / 2^10 and offs in 2^-10 s. Linux
            // truncates the product to u32; the wrap only matters for cwnd > 1e6.
            let delta = (self.p.cube_rtt_scale as u64).wrapping_mul(offs).wrapping_mul(offs).wrapping_mul(offs)
                >> (10 + 3 * BICTCP_HZ);
            let delta = delta as u32;
            let bic_target = if t < k {
                self.bic_origin_point.wrapping_sub(delta)
            } else {
                self.bic_origin_point.wrapping_add(delta)
            };

            self.cnt = if bic_target > cwnd { cwnd / (bic_target - cwnd) } else { 100 * cwnd };

            // Before any loss the bandwidth is unknown: grow at least 5% per RTT.
            if self.last_max_cwnd == 0 && self.cnt > 20 {
                self.cnt = 20;
            }
        }

        // TCP-friendly region: a Reno flow with the same beta adds 3(1-b)/(1+b)
        // segments per RTT; never grow slower than it.
        if self.p.tcp_friendliness {
            let delta = (cwnd * self.p.beta_scale) >> 3;
            if delta > 0 {
                while self.ack_cnt > delta {
                    self.ack_cnt -= delta;
                    self.tcp_cwnd += 1;
                }
            }
            if self.tcp_cwnd > cwnd {
                let max_cnt = cwnd / (self.tcp_cwnd - cwnd);
                self.cnt = self.cnt.min(max_cnt);
            }
        }

        // At most +1 per 2 ACKed segments: 1.5x per RTT.
        self.cnt = self.cnt.max(2);
    }

    /// `hystart_ack_delay`: TSO/GRO cushion for the ACK-train threshold, <= 1 ms.
    fn hystart_ack_delay(sk: &super::SockState) -> u32 {
        let rate = sk.pacing_rate;
        if rate == 0 || rate == u64::MAX {
            return 0;
        }
        (GSO_MAX_SIZE * 4 * 1_000_000 / rate).min(1000) as u32
    }

    /// `hystart_update`.
    fn hystart_update(&mut self, cx: &mut CcContext<'_>, delay: u32) {
        // Rounds are kept below `hystart_low_window` too (Linux 5.7+ checks the window
        // after the reset), so the first round that may trigger starts at a flight's
        // first ACK, not wherever cwnd crosses 16 in the middle of an ACK train (where
        // the first 8 samples would already carry the queue the train builds).
        if cx.sk.snd_una > self.end_seq {
            self.hystart_reset(cx);
        }
        if cx.sk.cwnd < self.p.hystart_low_window {
            return;
        }
        let sk = &mut *cx.sk;
        if self.p.hystart_detect & HYSTART_ACK_TRAIN != 0 {
            let now = clock_us(cx.now);
            // ACKs closer than hystart_ack_delta_us belong to one train; a train that
            // lasts longer than half the minimum RTT means the pipe is full.
            if (now.wrapping_sub(self.last_ack) as i32) <= self.p.hystart_ack_delta_us as i32 {
                self.last_ack = now;
                let mut threshold = self.delay_min + Self::hystart_ack_delay(sk);
                // Without pacing (SK_PACING_NONE) the train is a burst: use half.
                if !sk.pacing_needed {
                    threshold >>= 1;
                }
                if (now.wrapping_sub(self.round_start) as i32) > threshold as i32 {
                    self.found = true;
                    sk.ssthresh = sk.cwnd;
                }
            }
        }
        if self.p.hystart_detect & HYSTART_DELAY != 0 {
            // Minimum RTT over the first HYSTART_MIN_SAMPLES ACKs of the round against
            // delay_min + clamp(delay_min/8, 4 ms, 16 ms).
            self.curr_rtt = self.curr_rtt.min(delay);
            if self.sample_cnt < HYSTART_MIN_SAMPLES {
                self.sample_cnt += 1;
            } else if self.curr_rtt > self.delay_min + (self.delay_min >> 3).clamp(HYSTART_DELAY_MIN, HYSTART_DELAY_MAX)
            {
                self.found = true;
                sk.ssthresh = sk.cwnd;
            }
        }
    }
}

/// Linux `cubic_root`: cube root of `a` from a 64-entry table of cbrt(x << 18) - 1 on
/// the top 6 bits, then one Newton-Raphson step. Average error ~0.2% (the kernel's
/// figure); kept bit-exact because it sets K.
pub fn cubic_root(a: u64) -> u32 {
    const V: [u8; 64] = [
        0, 54, 54, 54, 118, 118, 118, 118, 123, 129, 134, 138, 143, 147, 151, 156, 157, 161, 164, 168, 170, 173, 176,
        179, 181, 185, 187, 190, 192, 194, 197, 199, 200, 202, 204, 206, 209, 211, 213, 215, 217, 219, 221, 222, 224,
        225, 227, 229, 231, 232, 234, 236, 237, 239, 240, 242, 244, 245, 246, 248, 250, 251, 252, 254,
    ];
    let b = 64 - a.leading_zeros(); // fls64
    if b < 7 {
        return (V[a as usize] as u32 + 35) >> 6;
    }
    let b = ((b * 84) >> 8) - 1;
    let shift = (a >> (b * 3)) as usize;
    let x = ((V[shift] as u32 + 10) << b) >> 6;
    // x' = (2x + a / x^2) / 3, with x(x-1) for x^2 and *341/1024 for /3 as Linux does.
    let x = (2 * x).wrapping_add((a / (x as u64 * (x as u64 - 1))) as u32);
    ((x as u64 * 341) >> 10) as u32
}

pub fn build(p: &Params<'_>) -> Result<AnyCc, ConfigError> {
    let beta = p.int("beta")?;
    if !(1..1024).contains(&beta) {
        return Err(ConfigError::new(
            format!("{}.params.beta", p.field),
            format!("{beta} outside 1..=1023 (beta/1024 < 1)"),
        ));
    }
    let bic_scale = p.int("bic_scale")?;
    if !(1..=1 << 20).contains(&bic_scale) {
        return Err(ConfigError::new(format!("{}.params.bic_scale", p.field), format!("{bic_scale} must be positive")));
    }
    let mut c = CubicParams::new(bic_scale as u32, beta as u32);
    c.fast_convergence = p.bool("fast_convergence")?;
    c.initial_ssthresh = p.int("initial_ssthresh")?.clamp(0, u32::MAX as i64) as u32;
    c.tcp_friendliness = p.bool("tcp_friendliness")?;
    c.hystart = p.bool("hystart")?;
    c.hystart_detect = p.int("hystart_detect")?;
    c.hystart_low_window = p.int("hystart_low_window")?.clamp(0, u32::MAX as i64) as u32;
    c.hystart_ack_delta_us = p.int("hystart_ack_delta_us")?.clamp(0, i32::MAX as i64) as u32;
    Ok(AnyCc::Cubic(Cubic::new(c)))
}

impl CongestionOps for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }

    /// `cubictcp_init`.
    fn init(&mut self, cx: &mut CcContext<'_>) {
        self.reset();
        if self.p.hystart {
            self.hystart_reset(cx);
        }
        if !self.p.hystart && self.p.initial_ssthresh != 0 {
            cx.sk.ssthresh = self.p.initial_ssthresh;
        }
    }

    /// `cubictcp_recalc_ssthresh`: end the epoch, remember W_max (lowered by fast
    /// convergence when this loss came below the previous one), cut to beta.
    fn ssthresh(&mut self, cx: &mut CcContext<'_>) -> u32 {
        let cwnd = cx.sk.cwnd;
        self.epoch_start = 0;
        self.last_max_cwnd = if cwnd < self.last_max_cwnd && self.p.fast_convergence {
            ((cwnd as u64 * (BICTCP_BETA_SCALE + self.p.beta) as u64) / (2 * BICTCP_BETA_SCALE) as u64) as u32
        } else {
            cwnd
        };
        (((cwnd as u64 * self.p.beta as u64) / BICTCP_BETA_SCALE as u64) as u32).max(2)
    }

    fn undo_cwnd(&mut self, cx: &mut CcContext<'_>) -> u32 {
        cx.sk.reno_undo_cwnd()
    }

    /// `cubictcp_state`: an RTO forgets everything.
    fn set_state(&mut self, cx: &mut CcContext<'_>, new: CaState) {
        if new == CaState::Loss {
            self.reset();
            self.hystart_reset(cx);
        }
    }

    /// `cubictcp_cwnd_event`: after idle, shift the epoch by the idle time so the
    /// curve resumes where it stopped instead of jumping ahead.
    fn cwnd_event(&mut self, cx: &mut CcContext<'_>, ev: CaEvent) {
        if ev == CaEvent::TxStart {
            let now = jiffies32_at(cx.now, cx.sk.hz);
            let delta = now.wrapping_sub(jiffies32_at(cx.sk.lsndtime, cx.sk.hz)) as i32;
            if self.epoch_start != 0 && delta > 0 {
                self.epoch_start = self.epoch_start.wrapping_add(delta as u32);
                if after32(self.epoch_start, now) {
                    self.epoch_start = now;
                }
            }
        }
    }

    /// `cubictcp_acked`: track delay_min and run HyStart.
    fn pkts_acked(&mut self, cx: &mut CcContext<'_>, sample: &AckSample) {
        if sample.rtt_us < 0 {
            return;
        }
        // Discard delay samples right after a reduction (queue still draining).
        if self.epoch_start != 0 && (jiffies32_at(cx.now, cx.sk.hz).wrapping_sub(self.epoch_start) as i32) < cx.sk.hz as i32 {
            return;
        }
        let delay = (sample.rtt_us.min(u32::MAX as i64) as u32).max(1);
        if self.delay_min == 0 || self.delay_min > delay {
            self.delay_min = delay;
        }
        if !self.found && cx.sk.in_slow_start() && self.p.hystart {
            self.hystart_update(cx, delay);
        }
    }
}

impl CongAvoid for Cubic {
    /// `cubictcp_cong_avoid`.
    fn cong_avoid(&mut self, cx: &mut CcContext<'_>, acked: u32) {
        let sk = &mut *cx.sk;
        let acked = sk.acked_for_cong_avoid(acked);
        if acked == 0 {
            return;
        }
        self.update(cx.now, sk.hz, sk.cwnd, acked);
        sk.cong_avoid_ai(self.cnt, acked);
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn jiffies_follow_the_kernel_tick() {
        // 250 Hz: 4 ms ticks (plus the one-tick offset that keeps 0 free)
        assert_eq!(jiffies32_at(8_000_000, 250), 3);
        assert_eq!(jiffies32_at(7_999_999, 250), 2);
        assert_eq!(jiffies32_at(8_000_000, 1000), 9);
        assert_eq!(usecs_to_jiffies_at(40_000, 250), 10);
        assert_eq!(usecs_to_jiffies_at(40_001, 250), 11);
        assert_eq!(usecs_to_jiffies(40_001), 41);
    }

    use super::*;
    use crate::tcp::cc::testkit::AckClock;
    use crate::tcp::cc::INFINITE_SSTHRESH;

    const C: f64 = 0.4;
    const BETA: f64 = 717.0 / 1024.0;

    fn cubic() -> Cubic {
        Cubic::new(CubicParams::default())
    }

    #[test]
    fn cube_root_within_linux_error_bound() {
        // Linux quotes ~0.195% average error; check the worst case over a wide range
        // stays under 1% and the average under 0.3%.
        let (mut worst, mut sum, mut n) = (0f64, 0f64, 0);
        // The range K is computed over: cube_factor * (W_max - cwnd) >= 2^40 / 410.
        let mut a = 1u64 << 31;
        while a < 1u64 << 60 {
            for m in [1u64, 3, 5, 7] {
                let x = a / 4 * m + 1;
                let exact = (x as f64).cbrt();
                let e = (cubic_root(x) as f64 - exact).abs() / exact;
                worst = worst.max(e);
                sum += e;
                n += 1;
            }
            a = a * 5 / 4;
        }
        println!("cube root: worst {:.4}%, mean {:.4}%", worst * 100.0, sum / n as f64 * 100.0);
        assert!(worst < 0.01 && sum / (n as f64) < 0.003, "worst {worst} mean {}", sum / n as f64);
    }

    #[test]
    fn k_matches_closed_form() {
        // W_max - cwnd = 300 segments: K = cbrt(300 / 0.4004) s = 9.083 s.
        let k = cubic_root(CubicParams::default().cube_factor * 300) as f64 / 1024.0;
        let want = (300.0 / (410.0 / 1024.0f64)).cbrt();
        assert!((k - want).abs() / want < 0.005, "K {k} want {want}");
    }

    /// Loss at `w_max`, then the ACK clock until `until_k` K. Returns the max
    /// deviation of cwnd from W(t) and from the band [W(t), W(t + RTT)], t from the first ACK of the
    /// epoch (Linux's target: `bictcp_update` adds `delay_min` to t, so cwnd at t
    /// heads for where the curve will be one RTT later).
    fn track_curve(w_max: u32, rtt_us: u32, until_k: f64) -> (f64, f64, Vec<(f64, u32)>) {
        let mut ck = AckClock::new(w_max, w_max / 2, rtt_us);
        let mut cc = Cubic::new(CubicParams { tcp_friendliness: false, ..CubicParams::default() });
        cc.init(&mut ck.cx());
        ck.round(&mut cc); // sets delay_min
        ck.sk.cwnd = w_max;
        let (_, after) = ck.loss(&mut cc);
        assert_eq!(after, (w_max as u64 * 717 / 1024) as u32);
        let k = (w_max as f64 * (1.0 - BETA) / C).cbrt();
        let w = |t: f64| C * (t - k).powi(3) + w_max as f64;
        let rtt = rtt_us as f64 / 1e6;
        let t0 = ck.now as f64 / 1e9 + rtt / after as f64; // first ACK of the epoch
        let mut trace = vec![];
        while (ck.now as f64 / 1e9 - t0) < until_k * k {
            ck.round_with(&mut cc, |now, cwnd| trace.push((now as f64 / 1e9 - t0, cwnd)));
        }
        let dev_now = trace.iter().map(|&(t, c)| (c as f64 - w(t)).abs()).fold(0f64, f64::max);
        // Distance outside the band between W(t) and W(t + RTT).
        let dev_band = trace
            .iter()
            .map(|&(t, c)| {
                let (lo, hi) = (w(t), w(t + rtt));
                (lo - c as f64).max(c as f64 - hi).max(0.0)
            })
            .fold(0f64, f64::max);
        (dev_now, dev_band, trace)
    }

    #[test]
    fn cwnd_follows_the_cubic_curve_after_a_loss() {
        // W_max = 100, RTT 100 ms: K = 4.2 s; follow the epoch to 1.5 K (concave, the
        // plateau, then convex probing).
        let (dev_now, dev_ahead, trace) = track_curve(100, 100_000, 1.5);
        println!(
            "W_max 100: max |cwnd - W(t)| = {dev_now:.3}, outside [W(t), W(t+RTT)] by {dev_ahead:.3}, {} ACKs",
            trace.len()
        );
        assert!(dev_ahead <= 1.0 && dev_now <= 1.5, "{dev_ahead} {dev_now}");
        // It really went through the plateau and beyond W_max.
        assert!(trace.iter().any(|&(_, w)| w > 103));
        let (dev_now, dev_ahead, _) = track_curve(1000, 50_000, 1.3);
        println!("W_max 1000: max |cwnd - W(t)| = {dev_now:.3}, outside [W(t), W(t+RTT)] by {dev_ahead:.3}");
        assert!(dev_ahead <= 1.1 && dev_now <= 2.0, "{dev_ahead} {dev_now}");
    }

    #[test]
    fn fast_convergence_lowers_w_max_below_previous_max() {
        let mut ck = AckClock::new(100, 50, 50_000);
        let mut cc = cubic();
        cc.last_max_cwnd = 120;
        let ss = cc.ssthresh(&mut ck.cx());
        // cwnd (1 + beta) / 2 = 100 * 1741 / 2048 = 85.
        assert_eq!((cc.last_max_cwnd, ss), (85, 70));
        let mut cc = Cubic::new(CubicParams { fast_convergence: false, ..CubicParams::default() });
        cc.last_max_cwnd = 120;
        cc.ssthresh(&mut ck.cx());
        assert_eq!(cc.last_max_cwnd, 100);
        // Above the previous maximum, W_max is simply cwnd.
        let mut cc = cubic();
        cc.last_max_cwnd = 90;
        cc.ssthresh(&mut ck.cx());
        assert_eq!(cc.last_max_cwnd, 100);
    }

    #[test]
    fn ssthresh_is_beta_times_cwnd() {
        let mut ck = AckClock::new(1000, 500, 50_000);
        let mut cc = cubic();
        assert_eq!(cc.ssthresh(&mut ck.cx()), 700); // 1000 * 717 / 1024 = 700.2
        ck.sk.cwnd = 2;
        assert_eq!(cc.ssthresh(&mut ck.cx()), 2);
    }

    /// Slow start on a 40 ms path whose queue adds delay once cwnd > 100 segments.
    fn slow_start(hystart: bool) -> (u32, u32, bool) {
        let mut ck = AckClock::new(10, INFINITE_SSTHRESH, 40_000);
        let mut cc = Cubic::new(CubicParams { hystart, ..CubicParams::default() });
        cc.init(&mut ck.cx());
        for _ in 0..8 {
            ck.rtt_us = 40_000 * ck.sk.cwnd.max(100) / 100;
            ck.round(&mut cc);
            if ck.sk.ssthresh != INFINITE_SSTHRESH {
                break;
            }
        }
        (ck.sk.cwnd, ck.sk.ssthresh, cc.found)
    }

    #[test]
    fn hystart_exits_slow_start_early_and_can_be_switched_off() {
        let (cwnd, ss, found) = slow_start(true);
        println!("hystart on: cwnd {cwnd} ssthresh {ss}");
        assert!(found && ss < 200, "ssthresh {ss}");
        let (cwnd, ss, found) = slow_start(false);
        println!("hystart off: cwnd {cwnd} ssthresh {ss}");
        assert!(!found && ss == INFINITE_SSTHRESH && cwnd == 10 << 8);
    }

    #[test]
    fn hystart_delay_detector_alone() {
        // Only the delay test (2): ACK trains do not count, the RTT rise does.
        let mut ck = AckClock::new(10, INFINITE_SSTHRESH, 40_000);
        let mut cc = Cubic::new(CubicParams { hystart_detect: 2, ..CubicParams::default() });
        cc.init(&mut ck.cx());
        let mut exit = 0;
        for _ in 0..8 {
            ck.rtt_us = 40_000 * ck.sk.cwnd.max(100) / 100;
            ck.round(&mut cc);
            if cc.found {
                exit = ck.sk.ssthresh;
                break;
            }
        }
        // Exit once the RTT exceeds 40 + 5 ms: the round started at cwnd 160.
        assert!(exit > 160 && exit <= 320, "exit {exit}");
    }

    #[test]
    fn tcp_friendly_region_follows_the_reno_estimate() {
        // W_max = 20, RTT 100 ms: K = 2.47 s; Reno-with-beta gains 0.53/RTT and
        // overtakes the cubic curve within a few RTTs.
        let run = |friendly: bool| {
            let mut ck = AckClock::new(20, 10, 100_000);
            let mut cc = Cubic::new(CubicParams { tcp_friendliness: friendly, ..CubicParams::default() });
            cc.init(&mut ck.cx());
            ck.round(&mut cc);
            ck.sk.cwnd = 20;
            let (_, after) = ck.loss(&mut cc);
            let mut out = vec![];
            for r in 1..=30 {
                ck.round(&mut cc);
                out.push((r, ck.sk.cwnd, after));
            }
            out
        };
        let reno_slope = 3.0 * (1.0 - BETA) / (1.0 + BETA);
        let k = (20.0 * (1.0 - BETA) / C).cbrt();
        let mut worst = 0f64;
        for ((r, w, after), (_, w_off, _)) in run(true).into_iter().zip(run(false)) {
            let t = r as f64 * 0.1;
            let w_est = after as f64 + reno_slope * r as f64;
            let w_cubic = C * (t - k).powi(3) + 20.0;
            if w_est > w_cubic + 2.0 {
                worst = worst.max((w as f64 - w_est).abs());
                assert!((w_off as f64) < w_est - 1.0, "round {r}: without friendliness {w_off} vs W_est {w_est}");
            }
        }
        println!("max |cwnd - W_est| in the Reno region: {worst:.2}");
        assert!(worst <= 1.5, "{worst}");
    }

    #[test]
    fn idle_shifts_the_epoch() {
        // Epoch began at 1 s, last send at 3 s, sending resumes at 5 s: the 2 s idle
        // gap moves the epoch start to 3 s.
        let mut ck = AckClock::new(100, 50, 100_000);
        let mut cc = cubic();
        cc.epoch_start = jiffies32(1_000_000_000);
        ck.sk.lsndtime = 3_000_000_000;
        ck.now = 5_000_000_000;
        cc.cwnd_event(&mut ck.cx(), CaEvent::TxStart);
        assert_eq!(cc.epoch_start, jiffies32(3_000_000_000));
        // Never into the future.
        cc.epoch_start = jiffies32(ck.now) - 100;
        ck.sk.lsndtime = ck.now - 500_000_000;
        cc.cwnd_event(&mut ck.cx(), CaEvent::TxStart);
        assert_eq!(cc.epoch_start, jiffies32(ck.now));
    }

    #[test]
    fn rto_resets_state() {
        let mut ck = AckClock::new(100, 50, 100_000);
        let mut cc = cubic();
        cc.last_max_cwnd = 80;
        cc.delay_min = 5;
        cc.set_state(&mut ck.cx(), CaState::Loss);
        assert_eq!((cc.last_max_cwnd, cc.delay_min, cc.epoch_start), (0, 0, 0));
    }
}
