//! OFC's state for `pfcswitch ofc show`, the metrics and the scenario results: the three
//! tables of §III per port and lossless priority, the nested queues and the counters.

use crate::config::SwitchConfig;
use crate::policy::{OfcCounters, OfcTable};
use crate::switch::Switch;
use pfcswitch_link::time::Instant;
use pfcswitch_wire::Pcp;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OfcReport {
    pub xoff_bytes: u64,
    /// X^c_OFF = alpha × X_OFF.
    pub xoff_c_bytes: u64,
    pub xon_bytes: u64,
    pub flow_table_capacity: u32,
    pub queues: Vec<OfcQueueReport>,
}

/// A flow queued at an egress: `flow_in_port_tab`'s entry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OfcQueuedFlow {
    /// `source>destination` MAC addresses.
    pub flow: String,
    pub frames: u32,
    /// The port its frames came in on.
    pub ingress: String,
}

/// A flow the peer paused: `congested_flow_tab`'s entry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OfcCongestedFlow {
    pub flow: String,
    /// Resumed, held until the current drain of the backup queue ends.
    pub resume_pending: bool,
}

/// One (port, lossless priority): its egress side (what the peer paused, what is queued,
/// the nested queues) and its ingress side (what it paused upstream).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OfcQueueReport {
    pub port: String,
    pub priority: u8,
    pub flow_in_port: Vec<OfcQueuedFlow>,
    /// Frames queued whose flow a full `flow_in_port_tab` could not record.
    pub untracked_frames: u32,
    pub congested: Vec<OfcCongestedFlow>,
    /// Until the congested flows resume without a refresh.
    pub congested_for_seconds: Option<f64>,
    /// Flows PAUSE frames named since the egress queue last emptied (local congestion).
    pub named: Vec<String>,
    /// `pause_frame_tab`: the flows this port pauses upstream.
    pub pause_frame: Vec<String>,
    /// The port pauses every flow of the priority upstream (X_OFF or a table fallback).
    pub coarse: bool,
    /// PAUSE frames this port sent naming each flow since the counters were reset.
    #[serde(default)]
    pub pauses_naming: BTreeMap<String, u64>,
    /// Frames parked in the paused queue, whether a backup is draining before the normal
    /// queue, and the rotations so far.
    pub parked_frames: usize,
    pub draining: bool,
    pub rotations: u64,
    /// Table II: bytes each table holds, by table name.
    pub table_bytes: BTreeMap<String, u64>,
    pub counters: OfcCounters,
}

impl OfcReport {
    /// `None` unless the policy is OFC.
    pub fn of(switch: &Switch, config: &SwitchConfig, now: Instant) -> Option<OfcReport> {
        let ofc = switch.ofc()?;
        let names: Vec<&str> = config.ports.iter().map(|p| p.name.as_str()).collect();
        let lossless = Pcp::ALL.into_iter().filter(|p| config.lossless_mask() & p.mask() != 0);
        let pairs = lossless.flat_map(|p| (0..names.len()).map(move |port| (port, p)));
        let queues = pairs
            .map(|(port, priority)| {
                let tables = ofc.tables(port, priority).expect("a lossless priority");
                let nested = switch.nested_queue(port, priority);
                let bytes = ofc.table_bytes(port, priority).expect("a lossless priority");
                OfcQueueReport {
                    port: names[port].to_string(),
                    priority: priority.value(),
                    flow_in_port: (tables.flow_in_port.iter())
                        .map(|&(flow, frames, ingress)| OfcQueuedFlow {
                            flow: flow.to_string(),
                            frames,
                            ingress: names[ingress].to_string(),
                        })
                        .collect(),
                    untracked_frames: tables.untracked_frames,
                    congested: (tables.congested.iter())
                        .map(|&(flow, resume_pending)| OfcCongestedFlow { flow: flow.to_string(), resume_pending })
                        .collect(),
                    congested_for_seconds: tables
                        .congested_until
                        .map(|at| at.saturating_duration_since(now).as_secs_f64()),
                    named: tables.named.iter().map(ToString::to_string).collect(),
                    pause_frame: tables.pause_frame.iter().map(ToString::to_string).collect(),
                    coarse: tables.coarse,
                    pauses_naming: (tables.pauses_naming.iter()).map(|(flow, n)| (flow.to_string(), *n)).collect(),
                    parked_frames: nested.paused_len(),
                    draining: nested.is_draining(),
                    rotations: nested.rotations(),
                    table_bytes: OfcTable::ALL.iter().map(|t| (t.name().to_string(), bytes[*t as usize])).collect(),
                    counters: tables.counters,
                }
            })
            .collect();
        let thresholds = ofc.thresholds();
        Some(OfcReport {
            xoff_bytes: thresholds.xoff,
            xoff_c_bytes: thresholds.xoff_c,
            xon_bytes: thresholds.xon,
            flow_table_capacity: ofc.capacity() as u32,
            queues,
        })
    }
}
