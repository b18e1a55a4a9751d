//! Traffic sources: when the next message is written and how big it is.
//!
//! Sources are transport-agnostic: the flow hands each message to UDP (one datagram)
//! or to the TCP send buffer. Every source draws from its flow's own random stream.

use crate::config::{AppConfig, Jitter, PeriodDist, SizeDist};
use crate::error::ConfigError;
use crate::rng::Rng;
use crate::time::{tx_time_ns, Nanos};
use rand::Rng as _;
use rand_distr::{Distribution, Exp1, StandardNormal};

#[derive(Clone, Debug)]
pub enum App {
    Cbr { size: u32, interval: Nanos, jitter: Jitter, size_dist: SizeDist },
    OnOff { size: u32, gap: Nanos, on: PeriodDist, off: PeriodDist, on_until: Nanos },
    /// Greedy sender; `remaining` is the total still to write (None = unlimited).
    Bulk { remaining: Option<u64> },
}

/// A message the application writes now, and when it next wakes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Emit {
    pub bytes: u32,
    pub next_wake: Nanos,
}

impl App {
    pub fn build(cfg: &AppConfig, field: &str) -> Result<App, ConfigError> {
        Ok(match cfg {
            AppConfig::Cbr { size_bytes, interval_ns, jitter, size_dist } => {
                if *size_bytes == 0 {
                    return Err(ConfigError::new(format!("{field}.size"), "message size must be at least 1 byte"));
                }
                if *interval_ns == 0 {
                    return Err(ConfigError::new(format!("{field}.interval"), "interval must be positive (e.g. \"20ms\")"));
                }
                App::Cbr { size: *size_bytes, interval: *interval_ns, jitter: jitter.clone(), size_dist: *size_dist }
            }
            AppConfig::OnOff { size_bytes, peak_rate_bps, on, off } => {
                if *size_bytes == 0 || *peak_rate_bps == 0 {
                    return Err(ConfigError::new(field, "on/off source needs size >= 1 byte and a positive peak_rate"));
                }
                for (d, which) in [(on, "on"), (off, "off")] {
                    if let PeriodDist::Pareto { shape, .. } = d {
                        if !(*shape > 1.0) {
                            return Err(ConfigError::new(
                                format!("{field}.{which}.shape"),
                                format!("Pareto shape {shape} has no finite mean; accepted: shape > 1"),
                            ));
                        }
                    }
                }
                App::OnOff {
                    size: *size_bytes,
                    gap: tx_time_ns(*size_bytes, *peak_rate_bps),
                    on: on.clone(),
                    off: off.clone(),
                    on_until: 0,
                }
            }
            AppConfig::Bulk { bytes } => App::Bulk { remaining: *bytes },
        })
    }

    pub fn is_bulk(&self) -> bool {
        matches!(self, App::Bulk { .. })
    }

    /// First wake-up at or after `start`.
    pub fn first_wake(&mut self, start: Nanos, rng: &mut Rng) -> Nanos {
        match self {
            App::OnOff { on, off, on_until, .. } => {
                // Start in an off period so that many sources do not switch on together.
                let begin = start + sample_period(off, rng);
                *on_until = begin + sample_period(on, rng);
                begin
            }
            _ => start,
        }
    }

    /// The message written at `now` (a wake-up time) and the next wake-up.
    pub fn emit(&mut self, now: Nanos, rng: &mut Rng) -> Emit {
        match self {
            App::Cbr { size, interval, jitter, size_dist } => {
                let bytes = match size_dist {
                    SizeDist::Fixed => *size,
                    SizeDist::Exponential => {
                        let x: f64 = Exp1.sample(rng);
                        ((x * *size as f64).round() as u32).max(1)
                    }
                };
                let gap = match jitter {
                    Jitter::None => *interval,
                    Jitter::Normal { sd_ns } => {
                        let z: f64 = StandardNormal.sample(rng);
                        (*interval as f64 + z * *sd_ns as f64).max(0.0).round() as Nanos
                    }
                    Jitter::Exponential => {
                        let x: f64 = Exp1.sample(rng);
                        (x * *interval as f64).round() as Nanos
                    }
                    Jitter::Uniform { width_ns } => {
                        let u: f64 = rng.random();
                        (*interval as f64 + (u - 0.5) * *width_ns as f64).max(0.0).round() as Nanos
                    }
                };
                Emit { bytes, next_wake: now + gap }
            }
            App::OnOff { size, gap, on, off, on_until } => {
                let mut next = now + *gap;
                if next >= *on_until {
                    next = *on_until + sample_period(off, rng);
                    *on_until = next + sample_period(on, rng);
                }
                Emit { bytes: *size, next_wake: next }
            }
            App::Bulk { .. } => Emit { bytes: 0, next_wake: Nanos::MAX },
        }
    }
}

fn sample_period(d: &PeriodDist, rng: &mut Rng) -> Nanos {
    match d {
        PeriodDist::Exponential { mean_ns } => {
            let x: f64 = Exp1.sample(rng);
            (x * *mean_ns as f64).round() as Nanos
        }
        PeriodDist::Pareto { mean_ns, shape } => {
            // Scale x_m so the mean is `mean_ns`: E = a x_m / (a - 1).
            let xm = *mean_ns as f64 * (shape - 1.0) / shape;
            let u: f64 = 1.0 - rng.random::<f64>(); // in (0, 1]
            (xm / u.powf(1.0 / shape)).round() as Nanos
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::stream;

    #[test]
    fn normal_jitter_has_the_configured_mean_and_spread() {
        let mut app = App::Cbr { size: 186, interval: 20_000_000, jitter: Jitter::Normal { sd_ns: 1_000_000 }, size_dist: SizeDist::Fixed };
        let mut rng = stream(1, "t");
        let n = 100_000;
        let gaps: Vec<f64> = (0..n).map(|_| app.emit(0, &mut rng).next_wake as f64).collect();
        let mean = gaps.iter().sum::<f64>() / n as f64;
        let sd = (gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / n as f64).sqrt();
        // standard error of the mean = 1 ms / sqrt(1e5) = 3.2 us; allow 5 SE.
        assert!((mean - 20e6).abs() < 16e3, "mean {mean}");
        assert!((sd - 1e6).abs() < 1e4, "sd {sd}");
    }

    #[test]
    fn onoff_mean_rate_matches_duty_cycle() {
        let on = PeriodDist::Exponential { mean_ns: 100_000_000 };
        let off = PeriodDist::Pareto { mean_ns: 300_000_000, shape: 2.5 };
        let cfg = AppConfig::OnOff { size_bytes: 1000, peak_rate_bps: 8_000_000, on, off };
        let mut app = App::build(&cfg, "f").unwrap();
        let mut rng = stream(3, "t");
        let mut t = app.first_wake(0, &mut rng);
        let mut sent = 0u64;
        let horizon = 2_000 * 1_000_000_000u64;
        while t < horizon {
            let e = app.emit(t, &mut rng);
            sent += e.bytes as u64;
            t = e.next_wake;
        }
        let rate = sent as f64 * 8.0 / (horizon as f64 * 1e-9);
        // duty cycle 1/4 of 8 Mbit/s = 2 Mbit/s; heavy-tailed off periods converge
        // slowly, so allow 10%.
        assert!((rate - 2e6).abs() < 2e5, "rate {rate}");
    }

}
