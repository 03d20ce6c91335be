//! `[buffer] mode = "pools"`: buffers in SONiC's shape (the `BUFFER_POOL`, `BUFFER_PROFILE`,
//! `BUFFER_PG` and `BUFFER_QUEUE` tables of `config_db.json`), and the [`PoolLayout`] they
//! resolve to: per port and priority the ingress priority-group profile and the egress queue
//! profile, each in a pool, with a static threshold or a dynamic one (α × free pool).
//!
//! The semantics are Broadcom's as SONiC documents them: a profile's `size` is reserved for
//! the PG or queue outside the pool; beyond it the PG or queue draws on the pool up to its
//! threshold; a lossless PG that reaches its threshold sends XOFF and takes what still
//! arrives into its headroom (`xoff` bytes; drawn from the pool's shared headroom pool when
//! the pool has one), and resumes at `max(xon, threshold − xon_offset)`.

use super::pfc::{L2_HEADER_MAX, headroom_bound};
use super::ports::PortConfig;
use crate::config_error::{ConfigError, error};
use pfcswitch_link::units::{BitRate, ByteSize};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Duration;

/// `dynamic_th` k gives α = 2^k; Broadcom and Mellanox ASICs accept about this range.
pub const DYNAMIC_TH_RANGE: std::ops::RangeInclusive<i8> = -7..=7;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PoolType {
    /// Ingress accounting: priority groups.
    Ingress,
    /// Egress accounting: queues.
    Egress,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PoolMode {
    /// Its profiles usually set `dynamic_th`.
    #[default]
    Dynamic,
    /// Its profiles usually set `static_th` (a profile may set the other; SAI allows it).
    Static,
}

/// `[buffer.pools.NAME]` (SONiC's `BUFFER_POOL`).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PoolConfig {
    #[serde(rename = "type")]
    pub kind: PoolType,
    #[serde(default)]
    pub mode: PoolMode,
    /// The shared bytes (reserved minimums and headroom are outside it).
    pub size: ByteSize,
    /// Ingress pools: a shared headroom pool of this size; without it every lossless PG keeps
    /// its own headroom.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xoff: Option<ByteSize>,
}

/// `[buffer.profiles.NAME]` (SONiC's `BUFFER_PROFILE`).
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct ProfileConfig {
    pub pool: String,
    /// Reserved for each PG or queue using the profile, outside the pool.
    pub size: ByteSize,
    /// α = 2^dynamic_th: the threshold is α × the free bytes of the pool.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dynamic_th: Option<i8>,
    /// A fixed threshold on the pool bytes one PG or queue may hold.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub static_th: Option<ByteSize>,
    /// Lossless PGs: headroom; default computed from the port's link ([`headroom_bound`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub xoff: Option<ByteSize>,
    /// Lossless PGs: XON floor (default 0).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub xon: Option<ByteSize>,
    /// Lossless PGs: XON this far below the threshold (default two of the port's largest frames).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub xon_offset: Option<ByteSize>,
}

/// A PG's or queue's limit on the pool bytes it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Threshold {
    Static(u64),
    /// α = 2^k of the pool's free bytes (Choudhury and Hahne's dynamic threshold).
    Dynamic(i8),
}

impl Threshold {
    /// The most pool bytes one PG or queue may hold while `free` bytes of its pool are free.
    pub fn limit(self, free: u64) -> u64 {
        match self {
            Threshold::Static(bytes) => bytes,
            Threshold::Dynamic(k) if k >= 0 => free.saturating_mul(1 << k),
            Threshold::Dynamic(k) => free >> k.unsigned_abs(),
        }
    }

    /// The most it can be: with the pool empty.
    pub fn ceiling(self, pool: u64) -> u64 {
        self.limit(pool).min(pool)
    }
}

/// A pool as the switch keeps it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoolLimits {
    pub name: String,
    pub kind: PoolType,
    pub size: u64,
    /// Ingress pools: the shared headroom pool.
    pub headroom: Option<u64>,
}

/// A priority group's (ingress) or a queue's (egress) profile, resolved for one port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Profile {
    /// Index into [`PoolLayout::profiles`].
    pub name: u16,
    /// Index into [`PoolLayout::pools`].
    pub pool: u16,
    pub reserved: u64,
    pub threshold: Threshold,
    /// Ingress, lossless: headroom (0 elsewhere).
    pub headroom: u64,
    pub xon: u64,
    pub xon_offset: u64,
}

/// Every pool, and the profile of each (port, priority) at ingress and at egress.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoolLayout {
    pub pools: Vec<PoolLimits>,
    pub profiles: Vec<String>,
    pub pg: Vec<[Option<Profile>; 8]>,
    pub queue: Vec<[Option<Profile>; 8]>,
}

impl PoolLayout {
    /// The most bytes an egress queue of `priority` can hold on any port; `u64::MAX` when
    /// a port has no profile for it (only the descriptors bound it).
    pub fn queue_bytes_bound(&self, priority: usize) -> u64 {
        self.queue
            .iter()
            .map(|queues| {
                queues[priority]
                    .map_or(u64::MAX, |q| q.reserved + q.threshold.ceiling(self.pools[usize::from(q.pool)].size))
            })
            .max()
            .unwrap_or(0)
    }

    /// The most bytes a PG of `priority` can hold on any port: reserve, pool and headroom.
    pub fn pg_bytes_bound(&self, priority: usize) -> u64 {
        self.pg
            .iter()
            .filter_map(|pgs| pgs[priority])
            .map(|pg| pg.reserved + pg.threshold.ceiling(self.pools[usize::from(pg.pool)].size) + pg.headroom)
            .max()
            .unwrap_or(0)
    }

    /// The most bytes the lossless PGs can hold together: their reserves and headroom, and
    /// the ingress pools they draw on.
    pub fn lossless_bytes_bound(&self, lossless: u8) -> u64 {
        let mut pools = 0u64;
        let mut own = 0u64;
        for pg in &self.pg {
            for (p, profile) in pg.iter().enumerate() {
                let Some(profile) = profile.filter(|_| lossless & (1 << p) != 0) else { continue };
                pools |= 1 << profile.pool;
                let pool = &self.pools[usize::from(profile.pool)];
                let headroom = if pool.headroom.is_some() { 0 } else { profile.headroom };
                own += profile.reserved + headroom;
            }
        }
        let shared: u64 = (0..self.pools.len())
            .filter(|&i| pools & (1 << i) != 0)
            .map(|i| self.pools[i].size + self.pools[i].headroom.unwrap_or(0))
            .sum();
        own + shared
    }
}

#[derive(Debug)]
/// What resolving needs beyond the tables: the ports, the lossless set and the link terms of
/// the headroom.
pub struct LinkTerms<'a> {
    pub ports: &'a [PortConfig],
    pub lossless: u8,
    pub cable_delay: Duration,
    pub response_time: Duration,
}

/// The four tables of mode "pools", as `[buffer]` holds them.
#[derive(Clone, Copy, Debug)]
pub struct PoolTables<'a> {
    pub pools: &'a BTreeMap<String, PoolConfig>,
    pub profiles: &'a BTreeMap<String, ProfileConfig>,
    pub pg: &'a BTreeMap<String, String>,
    pub queue: &'a BTreeMap<String, String>,
}

impl PoolTables<'_> {
    /// Mode "pools": checks the tables and resolves them per port and priority; errors name the key.
    pub fn resolve(&self, link: &LinkTerms<'_>) -> Result<PoolLayout, ConfigError> {
        if self.pools.len() > 16 {
            return Err(error("buffer.pools", format!("{} pools; at most 16", self.pools.len())));
        }
        let pools: Vec<PoolLimits> = self
            .pools
            .iter()
            .map(|(name, pool)| {
                let key = format!("buffer.pools.{name}");
                if pool.size.bytes() == 0 {
                    return Err(error(format!("{key}.size"), "must be greater than zero"));
                }
                if pool.xoff.is_some() && pool.kind == PoolType::Egress {
                    return Err(error(format!("{key}.xoff"), "a shared headroom pool is for ingress pools only"));
                }
                Ok(PoolLimits {
                    name: name.clone(),
                    kind: pool.kind,
                    size: pool.size.bytes(),
                    headroom: pool.xoff.map(ByteSize::bytes),
                })
            })
            .collect::<Result<_, _>>()?;
        let profiles: Vec<String> = self.profiles.keys().cloned().collect();
        let ports = link.ports.len();
        let mut layout = PoolLayout { pools, profiles, pg: vec![[None; 8]; ports], queue: vec![[None; 8]; ports] };
        for (table, kind) in [(self.pg, PoolType::Ingress), (self.queue, PoolType::Egress)] {
            let name = if kind == PoolType::Ingress { "pg" } else { "queue" };
            for (entry, profile_name) in table {
                let key = format!("buffer.{name}.\"{entry}\"");
                let (port_mask, priorities) = parse_entry(entry, link.ports).map_err(|reason| error(&key, reason))?;
                let profile_index = self
                    .profiles
                    .keys()
                    .position(|p| p == profile_name)
                    .ok_or_else(|| error(&key, format!("no [buffer.profiles.{profile_name}]")))?;
                for port in (0..ports).filter(|&i| port_mask & (1 << i) != 0) {
                    for p in (0..8).filter(|&p| priorities & (1 << p) != 0) {
                        let profile = self.resolve_profile(&layout, profile_index, kind, port, p, link)?;
                        let slot = match kind {
                            PoolType::Ingress => &mut layout.pg[port][p],
                            PoolType::Egress => &mut layout.queue[port][p],
                        };
                        if slot.is_some() {
                            return Err(error(
                                &key,
                                format!(
                                    "port `{}` priority {p} is already mapped by another entry",
                                    link.ports[port].name
                                ),
                            ));
                        }
                        *slot = Some(profile);
                    }
                }
            }
        }
        for (port, config) in link.ports.iter().enumerate() {
            for p in (0..8).filter(|&p| link.lossless & (1 << p) != 0) {
                if layout.pg[port][p].is_none() {
                    return Err(error(
                        "buffer.pg",
                        format!(
                            "priority {p} is lossless but no entry maps port `{}` priority {p} to a profile",
                            config.name
                        ),
                    ));
                }
            }
        }
        Ok(layout)
    }

    fn resolve_profile(
        &self,
        layout: &PoolLayout,
        index: usize,
        kind: PoolType,
        port: usize,
        priority: usize,
        link: &LinkTerms<'_>,
    ) -> Result<Profile, ConfigError> {
        let (name, config) = self.profiles.iter().nth(index).expect("index from keys");
        let key = |field: &str| format!("buffer.profiles.{name}.{field}");
        let pool = self
            .pools
            .keys()
            .position(|p| p == &config.pool)
            .ok_or_else(|| error(key("pool"), format!("no [buffer.pools.{}]", config.pool)))?;
        let pool_limits = &layout.pools[pool];
        if pool_limits.kind != kind {
            let (table, wanted) = if kind == PoolType::Ingress { ("pg", "ingress") } else { ("queue", "egress") };
            return Err(error(
                key("pool"),
                format!("`{}` is not an {wanted} pool, and buffer.{table} maps this profile", config.pool),
            ));
        }
        // A profile picks its own threshold mode, as SAI lets it (SONiC's Broadcom templates put
        // a static_th lossy profile in a dynamic pool); the pool's `mode` is the usual one.
        let threshold = match (config.dynamic_th, config.static_th) {
            (Some(k), None) if DYNAMIC_TH_RANGE.contains(&k) => Threshold::Dynamic(k),
            (Some(k), None) => {
                return Err(error(
                    key("dynamic_th"),
                    format!(
                        "{k} is outside {}..={} (α = 2^dynamic_th)",
                        DYNAMIC_TH_RANGE.start(),
                        DYNAMIC_TH_RANGE.end()
                    ),
                ));
            }
            (None, Some(bytes)) => Threshold::Static(bytes.bytes()),
            (Some(_), Some(_)) => return Err(error(key("static_th"), "set dynamic_th or static_th, not both")),
            (None, None) => {
                let usual = match self.pools[&config.pool].mode {
                    PoolMode::Dynamic => "dynamic_th",
                    PoolMode::Static => "static_th",
                };
                return Err(error(key(usual), "missing: a profile sets dynamic_th (α = 2^dynamic_th) or static_th"));
            }
        };
        let lossless = kind == PoolType::Ingress && link.lossless & (1 << priority) != 0;
        let port_config = &link.ports[port];
        if !lossless {
            for (field, value) in [("xoff", config.xoff), ("xon", config.xon), ("xon_offset", config.xon_offset)] {
                if value.is_some() {
                    let why = if kind == PoolType::Egress {
                        "egress queues have no PFC thresholds".to_string()
                    } else {
                        format!(
                            "it is mapped to port `{}` priority {priority}, which is not lossless (pfc.lossless)",
                            port_config.name
                        )
                    };
                    return Err(error(key(field), why));
                }
            }
        }
        let headroom = match config.xoff {
            Some(bytes) => bytes.bytes(),
            None if lossless => {
                headroom_bound(port_config.speed, port_config.mtu, link.cable_delay, link.response_time)
            }
            None => 0,
        };
        let max_frame = u64::from(port_config.mtu) + L2_HEADER_MAX;
        Ok(Profile {
            name: index as u16,
            pool: pool as u16,
            reserved: config.size.bytes(),
            threshold,
            headroom,
            xon: config.xon.map_or(0, ByteSize::bytes),
            xon_offset: config.xon_offset.map_or(2 * max_frame, ByteSize::bytes),
        })
    }
}

/// `PORTS|PRIORITIES` → (port mask, priority mask): `p1,p2|3-4`, `*|0-7`, `p3|0-2,4-7`,
/// `speed=400Gbps|3` (every port of that speed: SONiC's buffer manager picks lossless
/// profiles by speed, and HPCC's switches set α by it).
fn parse_entry(entry: &str, ports: &[PortConfig]) -> Result<(u64, u8), String> {
    let (names, priorities) =
        entry.split_once('|').ok_or_else(|| "expected PORTS|PRIORITIES such as `p1|3` or `*|0-7`".to_string())?;
    let mut port_mask = 0u64;
    for name in names.split(',') {
        let name = name.trim();
        if name == "*" {
            port_mask |= (1u64 << ports.len()) - 1;
            continue;
        }
        if let Some(speed) = name.strip_prefix("speed=") {
            let speed: BitRate = speed.parse().map_err(|e| format!("`{name}`: {e}"))?;
            let matching = ports.iter().enumerate().filter(|(_, p)| p.speed == speed);
            port_mask |= matching.fold(0, |mask, (index, _)| mask | 1 << index);
            continue;
        }
        let index = ports.iter().position(|p| p.name == name).ok_or_else(|| format!("no port named `{name}`"))?;
        port_mask |= 1 << index;
    }
    let priority = |text: &str| {
        text.trim().parse::<u8>().ok().filter(|&p| p < 8).ok_or_else(|| format!("`{text}` is not a priority 0-7"))
    };
    let mut priority_mask = 0u8;
    for range in priorities.split(',') {
        let (low, high) = match range.split_once('-') {
            Some((low, high)) => (priority(low)?, priority(high)?),
            None => (priority(range)?, priority(range)?),
        };
        if low > high {
            return Err(format!("the range {low}-{high} is empty"));
        }
        priority_mask |= (low..=high).fold(0u8, |mask, p| mask | 1 << p);
    }
    Ok((port_mask, priority_mask))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dynamic_threshold_is_alpha_times_free() {
        assert_eq!(Threshold::Dynamic(0).limit(1000), 1000);
        assert_eq!(Threshold::Dynamic(2).limit(1000), 4000);
        assert_eq!(Threshold::Dynamic(-3).limit(1000), 125);
        assert_eq!(Threshold::Static(77).limit(1000), 77);
        assert_eq!(Threshold::Dynamic(3).ceiling(1000), 1000);
    }
}
