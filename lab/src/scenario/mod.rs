//! `pfcswitch scenario`: reproducible experiments in network namespaces. A scenario file
//! (TOML) names a topology of `netns-scripts/topology.sh`, the switches' configs, a policy,
//! the hosts' NIC speed and transport, and a workload (`[[class]]` tables, see
//! `crate::workload`). `run` brings the topology up with one pfcswitchd per switch,
//! starts an endpoint in every host, samples the switches' queues, tears everything down
//! (also on error or Ctrl-C) and writes `results.json`, a table and plots.

mod deadlock;
mod fabric;
mod paths;
mod phases;
mod report;
mod runner;
mod schemes;
mod simulate;

use crate::workload::{ClassSpec, StormSpec};
use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use pfcswitch_hosts::{DctcpParams, TransportConfig};
use pfcswitch_link::time::Instant;
use pfcswitch_link::units::{BitRate, duration};
use pfcswitch_switch::config::{CapfcAlgorithm, PfcwdAction, PfcwdConfig, PolicyKind};
use pfcswitch_wire::{EthernetAddress, Ipv4Addr};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use deadlock::deadlock;
pub use runner::run;
pub use schemes::{FecnMode, FecnSpec, Modes, QcnMode, QcnSpec, parse_fecn, parse_qcn};
pub use simulate::simulate;

#[derive(Debug, Subcommand)]
pub enum ScenarioCommand {
    /// The built-in scenarios.
    List,
    /// Run a scenario (a built-in name or a file).
    Run(RunArgs),
    /// Run it in the core's virtual-time harness: same configs, same plan, no namespaces.
    Simulate(RunArgs),
    /// Run one seed of a scenario under several policies (or PFC watchdog modes) and compare
    /// them side by side.
    Compare(CompareArgs),
    /// OFC's deadlock experiment (Fig. 9) on the simulator: four flows over a cyclic buffer
    /// dependency, M frames split at random, deadlocks counted per policy and M.
    Deadlock(deadlock::DeadlockArgs),
}

#[derive(Debug, Args, Clone)]
pub struct RunArgs {
    /// A built-in scenario (`pfcswitch scenario list`) or a scenario file.
    pub scenario: String,
    /// Flow-control policy of every switch: pfc, pfc-wdrop, pfc-wstop, capfc-max, capfc-cal, ofc, none
    /// (default: the scenario's).
    #[arg(long)]
    pub policy: Option<String>,
    #[command(flatten)]
    pub modes: Modes,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Output directory (default: results/NAME/POLICY[-pfcwd-MODE][-qcn-MODE][-fecn-MODE]-seedN).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    pub scenario: String,
    /// Comma-separated policies (default: pfc-wdrop,pfc-wstop,capfc-max,capfc-cal; with
    /// --pfcwd, the scenario's).
    #[arg(long, value_delimiter = ',')]
    pub policies: Option<Vec<String>>,
    /// Comma-separated PFC watchdog modes (off, alert, drop, forward), each run under every policy.
    #[arg(long, value_delimiter = ',', value_parser = parse_pfcwd)]
    pub pfcwd: Vec<PfcwdMode>,
    /// Comma-separated QCN modes (see `run --qcn`), each run under every policy.
    #[arg(long, value_delimiter = ',', value_parser = parse_qcn)]
    pub qcn: Vec<QcnMode>,
    /// Comma-separated FECN modes (see `run --fecn`), each run under every policy.
    #[arg(long, value_delimiter = ',', value_parser = parse_fecn)]
    pub fecn: Vec<FecnMode>,
    #[arg(long, default_value_t = 1, conflicts_with = "seeds")]
    pub seed: u64,
    /// Comma-separated seeds, each compared in turn, then summarised together (max FCT per
    /// class and policy over the seeds, written to seeds-SEEDS.json).
    #[arg(long, value_delimiter = ',')]
    pub seeds: Vec<u64>,
    /// Parent of each policy's output directory (default: results/NAME).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Compare in the virtual-time harness instead of namespaces.
    #[arg(long)]
    pub sim: bool,
}

/// A scenario file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub name: String,
    pub description: String,
    /// A topology of netns-scripts/topology.sh, or `fabric`: the one `[fabric]` generates
    /// (simulator only).
    pub topology: String,
    /// Switch name → config file, relative to the scenario file (not for a fabric).
    #[serde(default)]
    pub switches: BTreeMap<String, PathBuf>,
    #[serde(default)]
    pub fabric: Option<fabric::FabricSpec>,
    #[serde(default)]
    pub policy: RunPolicy,
    /// The hosts' emulated NIC speed.
    pub speed: BitRate,
    /// IP MTU of every link and switch port (default 1500). Larger frames cost the copy-mode
    /// datapath less per byte: the 1 Gbit/s scenarios use RoCE's 4096-class MTU of 3000.
    #[serde(default = "default_mtu")]
    pub mtu: u32,
    /// How long the workload generates traffic; long-lived flows stop at its end.
    #[serde(with = "duration")]
    pub duration: Duration,
    /// How long sized messages may take to finish after that before the run gives up.
    #[serde(with = "duration", default = "default_drain")]
    pub drain: Duration,
    /// Period of the queue-depth samples.
    #[serde(with = "duration", default = "default_sample")]
    pub sample: Duration,
    /// One-way delay of every cable in the simulator (default 1 µs); namespaces have veths.
    #[serde(with = "duration", default = "default_cable")]
    pub cable: Duration,
    #[serde(default)]
    pub transport: TransportSpec,
    /// QCN in the switches and hosts, unless `--qcn off`.
    #[serde(default)]
    pub qcn: Option<QcnSpec>,
    /// FECN in the switches and hosts, unless `--fecn off`.
    #[serde(default)]
    pub fecn: Option<FecnSpec>,
    /// Merged into every switch's config (e.g. `pfc = { xoff = "100KB" }`); every port's
    /// `speed` and `mtu` are the scenario's.
    #[serde(default)]
    pub overrides: toml::Table,
    #[serde(rename = "class")]
    pub classes: Vec<ClassSpec>,
    /// Hosts that storm: PFC XOFF towards their switch for a while, as a broken NIC sends.
    #[serde(rename = "storm", default)]
    pub storms: Vec<StormSpec>,
}

impl Scenario {
    /// Its topology as listings show it: a topology.sh name, or the fabric's parameters.
    pub fn topology_label(&self) -> String {
        self.fabric.as_ref().map_or_else(|| self.topology.clone(), fabric::FabricSpec::label)
    }

    /// The priorities its classes use, each once, ascending: what the queue sampler records.
    pub fn priorities(&self) -> Vec<u8> {
        let set: std::collections::BTreeSet<u8> = self.classes.iter().map(|c| c.priority).collect();
        set.into_iter().collect()
    }
}

fn default_mtu() -> u32 {
    1500
}

fn default_drain() -> Duration {
    Duration::from_secs(20)
}

fn default_cable() -> Duration {
    Duration::from_micros(1)
}

fn default_sample() -> Duration {
    Duration::from_millis(10)
}

/// `[transport]`: the endpoints' go-back-N transport (defaults: `TransportConfig::new`). The
/// runner hands it to each endpoint in its plan; the simulator uses it directly.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct TransportSpec {
    /// Frame length of a full segment, without FCS (default: the MTU plus a tagged header).
    pub frame_len: Option<usize>,
    pub window: u32,
    #[serde(with = "duration")]
    pub rto: Duration,
    pub ack_every: u32,
    /// Width of the goodput bins of the throughput plot.
    #[serde(with = "duration")]
    pub bin: Duration,
    /// The hosts' NICs obey OFC PAUSE frames per flow (OFC-aware NICs) instead of as the
    /// PFC pause of the priority (RoCE NICs, the default).
    pub ofc_per_flow: bool,
    /// DCTCP senders (`dctcp = {}` for the defaults: g = 1/16, 10 segments to start): data
    /// goes out ECT(0) and windows follow the switches' CE marks (`[ecn]` in `overrides`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dctcp: Option<DctcpParams>,
}

impl Default for TransportSpec {
    fn default() -> Self {
        let defaults = TransportConfig::new(EthernetAddress([2, 0, 0, 0, 0, 1]), Ipv4Addr::LOCALHOST, BitRate::gbps(1));
        TransportSpec {
            frame_len: None,
            window: defaults.window,
            rto: defaults.rto,
            ack_every: defaults.ack_every,
            bin: defaults.bin,
            ofc_per_flow: false,
            dctcp: None,
        }
    }
}

impl TransportSpec {
    /// The core transport's settings for one host of a run: a full segment is an MTU-sized
    /// IPv4 packet in a tagged frame unless `frame_len` says otherwise.
    pub fn config(
        &self,
        mac: EthernetAddress,
        ip: Ipv4Addr,
        mtu: u32,
        speed: BitRate,
        epoch: Instant,
        end: Instant,
    ) -> TransportConfig {
        TransportConfig {
            frame_len: self.frame_len.unwrap_or(mtu as usize + pfcswitch_switch::config::L2_HEADER_MAX as usize),
            window: self.window,
            rto: self.rto,
            ack_every: self.ack_every,
            bin: self.bin,
            epoch,
            long_lived_until: end,
            dctcp: self.dctcp,
            ..TransportConfig::new(mac, ip, speed)
        }
    }
}

/// The repository (scenarios, configs, topology.sh): `PFCSWITCH_ROOT`, or where this binary
/// was built from.
pub fn root() -> PathBuf {
    std::env::var_os("PFCSWITCH_ROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("lab/ is in the repository").into())
}

fn builtin_dir() -> PathBuf {
    root().join("scenarios")
}

/// Reads a scenario by built-in name or path; returns it with its file.
pub fn load(name_or_file: &str) -> Result<(Scenario, PathBuf)> {
    let builtin = builtin_dir().join(format!("{name_or_file}.toml"));
    let path = if builtin.is_file() { builtin } else { PathBuf::from(name_or_file) };
    if !path.is_file() {
        bail!("no scenario `{name_or_file}`: not a built-in one (see `pfcswitch scenario list`) nor a file");
    }
    let text = std::fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
    let scenario: Scenario = toml::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    Ok((scenario, path))
}

/// A switch policy as experiments name it, after the CaPFC paper's PFC_wdrop, PFC_wstop,
/// CaPFC_max and CaPFC_cal.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub struct RunPolicy {
    pub kind: PolicyKind,
    pub algorithm: Option<CapfcAlgorithm>,
}

impl RunPolicy {
    pub fn name(&self) -> &'static str {
        match (self.kind, self.algorithm) {
            (PolicyKind::Capfc, Some(CapfcAlgorithm::Calibrate)) => "capfc-cal",
            (PolicyKind::Capfc, _) => "capfc-max",
            (kind, _) => kind.name(),
        }
    }

    /// The `[policy]` keys a switch config gets for this policy.
    pub fn config_keys(&self) -> toml::Table {
        let mut table = toml::Table::new();
        table.insert("kind".into(), toml::Value::String(self.kind.name().into()));
        if let Some(algorithm) = self.algorithm {
            let name = if algorithm == CapfcAlgorithm::Max { "max" } else { "calibrate" };
            table.insert("algorithm".into(), toml::Value::String(name.into()));
        }
        table
    }
}

impl TryFrom<String> for RunPolicy {
    type Error = anyhow::Error;

    fn try_from(name: String) -> Result<RunPolicy> {
        parse_policy(&name)
    }
}

pub fn parse_policy(name: &str) -> Result<RunPolicy> {
    let (kind, algorithm) = match name {
        "pfc" => (PolicyKind::Pfc, None),
        "pfc-wdrop" => (PolicyKind::PfcWdrop, None),
        "pfc-wstop" => (PolicyKind::PfcWstop, None),
        "capfc" | "capfc-max" => (PolicyKind::Capfc, Some(CapfcAlgorithm::Max)),
        "capfc-cal" => (PolicyKind::Capfc, Some(CapfcAlgorithm::Calibrate)),
        "ofc" => (PolicyKind::Ofc, None),
        "none" => (PolicyKind::None, None),
        other => bail!("unknown policy `{other}` (known: pfc, pfc-wdrop, pfc-wstop, capfc-max, capfc-cal, ofc, none)"),
    };
    Ok(RunPolicy { kind, algorithm })
}

/// What `--pfcwd` sets in every switch's `[pfcwd]`: `off` disables the watchdog, the others
/// enable it with that action.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PfcwdMode {
    Off,
    On(PfcwdAction),
}

impl PfcwdMode {
    pub fn name(self) -> &'static str {
        match self {
            PfcwdMode::Off => "off",
            PfcwdMode::On(action) => action.name(),
        }
    }

    /// The mode a switch's `[pfcwd]` runs in.
    pub fn of(config: &PfcwdConfig) -> PfcwdMode {
        if config.enabled { PfcwdMode::On(config.action) } else { PfcwdMode::Off }
    }

    /// The `[pfcwd]` keys a switch config gets for this mode.
    pub fn config_keys(self) -> toml::Table {
        let mut table = toml::Table::new();
        table.insert("enabled".into(), toml::Value::Boolean(self != PfcwdMode::Off));
        if let PfcwdMode::On(action) = self {
            table.insert("action".into(), toml::Value::String(action.name().into()));
        }
        table
    }
}

pub fn parse_pfcwd(name: &str) -> Result<PfcwdMode> {
    Ok(match name {
        "off" => PfcwdMode::Off,
        "alert" => PfcwdMode::On(PfcwdAction::Alert),
        "drop" => PfcwdMode::On(PfcwdAction::Drop),
        "forward" => PfcwdMode::On(PfcwdAction::Forward),
        other => bail!("unknown PFC watchdog mode `{other}` (known: off, alert, drop, forward)"),
    })
}

pub fn list() -> Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(builtin_dir())
        .with_context(|| format!("cannot list {}", builtin_dir().display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    entries.sort();
    let mut table = crate::table::Table::new(&["NAME", "TOPOLOGY", "POLICY", "DESCRIPTION"]);
    for path in entries {
        let (scenario, _) = load(&path.to_string_lossy())?;
        table.row(vec![
            scenario.name.clone(),
            scenario.topology_label(),
            scenario.policy.name().into(),
            scenario.description,
        ]);
    }
    table.print();
    Ok(())
}

pub fn compare(args: &CompareArgs) -> Result<()> {
    let (scenario, _) = load(&args.scenario)?;
    let varied = !args.pfcwd.is_empty() || !args.qcn.is_empty() || !args.fecn.is_empty();
    let names = match &args.policies {
        Some(names) => names.clone(),
        None if varied => vec![scenario.policy.name().to_string()],
        None => ["pfc-wdrop", "pfc-wstop", "capfc-max", "capfc-cal"].map(String::from).to_vec(),
    };
    // A misspelt policy fails now, not after the runs before it.
    let policies = names.iter().map(|p| parse_policy(p)).collect::<Result<Vec<_>>>()?;
    let mut variants = Vec::new();
    for pfcwd in each(&args.pfcwd) {
        for qcn in each(&args.qcn) {
            for fecn in each(&args.fecn) {
                variants.push(Modes { pfcwd, qcn, fecn });
            }
        }
    }
    let parent = args.out.clone().unwrap_or_else(|| PathBuf::from("results").join(&scenario.name));
    let suffix = if args.sim { "-sim" } else { "" };
    let seeds = if args.seeds.is_empty() { vec![args.seed] } else { args.seeds.clone() };
    let mut per_seed = Vec::new();
    for &seed in &seeds {
        let mut outcomes = Vec::new();
        for (name, policy) in names.iter().zip(&policies) {
            for &modes in &variants {
                let run_args = RunArgs {
                    scenario: args.scenario.clone(),
                    policy: Some(name.clone()),
                    modes,
                    seed,
                    out: Some(run_dir(&parent, policy, &modes, seed, suffix)),
                };
                let outcome = if args.sim { simulate(&run_args)? } else { run(&run_args)? };
                // The label names what varies: the policy when several are compared.
                let mut label = Vec::new();
                if names.len() > 1 || !varied {
                    label.push(name.clone());
                }
                label.extend(modes.labels().into_iter().map(|(scheme, mode)| format!("{scheme} {mode}")));
                outcomes.push((label.join(" "), outcome));
            }
        }
        println!();
        report::print_comparison(&scenario, seed, &outcomes);
        let [svg, png] =
            report::plot_comparison(&scenario, &outcomes, &parent.join(format!("fct-box-seed{seed}{suffix}")))?;
        println!("\nFCT box plot: {} and {}", svg.display(), png.display());
        per_seed.push((seed, outcomes));
    }
    if per_seed.len() > 1 {
        let list = seeds.iter().map(u64::to_string).collect::<Vec<_>>().join(",");
        let file = parent.join(format!("seeds-{list}{suffix}.json"));
        println!();
        report::print_seeds(&scenario, &per_seed, &file)?;
    }
    Ok(())
}

/// Every mode of a `--MODE LIST`, or the scenario's own (`None`) when none is given.
fn each<T: Copy>(list: &[T]) -> Vec<Option<T>> {
    if list.is_empty() { vec![None] } else { list.iter().copied().map(Some).collect() }
}

/// Where one run writes, under `parent`: `POLICY[-pfcwd-MODE][-qcn-MODE][-fecn-MODE]-seedN[-sim]`.
pub fn run_dir(parent: &Path, policy: &RunPolicy, modes: &Modes, seed: u64, suffix: &str) -> PathBuf {
    parent.join(format!("{}{}-seed{seed}{suffix}", policy.name(), modes.suffix()))
}
