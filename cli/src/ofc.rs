//! `pfcswitch ofc show [PORT]`: OFC's three tables (§III), the nested queues' state and the
//! counters, per port and lossless priority.

use crate::control::{on_ports, print_json};
use anyhow::{Result, bail};
use clap::Subcommand;
use pfcswitch_lab::table::Table;
use pfcswitch_switch::report::{OfcQueueReport, Snapshot};
use serde_json::json;

#[derive(Debug, Subcommand)]
pub enum OfcCommand {
    /// The tables, the queue rotation state and the counters of every port, or of PORT.
    Show { port: Option<String> },
}

fn list(flows: &[String]) -> String {
    if flows.is_empty() { "-".into() } else { flows.join(" ") }
}

pub fn show(snapshot: &Snapshot, port: Option<&str>, json: bool) -> Result<()> {
    let Some(ofc) = &snapshot.ofc else {
        bail!("the policy is {}, which keeps no OFC tables (pfcswitch policy set ofc)", snapshot.policy);
    };
    let queues: Vec<&OfcQueueReport> = on_ports(snapshot, port, &ofc.queues, |q| &q.port)?;
    if json {
        print_json(&json!({
            "xoff_bytes": ofc.xoff_bytes, "xoff_c_bytes": ofc.xoff_c_bytes, "xon_bytes": ofc.xon_bytes,
            "flow_table_capacity": ofc.flow_table_capacity, "queues": queues,
        }));
        return Ok(());
    }
    println!(
        "ofc: X_OFF {} B, X^c_OFF {} B, X_ON {} B; tables of {} flows per port and priority",
        ofc.xoff_bytes, ofc.xoff_c_bytes, ofc.xon_bytes, ofc.flow_table_capacity
    );
    let mut table = Table::new(&[
        "PORT",
        "PRIO",
        "PAUSING UPSTREAM",
        "PAUSED BY PEER",
        "QUEUED FLOWS",
        "PARKED",
        "DRAINING",
        "ROTATIONS",
        "PAUSE TX/RX",
        "RESUME TX/RX",
        "ORIGINAL/LOCAL/ALL",
    ]);
    for q in &queues {
        let c = &q.counters;
        let upstream =
            if q.coarse { format!("all ({})", q.pause_frame.len()) } else { q.pause_frame.len().to_string() };
        table.row(vec![
            q.port.clone(),
            q.priority.to_string(),
            upstream,
            q.congested.len().to_string(),
            q.flow_in_port.len().to_string(),
            q.parked_frames.to_string(),
            if q.draining { "yes" } else { "-" }.into(),
            q.rotations.to_string(),
            format!("{}/{}", c.pause_tx, c.pause_rx),
            format!("{}/{}", c.resume_tx, c.resume_rx),
            format!("{}/{}/{}", c.original, c.local, c.coarse),
        ]);
    }
    table.print();
    for q in queues.iter().filter(|q| {
        !(q.flow_in_port.is_empty() && q.congested.is_empty() && q.pause_frame.is_empty() && q.pauses_naming.is_empty())
    }) {
        println!("\n{} priority {}:", q.port, q.priority);
        let queued: Vec<String> =
            q.flow_in_port.iter().map(|f| format!("{} ×{} (from {})", f.flow, f.frames, f.ingress)).collect();
        let untracked =
            if q.untracked_frames > 0 { format!(" + {} untracked frames", q.untracked_frames) } else { String::new() };
        println!("  flow_in_port_tab:   {}{untracked}", list(&queued));
        let congested: Vec<String> = (q.congested.iter())
            .map(|f| if f.resume_pending { format!("{} (resuming)", f.flow) } else { f.flow.clone() })
            .collect();
        let expires = q.congested_for_seconds.map_or(String::new(), |s| format!(" for {:.3} ms more", s * 1e3));
        println!("  congested_flow_tab: {}{expires}", list(&congested));
        let coarse = if q.coarse { " (and every other flow)" } else { "" };
        println!("  pause_frame_tab:    {}{coarse}", list(&q.pause_frame));
        let named: Vec<String> = q.pauses_naming.iter().map(|(flow, n)| format!("{flow} ×{n}")).collect();
        println!("  PAUSEs sent naming: {}", list(&named));
    }
    Ok(())
}
