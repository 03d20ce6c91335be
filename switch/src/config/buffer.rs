//! `[buffer]`: egress queue memory in its modes (dedicated, shared, pools), the limits it
//! resolves to, and the descriptor counts the frame budget is built from.

use super::pools::{LinkTerms, PoolConfig, PoolLayout, PoolTables, ProfileConfig};
use crate::config_error::ConfigError;
use pfcswitch_link::units::ByteSize;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The least a frame costs the ingress accounting (a minimum Ethernet frame without FCS).
pub const MIN_FRAME_CHARGE: u64 = pfcswitch_wire::MIN_FRAME_LEN as u64;
/// Under `pfc`, descriptors beyond the lossless bound that lossy traffic needs at least.
pub const MIN_LOSSY_FRAMES: u64 = 64;
/// Descriptors the default `buffer.frames` adds for lossy traffic.
pub const DEFAULT_LOSSY_FRAMES: u64 = 4096;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BufferMode {
    /// Every egress queue has its own `egress_max` bytes.
    #[default]
    Dedicated,
    /// Per-queue reserve plus a shared pool with per-queue and per-port caps (CaPFC §II-F, §IV-7).
    Shared,
    /// Pools, profiles and their maps in SONiC's shape, with dynamic thresholds
    /// (`docs/buffers.md`); PFC's thresholds come from the profiles, not from `[pfc]`.
    Pools,
}

/// `[buffer]`: egress queues.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct BufferConfig {
    pub mode: BufferMode,
    /// Dedicated mode: capacity of each egress queue (default 60KB, CaPFC Table II).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub egress_max: Option<ByteSize>,
    /// Shared mode: bytes reserved per queue (default 8KB).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reserve: Option<ByteSize>,
    /// Shared mode: the pool (default 350KB).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pool: Option<ByteSize>,
    /// Shared mode: most of the pool one queue may hold (default 80KB).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue_cap: Option<ByteSize>,
    /// Shared mode: most of the pool one egress port may hold (default 100KB).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port_cap: Option<ByteSize>,
    /// Frames the switch can hold at once (the datapath sizes its UMEM from it). Default:
    /// what the lossless ingress limits can need
    /// ([`SwitchConfig::lossless_frames_bound`](crate::config::SwitchConfig::lossless_frames_bound)) plus 4096
    /// for lossy traffic.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frames: Option<u32>,
    /// Mode "pools": `[buffer.pools.NAME]` (SONiC's `BUFFER_POOL`).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub pools: BTreeMap<String, PoolConfig>,
    /// Mode "pools": `[buffer.profiles.NAME]` (`BUFFER_PROFILE`).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub profiles: BTreeMap<String, ProfileConfig>,
    /// Mode "pools": `"PORTS|PRIORITIES" = "PROFILE"` for ingress priority groups
    /// (`BUFFER_PG`): `"p1|3"`, `"p1,p2|3-4"`, `"*|0-7"`.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub pg: BTreeMap<String, String>,
    /// Mode "pools": the same for egress queues (`BUFFER_QUEUE`).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub queue: BTreeMap<String, String>,
}

impl Default for BufferConfig {
    fn default() -> Self {
        BufferConfig {
            mode: BufferMode::Dedicated,
            egress_max: None,
            reserve: None,
            pool: None,
            queue_cap: None,
            port_cap: None,
            frames: None,
            pools: BTreeMap::new(),
            profiles: BTreeMap::new(),
            pg: BTreeMap::new(),
            queue: BTreeMap::new(),
        }
    }
}

impl BufferConfig {
    /// Mode "pools": the tables checked and resolved per port and priority.
    pub fn resolve_pools(&self, link: &LinkTerms<'_>) -> Result<PoolLayout, ConfigError> {
        let tables = PoolTables { pools: &self.pools, profiles: &self.profiles, pg: &self.pg, queue: &self.queue };
        tables.resolve(link)
    }

    pub fn mode_name(&self) -> &'static str {
        match self.mode {
            BufferMode::Dedicated => "dedicated",
            BufferMode::Shared => "shared",
            BufferMode::Pools => "pools",
        }
    }
}

/// Buffer settings with mode defaults applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BufferLimits {
    Dedicated { egress_max: u64 },
    Shared { reserve: u64, pool: u64, queue_cap: u64, port_cap: u64 },
    Pools(Arc<PoolLayout>),
}
