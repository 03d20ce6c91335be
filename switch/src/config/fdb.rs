//! `[fdb]`: MAC learning's aging and the static entries (single ports or ECMP groups).

use pfcswitch_link::units;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// `[fdb]`: MAC learning.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct FdbConfig {
    /// A learned address is forgotten after this long without a frame from it.
    #[serde(with = "units::duration")]
    pub aging: Duration,
    /// Entries that never age and are never overwritten by learning.
    #[serde(rename = "static")]
    pub static_entries: Vec<StaticEntry>,
}

impl Default for FdbConfig {
    fn default() -> Self {
        FdbConfig { aging: Duration::from_secs(300), static_entries: Vec::new() }
    }
}

#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct StaticEntry {
    pub mac: String,
    /// A port, or several: an ECMP group, one port picked per flow.
    pub port: StaticPorts,
}

/// `port = "p1"` or `port = ["up1", "up2"]`.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(untagged)]
pub enum StaticPorts {
    One(String),
    Group(Vec<String>),
}

impl StaticPorts {
    pub fn names(&self) -> &[String] {
        match self {
            StaticPorts::One(name) => std::slice::from_ref(name),
            StaticPorts::Group(names) => names,
        }
    }
}

impl From<&str> for StaticPorts {
    fn from(name: &str) -> Self {
        StaticPorts::One(name.to_string())
    }
}
