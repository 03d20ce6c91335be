//! FECN's rate points for `pfcswitch fecn show`, the metrics and the scenario results: per
//! monitored egress (port, priority), the advertised rate and what the last interval
//! measured (arrival rate, queue, f(q), load factor).

use crate::config::SwitchConfig;
use crate::fecn::FecnConfig;
use crate::switch::Switch;
use pfcswitch_wire::Pcp;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FecnReport {
    /// The `[fecn]` in force.
    pub settings: FecnConfig,
    pub points: Vec<RateReport>,
}

/// One rate point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RateReport {
    pub port: String,
    pub priority: u8,
    /// rᵢ, bit/s: what probes leaving now are lowered to.
    pub advertised_bps: f64,
    /// The last interval: Aᵢ (bit/s), qᵢ (bytes), f(qᵢ), ρᵢ; absent before the first.
    pub last: Option<RateInterval>,
    pub intervals: u64,
    pub probes_seen: u64,
    pub probes_marked: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct RateInterval {
    pub arrival_bps: f64,
    pub queue_bytes: u64,
    pub f: f64,
    pub load: f64,
}

impl FecnReport {
    /// `None` unless `[fecn]` monitors a priority.
    pub fn of(switch: &Switch, config: &SwitchConfig) -> Option<FecnReport> {
        let fecn = switch.fecn()?;
        let monitored = Pcp::ALL.into_iter().filter(|&p| fecn.monitors(p));
        let pairs = monitored.flat_map(|p| (0..config.ports.len()).map(move |port| (port, p)));
        let points = pairs
            .map(|(port, priority)| {
                let point = fecn.point(port, priority);
                RateReport {
                    port: config.ports[port].name.clone(),
                    priority: priority.value(),
                    advertised_bps: point.advertised_bps,
                    last: point.last.map(|m| RateInterval {
                        arrival_bps: m.arrival_bps,
                        queue_bytes: m.queue_bytes,
                        f: m.f,
                        load: m.load,
                    }),
                    intervals: point.intervals,
                    probes_seen: point.probes_seen,
                    probes_marked: point.probes_marked,
                }
            })
            .collect();
        Some(FecnReport { settings: fecn.config().clone(), points })
    }
}
