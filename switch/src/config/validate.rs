//! [`SwitchConfig::validate`]: the checks across sections, the first error with its key, and
//! the warnings about settings that work but can lose lossless frames.

use super::buffer::{BufferLimits, BufferMode, MIN_FRAME_CHARGE, MIN_LOSSY_FRAMES};
use super::pfc::{PfcConfig, headroom_bound};
use super::policy::PolicyKind;
use super::ports::{MAX_PORTS, Trust};
use super::switch_config::SwitchConfig;
use crate::config_error::{ConfigError, error};
use pfcswitch_link::units::{self, ByteSize};
use pfcswitch_wire::{MIN_FRAME_LEN, Pcp};
use std::collections::HashSet;
use std::fmt;
use std::time::Duration;

/// A setting that works but is probably not what the user wants.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigWarning {
    pub key: String,
    pub message: String,
}

impl fmt::Display for ConfigWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.key, self.message)
    }
}

impl SwitchConfig {
    /// Checks every value; returns the warnings, or the first error.
    pub fn validate(&self) -> Result<Vec<ConfigWarning>, ConfigError> {
        let mut warnings = Vec::new();
        self.validate_switch()?;
        self.validate_ports()?;
        self.validate_pfc(&mut warnings)?;
        self.buffer_limits()?;
        self.validate_lossless_capacity(&mut warnings)?;
        self.validate_capfc()?;
        self.validate_ofc()?;
        if self.frames() < 64 {
            return Err(error("buffer.frames", format!("{} is too few; at least 64", self.frames())));
        }
        self.egress_full()?;
        self.scheduler_weights()?;
        self.static_fdb_entries()?;
        self.fdb_default_route()?;
        if self.fdb.aging.is_zero() {
            return Err(error("fdb.aging", "must be greater than zero"));
        }
        self.validate_pfcwd()?;
        self.qcn.validate()?;
        self.fecn.validate()?;
        self.ecn.validate()?;
        self.int.validate(&self.ports)?;
        Ok(warnings)
    }

    fn validate_switch(&self) -> Result<(), ConfigError> {
        /// A second of line time at once is no shaping at all.
        const MAX_SHAPER_BURST: std::time::Duration = std::time::Duration::from_secs(1);
        let name = &self.switch.name;
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')) {
            return Err(error("switch.name", format!("`{name}` must be non-empty letters, digits, '-', '_' or '.'")));
        }
        if self.switch.shaper_burst > MAX_SHAPER_BURST {
            let burst = self.switch.shaper_burst;
            return Err(error(
                "switch.shaper_burst",
                format!("{burst:?} is more than {MAX_SHAPER_BURST:?} of line time"),
            ));
        }
        Ok(())
    }

    fn validate_ports(&self) -> Result<(), ConfigError> {
        if self.ports.is_empty() {
            return Err(error("port", "at least one [[port]] is needed"));
        }
        if self.ports.len() > MAX_PORTS {
            return Err(error("port", format!("{} ports configured; at most {MAX_PORTS}", self.ports.len())));
        }
        let mut names = HashSet::new();
        let mut ifaces = HashSet::new();
        for (index, port) in self.ports.iter().enumerate() {
            let key = |field: &str| format!("port[{index}].{field}");
            if port.name.is_empty() || !names.insert(port.name.as_str()) {
                return Err(error(key("name"), format!("`{}` is empty or used by another port", port.name)));
            }
            let iface = port.iface.as_deref().unwrap_or(&port.name);
            if iface.is_empty() || iface.len() > 15 || !ifaces.insert(iface) {
                return Err(error(
                    key("iface"),
                    format!("`{iface}` is empty, longer than 15 bytes or used by another port"),
                ));
            }
            if !(68..=9216).contains(&port.mtu) {
                return Err(error(key("mtu"), format!("{} is outside 68..=9216", port.mtu)));
            }
            if Pcp::new(port.default_priority).is_none() {
                return Err(error(key("default_priority"), format!("{} is not a priority 0-7", port.default_priority)));
            }
            if port.dscp_map.is_some() && port.trust != Trust::Dscp {
                return Err(error(key("dscp_map"), "only meaningful with trust = \"dscp\""));
            }
            self.dscp_map(index)?;
        }
        Ok(())
    }

    fn validate_pfcwd(&self) -> Result<(), ConfigError> {
        let wd = &self.pfcwd;
        for (key, value) in [
            ("detection_time", wd.detection_time),
            ("restoration_time", wd.restoration_time),
            ("pausing_peer_limit", wd.pausing_peer_limit),
        ] {
            if value < Duration::from_millis(1) {
                return Err(error(format!("pfcwd.{key}"), "must be at least 1ms"));
            }
        }
        Ok(())
    }

    /// CaPFC §III: XON < XOFF ≤ egress MAX, XON ≤ WARN < XOFF (WARN below XON would keep
    /// stale counters through persistent congestion), CUT in (0, 1].
    fn validate_capfc(&self) -> Result<(), ConfigError> {
        let policy = &self.policy;
        if policy.kind != PolicyKind::Capfc {
            return Ok(());
        }
        if !(policy.cut > 0.0 && policy.cut <= 1.0) {
            return Err(error("policy.cut", format!("{} is not in (0, 1]", policy.cut)));
        }
        let (xoff, xon, warn) = (policy.egress_xoff, policy.egress_xon, policy.egress_warn);
        if xon >= xoff {
            return Err(error("policy.egress_xon", format!("egress_xon ({xon}) must be below egress_xoff ({xoff})")));
        }
        if warn < xon || warn >= xoff {
            return Err(error(
                "policy.egress_warn",
                format!("egress_warn ({warn}) must be at least egress_xon ({xon}) and below egress_xoff ({xoff})"),
            ));
        }
        // What one egress queue can hold: its MAX, or its reserve plus its share of the pool.
        let (_, capacity) = self.lossless_queue_capacity(&self.buffer_limits()?);
        if xoff.bytes() > capacity {
            return Err(error(
                "policy.egress_xoff",
                format!("egress_xoff ({xoff}) is above the egress queues' capacity ({capacity} B)"),
            ));
        }
        Ok(())
    }

    /// OFC §III-C: X_ON < X^c_OFF = α·X_OFF < X_OFF, i.e. X_ON / X_OFF < α < 1.
    fn validate_ofc(&self) -> Result<(), ConfigError> {
        let policy = &self.policy;
        // Checked under every policy: `policy set ofc` keeps it.
        let longest = self.ports.iter().map(|port| port.mtu + 14).max().unwrap_or(0).max(MIN_FRAME_LEN as u32);
        if !(MIN_FRAME_LEN as u32..=longest).contains(&policy.ofc_frame_len) {
            return Err(error(
                "policy.ofc_frame_len",
                format!(
                    "{} is outside {MIN_FRAME_LEN}..={longest}: {MIN_FRAME_LEN} is the standard MAC Control frame \
                     (one flow each), longer is non-standard and at most a port's MTU + 14",
                    policy.ofc_frame_len
                ),
            ));
        }
        if policy.kind != PolicyKind::Ofc {
            return Ok(());
        }
        let xoff_c = self.ofc_xoff_c();
        let (xoff, xon) = (self.pfc.xoff.bytes(), self.pfc.xon.bytes());
        if !(policy.alpha < 1.0 && xoff_c > xon && xoff_c < xoff) {
            return Err(error(
                "policy.alpha",
                format!(
                    "{} gives X^c_OFF = {xoff_c} B; OFC needs pfc.xon ({xon} B) < alpha × pfc.xoff < pfc.xoff \
                     ({xoff} B), i.e. alpha in ({:.3}, 1)",
                    policy.alpha,
                    xon as f64 / xoff as f64
                ),
            ));
        }
        if !(1..=65_536).contains(&policy.flow_table_capacity) {
            return Err(error(
                "policy.flow_table_capacity",
                format!("{} is outside 1..=65536", policy.flow_table_capacity),
            ));
        }
        Ok(())
    }
    fn validate_pfc(&self, warnings: &mut Vec<ConfigWarning>) -> Result<(), ConfigError> {
        let pfc = &self.pfc;
        let mut seen = 0u8;
        for &priority in &pfc.lossless {
            let pcp =
                Pcp::new(priority).ok_or_else(|| error("pfc.lossless", format!("{priority} is not a priority 0-7")))?;
            if seen & pcp.mask() != 0 {
                return Err(error("pfc.lossless", format!("priority {priority} is listed twice")));
            }
            seen |= pcp.mask();
        }
        if pfc.xon >= pfc.xoff {
            return Err(error("pfc.xon", format!("xon ({}) must be below xoff ({})", pfc.xon, pfc.xoff)));
        }
        let max = ByteSize(self.pfc_max());
        if pfc.xoff >= max {
            return Err(error("pfc.xoff", format!("xoff ({}) must be below max ({max})", pfc.xoff)));
        }
        if pfc.quanta == 0 {
            return Err(error("pfc.quanta", "0 would send XOFF frames that pause nothing"));
        }
        if self.buffer.mode == BufferMode::Pools {
            return self.validate_pool_pfc(warnings);
        }
        if pfc.lossless.is_empty() {
            return Ok(());
        }
        let headroom = max.bytes() - pfc.xoff.bytes();
        for (index, port) in self.ports.iter().enumerate() {
            let bound = headroom_bound(port.speed, port.mtu, pfc.cable_delay, pfc.response_time);
            if headroom < bound {
                let problem = format!(
                    "headroom max − xoff = {headroom} B is below the {bound} B that port[{index}] `{}` needs \
                     at {} with MTU {}, cable delay {} and response time {} (speed × (2 × cable delay + \
                     response time) + 3 maximum frames + one PFC frame): lossless frames can be dropped",
                    port.name,
                    port.speed,
                    port.mtu,
                    units::format_duration(pfc.cable_delay),
                    units::format_duration(pfc.response_time),
                );
                self.lossless_at_risk(warnings, "pfc.max", problem)?;
            }
        }
        Ok(())
    }

    /// Mode "pools": XOFF, XON and headroom are the profiles'; a lossless PG's headroom below
    /// what its link needs is a way to lose lossless frames.
    fn validate_pool_pfc(&self, warnings: &mut Vec<ConfigWarning>) -> Result<(), ConfigError> {
        let defaults = PfcConfig::default();
        for (key, set) in [
            ("pfc.xoff", self.pfc.xoff != defaults.xoff),
            ("pfc.xon", self.pfc.xon != defaults.xon),
            ("pfc.max", self.pfc.max.is_some()),
        ] {
            if set {
                return Err(error(
                    key,
                    "buffer mode \"pools\" takes XOFF, XON and headroom from the profiles buffer.pg maps \
                     (xoff, xon, xon_offset, dynamic_th or static_th); remove it",
                ));
            }
        }
        if self.policy.kind == PolicyKind::Ofc {
            return Err(error(
                "buffer.mode",
                "\"pools\" does not apply to policy \"ofc\": OFC's X^c_OFF = alpha × X_OFF (§III-C) is a fixed \
                 threshold, and a dynamic X_OFF would break X_ON < X^c_OFF < X_OFF",
            ));
        }
        let BufferLimits::Pools(layout) = self.buffer_limits()? else { unreachable!("mode is pools") };
        let lossless = self.lossless_mask();
        for (index, port) in self.ports.iter().enumerate() {
            let bound = headroom_bound(port.speed, port.mtu, self.pfc.cable_delay, self.pfc.response_time);
            for p in (0..8).filter(|p| lossless & (1 << p) != 0) {
                let Some(profile) = layout.pg[index][p] else { continue };
                if profile.headroom < bound {
                    let name = &layout.profiles[usize::from(profile.name)];
                    let problem = format!(
                        "headroom xoff = {} B is below the {bound} B that port[{index}] `{}` priority {p} needs at \
                         {} with MTU {}, cable delay {} and response time {}; leave xoff out to have it computed \
                         from the link",
                        profile.headroom,
                        port.name,
                        port.speed,
                        port.mtu,
                        units::format_duration(self.pfc.cable_delay),
                        units::format_duration(self.pfc.response_time),
                    );
                    self.lossless_at_risk(warnings, &format!("buffer.profiles.{name}.xoff"), problem)?;
                }
            }
        }
        let unbounded = self.unbounded_egress_mask();
        for (port, queues) in layout.queue.iter().enumerate() {
            let unmapped: Vec<usize> = (0..8).filter(|&p| unbounded & (1 << p) == 0 && queues[p].is_none()).collect();
            if !unmapped.is_empty() {
                warnings.push(ConfigWarning {
                    key: "buffer.queue".into(),
                    message: format!(
                        "no entry maps port `{}` priorities {unmapped:?} to a profile: only the descriptors \
                         (buffer.frames) bound those queues (`\"*|0-7\" = \"PROFILE\"` maps every queue)",
                        self.ports[port].name
                    ),
                });
            }
        }
        for pool in layout.pools.iter() {
            let Some(size) = pool.headroom else { continue };
            let sum: u64 = layout
                .pg
                .iter()
                .flatten()
                .flatten()
                .filter(|pg| layout.pools[usize::from(pg.pool)].name == pool.name)
                .map(|pg| pg.headroom)
                .sum();
            if size < sum {
                warnings.push(ConfigWarning {
                    key: format!("buffer.pools.{}.xoff", pool.name),
                    message: format!(
                        "the shared headroom pool ({size} B) is below the {sum} B of headroom its PGs have: \
                         oversubscribed, it assumes not every PG needs its headroom at once; a lossless frame \
                         that finds it full is dropped at ingress (ingress_max)"
                    ),
                });
            }
        }
        Ok(())
    }

    /// A way lossless frames can be lost: refused under `pfc`, whose promise it breaks, and a
    /// warning under the other policies.
    fn lossless_at_risk(
        &self,
        warnings: &mut Vec<ConfigWarning>,
        key: &str,
        problem: String,
    ) -> Result<(), ConfigError> {
        if self.policy.kind.keeps_lossless() {
            return Err(error(
                key,
                format!(
                    "{problem}; policy \"{}\" keeps lossless priorities lossless and refuses this",
                    self.policy.kind.name()
                ),
            ));
        }
        warnings.push(ConfigWarning { key: key.into(), message: problem });
        Ok(())
    }

    /// The most bytes one egress queue of a lossless priority holds, and the key that sets it.
    fn lossless_queue_capacity(&self, limits: &BufferLimits) -> (&'static str, u64) {
        match limits {
            BufferLimits::Dedicated { egress_max } => ("buffer.egress_max", *egress_max),
            BufferLimits::Shared { reserve, queue_cap, .. } => ("buffer.queue_cap", reserve + queue_cap),
            BufferLimits::Pools(layout) => {
                let lossless = self.lossless_mask();
                let capacity = (0..8).filter(|p| lossless & (1 << p) != 0).map(|p| layout.queue_bytes_bound(p)).min();
                ("buffer.queue", capacity.unwrap_or(0))
            }
        }
    }

    /// The most bytes one lossless (port, priority) may hold at ingress: `[pfc]`'s MAX, or
    /// in mode "pools" the largest reserve + pool share + headroom of a lossless PG.
    fn lossless_pg_bound(&self) -> u64 {
        match self.buffer_limits() {
            Ok(BufferLimits::Pools(layout)) => {
                let lossless = self.lossless_mask();
                (0..8).filter(|p| lossless & (1 << p) != 0).map(|p| layout.pg_bytes_bound(p)).max().unwrap_or(0)
            }
            _ => self.pfc_max(),
        }
    }

    /// Where else than at a headroom below the bound a lossless frame can be lost under the
    /// configured policy: descriptors, egress queues and the shared pool too small for what
    /// the lossless ingress limits admit.
    fn validate_lossless_capacity(&self, warnings: &mut Vec<ConfigWarning>) -> Result<(), ConfigError> {
        let lossless = self.lossless_mask().count_ones() as u64;
        let kind = self.policy.kind;
        if lossless == 0 {
            return Ok(());
        }
        if kind == PolicyKind::None {
            warnings.push(ConfigWarning {
                key: "policy.kind".into(),
                message: format!(
                    "\"none\" sends no PFC: lossless priorities {:?} are dropped like lossy ones when queues fill",
                    self.pfc.lossless
                ),
            });
            return Ok(());
        }
        let (ports, max) = (self.ports.len() as u64, self.lossless_pg_bound());
        let frames_needed = self.lossless_frames_bound();
        let lossy_room = if kind.keeps_lossless() { MIN_LOSSY_FRAMES } else { 0 };
        if u64::from(self.frames()) < frames_needed + lossy_room {
            let lossy = if lossy_room > 0 { format!(" + {lossy_room} for lossy traffic") } else { String::new() };
            self.lossless_at_risk(
                warnings,
                "buffer.frames",
                format!(
                    "{} frames cannot hold what the lossless ingress limits admit: {ports} ports × {lossless} \
                     lossless priorities × ⌊pfc.max {max} B / {MIN_FRAME_CHARGE} B⌋ = {frames_needed} frames{lossy}; \
                     raise buffer.frames or lower pfc.max",
                    self.frames()
                ),
            )?;
        }
        if kind.lossless_egress_unbounded() || kind == PolicyKind::PfcWstop {
            // Lossless queues are unbounded (pfc, ofc) or stall the pipeline instead of dropping.
            return Ok(());
        }
        let feeders = ports.saturating_sub(1);
        let limits = self.buffer_limits()?;
        let (key, capacity) = self.lossless_queue_capacity(&limits);
        if feeders * max > capacity {
            warnings.push(ConfigWarning {
                key: key.into(),
                message: format!(
                    "under policy \"{}\" a full egress queue drops lossless frames: {feeders} ports × pfc.max \
                     {max} B = {} B can be admitted for one egress queue, which holds {capacity} B; use policy \
                     \"pfc\" (lossless frames are never dropped at egress) or make the queues hold {} B",
                    kind.name(),
                    feeders * max,
                    feeders * max,
                ),
            });
        }
        if let BufferLimits::Shared { pool, .. } = limits {
            let need = ports * lossless * max;
            if need > pool {
                warnings.push(ConfigWarning {
                    key: "buffer.pool".into(),
                    message: format!(
                        "under policy \"{}\" lossless frames share the pool: {ports} ports × {lossless} lossless \
                         priorities × pfc.max {max} B = {need} B can be admitted, above buffer.pool {pool} B",
                        kind.name()
                    ),
                });
            }
        }
        Ok(())
    }
}
