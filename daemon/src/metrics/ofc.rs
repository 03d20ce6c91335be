//! OFC's families (`pfcswitch_ofc_*`), per port and lossless priority: the tables' sizes
//! (flows and bytes, Table II), the nested queues, the PAUSE/RESUME frames with flow
//! information, Algorithm 1's decisions and the coarse fallbacks of full tables.

use super::family::{Labels, counter, family, gauge, port_priority};
use pfcswitch_switch::policy::OfcTable;
use pfcswitch_switch::report::{OfcQueueReport, OfcReport};
use prometheus_client::encoding::DescriptorEncoder;
use std::fmt;

fn with(labels: Labels, name: &'static str, value: &str) -> Labels {
    let mut labels = labels;
    labels.push((name, value.to_string()));
    labels
}

pub fn encode(e: &mut DescriptorEncoder, report: &OfcReport) -> fmt::Result {
    let queues = &report.queues;
    let per_queue = |value: fn(&OfcQueueReport) -> u64| {
        queues.iter().map(move |q| (port_priority(&q.port, q.priority), gauge(value(q)))).collect::<Vec<_>>()
    };
    family(
        e,
        "pfcswitch_ofc_congested_flows",
        "Flows the peer paused with OFC PAUSE frames (congested_flow_tab).",
        per_queue(|q| q.congested.len() as u64),
    )?;
    family(
        e,
        "pfcswitch_ofc_paused_upstream_flows",
        "Flows this port pauses at its peer (pause_frame_tab).",
        per_queue(|q| q.pause_frame.len() as u64),
    )?;
    family(
        e,
        "pfcswitch_ofc_queued_flows",
        "Flows with frames in the egress queue (flow_in_port_tab).",
        per_queue(|q| q.flow_in_port.len() as u64),
    )?;
    family(
        e,
        "pfcswitch_ofc_parked_frames",
        "Frames of paused flows waiting in the paused backup queue.",
        per_queue(|q| q.parked_frames as u64),
    )?;
    let table_bytes = queues.iter().flat_map(|q| {
        (q.table_bytes.iter())
            .map(|(table, &bytes)| (with(port_priority(&q.port, q.priority), "table", table), gauge(bytes)))
    });
    family(e, "pfcswitch_ofc_table_bytes", "Bytes each OFC table holds (Table II).", table_bytes.collect::<Vec<_>>())?;
    let frames = |sent: bool| {
        queues.iter().flat_map(move |q| {
            let c = &q.counters;
            let (pause, resume) = if sent { (c.pause_tx, c.resume_tx) } else { (c.pause_rx, c.resume_rx) };
            let labels = port_priority(&q.port, q.priority);
            [(with(labels.clone(), "kind", "pause"), counter(pause)), (with(labels, "kind", "resume"), counter(resume))]
        })
    };
    family(
        e,
        "pfcswitch_ofc_tx_frames_total",
        "OFC PAUSE and RESUME frames with flow information sent to the peer.",
        frames(true).collect::<Vec<_>>(),
    )?;
    family(
        e,
        "pfcswitch_ofc_rx_frames_total",
        "OFC PAUSE and RESUME frames with flow information received from the peer.",
        frames(false).collect::<Vec<_>>(),
    )?;
    let decisions = queues.iter().flat_map(|q| {
        let c = &q.counters;
        let labels = port_priority(&q.port, q.priority);
        [("original", c.original), ("local", c.local), ("all", c.coarse)]
            .map(|(congestion, n)| (with(labels.clone(), "congestion", congestion), counter(n)))
    });
    family(
        e,
        "pfcswitch_ofc_decisions_total",
        "Algorithm 1 decisions that paused flows upstream: original or local congestion, or every flow at X_OFF.",
        decisions.collect::<Vec<_>>(),
    )?;
    let rotations = queues.iter().map(|q| (port_priority(&q.port, q.priority), counter(q.rotations)));
    family(
        e,
        "pfcswitch_ofc_rotations_total",
        "Rotations of the nested queues: RESUMEs that sent parked frames ahead of newer ones.",
        rotations.collect::<Vec<_>>(),
    )?;
    let full = queues.iter().flat_map(|q| {
        (OfcTable::ALL.iter()).map(|t| {
            (with(port_priority(&q.port, q.priority), "table", t.name()), counter(q.counters.table_full[*t as usize]))
        })
    });
    family(
        e,
        "pfcswitch_ofc_table_full_total",
        "Coarse pauses instead of fine ones because an OFC table was full.",
        full.collect::<Vec<_>>(),
    )
}
