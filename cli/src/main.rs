//! `pfcswitch`: the command-line client of the pfcswitch project. It parses arguments and
//! calls the crates that do the work (`pfcswitch-lab` for experiments, traffic and the
//! control client, `pfcswitch-wire` for frames), then prints tables or JSON (`-j`).

mod buffer;
mod capture;
mod control;
mod decode;
mod explain;
mod fecn;
mod frame;
mod hpcc;
mod int;
mod ledger;
mod manual;
mod ofc;
mod pfcwd;
mod policy;
mod qcn;
mod scenario;
mod topology;

use clap::{CommandFactory, Parser, Subcommand};
use pfcswitch_lab::control as client;
use pfcswitch_lab::scenario::endpoint;
use pfcswitch_lab::traffic;
use pfcswitch_switch::report::{ControlRequest, Snapshot};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Parser)]
#[command(name = "pfcswitch", version, about = "Lossless-Ethernet software switch: frames, control and experiments")]
struct Cli {
    /// Print JSON for scripts.
    #[arg(short = 'j', long = "json", global = true)]
    json: bool,
    /// pfcswitchd's control socket (default: the only one in /run/pfcswitch).
    #[arg(short = 's', long = "socket", global = true, value_name = "SOCKET")]
    socket: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Switch identity, policy, uptime, datapath health.
    Status,
    /// Per-port totals.
    Ports,
    /// PFC configuration and state per port (like `dcb pfc show`).
    Pfc {
        #[command(subcommand)]
        command: PfcCommand,
    },
    /// PFC frames received and sent per port and priority (like SONiC's pfcstat).
    Pfcstat,
    /// Ingress and egress occupancy, pause state and high-water marks.
    Queues {
        /// Show every priority, not only lossless or used ones.
        #[arg(short, long)]
        all: bool,
    },
    /// Where every frame each port and priority took in went: received = dropped +
    /// forwarded + waiting, assigned = sent + dropped + queued.
    Ledger {
        /// Show every priority, not only lossless or used ones.
        #[arg(short, long)]
        all: bool,
    },
    /// The forwarding database.
    Fdb,
    /// Counters.
    Counters {
        /// Zero counters, high-water marks and pause times.
        #[arg(long, required = true)]
        reset: bool,
    },
    /// Re-read pfcswitchd's configuration file (same as SIGHUP).
    Reload,
    /// The PFC watchdog: its settings, and storms per port and lossless priority.
    #[command(subcommand)]
    Pfcwd(pfcwd::PfcwdCommand),
    /// OFC's flow tables, nested queues and counters per port and lossless priority.
    #[command(subcommand)]
    Ofc(ofc::OfcCommand),
    /// QCN's congestion points per port and monitored priority.
    #[command(subcommand)]
    Qcn(qcn::QcnCommand),
    /// FECN's rate points per port and monitored priority.
    #[command(subcommand)]
    Fecn(fecn::FecnCommand),
    /// In-band telemetry at egress: the node ID, the settings, and per stamping port the
    /// INT-MD frames stamped and those not stamped, by reason.
    #[command(subcommand)]
    Int(int::IntCommand),
    /// Buffer pools, priority groups and queues: show them with their watermarks, clear the
    /// watermarks, import a SONiC configuration.
    #[command(subcommand)]
    Buffer(buffer::BufferCommand),
    /// The flow-control policy: show its state, or switch it at run time.
    #[command(subcommand)]
    Policy(policy::PolicyCommand),
    /// Craft PAUSE, PFC, CNM and data frames into pcap files, or decode captures.
    #[command(subcommand)]
    Frame(frame::FrameCommand),
    /// Traffic endpoints for host namespaces (PFC-obeying sender, counting receiver).
    #[command(subcommand)]
    Traffic(TrafficCommand),
    /// Reproducible experiments in network namespaces: run, compare, list.
    #[command(subcommand)]
    Scenario(scenario::ScenarioCommand),
    /// Topologies from files: list, describe, bring up on namespaces, tear down.
    #[command(subcommand)]
    Topology(topology::TopologyCommand),
    /// HPCC's ns-3 files: its FCT analysis, its traffic generator, a check of its topology
    /// and flow files.
    #[command(subcommand)]
    Hpcc(hpcc::HpccCommand),
    /// Print a shell completion script for pfcswitch (or pfcswitchd) on standard output.
    Completions(manual::CompletionsArgs),
    /// Write the man pages of pfcswitch and pfcswitchd into a directory (for packagers).
    #[command(hide = true)]
    Manpages(manual::ManpagesArgs),
}

#[derive(Debug, Subcommand)]
enum TrafficCommand {
    /// Send one sequence-numbered flow, obeying PFC and PAUSE.
    Send(traffic::SendArgs),
    /// Count the flows arriving, with loss and reordering.
    Recv(traffic::RecvArgs),
    /// Keep the link paused as a NIC stuck in a PFC storm does: XOFF for one class, re-sent
    /// before it expires, never an XON.
    Storm(traffic::StormArgs),
    /// One host of a scenario over AF_XDP (started by `pfcswitch scenario run`).
    Endpoint(endpoint::EndpointArgs),
}

#[derive(Debug, Subcommand)]
enum PfcCommand {
    /// PFC settings and state of every port, or of PORT.
    Show { port: Option<String> },
    /// Why PFC did or did not fire, per lossless priority group since the last clear: the
    /// XOFF point and its rule, the peak, the headroom used and needed, PFC frames each way,
    /// drops with their rule, and a verdict.
    Explain { port: Option<String>, priority: Option<u8> },
}

fn run(cli: Cli) -> anyhow::Result<()> {
    let json = cli.json;
    let socket = || client::resolve_socket(cli.socket.clone());
    let view = |show: fn(&Snapshot, bool)| -> anyhow::Result<()> {
        show(&client::snapshot(&socket()?)?, json);
        Ok(())
    };
    match cli.command {
        Command::Frame(command) => frame::run(command, json),
        Command::Traffic(TrafficCommand::Send(args)) => traffic::send(&args, json),
        Command::Traffic(TrafficCommand::Recv(args)) => traffic::recv(&args, json),
        Command::Traffic(TrafficCommand::Storm(args)) => traffic::storm(&args, json),
        Command::Traffic(TrafficCommand::Endpoint(args)) => endpoint::run(&args),
        Command::Scenario(command) => scenario::run(command),
        Command::Topology(command) => topology::run(command, json),
        Command::Hpcc(command) => hpcc::run(command, json),
        Command::Completions(args) => manual::completions(&args, Cli::command()),
        Command::Manpages(args) => manual::manpages(&args, Cli::command()),
        Command::Buffer(command) => buffer::run(command, socket, json),
        Command::Status => view(control::status),
        Command::Ports => view(control::ports),
        Command::Pfc { command: PfcCommand::Show { port } } => {
            control::pfc_show(&client::snapshot(&socket()?)?, port.as_deref(), json)
        }
        Command::Pfc { command: PfcCommand::Explain { port, priority } } => {
            explain::show(&client::snapshot(&socket()?)?, port.as_deref(), priority, json)
        }
        Command::Pfcstat => view(control::pfcstat),
        Command::Queues { all } => {
            control::queues(&client::snapshot(&socket()?)?, all, json);
            Ok(())
        }
        Command::Ledger { all } => {
            ledger::show(&client::snapshot(&socket()?)?, all, json);
            Ok(())
        }
        Command::Fdb => view(control::fdb),
        Command::Counters { .. } => control::command(&socket()?, ControlRequest::ResetCounters, json),
        Command::Reload => control::command(&socket()?, ControlRequest::Reload, json),
        Command::Policy(command) => policy::run(command, &socket()?, json),
        Command::Pfcwd(pfcwd::PfcwdCommand::Show) => view(pfcwd::show),
        Command::Pfcwd(pfcwd::PfcwdCommand::Stats) => view(pfcwd::stats),
        Command::Ofc(ofc::OfcCommand::Show { port }) => {
            ofc::show(&client::snapshot(&socket()?)?, port.as_deref(), json)
        }
        Command::Qcn(qcn::QcnCommand::Show { port }) => {
            qcn::show(&client::snapshot(&socket()?)?, port.as_deref(), json)
        }
        Command::Fecn(fecn::FecnCommand::Show { port }) => {
            fecn::show(&client::snapshot(&socket()?)?, port.as_deref(), json)
        }
        Command::Int(int::IntCommand::Show { port }) => {
            int::show(&client::snapshot(&socket()?)?, port.as_deref(), json)
        }
    }
}

fn main() -> ExitCode {
    // Like any Unix tool: `pfcswitch ... | head` ends quietly when the reader goes away.
    // SAFETY: restoring the default disposition of SIGPIPE before any thread exists.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("pfcswitch: {error:#}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// clap checks a subcommand's arguments only when that subcommand is parsed (a short
    /// option taken twice, `-s` for `--socket` and another, panics then): check them all.
    #[test]
    fn every_subcommands_arguments_are_consistent() {
        Cli::command().debug_assert();
    }
}
