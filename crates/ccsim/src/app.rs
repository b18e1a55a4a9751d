//! Traffic sources: when the next message is written and how big it is.
//!
//! Sources are transport-agnostic: the flow hands each message to UDP (one datagram)
//! or to the TCP send buffer. Every source draws from its flow's own random stream.

use crate::config::{AppConfig, Jitter, PeriodDist, Quantiles, SizeDist};
use crate::error::ConfigError;
use crate::rng::Rng;
use crate::time::{tx_time_ns, Nanos};
use rand::Rng as _;
use rand_distr::{Distribution, Exp1, StandardNormal};

#[derive(Clone, Debug)]
pub enum App {
    Cbr {
        size: u32,
        interval: Nanos,
        jitter: Jitter,
        size_dist: SizeDist,
    },
    OnOff {
        size: u32,
        gap: Nanos,
        on: PeriodDist,
        off: PeriodDist,
        on_until: Nanos,
    },
    /// Greedy sender; `remaining` is the total still to write (None = unlimited).
    Bulk {
        remaining: Option<u64>,
    },
    /// Responses of random size; the next one follows a think time after the previous
    /// was delivered (the flow calls [`App::after_delivery`]).
    Web {
        size: u32,
        size_dist: SizeDist,
        think: Nanos,
    },
    /// Trace replay: message `i` at `start + times[i]` (plus `offset` when repeating).
    Trace {
        times: Vec<Nanos>,
        sizes: Vec<u32>,
        repeat: bool,
        next: usize,
        start: Nanos,
        offset: Nanos,
    },
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
                    return Err(ConfigError::new(
                        format!("{field}.interval"),
                        "interval must be positive (e.g. \"20ms\")",
                    ));
                }
                check_size_dist(size_dist, &format!("{field}.size_dist"))?;
                if let Jitter::Empirical { quantiles } = jitter {
                    check_quantiles(quantiles, &format!("{field}.jitter"))?;
                }
                App::Cbr {
                    size: *size_bytes,
                    interval: *interval_ns,
                    jitter: jitter.clone(),
                    size_dist: size_dist.clone(),
                }
            }
            AppConfig::Web { size_bytes, size_dist, think_ns } => {
                if *size_bytes == 0 {
                    return Err(ConfigError::new(format!("{field}.size"), "response size must be at least 1 byte"));
                }
                check_size_dist(size_dist, &format!("{field}.size_dist"))?;
                App::Web { size: *size_bytes, size_dist: size_dist.clone(), think: *think_ns }
            }
            AppConfig::Trace { times_ns, sizes_bytes, repeat } => {
                if times_ns.is_empty() || times_ns.len() != sizes_bytes.len() {
                    return Err(ConfigError::new(
                        field,
                        format!(
                            "a trace needs as many times as sizes, at least one ({} times, {} sizes)",
                            times_ns.len(),
                            sizes_bytes.len()
                        ),
                    ));
                }
                if let Some(i) = times_ns.windows(2).position(|w| w[1] < w[0]) {
                    return Err(ConfigError::new(format!("{field}.times[{}]", i + 1), "trace times must not decrease"));
                }
                if let Some(i) = sizes_bytes.iter().position(|&b| b == 0) {
                    return Err(ConfigError::new(
                        format!("{field}.sizes[{i}]"),
                        "trace message sizes must be at least 1 byte",
                    ));
                }
                App::Trace {
                    times: times_ns.clone(),
                    sizes: sizes_bytes.clone(),
                    repeat: *repeat,
                    next: 0,
                    start: 0,
                    offset: 0,
                }
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

    /// Applications whose pace depends on delivery (they need a reliable transport).
    pub fn needs_tcp(&self) -> bool {
        matches!(self, App::Bulk { .. } | App::Web { .. })
    }

    /// First wake-up at or after `start`.
    pub fn first_wake(&mut self, start: Nanos, rng: &mut Rng) -> Nanos {
        match self {
            App::Trace { times, start: s, .. } => {
                *s = start;
                start + times[0]
            }
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
                let bytes = sample_size(*size, size_dist, rng);
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
                    Jitter::Empirical { quantiles } => sample_quantiles(quantiles, rng).max(0.0).round() as Nanos,
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
            // The next response is scheduled by `after_delivery`.
            App::Web { size, size_dist, .. } => {
                Emit { bytes: sample_size(*size, size_dist, rng), next_wake: Nanos::MAX }
            }
            App::Trace { times, sizes, repeat, next, start, offset } => {
                let bytes = sizes[*next];
                *next += 1;
                if *next == times.len() {
                    if !*repeat {
                        return Emit { bytes, next_wake: Nanos::MAX };
                    }
                    // The trace repeats one mean frame gap after its last message.
                    let period = times[times.len() - 1] + (times[times.len() - 1] / times.len().max(1) as u64).max(1);
                    *offset += period;
                    *next = 0;
                }
                Emit { bytes, next_wake: *start + *offset + times[*next] }
            }
        }
    }

    /// A message of this application was delivered completely at `now`: when the
    /// application writes next (web sessions: after a think time), if it reacts at all.
    pub fn after_delivery(&mut self, now: Nanos, rng: &mut Rng) -> Option<Nanos> {
        match self {
            App::Web { think, .. } => {
                let x: f64 = Exp1.sample(rng);
                Some(now + (x * *think as f64).round() as Nanos)
            }
            _ => None,
        }
    }
}

fn sample_size(mean: u32, dist: &SizeDist, rng: &mut Rng) -> u32 {
    let x = match dist {
        SizeDist::Fixed => return mean,
        SizeDist::Exponential => {
            let e: f64 = Exp1.sample(rng);
            e * mean as f64
        }
        SizeDist::Pareto { shape } => {
            let xm = mean as f64 * (shape - 1.0) / shape;
            let u: f64 = 1.0 - rng.random::<f64>();
            xm / u.powf(1.0 / shape)
        }
        SizeDist::Lognormal { sigma } => {
            // E[X] = exp(mu + sigma^2/2) = mean.
            let mu = (mean as f64).ln() - sigma * sigma / 2.0;
            let z: f64 = StandardNormal.sample(rng);
            (mu + sigma * z).exp()
        }
        SizeDist::Empirical { quantiles } => sample_quantiles(quantiles, rng),
    };
    x.round().clamp(1.0, u32::MAX as f64) as u32
}

/// Inverse-CDF sampling from a quantile table (linear interpolation).
fn sample_quantiles(q: &Quantiles, rng: &mut Rng) -> f64 {
    let u: f64 = rng.random();
    let i = q.p.partition_point(|&p| p <= u).clamp(1, q.p.len() - 1);
    let (p0, p1, v0, v1) = (q.p[i - 1], q.p[i], q.value[i - 1], q.value[i]);
    if p1 > p0 {
        v0 + (v1 - v0) * (u - p0) / (p1 - p0)
    } else {
        v1
    }
}

fn check_quantiles(q: &Quantiles, field: &str) -> Result<(), ConfigError> {
    let ok = q.p.len() >= 2
        && q.p.len() == q.value.len()
        && q.p[0] == 0.0
        && *q.p.last().unwrap() == 1.0
        && q.p.windows(2).all(|w| w[0] <= w[1])
        && q.value.windows(2).all(|w| w[0] <= w[1])
        && q.value.iter().all(|v| v.is_finite() && *v >= 0.0);
    if ok {
        Ok(())
    } else {
        Err(ConfigError::new(
            field,
            "an empirical distribution needs equal-length, non-decreasing p (from 0 to 1) and non-negative values",
        ))
    }
}

fn check_size_dist(d: &SizeDist, field: &str) -> Result<(), ConfigError> {
    match d {
        SizeDist::Pareto { shape } if !(*shape > 1.0) => {
            Err(ConfigError::new(field, format!("Pareto shape {shape} has no finite mean; accepted: shape > 1")))
        }
        SizeDist::Lognormal { sigma } if !(*sigma >= 0.0 && sigma.is_finite()) => {
            Err(ConfigError::new(field, format!("lognormal sigma {sigma} is invalid; accepted: sigma >= 0")))
        }
        SizeDist::Empirical { quantiles } => check_quantiles(quantiles, field),
        _ => Ok(()),
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
        let mut app = App::Cbr {
            size: 186,
            interval: 20_000_000,
            jitter: Jitter::Normal { sd_ns: 1_000_000 },
            size_dist: SizeDist::Fixed,
        };
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

    fn mean_of(dist: SizeDist, n: usize) -> f64 {
        let mut rng = stream(9, "sizes");
        (0..n).map(|_| sample_size(1000, &dist, &mut rng) as f64).sum::<f64>() / n as f64
    }

    #[test]
    fn heavy_tailed_and_lognormal_sizes_have_the_configured_mean() {
        // Lognormal sigma 1: CV = sqrt(e - 1) = 1.31, SE over 2e5 = 0.3%; allow 1.5%.
        assert!((mean_of(SizeDist::Lognormal { sigma: 1.0 }, 200_000) - 1000.0).abs() < 15.0);
        // Pareto shape 2.5 has finite variance (CV 0.45): SE 0.1%; allow 1.5%.
        assert!((mean_of(SizeDist::Pareto { shape: 2.5 }, 200_000) - 1000.0).abs() < 15.0);
    }

    #[test]
    fn empirical_quantiles_are_interpolated() {
        let q = Quantiles { p: vec![0.0, 0.5, 1.0], value: vec![100.0, 200.0, 1000.0] };
        let mut rng = stream(2, "q");
        let xs: Vec<f64> = (0..100_000).map(|_| sample_quantiles(&q, &mut rng)).collect();
        let below_200 = xs.iter().filter(|&&x| x <= 200.0).count() as f64 / xs.len() as f64;
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        // Median at 200; mean = 0.5*150 + 0.5*600 = 375.
        assert!((below_200 - 0.5).abs() < 0.01, "{below_200}");
        assert!((mean - 375.0).abs() < 4.0, "{mean}");
        assert!(check_quantiles(&Quantiles { p: vec![0.0, 0.7], value: vec![1.0, 2.0] }, "f").is_err());
    }

    #[test]
    fn trace_replays_times_and_sizes_and_repeats() {
        let cfg = AppConfig::Trace { times_ns: vec![0, 40, 100], sizes_bytes: vec![5, 6, 7], repeat: true };
        let mut app = App::build(&cfg, "f").unwrap();
        let mut rng = stream(1, "t");
        let mut t = app.first_wake(1000, &mut rng);
        let mut seen = vec![];
        for _ in 0..5 {
            let e = app.emit(t, &mut rng);
            seen.push((t, e.bytes));
            t = e.next_wake;
        }
        // Period = last time + mean gap (100 + 100/3 = 133).
        assert_eq!(seen, vec![(1000, 5), (1040, 6), (1100, 7), (1133, 5), (1173, 6)]);
    }
}
