//! `[scheduler]`: how each egress port picks the next priority to send.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// `[scheduler]`: per egress port, strict priority above weighted deficit round robin.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct SchedulerConfig {
    /// Priorities served strictly, higher number first, before any WDRR priority.
    pub strict: Vec<u8>,
    /// WDRR weight per priority, e.g. `{ 0 = 1, 3 = 4 }`; unlisted priorities weigh 1.
    pub weights: BTreeMap<String, u32>,
}
