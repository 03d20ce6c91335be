//! `pfcswitch policy show|set`: the flow-control policy in force and, under CaPFC, its state
//! (§II): which input pauses its peer on behalf of which egress queue, the arrival counters
//! and WARN activations.

use crate::control;
use crate::table::Table;
use anyhow::{Result, bail};
use clap::{Args, Subcommand};
use pfcswitch_core::config::{CapfcAlgorithm, PolicyConfig, PolicyKind};
use pfcswitch_core::report::{ControlRequest, Snapshot};
use pfcswitch_core::units::ByteSize;
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
    /// pfc, pfc-wstop, none, capfc (= capfc-max), capfc-max, capfc-cal.
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
}

pub fn run(command: PolicyCommand, socket: &Path, json: bool) -> Result<()> {
    match command {
        PolicyCommand::Show => {
            show(&control::snapshot(socket)?, json);
            Ok(())
        }
        PolicyCommand::Set(args) => set(&args, socket, json),
    }
}

fn set(args: &SetArgs, socket: &Path, json: bool) -> Result<()> {
    let (kind, algorithm) = match args.kind.as_str() {
        "pfc" | "pfc-wdrop" => (PolicyKind::Pfc, None),
        "pfc-wstop" => (PolicyKind::PfcWstop, None),
        "none" => (PolicyKind::None, None),
        "capfc" | "capfc-max" => (PolicyKind::Capfc, Some(CapfcAlgorithm::Max)),
        "capfc-cal" => (PolicyKind::Capfc, Some(CapfcAlgorithm::Calibrate)),
        other => bail!("unknown policy `{other}` (known: pfc, pfc-wstop, none, capfc-max, capfc-cal)"),
    };
    // Unnamed CaPFC settings keep their values in force, or take the paper's defaults.
    let current = control::snapshot(socket)?.capfc;
    let defaults = PolicyConfig::default();
    let bytes = |given: Option<ByteSize>, current: Option<u64>, default: ByteSize| {
        given.or(current.map(ByteSize)).unwrap_or(default)
    };
    let policy = PolicyConfig {
        kind,
        algorithm: algorithm.unwrap_or_default(),
        cut: args.cut.or(current.as_ref().map(|c| c.cut)).unwrap_or(defaults.cut),
        egress_xoff: bytes(args.egress_xoff, current.as_ref().map(|c| c.egress_xoff_bytes), defaults.egress_xoff),
        egress_xon: bytes(args.egress_xon, current.as_ref().map(|c| c.egress_xon_bytes), defaults.egress_xon),
        egress_warn: bytes(args.egress_warn, current.as_ref().map(|c| c.egress_warn_bytes), defaults.egress_warn),
    };
    control::command(socket, ControlRequest::SetPolicy { policy }, json)
}

fn yes(flag: bool) -> String {
    if flag { "yes".into() } else { "-".into() }
}

fn show(snapshot: &Snapshot, json: bool) {
    if json {
        println!("{}", serde_json::json!({ "policy": snapshot.policy, "capfc": snapshot.capfc }));
        return;
    }
    let Some(capfc) = &snapshot.capfc else {
        println!("policy {} (no egress congestion state: only CaPFC keeps one)", snapshot.policy);
        return;
    };
    let algorithm =
        if capfc.algorithm == "max" { "Stop-Max".to_string() } else { format!("Stop-Calibrate, CUT {}", capfc.cut) };
    println!(
        "policy capfc ({algorithm}); egress XOFF {} B, XON {} B, WARN {} B",
        capfc.egress_xoff_bytes, capfc.egress_xon_bytes, capfc.egress_warn_bytes
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
