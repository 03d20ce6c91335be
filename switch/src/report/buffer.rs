//! The buffer as a whole, as `pfcswitch buffer show` prints it: pools with their size, use
//! and watermark (SONiC's `show buffer_pool watermark`), and per port the priority groups
//! and queues with their profile, use, the threshold in force now and watermarks (`show
//! priority-group watermark`, `show queue watermark`), and the headroom each port's link needs
//! with its terms.

use crate::buffer::Buffers;
use crate::config::{BufferLimits, PoolMode, PoolType, SwitchConfig, Threshold, headroom_terms};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BufferReport {
    /// `dedicated`, `shared` or `pools`.
    pub mode: String,
    pub pools: Vec<PoolReport>,
    /// Ingress priority groups with a limit: lossless ones, and in mode "pools" every mapped one.
    pub priority_groups: Vec<PgReport>,
    /// Every egress queue.
    pub queues: Vec<BufferQueueReport>,
    /// Per port, the headroom its link needs and the terms it is computed from.
    #[serde(default)]
    pub headroom: Vec<HeadroomReport>,
}

/// `speed × (2 × cable_delay + response_time)` in flight, plus three maximum frames and a PFC
/// frame on the wire (docs/buffers.md, "Headroom from the link").
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HeadroomReport {
    pub port: String,
    pub speed_bps: u64,
    pub mtu: u32,
    pub cable_delay_ns: u64,
    pub response_time_ns: u64,
    pub flight_bytes: u64,
    pub frames_bytes: u64,
    pub headroom_bytes: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PoolReport {
    pub name: String,
    /// `ingress` or `egress`.
    pub kind: String,
    /// `dynamic` or `static` (mode "pools"); `static` for the shared mode's pool.
    pub mode: String,
    pub size_bytes: u64,
    pub used_bytes: u64,
    pub watermark_bytes: u64,
    /// An ingress pool's shared headroom pool, with its use and watermark.
    pub headroom_size_bytes: Option<u64>,
    pub headroom_used_bytes: u64,
    pub headroom_watermark_bytes: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PgReport {
    pub port: String,
    pub priority: u8,
    /// The profile's name; `[pfc]` for the static thresholds of the other modes.
    pub profile: String,
    pub lossless: bool,
    pub used_bytes: u64,
    pub watermark_bytes: u64,
    /// Of `used_bytes`: in the reserve, in the pool and in headroom (with `[pfc]`'s static
    /// thresholds: below XOFF counts as reserve, above it as headroom).
    pub reserved_bytes: u64,
    pub shared_bytes: u64,
    pub headroom_bytes: u64,
    pub headroom_watermark_bytes: u64,
    pub headroom_size_bytes: u64,
    /// `dynamic_th` (log2 α), when the threshold is dynamic.
    pub dynamic_th: Option<i8>,
    /// XOFF and XON points in force now, on `used_bytes` (lossless PGs).
    pub xoff_threshold_bytes: Option<u64>,
    pub xon_threshold_bytes: Option<u64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BufferQueueReport {
    pub port: String,
    pub priority: u8,
    /// The profile's name; the mode's name in the other modes; `unbounded` for lossless
    /// queues under `pfc`/`ofc`.
    pub profile: String,
    pub used_bytes: u64,
    pub watermark_bytes: u64,
    /// The most the queue may hold now; `None` when only its feeders' ingress bounds it.
    pub limit_bytes: Option<u64>,
}

impl BufferReport {
    pub fn of(buffers: &Buffers, config: &SwitchConfig) -> BufferReport {
        let lossless = config.lossless_mask();
        let port_name = |port: usize| config.ports[port].name.clone();
        let mut report = BufferReport {
            mode: config.buffer.mode_name().to_string(),
            pools: Vec::new(),
            priority_groups: Vec::new(),
            queues: Vec::new(),
            headroom: config
                .ports
                .iter()
                .map(|port| {
                    let (cable, response) = (config.pfc.cable_delay, config.pfc.response_time);
                    let (flight, frames) = headroom_terms(port.speed, port.mtu, cable, response);
                    HeadroomReport {
                        port: port.name.clone(),
                        speed_bps: port.speed.bps(),
                        mtu: port.mtu,
                        cable_delay_ns: u64::try_from(cable.as_nanos()).unwrap_or(u64::MAX),
                        response_time_ns: u64::try_from(response.as_nanos()).unwrap_or(u64::MAX),
                        flight_bytes: flight,
                        frames_bytes: frames,
                        headroom_bytes: flight.saturating_add(frames),
                    }
                })
                .collect(),
        };
        match buffers.limits() {
            BufferLimits::Pools(layout) => {
                let book = buffers.pools().expect("mode pools keeps a pool book");
                for (index, pool) in layout.pools.iter().enumerate() {
                    let used = book.pool(index);
                    report.pools.push(PoolReport {
                        name: pool.name.clone(),
                        kind: if pool.kind == PoolType::Ingress { "ingress" } else { "egress" }.into(),
                        mode: match config.buffer.pools[&pool.name].mode {
                            PoolMode::Dynamic => "dynamic",
                            PoolMode::Static => "static",
                        }
                        .into(),
                        size_bytes: pool.size,
                        used_bytes: used.shared.bytes,
                        watermark_bytes: used.shared.high_water,
                        headroom_size_bytes: pool.headroom,
                        headroom_used_bytes: used.headroom.bytes,
                        headroom_watermark_bytes: used.headroom.high_water,
                    });
                }
                for (port, pgs) in layout.pg.iter().enumerate() {
                    for (p, profile) in pgs.iter().enumerate() {
                        let Some(profile) = profile else { continue };
                        let (held, level) = (book.pg(port, p), buffers.ingress(port, p));
                        let is_lossless = lossless & (1 << p) != 0;
                        let thresholds = buffers.ingress_level(port, p);
                        report.priority_groups.push(PgReport {
                            port: port_name(port),
                            priority: p as u8,
                            profile: layout.profiles[usize::from(profile.name)].clone(),
                            lossless: is_lossless,
                            used_bytes: level.bytes,
                            watermark_bytes: level.high_water,
                            reserved_bytes: held.reserved,
                            shared_bytes: held.shared,
                            headroom_bytes: held.headroom.bytes,
                            headroom_watermark_bytes: held.headroom.high_water,
                            headroom_size_bytes: profile.headroom,
                            dynamic_th: match profile.threshold {
                                Threshold::Dynamic(k) => Some(k),
                                Threshold::Static(_) => None,
                            },
                            xoff_threshold_bytes: is_lossless.then_some(thresholds.xoff),
                            xon_threshold_bytes: is_lossless.then_some(thresholds.xon),
                        });
                    }
                }
            }
            limits => {
                if let BufferLimits::Shared { pool, .. } = limits {
                    report.pools.push(PoolReport {
                        name: "shared".into(),
                        kind: "egress".into(),
                        mode: "static".into(),
                        size_bytes: *pool,
                        used_bytes: buffers.pool_used(),
                        watermark_bytes: buffers.pool_high_water(),
                        headroom_size_bytes: None,
                        headroom_used_bytes: 0,
                        headroom_watermark_bytes: 0,
                    });
                }
                let pg = buffers.static_pg();
                for port in 0..config.ports.len() {
                    for p in (0..8).filter(|p| lossless & (1 << p) != 0) {
                        let level = buffers.ingress(port, p);
                        report.priority_groups.push(PgReport {
                            port: port_name(port),
                            priority: p as u8,
                            profile: "[pfc]".into(),
                            lossless: true,
                            used_bytes: level.bytes,
                            watermark_bytes: level.high_water,
                            reserved_bytes: level.bytes.min(pg.xoff),
                            shared_bytes: 0,
                            headroom_bytes: level.bytes.saturating_sub(pg.xoff),
                            headroom_watermark_bytes: level.high_water.saturating_sub(pg.xoff),
                            headroom_size_bytes: pg.max - pg.xoff,
                            dynamic_th: None,
                            xoff_threshold_bytes: Some(pg.xoff),
                            xon_threshold_bytes: Some(pg.xon),
                        });
                    }
                }
            }
        }
        for port in 0..config.ports.len() {
            for p in 0..8 {
                let level = buffers.egress(port, p);
                let limit = buffers.queue_limit(port, p);
                let profile = match buffers.limits() {
                    _ if buffers.is_unbounded(p) => "unbounded".to_string(),
                    BufferLimits::Pools(layout) => layout.queue[port][p]
                        .map_or_else(|| "none".to_string(), |q| layout.profiles[usize::from(q.name)].clone()),
                    _ => config.buffer.mode_name().to_string(),
                };
                report.queues.push(BufferQueueReport {
                    port: port_name(port),
                    priority: p as u8,
                    profile,
                    used_bytes: level.bytes,
                    watermark_bytes: level.high_water,
                    limit_bytes: limit,
                });
            }
        }
        report
    }
}
