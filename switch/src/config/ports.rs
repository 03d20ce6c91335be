//! `[[port]]`: a port's name, interface, speed, MTU and how it classifies untagged frames.

use pfcswitch_link::units::BitRate;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// At most this many ports: the classifier's counter rows and the egress bitmasks.
pub const MAX_PORTS: usize = 64;

/// How a port assigns a priority to untagged frames.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Trust {
    /// Tagged frames use their PCP; untagged ones the port's default priority.
    #[default]
    Pcp,
    /// As `pcp`, but untagged IPv4/IPv6 frames take the DSCP map's priority.
    Dscp,
}

/// `[[port]]`.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PortConfig {
    pub name: String,
    /// Network interface; defaults to `name`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iface: Option<String>,
    /// Emulated by the egress shaper (veth has no speed of its own).
    pub speed: BitRate,
    #[serde(default = "default_mtu")]
    pub mtu: u32,
    #[serde(default)]
    pub default_priority: u8,
    #[serde(default)]
    pub trust: Trust,
    /// Priority → DSCP values, e.g. `{ 3 = [24, 26], 5 = [46] }`; unlisted DSCPs map to
    /// DSCP >> 3 (the class selector). Only with `trust = "dscp"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dscp_map: Option<BTreeMap<String, Vec<u8>>>,
    /// Learn the source addresses of frames received here. Off on the uplinks of a fabric
    /// with several paths, where a host's frames arrive on any of them and static ECMP
    /// entries say where it is.
    #[serde(default = "enabled")]
    pub learning: bool,
    /// Send broadcasts, multicasts and unknown unicasts out of this port. Off on all but one
    /// uplink of each leaf of a fabric with several spines, so flooded frames follow a tree
    /// and never loop.
    #[serde(default = "enabled")]
    pub flooding: bool,
}

pub(super) fn default_mtu() -> u32 {
    1500
}

fn enabled() -> bool {
    true
}
