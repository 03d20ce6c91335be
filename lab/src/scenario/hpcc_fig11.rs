//! HPCC's Fig. 11 as one command (`pfcswitch hpcc fig11`): HPCC's 320-host fat-tree at
//! 100 Gbit/s, FB_Hadoop flows from `traffic_gen.py` at a load (30 % with the incast its
//! authors describe, 50 % without, in the paper), and one simulated run per congestion
//! control. Each run is what a user would do by hand: `run.py`'s preset for the control
//! (`pfcswitch hpcc preset`), imported (`pfcswitch hpcc import`), simulated; the report is
//! `fct_analysis.py`'s p95 slowdown by size for each control, and the time PFC paused the
//! devices (`pfc.txt`).
//!
//! Swift has no `run.py` preset: it runs the DCQCN preset's fabric (its switches, buffer and
//! ECN marking, which Swift's data does not ask for) with Swift's defaults in the hosts.

use super::hpcc_import::{Imported, import};
use super::schemes::CcMode;
use crate::flow_sizes::FlowSizes;
use crate::hpcc_traffic::{self, TrafficSpec};
use crate::plot::{Chart, Scale, Series, draw};
use crate::repository::workloads_dir;
use crate::table::Table;
use anyhow::{Context, Result, bail};
use pfcswitch_hpcc::analysis::{Bin, FlowKind, Options};
use pfcswitch_hpcc::config::preset;
use pfcswitch_hpcc::generate::{BASE_NS, IncastSpec};
use pfcswitch_hpcc::topology::Topology;
use pfcswitch_hpcc::{fct, pfc};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The paper's host links.
const HOST_GBPS: u64 = 100;

/// What to run.
#[derive(Clone, Debug)]
pub struct Fig11Spec {
    pub out: PathBuf,
    /// Offered load of `traffic_gen.py`'s flows per host (0.3 or 0.5 in the paper).
    pub load: f64,
    /// Add the Fig. 11 incast (the paper's 30 % runs).
    pub incast: bool,
    /// How long flows start for, after 2 s.
    pub flows_for: Duration,
    /// How long the run goes on after the last flow may start.
    pub drain: Duration,
    pub controls: Vec<CcMode>,
    pub seed: u64,
    /// `fct_analysis.py`'s bin width, in percent of the flows.
    pub step: usize,
    /// Simulator threads per run (`scenario simulate --threads`).
    pub threads: u8,
}

/// One control's run.
#[derive(Clone, Debug)]
pub struct SchemeRun {
    pub cc: CcMode,
    /// `traffic_gen.py`'s flows (dport 100) in `fct_analysis.py`'s bins.
    pub bins: Vec<Bin>,
    pub finished: usize,
    /// PFC's pause time summed over every paused device.
    pub paused: Duration,
    pub pfc_events: usize,
    pub wall: Duration,
}

/// `run.py`'s preset for a control, and the control the hosts run instead of the preset's
/// (Swift, which `run.py` does not have).
fn preset_of(cc: CcMode) -> Result<(&'static str, Option<CcMode>)> {
    Ok(match cc {
        CcMode::Hpcc => ("hp", None),
        CcMode::Dcqcn => ("dcqcn", None),
        CcMode::DcqcnW => ("dcqcn_vwin", None),
        CcMode::Timely => ("timely", None),
        CcMode::TimelyW => ("timely_vwin", None),
        CcMode::Dctcp => ("dctcp", None),
        CcMode::Swift => ("dcqcn", Some(CcMode::Swift)),
        CcMode::None => bail!("--cc none: Fig. 11 compares congestion controls, and run.py has no run without one"),
    })
}

/// Writes the fat-tree and the flows into `spec.out`, runs every control, writes the table
/// (`fig11.txt`) and the plot (`fig11-p95.svg`, `.png`), and returns the runs.
pub fn fig11(spec: &Fig11Spec) -> Result<Vec<SchemeRun>> {
    // Refused before anything is written.
    for &cc in &spec.controls {
        preset_of(cc)?;
    }
    std::fs::create_dir_all(&spec.out).with_context(|| format!("creating {}", spec.out.display()))?;
    let out = spec.out.canonicalize().with_context(|| format!("{}", spec.out.display()))?;
    let topology = Topology::hpcc_fat_tree();
    let (fat, flow) = (out.join("fat.txt"), out.join("flow.txt"));
    write(&fat, &topology.emit())?;
    let sizes = FlowSizes::load("hadoop", &out, &workloads_dir())?;
    let traffic = TrafficSpec {
        sizes: &sizes,
        hosts: topology.hosts(),
        load: spec.load,
        host_bps: HOST_GBPS * 1_000_000_000,
        duration_ns: spec.flows_for.as_nanos() as u64,
        incast: spec.incast.then(IncastSpec::default),
        seed: spec.seed,
    };
    let (flows, normal) = hpcc_traffic::generate(&traffic)?;
    write(&flow, &flows.emit())?;
    println!(
        "{}: {normal} FB_Hadoop flows at {} % load, {} incast flows, starting within {:?}",
        flow.display(),
        spec.load * 100.0,
        flows.flows.len() - normal,
        spec.flows_for
    );
    let stop_s = (BASE_NS as f64 + (spec.flows_for + spec.drain).as_nanos() as f64) / 1e9;
    let runs =
        spec.controls.iter().map(|&cc| run_one(spec, &out, cc, &fat, &flow, stop_s)).collect::<Result<Vec<_>>>()?;
    let table = table(&runs);
    write(&out.join("fig11.txt"), &table)?;
    print!("{table}");
    let series: Vec<Series> = (runs.iter())
        .map(|r| Series { label: r.cc.name().into(), points: r.bins.iter().map(|b| (b.size as f64, b.p95)).collect() })
        .collect();
    let title =
        format!("HPCC Fig. 11: FB_Hadoop {} %{}", spec.load * 100.0, if spec.incast { " + incast" } else { "" });
    let chart = Chart {
        title: &title,
        x_label: "flow size (bytes)",
        y_label: "p95 FCT slowdown",
        x_scale: Scale::Log10,
        y_scale: Scale::Log10,
        series: &series,
        step: false,
    };
    let [svg, _] = draw(&chart, &out.join("fig11-p95"))?;
    println!("table: {}\nplot:  {}", out.join("fig11.txt").display(), svg.display());
    Ok(runs)
}

/// `run.py`'s preset for `cc`, imported and simulated in `out/<cc>/`.
fn run_one(spec: &Fig11Spec, out: &Path, cc: CcMode, fat: &Path, flow: &Path, stop_s: f64) -> Result<SchemeRun> {
    let (name, hosts_cc) = preset_of(cc)?;
    let dir = out.join(cc.name());
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let config_text = preset(name, HOST_GBPS, "fat", "flow").expect("run.py has the preset");
    let config_text = (config_text.lines())
        .map(|line| match line.split_once(' ') {
            Some(("TOPOLOGY_FILE", _)) => format!("TOPOLOGY_FILE {}", fat.display()),
            Some(("FLOW_FILE", _)) => format!("FLOW_FILE {}", flow.display()),
            Some(("SIMULATOR_STOP_TIME", _)) => format!("SIMULATOR_STOP_TIME {stop_s}"),
            _ => line.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n");
    let config = dir.join("config.txt");
    write(&config, &(config_text + "\n"))?;
    let Imported { scenario, switch, .. } = import(&config)?;
    write(&dir.join("scenario.toml"), &scenario)?;
    write(&dir.join("switch.toml"), &switch)?;
    let run = dir.join("run");
    let started = Instant::now();
    simulate_apart(&dir, &run, hosts_cc, spec).with_context(|| format!("--cc {}", cc.name()))?;
    let wall = started.elapsed();
    let records = fct::read(&run.join("fct.txt"))?;
    let options = Options { step: spec.step, kind: FlowKind::Normal, ..Options::default() };
    let bins = pfcswitch_hpcc::analysis::Table::of(std::slice::from_ref(&records), &options)
        .map_err(|e| anyhow::anyhow!("--cc {}: {e}", cc.name()))?
        .columns
        .remove(0);
    let events = pfc::read(&run.join("pfc.txt"))?;
    let end_ns = (stop_s * 1e9) as u64;
    Ok(SchemeRun {
        cc,
        bins,
        finished: records.len(),
        paused: Duration::from_nanos(pfc::paused_ns(&events, end_ns)),
        pfc_events: events.len(),
        wall,
    })
}

/// The p95 slowdown of every bin under every control, then PFC and the runs' sizes.
fn table(runs: &[SchemeRun]) -> String {
    let mut headers = vec!["FLOWS UP TO (B)".to_string()];
    headers.extend(runs.iter().map(|r| format!("{} P95", r.cc.name().to_uppercase())));
    let mut table = Table::new(&headers.iter().map(String::as_str).collect::<Vec<_>>());
    let rows = runs.first().map_or(0, |r| r.bins.len());
    for row in 0..rows {
        let mut cells = vec![runs[0].bins[row].size.to_string()];
        cells.extend(runs.iter().map(|r| format!("{:.3}", r.bins[row].p95)));
        table.row(cells);
    }
    let mut line = |label: &str, cell: &dyn Fn(&SchemeRun) -> String| {
        let mut cells = vec![label.to_string()];
        cells.extend(runs.iter().map(cell));
        table.row(cells);
    };
    line("PFC paused (µs, all devices)", &|r| format!("{:.1}", r.paused.as_secs_f64() * 1e6));
    line("PFC events (pfc.txt lines)", &|r| r.pfc_events.to_string());
    line("flows finished", &|r| r.finished.to_string());
    line("wall time (s)", &|r| format!("{:.1}", r.wall.as_secs_f64()));
    table.render()
}

/// `pfcswitch scenario simulate` of `dir`'s scenario into `run`, as a child process: each
/// run's memory goes back to the system when it ends (in one process the allocator kept
/// every run's, 11 GB after seven), and its report goes to `dir/log.txt`. Prints the
/// simulator's line on its speed and memory.
fn simulate_apart(dir: &Path, run: &Path, cc: Option<CcMode>, spec: &Fig11Spec) -> Result<()> {
    let program = std::env::current_exe().context("cannot tell which program simulates")?;
    let log_path = dir.join("log.txt");
    let log = std::fs::File::create(&log_path).with_context(|| format!("creating {}", log_path.display()))?;
    let mut command = Command::new(&program);
    command.args(["scenario", "simulate"]).arg(dir.join("scenario.toml"));
    command.args(["--seed", &spec.seed.to_string(), "--threads", &spec.threads.to_string()]).arg("--out").arg(run);
    command.args(cc.iter().flat_map(|cc| ["--cc", cc.name()]));
    command.stdin(Stdio::null()).stdout(log.try_clone()?).stderr(log);
    let status = command.status().with_context(|| format!("cannot start {}", program.display()))?;
    let text = std::fs::read_to_string(&log_path).unwrap_or_default();
    if !status.success() {
        bail!("{status}; its output is in {}:\n{}", log_path.display(), text.trim_end());
    }
    let name = dir.file_name().map_or(String::new(), |n| n.to_string_lossy().into_owned());
    for line in text.lines().filter(|l| l.starts_with("simulator:")) {
        println!("{name}: {line}");
    }
    Ok(())
}

fn write(path: &Path, text: &str) -> Result<()> {
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
}
