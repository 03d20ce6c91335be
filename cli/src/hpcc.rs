//! `pfcswitch hpcc`: HPCC's ns-3 files (`pfcswitch_hpcc`): its `fct_analysis.py` table for
//! any `fct.txt`, its `traffic_gen.py` (with the incast) writing a `flow.txt`, and a check of
//! a `topology.txt` and a `flow.txt` before a run.

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use pfcswitch_hpcc::analysis::{FlowKind, Options, Table};
use pfcswitch_hpcc::flows::FlowFile;
use pfcswitch_hpcc::generate::IncastSpec;
use pfcswitch_hpcc::topology::Topology;
use pfcswitch_hpcc::{config, fct, units};
use pfcswitch_lab::flow_sizes::FlowSizes;
use pfcswitch_lab::hpcc_traffic::{self, TrafficSpec};
use pfcswitch_lab::repository::workloads_dir;
use pfcswitch_lab::scenario::CcMode;
use pfcswitch_lab::scenario::hpcc_fig11::{Fig11Spec, fig11};
use pfcswitch_link::units::ByteSize;
use serde_json::json;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Debug, Subcommand)]
pub enum HpccCommand {
    /// HPCC's `analysis/fct_analysis.py` for FCT files (ours or ns-3's), one column group per
    /// file: flows by size in bins of equal count, each bin's largest size and its p50, p95
    /// and p99 slowdown.
    FctAnalysis(AnalysisArgs),
    /// HPCC's `traffic_gen/traffic_gen.py`: Poisson flows per host at a load, sizes from a
    /// CDF, uniform destinations; with `--incast`, the Fig. 11 incast on top. Writes a flow.txt.
    TrafficGen(GenerateArgs),
    /// Read a topology.txt (and a flow.txt against it) as a run would and summarise them.
    Check(CheckArgs),
    /// Print the config.txt HPCC's run.py writes for a congestion control (`--cc`) and a host
    /// link rate (`--bw`, Gbit/s), with its scaling of ECN thresholds, steps and buffer.
    Preset {
        /// dcqcn, dcqcn_paper, dcqcn_vwin, dcqcn_paper_vwin, hp, dctcp, timely, timely_vwin, hpccPint.
        cc: String,
        #[arg(long, default_value_t = 50)]
        bw: u64,
        /// The topology file's name in mix/ (without .txt).
        #[arg(long, default_value = "fat")]
        topo: String,
        /// The flow file's name in mix/ (without .txt).
        #[arg(long, default_value = "flow")]
        trace: String,
    },
    /// Turn a config.txt (with its TOPOLOGY_FILE and FLOW_FILE, read from the current
    /// directory as ns-3 reads them) into a scenario for `pfcswitch scenario simulate`:
    /// writes DIR/scenario.toml and DIR/switch.toml, and prints what differs from ns-3.
    Import {
        config: PathBuf,
        /// The directory to write into (created if missing).
        #[arg(short = 'o', long)]
        output: PathBuf,
    },
    /// HPCC's Fig. 11 in the simulator: its fat-tree, FB_Hadoop flows at a load (with the
    /// incast by default), and for each congestion control run.py's preset imported and
    /// simulated; prints and writes (DIR/fig11.txt, fig11-p95.svg) the p95 slowdown by flow
    /// size in fct_analysis.py's bins and the time PFC paused the devices.
    Fig11(Fig11Args),
    /// Write HPCC's 320-host fat-tree (its mix/fat.txt, the fabric of its Fig. 11).
    FatTree {
        /// The topology.txt to write.
        #[arg(short = 'o', long)]
        output: PathBuf,
    },
}

#[derive(Debug, Args)]
pub struct AnalysisArgs {
    /// fct.txt files.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Bin width in percent of the flows (fct_analysis.py's `-s`; `-s` is `--socket` here).
    #[arg(long, default_value_t = 5)]
    step: usize,
    /// 0: normal flows (dport 100), 1: incast flows (dport 200), 2: all.
    #[arg(short = 't', long = "type", default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=2))]
    kind: u8,
    /// Only flows that finish before this time, in ns.
    #[arg(short = 'T', long, default_value_t = 3_000_000_000)]
    time_limit: u64,
}

#[derive(Debug, Args)]
pub struct GenerateArgs {
    /// Flow-size CDF: a built-in name (hadoop, websearch, …) or a file, ours or HPCC's (percent).
    #[arg(short = 'c', long = "cdf")]
    cdf: String,
    /// Hosts: node ids 0 to N − 1, as traffic_gen.py numbers them.
    #[arg(short = 'n', long = "nhost", required_unless_present = "topology", conflicts_with = "topology")]
    hosts: Option<u32>,
    /// Hosts: those of this topology.txt, by their node ids (for topologies that do not
    /// number hosts first, as HPCC's mix/topology.txt, whose node 0 is its switch).
    #[arg(long)]
    topology: Option<PathBuf>,
    /// Offered load per host, a share of its link.
    #[arg(short = 'l', long, default_value_t = 0.3)]
    load: f64,
    /// Host link rate: traffic_gen's `10G`, `100M`, or ns-3's `100Gbps`.
    #[arg(short = 'b', long, default_value = "10G")]
    bandwidth: String,
    /// How long flows start for after 2 s, in seconds.
    #[arg(short = 't', long, default_value = "10")]
    time: String,
    /// The flow.txt to write.
    #[arg(short = 'o', long)]
    output: PathBuf,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Add HPCC's Fig. 11 incast (dport 200).
    #[arg(long)]
    incast: bool,
    /// The incast's share of the network's capacity.
    #[arg(long, default_value_t = 0.02, requires = "incast")]
    incast_load: f64,
    /// Senders per incast event.
    #[arg(long, default_value_t = 60, requires = "incast")]
    incast_senders: usize,
    /// Bytes each incast sender sends.
    #[arg(long, default_value = "500KB", requires = "incast")]
    incast_size: ByteSize,
}

#[derive(Debug, Args)]
pub struct Fig11Args {
    /// The directory to write into: fat.txt, flow.txt, a directory per control, the table.
    #[arg(short = 'o', long)]
    output: PathBuf,
    /// Offered load of the FB_Hadoop flows per host (the paper: 0.3 with the incast, 0.5 without).
    #[arg(short = 'l', long, default_value_t = 0.3)]
    load: f64,
    /// Leave out the incast (the paper's 50 % run).
    #[arg(long)]
    no_incast: bool,
    /// How long flows start for (the paper's runs start them for far longer; 1 ms keeps the
    /// seven runs to minutes).
    #[arg(short = 't', long, default_value = "1ms", value_parser = pfcswitch_link::units::parse_duration)]
    time: std::time::Duration,
    /// How long each run goes on after the last flow may start (unfinished flows are not in fct.txt).
    #[arg(long, default_value = "9ms", value_parser = pfcswitch_link::units::parse_duration)]
    drain: std::time::Duration,
    /// Comma-separated congestion controls.
    #[arg(long, value_delimiter = ',', default_value = "hpcc,dcqcn,dcqcn-w,timely,timely-w,dctcp,swift")]
    cc: Vec<CcMode>,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// fct_analysis.py's bin width, in percent of the flows.
    #[arg(long, default_value_t = 5)]
    step: usize,
    /// Simulator threads per run: 2 splits the fabric over two threads, with the same
    /// results (docs/simulator.md, "Two threads").
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..=2))]
    threads: u8,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// HPCC's topology.txt.
    topology: PathBuf,
    /// A flow.txt whose ends must be hosts of the topology.
    #[arg(long)]
    flows: Option<PathBuf>,
    /// A config.txt whose keys and values must be those HPCC's third.cc reads.
    #[arg(long)]
    config: Option<PathBuf>,
}

pub fn run(command: HpccCommand, json: bool) -> Result<()> {
    match command {
        HpccCommand::FctAnalysis(args) => analyse(&args),
        HpccCommand::TrafficGen(args) => traffic_gen(&args, json),
        HpccCommand::Check(args) => check(&args, json),
        HpccCommand::Preset { cc, bw, topo, trace } => match config::preset(&cc, bw, &topo, &trace) {
            Some(text) => {
                print!("{text}");
                Ok(())
            }
            None => bail!("unknown preset `{cc}` (run.py has {})", config::PRESETS.join(", ")),
        },
        HpccCommand::Import { config, output } => import(&config, &output),
        HpccCommand::Fig11(args) => {
            let spec = Fig11Spec {
                out: args.output,
                load: args.load,
                incast: !args.no_incast,
                flows_for: args.time,
                drain: args.drain,
                controls: args.cc,
                seed: args.seed,
                step: args.step,
                threads: args.threads,
            };
            fig11(&spec).map(drop)
        }
        HpccCommand::FatTree { output } => std::fs::write(&output, Topology::hpcc_fat_tree().emit())
            .with_context(|| format!("writing {}", output.display())),
    }
}

fn analyse(args: &AnalysisArgs) -> Result<()> {
    let files = args.files.iter().map(|f| fct::read(f)).collect::<Result<Vec<_>, _>>()?;
    let kind = [FlowKind::Normal, FlowKind::Incast, FlowKind::All][usize::from(args.kind)];
    let options = Options { step: args.step, kind, time_limit_ns: args.time_limit };
    print!("{}", Table::of(&files, &options).map_err(anyhow::Error::msg)?.emit());
    Ok(())
}

/// A rate as `traffic_gen.py` takes it (a number with an optional `G`, `M` or `K`) or an
/// ns-3 rate string.
fn host_rate(text: &str) -> Result<u64> {
    let (number, scale) = match text.as_bytes().last() {
        Some(b'G') => (&text[..text.len() - 1], "Gbps"),
        Some(b'M') => (&text[..text.len() - 1], "Mbps"),
        Some(b'K') => (&text[..text.len() - 1], "Kbps"),
        _ => (text, ""),
    };
    units::parse_rate(&format!("{number}{scale}")).map_err(|reason| anyhow::anyhow!("--bandwidth {reason}"))
}

fn traffic_gen(args: &GenerateArgs, json: bool) -> Result<()> {
    let sizes = FlowSizes::load(&args.cdf, Path::new("."), &workloads_dir())?;
    let host_bps = host_rate(&args.bandwidth)?;
    let duration_ns = units::parse_seconds(&args.time).map_err(|reason| anyhow::anyhow!("--time {reason}"))?;
    let hosts: Vec<u32> = match (&args.topology, args.hosts) {
        (Some(path), _) => Topology::read(path)?.hosts(),
        (None, Some(n)) => (0..n).collect(),
        (None, None) => unreachable!("clap requires one"),
    };
    let incast = args.incast.then(|| IncastSpec {
        load: args.incast_load,
        senders: args.incast_senders,
        size: args.incast_size.bytes(),
    });
    let spec = TrafficSpec {
        sizes: &sizes,
        hosts: hosts.clone(),
        load: args.load,
        host_bps,
        duration_ns,
        incast,
        seed: args.seed,
    };
    let (file, normal) = hpcc_traffic::generate(&spec)?;
    std::fs::write(&args.output, file.emit()).with_context(|| format!("writing {}", args.output.display()))?;
    let incast = file.flows.len() - normal;
    if json {
        println!(
            "{}",
            json!({ "file": args.output, "flows": normal, "incast_flows": incast, "mean_size": sizes.mean() })
        );
    } else {
        println!(
            "{}: {normal} flows from {} hosts at {} % load ({}, mean {:.0} B), {incast} incast flows",
            args.output.display(),
            hosts.len(),
            args.load * 100.0,
            sizes.name(),
            sizes.mean()
        );
    }
    Ok(())
}

fn import(config: &Path, dir: &Path) -> Result<()> {
    let imported = pfcswitch_lab::scenario::hpcc_import::import(config)?;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    for (name, text) in [("scenario.toml", &imported.scenario), ("switch.toml", &imported.switch)] {
        let path = dir.join(name);
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
    }
    // Read back as a run reads it, so that what was written is known to load.
    let scenario = dir.join("scenario.toml");
    pfcswitch_lab::scenario::load(&scenario.to_string_lossy())?;
    for note in &imported.notes {
        eprintln!("note: {note}");
    }
    println!("wrote {}; run it with: pfcswitch scenario simulate {}", scenario.display(), scenario.display());
    Ok(())
}

fn check(args: &CheckArgs, json: bool) -> Result<()> {
    let config = args.config.as_ref().map(|path| config::Config::read(path)).transpose()?;
    let cc_mode = config.as_ref().map(|config| match config.get("CC_MODE") {
        Some(&config::Value::Count(mode)) => mode,
        _ => 1, // third.cc's default
    });
    let topology = Topology::read(&args.topology)?;
    if topology.trailing_lines > 0 {
        eprintln!(
            "note: {}: {} lines after the header's {} links are ignored, as ns-3 ignores them",
            args.topology.display(),
            topology.trailing_lines,
            topology.links.len()
        );
    }
    let mut rates: BTreeMap<u64, usize> = BTreeMap::new();
    for link in &topology.links {
        *rates.entry(link.rate_bps).or_default() += 1;
    }
    let flows = match &args.flows {
        Some(path) => {
            let file = FlowFile::read(path)?;
            file.check_hosts(&topology, path)?;
            if file.header_count != Some(file.flows.len() as u64) {
                eprintln!(
                    "warning: {}: the first line says {}, the file has {} flows; all of them are read \
                     (traffic_gen.py leaves a stray digit there when its estimate was longer)",
                    path.display(),
                    file.header_count.map_or("no number".into(), |n| n.to_string()),
                    file.flows.len()
                );
            }
            if file.trailing_lines > 0 {
                eprintln!(
                    "note: {}: {} lines after the first line's {} flows are ignored, as ns-3 ignores them",
                    path.display(),
                    file.trailing_lines,
                    file.flows.len()
                );
            }
            Some(file)
        }
        None => None,
    };
    let hosts = topology.hosts().len();
    let by_rate: Vec<String> = rates.iter().map(|(&bps, n)| format!("{n} at {}", units::format_rate(bps))).collect();
    if json {
        let flow_summary = flows
            .as_ref()
            .map(|f| json!({ "flows": f.flows.len(), "bytes": f.flows.iter().map(|f| f.size).sum::<u64>() }));
        println!(
            "{}",
            json!({
                "nodes": topology.nodes, "hosts": hosts, "switches": topology.switches.len(),
                "links": topology.links.len(), "flows": flow_summary,
                "config": config.as_ref().map(|c| json!({ "keys": c.values.len(), "cc_mode": cc_mode })),
            })
        );
        return Ok(());
    }
    println!(
        "{}: {} nodes, {hosts} hosts, {} switches, {} links ({})",
        args.topology.display(),
        topology.nodes,
        topology.switches.len(),
        topology.links.len(),
        by_rate.join(", ")
    );
    if let (Some(config), Some(path), Some(mode)) = (&config, &args.config, cc_mode) {
        println!("{}: {} keys, CC_MODE {mode} ({})", path.display(), config.values.len(), config::cc_mode_name(mode));
    }
    if let (Some(file), Some(path)) = (&flows, &args.flows) {
        let Some((first, last)) = file.flows.first().zip(file.flows.last()) else {
            bail!("{}: no flows", path.display());
        };
        let bytes: u64 = file.flows.iter().map(|f| f.size).sum();
        println!(
            "{}: {} flows, {bytes} bytes, starting from {} s to {} s",
            path.display(),
            file.flows.len(),
            units::format_seconds(first.start_ns),
            units::format_seconds(last.start_ns)
        );
    }
    Ok(())
}
