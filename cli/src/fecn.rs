//! `pfcswitch fecn show [PORT]`: FECN's rate points per port and monitored priority: the
//! advertised rate, what the last measurement interval saw, and the probes marked.

use crate::control::{on_ports, print_json};
use anyhow::{Result, bail};
use clap::Subcommand;
use pfcswitch_lab::table::Table;
use pfcswitch_link::units::format_duration;
use pfcswitch_switch::report::{RateReport, Snapshot};
use serde_json::json;

#[derive(Debug, Subcommand)]
pub enum FecnCommand {
    /// The rate points of every port, or of PORT.
    Show { port: Option<String> },
}

pub fn show(snapshot: &Snapshot, port: Option<&str>, json: bool) -> Result<()> {
    let Some(fecn) = &snapshot.fecn else {
        bail!("FECN is off: [fecn] priorities is empty in the configuration");
    };
    let points: Vec<&RateReport> = on_ports(snapshot, port, &fecn.points, |r| &r.port)?;
    if json {
        print_json(&json!({ "settings": fecn.settings, "points": points }));
        return Ok(());
    }
    let s = &fecn.settings;
    println!(
        "fecn: {} queue control, interval {}, Qeq {}, N0 {}, gamma {}",
        s.control.name(),
        format_duration(s.interval),
        s.qeq,
        s.n0,
        s.gamma
    );
    let mut table = Table::new(&[
        "PORT",
        "PRIO",
        "ADVERTISED (Mbit/s)",
        "ARRIVAL (Mbit/s)",
        "QUEUE",
        "F(Q)",
        "LOAD",
        "INTERVALS",
        "PROBES",
        "MARKED",
    ]);
    for r in &points {
        let last = r.last;
        table.row(vec![
            r.port.clone(),
            r.priority.to_string(),
            format!("{:.3}", r.advertised_bps / 1e6),
            last.map_or("-".into(), |l| format!("{:.3}", l.arrival_bps / 1e6)),
            last.map_or("-".into(), |l| format!("{} B", l.queue_bytes)),
            last.map_or("-".into(), |l| format!("{:.4}", l.f)),
            last.map_or("-".into(), |l| format!("{:.3}", l.load)),
            r.intervals.to_string(),
            r.probes_seen.to_string(),
            r.probes_marked.to_string(),
        ]);
    }
    table.print();
    Ok(())
}
