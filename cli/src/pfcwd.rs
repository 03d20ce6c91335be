//! `pfcswitch pfcwd show|stats`: the PFC watchdog in the spirit of SONiC's
//! `pfcwd show config` and `pfcwd show stats`.

use crate::control::print_json;
use clap::Subcommand;
use pfcswitch_lab::table::Table;
use pfcswitch_link::units::format_duration;
use pfcswitch_switch::report::{PortReport, PriorityReport, Snapshot};
use serde_json::{Value, json};

#[derive(Debug, Subcommand)]
pub enum PfcwdCommand {
    /// Action, detection and restoration time per port and lossless priority.
    Show,
    /// Per port and lossless priority: storm state, storms detected and restored, frames
    /// dropped, how long the port has been pausing its peer.
    Stats,
}

fn watched(snapshot: &Snapshot) -> impl Iterator<Item = (&PortReport, &PriorityReport)> {
    snapshot.ports.iter().flat_map(|p| p.priorities.iter().filter(|q| q.lossless).map(move |q| (p, q)))
}

pub fn show(snapshot: &Snapshot, json: bool) {
    let wd = &snapshot.pfcwd;
    if json {
        let queues: Vec<Value> =
            watched(snapshot).map(|(p, q)| json!({ "port": p.name, "priority": q.priority })).collect();
        return print_json(&json!({ "settings": wd, "queues": queues }));
    }
    println!(
        "pfcwd {}; pausing-peer limit {}",
        if wd.enabled { "enabled" } else { "disabled" },
        format_duration(wd.pausing_peer_limit)
    );
    let mut table = Table::new(&["PORT", "PRIORITY", "ACTION", "DETECTION TIME", "RESTORATION TIME"]);
    for (p, q) in watched(snapshot) {
        let action = if wd.enabled { wd.action.name() } else { "off" };
        table.row(vec![
            p.name.clone(),
            q.priority.to_string(),
            action.to_string(),
            format_duration(wd.detection_time),
            format_duration(wd.restoration_time),
        ]);
    }
    table.print();
}

pub fn stats(snapshot: &Snapshot, json: bool) {
    if json {
        let rows: Vec<Value> = watched(snapshot)
            .map(|(p, q)| {
                let mut row = serde_json::to_value(q.pfcwd).expect("serializes");
                row["port"] = json!(p.name);
                row["priority"] = json!(q.priority);
                row["pausing_peer_seconds"] = json!(q.pausing_peer_continuous_seconds);
                row
            })
            .collect();
        return print_json(&Value::Array(rows));
    }
    let mut table = Table::new(&[
        "PORT",
        "PRIORITY",
        "STATUS",
        "STORMS DETECTED/RESTORED",
        "TX DROP",
        "RX DROP",
        "PAUSING PEER",
        "LONG PAUSES",
    ]);
    for (p, q) in watched(snapshot) {
        let wd = &q.pfcwd;
        table.row(vec![
            p.name.clone(),
            q.priority.to_string(),
            if wd.stormed { "stormed" } else { "operational" }.to_string(),
            format!("{}/{}", wd.counters.storms_detected, wd.counters.storms_restored),
            wd.counters.tx_dropped.to_string(),
            wd.counters.rx_dropped.to_string(),
            format!("{:.3}s", q.pausing_peer_continuous_seconds),
            wd.counters.long_pausing.to_string(),
        ]);
    }
    table.print();
}
