//! `[fdb]`: MAC learning's aging, the static entries (single ports or ECMP groups) and the
//! default route.

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
    /// Where unicast to an address the table does not hold goes, instead of flooding: a
    /// port or an ECMP group, as a Clos fabric's default route towards its spines. It keeps
    /// a leaf's table to its own hosts however large the fabric.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default_route: Option<StaticPorts>,
}

impl Default for FdbConfig {
    fn default() -> Self {
        FdbConfig { aging: Duration::from_secs(300), static_entries: Vec::new(), default_route: None }
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
