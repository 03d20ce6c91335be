//! The settings the switch is built from, derived from a [`SwitchConfig`] with the defaults
//! applied: buffer limits, descriptor budgets, egress behaviour, DSCP and scheduler tables,
//! static FDB entries and priority or port masks. Those that can be wrong return the error
//! [`SwitchConfig::validate`] reports.

use super::buffer::{BufferLimits, BufferMode, DEFAULT_LOSSY_FRAMES, MIN_FRAME_CHARGE};
use super::fdb::StaticPorts;
use super::pfc::{DEFAULT_PFC_MAX, headroom_bound};
use super::pipeline::EgressFull;
use super::policy::PolicyKind;
use super::pools::LinkTerms;
use super::ports::PortConfig;
use super::switch_config::SwitchConfig;
use crate::buffer::StaticPg;
use crate::config_error::{ConfigError, error};
use pfcswitch_link::units::ByteSize;
use pfcswitch_wire::{EthernetAddress, Pcp};
use std::sync::Arc;

impl SwitchConfig {
    /// OFC's congested pause threshold X^c_OFF in bytes.
    pub fn ofc_xoff_c(&self) -> u64 {
        (self.policy.alpha * self.pfc.xoff.bytes() as f64).round() as u64
    }

    /// Priorities whose egress queues are OFC's nested hierarchy.
    pub fn nested_egress_mask(&self) -> u8 {
        if self.policy.kind == PolicyKind::Ofc { self.lossless_mask() } else { 0 }
    }

    /// Descriptors the lossless ingress limits can need: every (port, lossless priority) at
    /// MAX in frames charged the minimum; in mode "pools", the lossless PGs' reserves and
    /// headroom and the ingress pools they share.
    pub fn lossless_frames_bound(&self) -> u64 {
        if let Ok(BufferLimits::Pools(layout)) = self.buffer_limits() {
            return layout.lossless_bytes_bound(self.lossless_mask()) / MIN_FRAME_CHARGE;
        }
        let lossless = u64::from(self.lossless_mask().count_ones());
        self.ports.len() as u64 * lossless * (self.pfc_max() / MIN_FRAME_CHARGE)
    }

    /// `pfc.max`, or its default: the CaPFC paper's 60KB, raised to XOFF plus the headroom
    /// the most demanding port's link needs ([`headroom_bound`]) so that a config without
    /// `[pfc]` works at any speed.
    pub fn pfc_max(&self) -> u64 {
        self.pfc.max.map_or_else(
            || {
                let pfc = &self.pfc;
                let needed = self
                    .ports
                    .iter()
                    .map(|port| headroom_bound(port.speed, port.mtu, pfc.cable_delay, pfc.response_time))
                    .max()
                    .unwrap_or(0);
                DEFAULT_PFC_MAX.max(pfc.xoff.bytes() + needed)
            },
            ByteSize::bytes,
        )
    }

    /// `[pfc]`'s ingress thresholds (modes other than "pools").
    pub fn static_pg(&self) -> StaticPg {
        StaticPg { xoff: self.pfc.xoff.bytes(), xon: self.pfc.xon.bytes(), max: self.pfc_max() }
    }

    /// `buffer.frames`, or its default.
    pub fn frames(&self) -> u32 {
        self.buffer
            .frames
            .unwrap_or_else(|| u32::try_from(self.lossless_frames_bound() + DEFAULT_LOSSY_FRAMES).unwrap_or(u32::MAX))
    }

    /// The most frames lossy priorities may hold: under `pfc` what the lossless limits leave.
    pub fn lossy_frame_limit(&self) -> u32 {
        if !self.policy.kind.keeps_lossless() {
            return self.frames();
        }
        let bound = u32::try_from(self.lossless_frames_bound()).unwrap_or(u32::MAX);
        self.frames().saturating_sub(bound)
    }

    /// Priorities whose egress queues only the ingress accounting bounds (`pfc`'s lossless ones).
    pub fn unbounded_egress_mask(&self) -> u8 {
        if self.policy.kind.lossless_egress_unbounded() { self.lossless_mask() } else { 0 }
    }

    /// The buffer limits with the mode's defaults; keys of another mode are errors.
    pub fn buffer_limits(&self) -> Result<BufferLimits, ConfigError> {
        let b = &self.buffer;
        let bytes = |value: Option<ByteSize>, default: u64| value.map_or(default, ByteSize::bytes);
        if b.mode != BufferMode::Pools {
            for (key, empty) in [
                ("pools", b.pools.is_empty()),
                ("profiles", b.profiles.is_empty()),
                ("pg", b.pg.is_empty()),
                ("queue", b.queue.is_empty()),
            ] {
                if !empty {
                    return Err(error(format!("buffer.{key}"), "only applies to mode = \"pools\""));
                }
            }
        }
        match b.mode {
            BufferMode::Pools => {
                for (key, value) in [
                    ("egress_max", b.egress_max),
                    ("reserve", b.reserve),
                    ("pool", b.pool),
                    ("queue_cap", b.queue_cap),
                    ("port_cap", b.port_cap),
                ] {
                    if value.is_some() {
                        return Err(error(
                            format!("buffer.{key}"),
                            "does not apply to mode = \"pools\", whose limits are its profiles",
                        ));
                    }
                }
                let link = LinkTerms {
                    ports: &self.ports,
                    lossless: self.lossless_mask(),
                    cable_delay: self.pfc.cable_delay,
                    response_time: self.pfc.response_time,
                };
                let layout = b.resolve_pools(&link)?;
                Ok(BufferLimits::Pools(Arc::new(layout)))
            }
            BufferMode::Dedicated => {
                for (key, value) in
                    [("reserve", b.reserve), ("pool", b.pool), ("queue_cap", b.queue_cap), ("port_cap", b.port_cap)]
                {
                    if value.is_some() {
                        return Err(error(format!("buffer.{key}"), "only applies to mode = \"shared\""));
                    }
                }
                let egress_max = bytes(b.egress_max, 60_000);
                if egress_max == 0 {
                    return Err(error("buffer.egress_max", "must be greater than zero"));
                }
                Ok(BufferLimits::Dedicated { egress_max })
            }
            BufferMode::Shared => {
                if b.egress_max.is_some() {
                    return Err(error("buffer.egress_max", "only applies to mode = \"dedicated\"; use queue_cap"));
                }
                let (reserve, pool) = (bytes(b.reserve, 8_000), bytes(b.pool, 350_000));
                let (queue_cap, port_cap) = (bytes(b.queue_cap, 80_000), bytes(b.port_cap, 100_000));
                if queue_cap > port_cap || port_cap > pool {
                    return Err(error("buffer.queue_cap", "need queue_cap ≤ port_cap ≤ pool"));
                }
                Ok(BufferLimits::Shared { reserve, pool, queue_cap, port_cap })
            }
        }
    }

    /// What a full egress queue does, with the policy's default.
    pub fn egress_full(&self) -> Result<EgressFull, ConfigError> {
        match (self.policy.kind, self.pipeline.egress_full) {
            (PolicyKind::PfcWstop, Some(EgressFull::Drop)) => {
                Err(error("pipeline.egress_full", "\"drop\" contradicts policy kind \"pfc-wstop\" (which means stop)"))
            }
            (PolicyKind::PfcWstop, _) => Ok(EgressFull::Stop),
            (PolicyKind::Capfc, Some(EgressFull::Stop)) => Err(error(
                "pipeline.egress_full",
                "\"stop\" contradicts policy kind \"capfc\" (§II-D: a full egress queue drops; CaPFC never stalls the pipeline)",
            )),
            (_, Some(choice)) => Ok(choice),
            (_, None) => Ok(EgressFull::Drop),
        }
    }

    /// The port's DSCP → priority table (class selector for unlisted values).
    pub fn dscp_map(&self, port: usize) -> Result<[Pcp; 64], ConfigError> {
        let mut map: [Pcp; 64] = std::array::from_fn(|dscp| Pcp::from_low_bits((dscp >> 3) as u8));
        let Some(entries) = &self.ports[port].dscp_map else { return Ok(map) };
        let key = format!("port[{port}].dscp_map");
        let mut assigned = [false; 64];
        for (priority, dscps) in entries {
            let pcp = priority
                .parse::<u8>()
                .ok()
                .and_then(Pcp::new)
                .ok_or_else(|| error(&key, format!("`{priority}` is not a priority 0-7")))?;
            for &dscp in dscps {
                let slot = usize::from(dscp);
                if slot >= 64 || assigned[slot] {
                    return Err(error(&key, format!("DSCP {dscp} is out of range 0-63 or mapped twice")));
                }
                assigned[slot] = true;
                map[slot] = pcp;
            }
        }
        Ok(map)
    }

    /// WDRR weight per priority, 0 for strict priorities.
    pub fn scheduler_weights(&self) -> Result<[u32; 8], ConfigError> {
        let mut weights = [1u32; 8];
        for &priority in &self.scheduler.strict {
            let pcp = Pcp::new(priority)
                .ok_or_else(|| error("scheduler.strict", format!("{priority} is not a priority 0-7")))?;
            if weights[pcp.index()] == 0 {
                return Err(error("scheduler.strict", format!("priority {priority} is listed twice")));
            }
            weights[pcp.index()] = 0;
        }
        for (priority, &weight) in &self.scheduler.weights {
            let key = format!("scheduler.weights.{priority}");
            let pcp =
                priority.parse::<u8>().ok().and_then(Pcp::new).ok_or_else(|| error(&key, "not a priority 0-7"))?;
            if weights[pcp.index()] == 0 {
                return Err(error(&key, "this priority is strict; a weight would be ignored"));
            }
            if !(1..=1000).contains(&weight) {
                return Err(error(&key, format!("weight {weight} is outside 1..=1000")));
            }
            weights[pcp.index()] = weight;
        }
        Ok(weights)
    }

    /// Static FDB entries resolved to (address, port set: bit i for port i).
    pub fn static_fdb_entries(&self) -> Result<Vec<(EthernetAddress, u64)>, ConfigError> {
        self.fdb
            .static_entries
            .iter()
            .enumerate()
            .map(|(index, entry)| {
                let key = format!("fdb.static[{index}]");
                let mac: EthernetAddress =
                    entry.mac.parse().map_err(|e| error(format!("{key}.mac"), format!("{e}")))?;
                if !mac.is_unicast() {
                    return Err(error(format!("{key}.mac"), format!("{mac} is not a unicast address")));
                }
                Ok((mac, self.port_group(&format!("{key}.port"), &entry.port)?))
            })
            .collect()
    }

    /// `fdb.default_route` resolved to a port set (0: none, unknown unicast floods).
    pub fn fdb_default_route(&self) -> Result<u64, ConfigError> {
        self.fdb.default_route.as_ref().map_or(Ok(0), |ports| self.port_group("fdb.default_route", ports))
    }

    /// A port or an ECMP group as a port set, each name once.
    fn port_group(&self, key: &str, ports: &StaticPorts) -> Result<u64, ConfigError> {
        let names = ports.names();
        if names.is_empty() {
            return Err(error(key, "an empty list; name one port or more"));
        }
        names.iter().try_fold(0u64, |mask, name| {
            let port = (self.ports.iter().position(|p| &p.name == name))
                .ok_or_else(|| error(key, format!("no port named `{name}`")))?;
            if mask & (1 << port) != 0 {
                return Err(error(key, format!("`{name}` is listed twice")));
            }
            Ok(mask | 1 << port)
        })
    }

    /// The ports for which `has` holds (bit i: port i).
    pub fn port_mask(&self, has: impl Fn(&PortConfig) -> bool) -> u64 {
        self.ports.iter().enumerate().filter(|(_, port)| has(port)).fold(0, |mask, (index, _)| mask | 1 << index)
    }

    /// Lossless priorities as a class-enable style bitmask.
    pub fn lossless_mask(&self) -> u8 {
        self.pfc.lossless.iter().filter_map(|&p| Pcp::new(p)).fold(0, |mask, p| mask | p.mask())
    }
}
