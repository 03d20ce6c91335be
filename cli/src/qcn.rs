//! `pfcswitch qcn show [PORT]`: QCN's congestion points per port and monitored priority: the
//! queue each watches, the last sample's feedback, the sampling state and the CNMs sent.

use crate::control::{on_ports, print_json};
use anyhow::{Result, bail};
use clap::Subcommand;
use pfcswitch_lab::table::Table;
use pfcswitch_switch::report::{CpReport, Snapshot};
use serde_json::json;

#[derive(Debug, Subcommand)]
pub enum QcnCommand {
    /// The congestion points of every port, or of PORT.
    Show { port: Option<String> },
}

pub fn show(snapshot: &Snapshot, port: Option<&str>, json: bool) -> Result<()> {
    let Some(qcn) = &snapshot.qcn else {
        bail!("QCN is off: [qcn] priorities is empty in the configuration");
    };
    let points: Vec<&CpReport> = on_ports(snapshot, port, &qcn.points, |c| &c.port)?;
    if json {
        print_json(&json!({ "settings": qcn.settings, "points": points }));
        return Ok(());
    }
    let s = &qcn.settings;
    println!(
        "qcn: CPs at the {}s ({} sampling), Qeq {}, w {}, sample base {}, CNMs on priority {}",
        s.cp.name(),
        s.sampling.name(),
        s.qeq,
        s.w,
        s.sample_base,
        s.cnm_priority
    );
    let mut table = Table::new(&[
        "PORT",
        "PRIO",
        "CPID",
        "Q",
        "QOLD",
        "LAST QOFF/QDELTA (x64B)",
        "FB",
        "QNTZFB",
        "SAMPLES",
        "NEXT SAMPLE IN",
        "CNMS SENT",
        "DROPPED",
        "NO CULPRIT",
    ]);
    for c in &points {
        let last = c.last;
        table.row(vec![
            c.port.clone(),
            c.priority.to_string(),
            c.cpid.clone(),
            c.q_bytes.to_string(),
            c.q_old_bytes.to_string(),
            last.map_or("-".into(), |l| format!("{}/{}", l.q_offset, l.q_delta)),
            last.map_or("-".into(), |l| l.fb.to_string()),
            last.map_or("-".into(), |l| l.quantized.to_string()),
            c.samples.to_string(),
            format!("{} B", c.bytes_until_sample),
            c.counters.cnms_sent.to_string(),
            c.counters.cnms_dropped.to_string(),
            c.counters.no_culprit.to_string(),
        ]);
    }
    table.print();
    Ok(())
}
