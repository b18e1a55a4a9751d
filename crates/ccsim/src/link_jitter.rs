//! Delay variation on a link's wire, as Linux netem draws it (`net/sched/sch_netem.c`,
//! `tabledist` and `get_crandom`), in two orderings:
//!
//! - `reorder = true`: each packet gets `delay + jitter` of its own and packets may
//!   overtake each other, as netem without a rate limit (its tfifo sorts by
//!   time_to_send);
//! - `reorder = false`: the random delay keeps order, each packet delivered at
//!   `max(previous delivery, t + delay + jitter)`.
//!
//! A sample is `mu + sigma * X` with X from netem's distribution tables, built here as
//! iproute2 builds them (`netem/normal.c`, `pareto.c`, `paretonormal.c`: 4096 entries
//! in units of sigma / 8192; pareto has shape 3, shifted by its mean 1.5 and scaled by
//! 4/3, clamped at 4 sigma; paretonormal is (normal + 3 pareto) / 4 entry by entry);
//! `uniform` is netem's default without a table, U[mu - sigma, mu + sigma).
//! `correlation` is netem's: the uniform random number behind each sample is
//! `(1 - rho) u + rho last` (in 32-bit fixed point), which also narrows the spread,
//! as it does in netem. One difference: netem picks the table entry (and the uniform
//! offset) from that number's *low* bits (`rnd % size`), where the correlation does not
//! reach, so its delays come out uncorrelated whatever the setting; here the number is
//! scaled onto the table (`rnd * size >> 32`), which selects entries equally often
//! when uncorrelated and keeps the correlation asked for. A total below zero is zero.

use crate::error::ConfigError;
use crate::rng::Rng;
use crate::time::Nanos;
use rand::Rng as _;
use serde::{Deserialize, Serialize};

/// netem's `NETEM_DIST_SCALE`: table entries are in units of sigma / 8192.
const DIST_SCALE: i64 = 8192;
/// iproute2's table generators write 4096 entries (16384-point grid, every 4th).
const TABLE_SIZE: usize = 4096;

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum JitterDist {
    /// netem's default (no distribution table).
    #[default]
    Uniform,
    Normal,
    Pareto,
    Paretonormal,
}

/// The JSON form (`LinkConfig.jitter`); the mean delay is the link's `delay_ns`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct JitterConfig {
    /// netem's `jitter`: the standard deviation for `normal`, the half-width for
    /// `uniform`, the table's scale for `pareto` and `paretonormal`.
    pub sigma_ns: u64,
    #[serde(default)]
    pub dist: JitterDist,
    /// netem's delay correlation, a fraction in [0, 1].
    #[serde(default)]
    pub correlation: f64,
    /// Packets may overtake each other (netem); `false` keeps their order.
    #[serde(default = "yes")]
    pub reorder: bool,
}

fn yes() -> bool {
    true
}

/// A link's delay process with its random stream.
#[derive(Clone, Debug)]
pub struct DelayModel {
    mu: i64,
    sigma: i64,
    table: Option<Vec<i16>>,
    /// netem's `crndstate`: rho (0 = independent draws) and the last value.
    rho: u32,
    last: u32,
    pub reorder: bool,
    /// Latest delivery time handed out (the order-keeping model's floor).
    latest: Nanos,
    rng: Rng,
}

impl DelayModel {
    pub fn new(cfg: &JitterConfig, delay_ns: u64, rng: Rng, field: &str) -> Result<DelayModel, ConfigError> {
        if !(0.0..=1.0).contains(&cfg.correlation) {
            return Err(ConfigError::new(
                format!("{field}.correlation"),
                format!("correlation = {} is not a fraction; give a value in [0, 1]", cfg.correlation),
            ));
        }
        // netem keeps jitter in an s32 of nanoseconds
        if cfg.sigma_ns > i32::MAX as u64 {
            return Err(ConfigError::new(
                format!("{field}.sigma"),
                format!("{} ns is too large (accepted: at most {} ns, as netem)", cfg.sigma_ns, i32::MAX),
            ));
        }
        Ok(DelayModel {
            mu: delay_ns as i64,
            sigma: cfg.sigma_ns as i64,
            table: table(cfg.dist),
            rho: (cfg.correlation * u32::MAX as f64).round() as u32,
            last: 0,
            reorder: cfg.reorder,
            latest: 0,
            rng,
        })
    }

    /// netem's `get_crandom`.
    fn crandom(&mut self) -> u32 {
        let value: u32 = self.rng.random();
        if self.rho == 0 {
            return value;
        }
        let rho = self.rho as u64 + 1;
        let answer = ((value as u64 * ((1u64 << 32) - rho) + self.last as u64 * rho) >> 32) as u32;
        self.last = answer;
        answer
    }

    /// The configured (mean) delay, without a draw: what a path's fixed part is.
    pub fn mean_ns(&self) -> Nanos {
        self.mu.max(0) as Nanos
    }

    /// One delay sample in ns (netem's `tabledist`), possibly negative.
    pub fn sample(&mut self) -> i64 {
        if self.sigma == 0 {
            return self.mu;
        }
        let rnd = self.crandom();
        let Some(table) = &self.table else {
            return ((rnd as u64 * 2 * self.sigma as u64) >> 32) as i64 + self.mu - self.sigma;
        };
        let t = table[((rnd as u64 * table.len() as u64) >> 32) as usize] as i64;
        let mut x = (self.sigma % DIST_SCALE) * t;
        x += if x >= 0 { DIST_SCALE / 2 } else { -DIST_SCALE / 2 };
        x / DIST_SCALE + (self.sigma / DIST_SCALE) * t + self.mu
    }

    /// When a packet that leaves the serialiser at `now` reaches the far end.
    pub fn arrival(&mut self, now: Nanos) -> Nanos {
        let d = self.sample().max(0) as Nanos;
        let t = now + d;
        if self.reorder {
            t
        } else {
            self.latest = self.latest.max(t);
            self.latest
        }
    }
}

/// Standard normal CDF, from an erf accurate to 1.2e-7 (Numerical Recipes' erfc by
/// Chebyshev fit): table entries are rounded to 1/8192, far coarser.
fn phi(x: f64) -> f64 {
    let z = x.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.26551223
        + t * (1.00002368
            + t * (0.37409196
                + t * (0.09678418
                    + t * (-0.18628806
                        + t * (0.27886807
                            + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))));
    let erfc = t * poly.exp();
    if x >= 0.0 {
        1.0 - 0.5 * erfc
    } else {
        0.5 * erfc
    }
}

/// iproute2's normal quantile grid: `grid[i]` is the last x (in steps of 5e-5 from
/// -10) with rint(16384 * Phi(x)) = i.
fn normal_grid() -> Vec<f64> {
    let n = TABLE_SIZE * 4;
    let mut grid = vec![0.0; n + 1];
    let mut k = 0u32;
    loop {
        let x = -10.0 + k as f64 * 0.00005;
        if x >= 10.05 {
            break;
        }
        let i = (n as f64 * phi(x)).round() as usize;
        grid[i.min(n)] = x;
        k += 1;
    }
    grid
}

/// iproute2 `pareto.c`'s value at grid point `i` of 16384 (shape 3).
fn pareto_value(i: usize) -> i64 {
    let u = (65536 - 4 * i) as f64 / 65536.0;
    let v = (u.powf(-1.0 / 3.0) - 1.5) * (4.0 / 3.0) * DIST_SCALE as f64;
    v.min(32767.0).round() as i64
}

fn table(dist: JitterDist) -> Option<Vec<i16>> {
    let clamp = |v: i64| v.clamp(i16::MIN as i64, i16::MAX as i64) as i16;
    match dist {
        JitterDist::Uniform => None,
        JitterDist::Pareto => Some((0..TABLE_SIZE).map(|k| clamp(pareto_value(4 * k))).collect()),
        JitterDist::Normal | JitterDist::Paretonormal => {
            let grid = normal_grid();
            Some(
                (0..TABLE_SIZE)
                    .map(|k| {
                        let norm = (grid[4 * k] * DIST_SCALE as f64).round() as i64;
                        if dist == JitterDist::Normal {
                            clamp(norm)
                        } else {
                            clamp((norm + 3 * pareto_value(4 * k)) / 4)
                        }
                    })
                    .collect(),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(dist: JitterDist, sigma: u64, corr: f64, reorder: bool) -> DelayModel {
        let cfg = JitterConfig { sigma_ns: sigma, dist, correlation: corr, reorder };
        DelayModel::new(&cfg, 20_000_000, crate::rng::stream(1, "j"), "j").unwrap()
    }

    fn moments(m: &mut DelayModel, n: usize) -> (f64, f64) {
        let xs: Vec<f64> = (0..n).map(|_| m.sample() as f64).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
        (mean, var.sqrt())
    }

    #[test]
    fn the_normal_table_is_a_standard_normal() {
        let t = table(JitterDist::Normal).unwrap();
        let xs: Vec<f64> = t.iter().map(|&v| v as f64 / 8192.0).collect();
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        let sd = (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / xs.len() as f64).sqrt();
        assert!(mean.abs() < 0.01 && (sd - 1.0).abs() < 0.01, "mean {mean} sd {sd}");
        assert!(xs.windows(2).all(|w| w[0] <= w[1]));
        // the median entry is 0 and the 84th percentile is about 1
        assert!(xs[2048].abs() < 0.01 && (xs[(0.8413 * 4096.0) as usize] - 1.0).abs() < 0.01);
    }

    #[test]
    fn samples_have_the_configured_spread() {
        let (mean, sd) = moments(&mut model(JitterDist::Normal, 5_000_000, 0.0, true), 200_000);
        assert!((mean - 20e6).abs() < 0.05e6 && (sd - 5e6).abs() < 0.1e6, "{mean} {sd}");
        // uniform on [mu - sigma, mu + sigma): sd = sigma / sqrt(3)
        let (mean, sd) = moments(&mut model(JitterDist::Uniform, 6_000_000, 0.0, true), 200_000);
        assert!((mean - 20e6).abs() < 0.05e6 && (sd - 6e6 / 3f64.sqrt()).abs() < 0.05e6, "{mean} {sd}");
        // pareto: shape 3 shifted to mean 0 (clamping at 4 sigma pulls the mean down a little)
        let (mean, _) = moments(&mut model(JitterDist::Pareto, 4_000_000, 0.0, true), 200_000);
        assert!(mean < 20e6 && mean > 19.5e6, "{mean}");
    }

    #[test]
    fn correlation_links_successive_samples() {
        let mut m = model(JitterDist::Normal, 5_000_000, 0.75, true);
        let xs: Vec<f64> = (0..50_000).map(|_| m.sample() as f64).collect();
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        let c0: f64 = xs.iter().map(|x| (x - mean).powi(2)).sum();
        let c1: f64 = xs.windows(2).map(|w| (w[0] - mean) * (w[1] - mean)).sum();
        assert!(c1 / c0 > 0.6, "lag-1 autocorrelation {}", c1 / c0);
    }

    #[test]
    fn the_order_keeping_model_never_reorders() {
        let mut m = model(JitterDist::Normal, 5_000_000, 0.0, false);
        let mut last = 0;
        for k in 0..10_000u64 {
            let a = m.arrival(k * 100_000);
            assert!(a >= last && a >= k * 100_000);
            last = a;
        }
    }

    #[test]
    fn out_of_range_parameters_are_refused() {
        let cfg = JitterConfig { sigma_ns: 1, dist: JitterDist::Normal, correlation: 1.5, reorder: true };
        let e = DelayModel::new(&cfg, 0, crate::rng::stream(1, "j"), "topology.x.jitter").unwrap_err();
        assert!(e.to_string().contains("correlation"), "{e}");
    }
}
