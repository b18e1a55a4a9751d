//! Configuration errors, raised when a simulation is built and never during a run.

use std::fmt;

/// A scenario value the simulator cannot accept. `field` is the dotted path of the
/// offending value, `msg` says what was wrong and what is accepted.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigError {
    pub field: String,
    pub msg: String,
}

impl ConfigError {
    pub fn new(field: impl Into<String>, msg: impl Into<String>) -> Self {
        ConfigError { field: field.into(), msg: msg.into() }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.msg)
    }
}

impl std::error::Error for ConfigError {}
