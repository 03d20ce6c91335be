//! The `pfcswitch scenario` commands' options: clap `Args` kept in the lab so that `--help` and the API stay one definition.

use super::policy::RunPolicy;
use super::schemes::{CcMode, DcqcnMode, FecnMode, PfcwdMode, QcnMode, parse_fecn, parse_pfcwd, parse_qcn};
use clap::Args;
use pfcswitch_link::units::parse_duration;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Debug, Args, Clone)]
pub struct RunArgs {
    /// A built-in scenario (`pfcswitch scenario list`) or a scenario file.
    pub scenario: String,
    /// Flow-control policy of every switch: pfc, pfc-wdrop, pfc-wstop, capfc-max, capfc-cal, ofc, none
    /// (default: the scenario's); NAME+dcqcn also runs DCQCN in the hosts (as --dcqcn on).
    #[arg(long)]
    pub policy: Option<String>,
    #[command(flatten)]
    pub modes: Modes,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Sets a scenario key, repeatable: a top-level key or a dotted key into one of its tables
    /// (`duration=50ms`, `transport.window=32`), `class.NAME.KEY=V` (one class), `load=V` or
    /// `sizes=V` (every class that has the key), or a switch-config key (`pfc.xoff=100KB`, into
    /// `overrides`). VALUE is TOML if it parses as TOML, else a string.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Links to capture, comma-separated: a host (its link), SW:PORT (the link there) or
    /// `all`. Every frame both ways goes into OUT/captures/LINK.pcap (`sw1.p3-sw2.p1.pcap`),
    /// taken in a tap namespace the link is built through (`run`) or from the simulator's
    /// wire, stamped in nanoseconds of virtual time (`simulate`).
    #[arg(long, value_delimiter = ',', value_name = "LINKS")]
    pub capture: Vec<String>,
    /// Simulator threads (`simulate` only): 2 splits the network over two threads, with the
    /// same results as one (docs/simulator.md, "Two threads"). A run that needs one thread
    /// (captures, lossy cables) says why and runs on one.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..=2))]
    pub threads: u8,
    /// Output directory (default: results/NAME/POLICY[-pfcwd-MODE][-qcn-MODE][-fecn-MODE][-dcqcn-MODE]-seedN).
    // The text is also `--help`'s, where brackets mean optional, not links.
    #[allow(rustdoc::broken_intra_doc_links)]
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
    /// Comma-separated DCQCN modes (see `run --dcqcn`), each run under every policy.
    #[arg(long, value_delimiter = ',')]
    pub dcqcn: Vec<DcqcnMode>,
    /// Comma-separated congestion controls (see `run --cc`), each run under every policy.
    #[arg(long, value_delimiter = ',', conflicts_with = "dcqcn")]
    pub cc: Vec<CcMode>,
    #[arg(long, default_value_t = 1, conflicts_with = "seeds")]
    pub seed: u64,
    /// Comma-separated seeds, each compared in turn, then summarised together (max FCT per
    /// class and policy over the seeds, written to seeds-SEEDS.json).
    #[arg(long, value_delimiter = ',')]
    pub seeds: Vec<u64>,
    /// Sets a scenario key for every run, as `run --set` does; repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Parent of each policy's output directory (default: results/NAME).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Compare in the virtual-time harness instead of namespaces.
    #[arg(long)]
    pub sim: bool,
}

#[derive(Debug, Args, Clone)]
pub struct DeadlockArgs {
    /// Comma-separated policies.
    #[arg(long, value_delimiter = ',', default_value = "pfc,capfc-max,ofc")]
    pub policies: Vec<String>,
    /// Comma-separated totals M: frames over the four flows.
    #[arg(long, value_delimiter = ',', default_value = "240,400,640")]
    pub totals: Vec<u64>,
    /// Random splits per policy and M.
    #[arg(long, default_value_t = 1000)]
    pub iterations: u32,
    /// Seeds the splits: every policy runs the same ones.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Every switch's config (its first port is the template of every port; its policy is
    /// replaced by each of --policies).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// One-way delay of every cable (default: the config's `pfc.cable_delay`, which its
    /// PFC headroom covers).
    #[arg(long, value_parser = parse_duration)]
    pub cable: Option<Duration>,
    /// Output directory (default: results/ofc-deadlock).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// The modes of one run; `None` leaves the scenario's (or the switch configs') own.
#[derive(Clone, Copy, Debug, Default, Args)]
pub struct Modes {
    /// PFC watchdog of every switch: off, alert, drop, forward (default: the switch configs').
    #[arg(long, value_parser = parse_pfcwd)]
    pub pfcwd: Option<PfcwdMode>,
    /// QCN of every switch and host: off, output, input, or either with a sampling, e.g.
    /// input-occupancy-random (default: the scenario's `[qcn]`, else the switch configs').
    #[arg(long, value_parser = parse_qcn)]
    pub qcn: Option<QcnMode>,
    /// FECN of every switch and host: off, hyperbolic or multistage, optionally with
    /// -nSTAGES (multistage) and -gGAMMA, e.g. multistage-n3-g0.98 (default: the scenario's
    /// `[fecn]`, else the switch configs').
    #[arg(long, value_parser = parse_fecn)]
    pub fecn: Option<FecnMode>,
    /// DCQCN in every host: on (with the scenario's `transport.dcqcn`, else Zhu et al.'s
    /// parameters; RoCEv2 framing; it replaces DCTCP; switches mark with the scenario's
    /// `[ecn]`, else the paper's 5 KB / 200 KB / 1 % on the classes' priorities), or off
    /// (default: the scenario's).
    #[arg(long)]
    pub dcqcn: Option<DcqcnMode>,
    /// The hosts' congestion control: none, dctcp, dcqcn, dcqcn-w, hpcc, timely, timely-w or
    /// swift, with the scenario's `transport.NAME` if it has one, else the law's defaults
    /// (hpcc needs `transport.hpcc.base_rtt`, dcqcn-w `transport.dcqcn.base_rtt`, timely-w
    /// `transport.timely.base_rtt`); the other controls are turned off. dcqcn, hpcc and
    /// timely run over RoCEv2, dctcp over the traffic header.
    /// Switches mark ECN for dctcp and dcqcn (the scenario's `[ecn]`, else defaults) and stamp
    /// INT for hpcc (default: the scenario's).
    #[arg(long, conflicts_with = "dcqcn")]
    pub cc: Option<CcMode>,
}

impl Modes {
    /// `-pfcwd-MODE-qcn-MODE-fecn-MODE-dcqcn-MODE` for the modes given, for the run's directory.
    pub fn suffix(&self) -> String {
        self.labels().iter().map(|(scheme, mode)| format!("-{scheme}-{mode}")).collect()
    }

    /// (scheme, mode) of each mode given.
    pub fn labels(&self) -> Vec<(&'static str, String)> {
        let mut labels = Vec::new();
        labels.extend(self.pfcwd.map(|m| ("pfcwd", m.name().to_string())));
        labels.extend(self.qcn.map(|m| ("qcn", m.name())));
        labels.extend(self.fecn.map(|m| ("fecn", m.name())));
        labels.extend(self.dcqcn.map(|m| ("dcqcn", m.name().to_string())));
        labels.extend(self.cc.map(|m| ("cc", m.name().to_string())));
        labels
    }
}

/// Where one run writes, under `parent`: `POLICY[-pfcwd-MODE][-qcn-MODE][-fecn-MODE][-dcqcn-MODE]-seedN[-sim]`.
pub fn run_dir(parent: &Path, policy: &RunPolicy, modes: &Modes, seed: u64, suffix: &str) -> PathBuf {
    parent.join(format!("{}{}-seed{seed}{suffix}", policy.name(), modes.suffix()))
}
