//! QCN's congestion points for `pfcswitch qcn show`, the metrics and the scenario results:
//! per monitored (port, priority), Q, Qold, the last sample's feedback, the sampling state
//! and the counters.

use crate::config::SwitchConfig;
use crate::qcn::{CpCounters, QcnConfig};
use crate::switch::Switch;
use pfcswitch_wire::Pcp;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QcnReport {
    /// The `[qcn]` in force.
    pub settings: QcnConfig,
    pub points: Vec<CpReport>,
}

/// One congestion point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CpReport {
    pub port: String,
    pub priority: u8,
    pub cpid: String,
    /// The monitored queue now: the egress queue (output) or the ingress share (input).
    pub q_bytes: u64,
    /// Q at the last sample.
    pub q_old_bytes: u64,
    /// The last sample's Qoff, Qδ (units of 64 octets), Fb and QntzFb.
    pub last: Option<CpSample>,
    pub samples: u64,
    pub bytes_until_sample: u64,
    pub counters: CpCounters,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpSample {
    pub q_offset: i16,
    pub q_delta: i16,
    pub fb: i32,
    pub quantized: u8,
}

impl QcnReport {
    /// `None` unless `[qcn]` monitors a priority.
    pub fn of(switch: &Switch, config: &SwitchConfig) -> Option<QcnReport> {
        let qcn = switch.qcn()?;
        let monitored = Pcp::ALL.into_iter().filter(|&p| qcn.monitors(p));
        let pairs = monitored.flat_map(|p| (0..config.ports.len()).map(move |port| (port, p)));
        let points = pairs
            .map(|(port, priority)| {
                let cp = qcn.congestion_point(port, priority);
                let q = switch.qcn_queue_bytes(port, priority);
                CpReport {
                    port: config.ports[port].name.clone(),
                    priority: priority.value(),
                    cpid: format!("{:016x}", crate::qcn::cpid(switch.port_mac(port), priority, qcn.placement())),
                    q_bytes: q,
                    q_old_bytes: cp.q_old(),
                    last: cp.last().map(|f| CpSample {
                        q_offset: f.q_offset,
                        q_delta: f.q_delta,
                        fb: f.fb,
                        quantized: f.quantized,
                    }),
                    samples: cp.samples(),
                    bytes_until_sample: cp.until_sample(),
                    counters: *qcn.counters(port, priority),
                }
            })
            .collect();
        Some(QcnReport { settings: qcn.config().clone(), points })
    }
}
