//! `pfcswitch pfc explain [PORT [PRIORITY]]`: why PFC did or did not fire, per lossless
//! priority group (`pfcswitch_switch::report::explain`), as a table and one verdict a line.

use crate::control::{on_ports, print_json};
use anyhow::{Result, bail};
use pfcswitch_lab::table::Table;
use pfcswitch_link::units::ByteSize;
use pfcswitch_switch::explain::explain;
use pfcswitch_switch::report::Snapshot;

pub fn show(snapshot: &Snapshot, port: Option<&str>, priority: Option<u8>, json: bool) -> Result<()> {
    let all = explain(snapshot);
    let groups: Vec<_> = on_ports(snapshot, port, &all, |e| &e.port)?
        .into_iter()
        .filter(|e| priority.is_none_or(|p| p == e.priority))
        .collect();
    if let Some(p) = priority.filter(|_| groups.is_empty()) {
        bail!("priority {p} is not lossless on {}", port.unwrap_or("any port"));
    }
    if json {
        print_json(&serde_json::to_value(&groups)?);
        return Ok(());
    }
    let mut table = Table::new(&[
        "PORT",
        "PRIO",
        "XOFF",
        "PEAK",
        "HEADROOM",
        "HR PEAK",
        "HR NEEDED",
        "PFC TX",
        "PAUSING",
        "PFC RX",
        "PAUSED",
        "DROPS",
    ]);
    for e in &groups {
        table.row(vec![
            e.port.clone(),
            e.priority.to_string(),
            ByteSize(e.xoff_bytes).to_string(),
            ByteSize(e.peak_bytes).to_string(),
            ByteSize(e.headroom_bytes).to_string(),
            ByteSize(e.headroom_peak_bytes).to_string(),
            ByteSize(e.headroom_needed_bytes).to_string(),
            e.pfc_tx.to_string(),
            format!("{:.3}s", e.pausing_seconds),
            e.pfc_rx.to_string(),
            format!("{:.3}s", e.paused_seconds),
            e.drops.values().sum::<u64>().to_string(),
        ]);
    }
    table.print();
    println!();
    for e in &groups {
        println!("{} priority {}: {} (XOFF {})", e.port, e.priority, e.verdict, e.xoff_rule);
    }
    Ok(())
}
