//! `pfcswitch policy show|set`: the flow-control policy in force and, under CaPFC, its state
//! (§II): which input pauses its peer on behalf of which egress queue, the arrival counters
//! and WARN activations.

use crate::control;
use anyhow::Result;
use clap::{Args, Subcommand};
use pfcswitch_lab::control as client;
use pfcswitch_lab::scenario::{RunPolicy, parse_policy};
use pfcswitch_lab::table::Table;
use pfcswitch_link::units::ByteSize;
use pfcswitch_switch::config::{CapfcAlgorithm, PolicyConfig};
use pfcswitch_switch::report::{ControlRequest, Snapshot};
use std::path::Path;

#[derive(Debug, Subcommand)]
pub enum PolicyCommand {
    /// The policy in force; under CaPFC, D and E per input, counters per egress queue.
    Show,
    /// Switch the policy now (not saved: `pfcswitch reload` or SIGHUP returns to the file's).
    Set(SetArgs),
}

#[derive(Debug, Args)]
pub struct SetArgs {
    /// pfc, pfc-wdrop, pfc-wstop, none, capfc (= capfc-max), capfc-max, capfc-cal, ofc.
    kind: String,
    /// CaPFC share of the counted arrivals the paused inputs must cover, in (0, 1].
    #[arg(long)]
    cut: Option<f64>,
    #[arg(long)]
    egress_xoff: Option<ByteSize>,
    #[arg(long)]
    egress_xon: Option<ByteSize>,
    #[arg(long)]
    egress_warn: Option<ByteSize>,
    /// OFC: X^c_OFF = alpha × pfc.xoff, with pfc.xon < X^c_OFF < pfc.xoff.
    #[arg(long)]
    alpha: Option<f64>,
}

pub fn run(command: PolicyCommand, socket: &Path, json: bool) -> Result<()> {
    match command {
        PolicyCommand::Show => {
            show(&client::snapshot(socket)?, json);
            Ok(())
        }
        PolicyCommand::Set(args) => set(&args, socket, json),
    }
}

fn set(args: &SetArgs, socket: &Path, json: bool) -> Result<()> {
    let RunPolicy { kind, algorithm } = parse_policy(&args.kind)?;
    // What is not named keeps its value in force (from the file or an earlier `set`).
    let current = client::snapshot(socket)?.policy_settings;
    let policy = PolicyConfig {
        kind,
        algorithm: algorithm.unwrap_or(current.algorithm),
        cut: args.cut.unwrap_or(current.cut),
        egress_xoff: args.egress_xoff.unwrap_or(current.egress_xoff),
        egress_xon: args.egress_xon.unwrap_or(current.egress_xon),
        egress_warn: args.egress_warn.unwrap_or(current.egress_warn),
        alpha: args.alpha.unwrap_or(current.alpha),
        // The tables are sized at start: a running switch keeps its capacity.
        flow_table_capacity: current.flow_table_capacity,
        ofc_frame_len: current.ofc_frame_len,
    };
    control::command(socket, ControlRequest::SetPolicy { policy }, json)
}

fn yes(flag: bool) -> String {
    if flag { "yes".into() } else { "-".into() }
}

fn show(snapshot: &Snapshot, json: bool) {
    if json {
        println!(
            "{}",
            serde_json::json!({ "policy": snapshot.policy, "settings": snapshot.policy_settings, "capfc": snapshot.capfc })
        );
        return;
    }
    let Some(capfc) = &snapshot.capfc else {
        println!("policy {} (no egress congestion state: only CaPFC keeps one)", snapshot.policy);
        return;
    };
    let settings = &snapshot.policy_settings;
    let algorithm = match settings.algorithm {
        CapfcAlgorithm::Max => "Stop-Max".to_string(),
        CapfcAlgorithm::Calibrate => format!("Stop-Calibrate, CUT {}", settings.cut),
    };
    println!(
        "policy capfc ({algorithm}); egress XOFF {}, XON {}, WARN {}",
        settings.egress_xoff, settings.egress_xon, settings.egress_warn
    );
    let mut inputs = Table::new(&["INPUT", "PRIO", "INGRESS-XOFF", "PAUSING", "ON-BEHALF-OF"]);
    for input in &capfc.inputs {
        inputs.row(vec![
            input.port.clone(),
            input.priority.to_string(),
            yes(input.ingress_congested),
            yes(input.paused),
            if input.on_behalf_of.is_empty() { "-".into() } else { input.on_behalf_of.join(",") },
        ]);
    }
    inputs.print();
    println!();
    let mut queues = Table::new(&["EGRESS", "PRIO", "COUNTING", "WARN-ACTIVATIONS", "ARRIVALS", "SIGNALLED"]);
    for queue in &capfc.queues {
        let arrivals: Vec<String> =
            queue.arrivals.iter().filter(|(_, c)| **c > 0).map(|(input, c)| format!("{input}={c}")).collect();
        queues.row(vec![
            queue.port.clone(),
            queue.priority.to_string(),
            yes(queue.counting),
            queue.warn_activations.to_string(),
            if arrivals.is_empty() { "-".into() } else { arrivals.join(" ") },
            if queue.signalled.is_empty() { "-".into() } else { queue.signalled.join(",") },
        ]);
    }
    queues.print();
}
