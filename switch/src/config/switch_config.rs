//! The whole configuration file: [`SwitchConfig`] with its sections, and `[switch]`.
//!
//! The checks are in `validate.rs`, the settings derived with defaults in `resolve.rs`.

use super::buffer::BufferConfig;
use super::fdb::FdbConfig;
use super::pfc::PfcConfig;
use super::pfcwd::PfcwdConfig;
use super::pipeline::PipelineConfig;
use super::policy::PolicyConfig;
use super::ports::{PortConfig, Trust, default_mtu};
use super::scheduler::SchedulerConfig;
use crate::ecn::EcnConfig;
use crate::fecn::FecnConfig;
use crate::int::IntConfig;
use crate::qcn::QcnConfig;
use pfcswitch_link::units::{self, BitRate};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// A whole configuration file; the sections left out take their defaults.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SwitchConfig {
    pub switch: SwitchSection,
    #[serde(rename = "port", default)]
    pub ports: Vec<PortConfig>,
    #[serde(default)]
    pub pfc: PfcConfig,
    #[serde(default)]
    pub buffer: BufferConfig,
    #[serde(default)]
    pub pipeline: PipelineConfig,
    #[serde(default)]
    pub scheduler: SchedulerConfig,
    #[serde(default)]
    pub policy: PolicyConfig,
    #[serde(default)]
    pub fdb: FdbConfig,
    #[serde(default)]
    pub pfcwd: PfcwdConfig,
    /// QCN congestion points, beside the pause policy.
    #[serde(default)]
    pub qcn: QcnConfig,
    /// FECN rate points, beside the pause policy.
    #[serde(default)]
    pub fecn: FecnConfig,
    /// ECN marking at egress (a RED-style profile).
    #[serde(default)]
    pub ecn: EcnConfig,
    /// In-band telemetry at egress (`crate::int`).
    #[serde(default)]
    pub int: IntConfig,
}

/// `[switch]`: identity and the daemon's endpoints (the core only reads `name`).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SwitchSection {
    pub name: String,
    /// Unix control socket; the daemon defaults to /run/pfcswitch/NAME.sock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control_socket: Option<String>,
    /// Prometheus endpoint; the daemon defaults to 127.0.0.1:9464.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics_listen: Option<String>,
    /// How far behind its line-rate schedule each port of the AF_XDP datapath may catch up
    /// after the daemon woke late, sending back to back (tc-tbf's `burst`, as time). More keeps
    /// a busy link at its rate on a busy machine; less keeps the bursts a late wake-up leaves
    /// short (2 ms is 25 KB at 100 Mbit/s, per hop). Virtual time has no late wake-ups and
    /// ignores it.
    #[serde(with = "units::duration", default = "default_shaper_burst")]
    pub shaper_burst: Duration,
}

/// 2 ms: the lateness two shared cores give a userspace switch under load.
pub const DEFAULT_SHAPER_BURST: Duration = Duration::from_millis(2);

fn default_shaper_burst() -> Duration {
    DEFAULT_SHAPER_BURST
}

impl SwitchConfig {
    /// A minimal configuration: `ports` at `speed`, everything else at its default.
    pub fn with_ports(name: &str, ports: usize, speed: BitRate) -> SwitchConfig {
        SwitchConfig {
            switch: SwitchSection {
                name: name.into(),
                control_socket: None,
                metrics_listen: None,
                shaper_burst: DEFAULT_SHAPER_BURST,
            },
            ports: (0..ports)
                .map(|i| PortConfig {
                    name: format!("p{i}"),
                    iface: None,
                    speed,
                    mtu: default_mtu(),
                    default_priority: 0,
                    trust: Trust::Pcp,
                    dscp_map: None,
                    learning: true,
                    flooding: true,
                })
                .collect(),
            pfc: PfcConfig::default(),
            buffer: BufferConfig::default(),
            pipeline: PipelineConfig::default(),
            scheduler: SchedulerConfig::default(),
            policy: PolicyConfig::default(),
            fdb: FdbConfig::default(),
            pfcwd: PfcwdConfig::default(),
            qcn: QcnConfig::default(),
            fecn: FecnConfig::default(),
            ecn: EcnConfig::default(),
            int: IntConfig::default(),
        }
    }
}
