//! Placeholder replaced by the loss-model branch.
use crate::error::ConfigError;
use crate::rng::Rng;
use rand::Rng as _;
use serde::{Deserialize, Serialize};
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum LossConfig { Bernoulli { p: f64 } }
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate { Pass, Drop, Mark }
pub struct LossModel { p: f64, rng: Rng }
impl LossModel {
    pub fn new(cfg: &LossConfig, rng: Rng, _field: &str) -> Result<Self, ConfigError> {
        let LossConfig::Bernoulli { p } = cfg; Ok(LossModel { p: *p, rng })
    }
    pub fn decide(&mut self, _ect: bool) -> Fate { if self.rng.random::<f64>() < self.p { Fate::Drop } else { Fate::Pass } }
}
