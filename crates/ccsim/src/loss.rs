//! Per-link loss models: which packets a link loses (or CE-marks) independently of its
//! queue. Each model counts the packets offered to it and draws from its own random
//! stream, so its decisions depend only on the packet sequence number and the seed.
//!
//! Every model has an `action`: `"drop"` (default) loses the packet; `"mark"` CE-marks
//! an ECN-capable packet instead and drops only non-ECT ones. A Bernoulli model with
//! `action = "mark"` is the random ECN-marking element of the Lübben ECN-AIMD check.

use crate::error::ConfigError;
use crate::rng::Rng;
use rand::Rng as _;
use serde::{Deserialize, Serialize};

/// What a selected packet suffers.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum LossAction {
    #[default]
    Drop,
    /// CE-mark ECT packets, drop non-ECT ones.
    Mark,
}

/// Scenario description of a loss model; `kind` selects the variant.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum LossConfig {
    /// Each packet independently with probability `p`.
    Bernoulli {
        p: f64,
        #[serde(default)]
        action: LossAction,
    },
    /// Packets `offset, offset+every, offset+2*every, ...` (0-based). `offset` defaults
    /// to `every - 1`, i.e. the `every`-th, `2*every`-th, ... packet.
    Periodic {
        every: u64,
        #[serde(default)]
        offset: Option<u64>,
        #[serde(default)]
        action: LossAction,
    },
    /// Two-state Markov chain, stepped once per packet (Gilbert 1960, Elliott 1963).
    /// `p_gb` = P(good -> bad), `p_bg` = P(bad -> good) after each packet; a packet is
    /// lost with probability `loss_good` in the good state and `loss_bad` in the bad
    /// state (defaults 0 and 1: the simple Gilbert model, mean burst `1/p_bg`). The
    /// chain starts in the good state; each packet's fate is drawn in the current state,
    /// then the state moves.
    GilbertElliott {
        p_gb: f64,
        p_bg: f64,
        #[serde(default)]
        loss_good: f64,
        #[serde(default = "one")]
        loss_bad: f64,
        #[serde(default)]
        action: LossAction,
    },
    /// Exactly the packets with these 0-based indices (strictly increasing).
    Trace {
        indices: Vec<u64>,
        #[serde(default)]
        action: LossAction,
    },
}

fn one() -> f64 {
    1.0
}

/// The verdict on one packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    Pass,
    Drop,
    Mark,
}

#[derive(Debug, Clone)]
enum Kind {
    Bernoulli { p: f64 },
    Periodic { every: u64, first: u64 },
    GilbertElliott { p_gb: f64, p_bg: f64, loss_good: f64, loss_bad: f64, bad: bool },
    Trace { indices: Vec<u64>, next: usize },
}

/// A loss model instance with its own random stream and packet counter.
#[derive(Debug, Clone)]
pub struct LossModel {
    kind: Kind,
    action: LossAction,
    rng: Rng,
    seen: u64,
}

fn check_prob(v: f64, field: &str, name: &str) -> Result<(), ConfigError> {
    if (0.0..=1.0).contains(&v) {
        Ok(())
    } else {
        Err(ConfigError::new(
            format!("{field}.{name}"),
            format!("{name} = {v} is not a probability; give a value in [0, 1]"),
        ))
    }
}

impl LossConfig {
    /// Long-run fraction of packets selected (lost or marked).
    pub fn stationary_rate(&self) -> f64 {
        match self {
            LossConfig::Bernoulli { p, .. } => *p,
            LossConfig::Periodic { every, .. } => 1.0 / *every as f64,
            LossConfig::GilbertElliott { p_gb, p_bg, loss_good, loss_bad, .. } => {
                ge_stationary_rate(*p_gb, *p_bg, *loss_good, *loss_bad)
            }
            // A finite trace loses finitely many packets.
            LossConfig::Trace { .. } => 0.0,
        }
    }
}

/// Stationary loss rate of the Gilbert–Elliott chain: with `pi_B = p_gb/(p_gb+p_bg)`,
/// `pi_G*loss_good + pi_B*loss_bad`. With `p_gb = p_bg = 0` the chain stays in its
/// initial (good) state.
pub fn ge_stationary_rate(p_gb: f64, p_bg: f64, loss_good: f64, loss_bad: f64) -> f64 {
    let s = p_gb + p_bg;
    if s == 0.0 {
        return loss_good;
    }
    let pi_b = p_gb / s;
    (1.0 - pi_b) * loss_good + pi_b * loss_bad
}

impl LossModel {
    pub fn new(cfg: &LossConfig, rng: Rng, field: &str) -> Result<Self, ConfigError> {
        let (kind, action) = match cfg {
            LossConfig::Bernoulli { p, action } => {
                check_prob(*p, field, "p")?;
                (Kind::Bernoulli { p: *p }, *action)
            }
            LossConfig::Periodic { every, offset, action } => {
                if *every == 0 {
                    return Err(ConfigError::new(
                        format!("{field}.every"),
                        "every = 0: give the period n >= 1 (every n-th packet is lost)",
                    ));
                }
                (Kind::Periodic { every: *every, first: offset.unwrap_or(every - 1) }, *action)
            }
            LossConfig::GilbertElliott { p_gb, p_bg, loss_good, loss_bad, action } => {
                check_prob(*p_gb, field, "p_gb")?;
                check_prob(*p_bg, field, "p_bg")?;
                check_prob(*loss_good, field, "loss_good")?;
                check_prob(*loss_bad, field, "loss_bad")?;
                (
                    Kind::GilbertElliott {
                        p_gb: *p_gb,
                        p_bg: *p_bg,
                        loss_good: *loss_good,
                        loss_bad: *loss_bad,
                        bad: false,
                    },
                    *action,
                )
            }
            LossConfig::Trace { indices, action } => {
                if let Some(w) = indices.windows(2).find(|w| w[0] >= w[1]) {
                    return Err(ConfigError::new(
                        format!("{field}.indices"),
                        format!("indices must be strictly increasing; found {} then {}", w[0], w[1]),
                    ));
                }
                (Kind::Trace { indices: indices.clone(), next: 0 }, *action)
            }
        };
        Ok(LossModel { kind, action, rng, seen: 0 })
    }

    /// Long-run fraction of packets selected (see [`LossConfig::stationary_rate`]).
    pub fn stationary_rate(&self) -> f64 {
        match &self.kind {
            Kind::Bernoulli { p } => *p,
            Kind::Periodic { every, .. } => 1.0 / *every as f64,
            Kind::GilbertElliott { p_gb, p_bg, loss_good, loss_bad, .. } => {
                ge_stationary_rate(*p_gb, *p_bg, *loss_good, *loss_bad)
            }
            Kind::Trace { .. } => 0.0,
        }
    }

    /// Packets offered so far.
    pub fn packets_seen(&self) -> u64 {
        self.seen
    }

    /// Decides the fate of the next packet; `ect` says whether it is ECN-capable.
    pub fn decide(&mut self, ect: bool) -> Fate {
        let i = self.seen;
        self.seen += 1;
        let hit = match &mut self.kind {
            Kind::Bernoulli { p } => *p > 0.0 && self.rng.random::<f64>() < *p,
            Kind::Periodic { every, first } => i >= *first && (i - *first).is_multiple_of(*every),
            Kind::GilbertElliott { p_gb, p_bg, loss_good, loss_bad, bad } => {
                let l = if *bad { *loss_bad } else { *loss_good };
                let hit = l > 0.0 && self.rng.random::<f64>() < l;
                let flip = if *bad { *p_bg } else { *p_gb };
                if flip > 0.0 && self.rng.random::<f64>() < flip {
                    *bad = !*bad;
                }
                hit
            }
            Kind::Trace { indices, next } => {
                if indices.get(*next) == Some(&i) {
                    *next += 1;
                    true
                } else {
                    false
                }
            }
        };
        match (hit, self.action, ect) {
            (false, _, _) => Fate::Pass,
            (true, LossAction::Mark, true) => Fate::Mark,
            (true, _, _) => Fate::Drop,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::stream;

    fn model(cfg: LossConfig) -> LossModel {
        LossModel::new(&cfg, stream(42, "loss"), "link.loss").unwrap()
    }

    #[test]
    fn bernoulli_rate_within_binomial_tolerance() {
        // n = 10^6, p = 0.01: SE = sqrt(p(1-p)/n) = 9.95e-5; allow 4 SE.
        let n = 1_000_000u64;
        let p = 0.01;
        let mut m = model(LossConfig::Bernoulli { p, action: LossAction::Drop });
        let lost = (0..n).filter(|_| m.decide(false) == Fate::Drop).count() as f64;
        let se = (p * (1.0 - p) / n as f64).sqrt();
        assert!((lost / n as f64 - p).abs() < 4.0 * se, "rate {}", lost / n as f64);
        assert_eq!(m.packets_seen(), n);
    }

    #[test]
    fn bernoulli_extremes() {
        let mut m = model(LossConfig::Bernoulli { p: 0.0, action: LossAction::Drop });
        assert!((0..1000).all(|_| m.decide(true) == Fate::Pass));
        let mut m = model(LossConfig::Bernoulli { p: 1.0, action: LossAction::Drop });
        assert!((0..1000).all(|_| m.decide(true) == Fate::Drop));
    }

    #[test]
    fn mark_action_marks_ect_and_drops_non_ect() {
        let mut m = model(LossConfig::Bernoulli { p: 1.0, action: LossAction::Mark });
        assert_eq!(m.decide(true), Fate::Mark);
        assert_eq!(m.decide(false), Fate::Drop);
    }

    #[test]
    fn periodic_exact_pattern() {
        let mut m = model(LossConfig::Periodic { every: 3, offset: None, action: LossAction::Drop });
        let pat: Vec<bool> = (0..9).map(|_| m.decide(false) == Fate::Drop).collect();
        assert_eq!(pat, [false, false, true, false, false, true, false, false, true]);
        let mut m = model(LossConfig::Periodic { every: 4, offset: Some(1), action: LossAction::Mark });
        let pat: Vec<Fate> = (0..8).map(|_| m.decide(true)).collect();
        use Fate::{Mark as M, Pass as P};
        assert_eq!(pat, [P, M, P, P, P, M, P, P]);
        let mut m = model(LossConfig::Periodic { every: 1, offset: None, action: LossAction::Drop });
        assert!((0..5).all(|_| m.decide(false) == Fate::Drop));
    }

    /// p_gb = 0.01, p_bg = 0.1, loss 0/1: stationary rate 0.01/0.11 = 0.0909.
    /// The loss indicators are correlated: for this two-state chain the asymptotic
    /// variance of the sample mean is pi_B*pi_G*(1+lambda)/(1-lambda)/n with
    /// lambda = 1 - p_gb - p_bg = 0.89, i.e. 17.2 times the binomial one:
    /// SE = sqrt(0.0909*0.909*17.18 / 2e6) = 8.4e-4; allow 4 SE.
    #[test]
    fn gilbert_elliott_long_run_matches_stationary_rate() {
        let cfg = LossConfig::GilbertElliott {
            p_gb: 0.01,
            p_bg: 0.1,
            loss_good: 0.0,
            loss_bad: 1.0,
            action: LossAction::Drop,
        };
        let want = cfg.stationary_rate();
        assert!((want - 0.01 / 0.11).abs() < 1e-15);
        let mut m = model(cfg);
        assert_eq!(m.stationary_rate(), want);
        let n = 2_000_000u64;
        let lost = (0..n).filter(|_| m.decide(false) == Fate::Drop).count() as f64;
        let se = (want * (1.0 - want) * 1.89 / 0.11 / n as f64).sqrt();
        assert!((lost / n as f64 - want).abs() < 4.0 * se, "rate {} want {want}", lost / n as f64);
        // Elliott's version: partial losses in both states.
        assert!((ge_stationary_rate(0.2, 0.3, 0.01, 0.5) - (0.6 * 0.01 + 0.4 * 0.5)).abs() < 1e-15);
        assert_eq!(ge_stationary_rate(0.0, 0.0, 0.02, 1.0), 0.02);
    }

    #[test]
    fn gilbert_bursts_have_mean_length_one_over_p_bg() {
        // loss_bad = 1, loss_good = 0: a burst is a bad-state sojourn, geometric with mean 1/p_bg = 4.
        let mut m = model(LossConfig::GilbertElliott {
            p_gb: 0.05,
            p_bg: 0.25,
            loss_good: 0.0,
            loss_bad: 1.0,
            action: LossAction::Drop,
        });
        let (mut bursts, mut lost, mut prev) = (0u64, 0u64, false);
        for _ in 0..1_000_000 {
            let l = m.decide(false) == Fate::Drop;
            if l {
                lost += 1;
                if !prev {
                    bursts += 1;
                }
            }
            prev = l;
        }
        let mean = lost as f64 / bursts as f64;
        assert!((mean - 4.0).abs() < 0.15, "mean burst {mean}");
    }

    #[test]
    fn trace_exact() {
        let mut m = model(LossConfig::Trace { indices: vec![0, 3, 4, 9], action: LossAction::Drop });
        let lost: Vec<u64> = (0..12u64).filter(|_| m.decide(false) == Fate::Drop).collect();
        assert_eq!(lost, vec![0, 3, 4, 9]);
    }

    #[test]
    fn validation_errors() {
        let err = |c: LossConfig| LossModel::new(&c, stream(0, "x"), "link.loss").unwrap_err().field;
        assert_eq!(err(LossConfig::Bernoulli { p: 1.5, action: LossAction::Drop }), "link.loss.p");
        assert_eq!(err(LossConfig::Bernoulli { p: -0.1, action: LossAction::Drop }), "link.loss.p");
        assert_eq!(err(LossConfig::Periodic { every: 0, offset: None, action: LossAction::Drop }), "link.loss.every");
        assert_eq!(
            err(LossConfig::GilbertElliott {
                p_gb: 0.1,
                p_bg: 2.0,
                loss_good: 0.0,
                loss_bad: 1.0,
                action: LossAction::Drop
            }),
            "link.loss.p_bg"
        );
        assert_eq!(err(LossConfig::Trace { indices: vec![1, 5, 5], action: LossAction::Drop }), "link.loss.indices");
        assert_eq!(err(LossConfig::Trace { indices: vec![3, 2], action: LossAction::Drop }), "link.loss.indices");
    }

    #[test]
    fn serde_shape() {
        let c: LossConfig = serde_json::from_str(r#"{"kind":"bernoulli","p":0.01,"action":"mark"}"#).unwrap();
        assert_eq!(c, LossConfig::Bernoulli { p: 0.01, action: LossAction::Mark });
        let c: LossConfig = serde_json::from_str(r#"{"kind":"gilbert_elliott","p_gb":0.1,"p_bg":0.5}"#).unwrap();
        assert_eq!(
            c,
            LossConfig::GilbertElliott {
                p_gb: 0.1,
                p_bg: 0.5,
                loss_good: 0.0,
                loss_bad: 1.0,
                action: LossAction::Drop
            }
        );
        let c: LossConfig = serde_json::from_str(r#"{"kind":"periodic","every":10}"#).unwrap();
        assert_eq!(c, LossConfig::Periodic { every: 10, offset: None, action: LossAction::Drop });
        let c: LossConfig = serde_json::from_str(r#"{"kind":"trace","indices":[1,2]}"#).unwrap();
        assert_eq!(c, LossConfig::Trace { indices: vec![1, 2], action: LossAction::Drop });
        assert!(serde_json::from_str::<LossConfig>(r#"{"kind":"bernoulli","p":0.1,"q":1}"#).is_err());
        assert!(serde_json::from_str::<LossConfig>(r#"{"kind":"bernoulli","p":0.1,"action":"corrupt"}"#).is_err());
    }
}
