//! Placeholder replaced by the TCP sender branch.
use serde::{Deserialize, Serialize};
#[derive(Clone, Debug, Serialize, Deserialize, Default)]
pub struct TcpConfig {}
