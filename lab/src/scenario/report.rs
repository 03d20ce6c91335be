//! What a run measured: `results.json`, the summary table, and the plots.

use super::Scenario;
use super::paths::{Crossed, PathSummary, Paths};
use super::phases::{self, FlowBins, Phase};
use crate::endpoint::{EndpointResult, ReceiverResult, SenderResult};
use crate::plot::{self, BoxChart, BoxSeries, BoxStats, Chart, Scale, Series};
use crate::table::Table;
use crate::workload::{Pattern, PlannedConnection};
use anyhow::{Context, Result};
use pfcswitch_link::shaper::WIRE_OVERHEAD;
use pfcswitch_link::time::Instant;
use pfcswitch_sim::SimStats;
use pfcswitch_switch::counters::DropReason;
use pfcswitch_switch::report::{QueueDepths, Snapshot};
use serde::Serialize;
use serde_json::json;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// One switch queue at one time (seconds from the workload's start).
#[derive(Clone, Debug, Serialize)]
pub struct QueueSample {
    pub seconds: f64,
    pub switch: String,
    pub port: String,
    pub priority: u8,
    pub egress_bytes: u64,
    pub ingress_bytes: u64,
    /// The port's OFC tables (counted once per port, on its first sampled priority).
    pub ofc_table_bytes: [u64; 3],
}

impl QueueSample {
    /// One sample per port of `depths` and per priority of `priorities`.
    pub fn of<'a>(
        seconds: f64,
        switch: &'a str,
        depths: &'a [QueueDepths],
        priorities: &'a [u8],
    ) -> impl Iterator<Item = QueueSample> + 'a {
        depths.iter().flat_map(move |port| {
            priorities.iter().enumerate().map(move |(i, &p)| QueueSample {
                seconds,
                switch: switch.to_string(),
                port: port.port.clone(),
                priority: p,
                egress_bytes: port.egress_bytes[usize::from(p)],
                ingress_bytes: port.ingress_bytes[usize::from(p)],
                ofc_table_bytes: if i == 0 { port.ofc_table_bytes } else { [0; 3] },
            })
        })
    }
}

/// A storm of the run and the PFC frames its host sent.
#[derive(Clone, Debug, Serialize)]
pub struct StormRun {
    pub host: String,
    pub priority: u8,
    pub quanta: u16,
    /// From the workload's start.
    pub start_seconds: f64,
    pub duration_seconds: f64,
    pub frames: u64,
}

impl StormRun {
    /// The scenario's storms with the frames each sent.
    pub fn of(scenario: &Scenario, frames: &[u64]) -> Vec<StormRun> {
        (scenario.storms.iter().zip(frames))
            .map(|(s, &frames)| StormRun {
                host: s.host.clone(),
                priority: s.priority,
                quanta: s.quanta,
                start_seconds: s.start.as_secs_f64(),
                duration_seconds: s.duration.as_secs_f64(),
                frames,
            })
            .collect()
    }
}

/// Every flow's goodput before, during and after the storms: from the first storm's start to
/// the last one's end, and from there to the workload's end.
#[derive(Clone, Debug, Serialize)]
pub struct StormWindows {
    pub start_seconds: f64,
    pub end_seconds: f64,
    pub flows: Vec<FlowWindows>,
}

/// One flow's in-order goodput (Mbit/s) in each window; `None` for an empty window.
#[derive(Clone, Debug, Serialize)]
pub struct FlowWindows {
    pub flow: u32,
    pub class: String,
    pub from: String,
    pub to: String,
    pub before_mbps: Option<f64>,
    pub storm_mbps: Option<f64>,
    pub after_mbps: Option<f64>,
}

impl StormWindows {
    fn of(record: &RunRecord, flows: &[Flow]) -> Option<StormWindows> {
        let start = record.storms.iter().map(|s| s.start_seconds).reduce(f64::min)?;
        let end = record.storms.iter().map(|s| s.start_seconds + s.duration_seconds).reduce(f64::max)?;
        let workload_end = record.scenario.duration.as_secs_f64();
        let bin = record.scenario.transport.bin.as_secs_f64();
        // Bins wholly inside [from, to); a window shorter than a bin has no rate.
        let rate = |bins: &[u64], from: f64, to: f64| {
            let first = (from / bin - 1e-9).ceil() as usize;
            let last = ((to.min(workload_end) / bin + 1e-9).floor() as usize).max(first);
            let bytes: u64 = (first..last).map(|i| bins.get(i).copied().unwrap_or(0)).sum();
            (last > first).then(|| bytes as f64 * 8.0 / ((last - first) as f64 * bin) / 1e6)
        };
        let flows = flows
            .iter()
            .map(|f| {
                let c = f.connection;
                let bins = f.receiver.map_or(&[][..], |r| &r.goodput_bins[..]);
                FlowWindows {
                    flow: c.id,
                    class: record.scenario.classes[c.class].name.clone(),
                    from: record.hosts[c.sender].clone(),
                    to: record.hosts[c.receiver].clone(),
                    before_mbps: rate(bins, 0.0, start),
                    storm_mbps: rate(bins, start, end),
                    after_mbps: rate(bins, end, workload_end),
                }
            })
            .collect();
        Some(StormWindows { start_seconds: start, end_seconds: end, flows })
    }
}

/// Everything a run collected.
pub struct RunRecord<'a> {
    pub scenario: &'a Scenario,
    pub policy: &'a str,
    /// The switches' PFC watchdog mode.
    pub pfcwd: &'a str,
    /// The switches' QCN mode (`off`, `CP-SAMPLING`, `mixed`).
    pub qcn: &'a str,
    /// The switches' FECN mode (`off`, the queue control, `mixed`).
    pub fecn: &'a str,
    pub seed: u64,
    pub hosts: &'a [String],
    /// The topology's links, as `topology.sh describe` lists them.
    pub links: &'a [String],
    pub connections: &'a [PlannedConnection],
    pub storms: &'a [StormRun],
    pub epoch: Instant,
    /// From the workload's start to the last host finishing (or giving up).
    pub seconds: f64,
    pub gave_up: bool,
    pub endpoints: &'a [EndpointResult],
    pub samples: &'a [QueueSample],
    pub snapshots: &'a [(String, Snapshot)],
    /// How fast the simulator ran (simulated runs only).
    pub simulator: Option<&'a SimulatorSpeed>,
}

/// The simulator's speed over a run: work done per wall-clock second, and memory.
#[derive(Clone, Debug, Serialize)]
pub struct SimulatorSpeed {
    pub simulated_seconds: f64,
    pub wall_seconds: f64,
    pub frame_hops: u64,
    pub events: u64,
    pub frame_hops_per_second: f64,
    pub events_per_second: f64,
    /// Frame buffers held at once at most (each up to an MTU-sized frame).
    pub peak_frames: usize,
    /// The process's peak resident memory (VmHWM), MiB.
    pub peak_rss_mib: Option<f64>,
}

impl SimulatorSpeed {
    pub fn of(stats: SimStats, simulated: Duration, wall: Duration) -> SimulatorSpeed {
        let wall_seconds = wall.as_secs_f64().max(1e-9);
        let peak_rss_mib = std::fs::read_to_string("/proc/self/status").ok().and_then(|status| {
            let line = status.lines().find_map(|l| l.strip_prefix("VmHWM:"))?;
            let kib: f64 = line.trim().trim_end_matches("kB").trim().parse().ok()?;
            Some(kib / 1024.0)
        });
        SimulatorSpeed {
            simulated_seconds: simulated.as_secs_f64(),
            wall_seconds,
            frame_hops: stats.frame_hops,
            events: stats.events,
            frame_hops_per_second: stats.frame_hops as f64 / wall_seconds,
            events_per_second: stats.events as f64 / wall_seconds,
            peak_frames: stats.peak_frames,
            peak_rss_mib,
        }
    }
}

impl std::fmt::Display for SimulatorSpeed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "simulated {:.3} s in {:.2} s of wall time: {} frame-hops ({:.2} M/s), {} events ({:.2} M/s), at most {} frame buffers",
            self.simulated_seconds,
            self.wall_seconds,
            self.frame_hops,
            self.frame_hops_per_second / 1e6,
            self.events,
            self.events_per_second / 1e6,
            self.peak_frames
        )?;
        match self.peak_rss_mib {
            Some(mib) => write!(f, ", peak RSS {mib:.0} MiB"),
            None => Ok(()),
        }
    }
}

/// FCT statistics of a set of messages in milliseconds, with the quartiles of a box plot
/// (OFC's Fig. 4); unfinished messages are counted, not timed.
#[derive(Clone, Debug, Serialize)]
pub struct FctStats {
    pub messages: usize,
    pub finished: usize,
    pub fct_avg_ms: Option<f64>,
    pub fct_min_ms: Option<f64>,
    pub fct_p25_ms: Option<f64>,
    pub fct_p50_ms: Option<f64>,
    pub fct_p75_ms: Option<f64>,
    pub fct_p99_ms: Option<f64>,
    pub fct_max_ms: Option<f64>,
}

impl FctStats {
    /// Of `values` sorted ascending, out of `messages`.
    fn of(values: &[f64], messages: usize) -> FctStats {
        FctStats {
            messages,
            finished: values.len(),
            fct_avg_ms: (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64),
            fct_min_ms: values.first().copied(),
            fct_p25_ms: quantile(values, 0.25),
            fct_p50_ms: quantile(values, 0.5),
            fct_p75_ms: quantile(values, 0.75),
            fct_p99_ms: quantile(values, 0.99),
            fct_max_ms: values.last().copied(),
        }
    }

    /// Min, quartiles and max, if any message finished.
    fn box_stats(&self) -> Option<BoxStats> {
        Some(BoxStats {
            min: self.fct_min_ms?,
            p25: self.fct_p25_ms?,
            median: self.fct_p50_ms?,
            p75: self.fct_p75_ms?,
            max: self.fct_max_ms?,
        })
    }
}

/// What one traffic class did.
#[derive(Clone, Debug, Serialize)]
pub struct ClassSummary {
    pub class: String,
    pub priority: u8,
    #[serde(flatten)]
    pub fct: FctStats,
    pub retransmitted: u64,
    pub timeouts: u64,
    /// Sum over the class's flows of their goodput while active.
    pub goodput_mbps: f64,
    /// Its flows send until the workload ends (no FCT).
    pub long_lived: bool,
    /// Paced flows (`constant`): their offered rate, summed.
    pub offered_mbps: Option<f64>,
    /// Time the NICs of the class's senders were paused on its priority, summed (ms): how
    /// much PFC (or OFC obeyed as PFC) held the class back at its source.
    pub senders_paused_ms: f64,
    pub group: Option<String>,
    /// The egress queues its flows crossed.
    pub path: PathSummary,
}

/// FCTs over several classes (OFC's Table I: all, uncongested and congested flows).
#[derive(Clone, Debug, Serialize)]
pub struct GroupSummary {
    pub group: String,
    #[serde(flatten)]
    pub fct: FctStats,
    /// The egress queues its flows crossed (OFC's Fig. 5: the average queue of the ports
    /// through which all, uncongested and congested flows traverse).
    pub path: PathSummary,
}

/// "all", then each group the classes name, in order of first appearance.
fn groups(record: &RunRecord, fcts: &[(Vec<f64>, usize)], paths: &[Crossed]) -> Vec<GroupSummary> {
    let scenario = record.scenario;
    let mut names = vec!["all".to_string()];
    for class in &scenario.classes {
        if let Some(group) = class.group.as_ref().filter(|g| !names.contains(g)) {
            names.push(group.clone());
        }
    }
    names
        .iter()
        .map(|name| {
            let member = |c: usize| name == "all" || scenario.classes[c].group.as_ref() == Some(name);
            let chosen = (0..fcts.len()).filter(|&c| member(c));
            let mut values: Vec<f64> = chosen.clone().flat_map(|c| fcts[c].0.iter().copied()).collect();
            values.sort_by(f64::total_cmp);
            let crossed = Crossed::union(chosen.clone().map(|c| &paths[c]));
            GroupSummary {
                group: name.clone(),
                fct: FctStats::of(&values, chosen.map(|c| fcts[c].1).sum()),
                path: PathSummary::of(&crossed, record.samples, record.snapshots),
            }
        })
        .collect()
}

/// The time-averaged egress queue over every (switch, port, priority sampled), in bytes:
/// the "average queue length" of OFC's Fig. 2(b) and Fig. 5, over all ports.
fn average_queue_bytes(samples: &[QueueSample]) -> f64 {
    if samples.is_empty() {
        return 0.0;
    }
    samples.iter().map(|s| s.egress_bytes as f64).sum::<f64>() / samples.len() as f64
}

/// What `compare` puts side by side.
#[derive(Clone, Debug, Serialize)]
pub struct Outcome {
    pub classes: Vec<ClassSummary>,
    pub pfc_frames: u64,
    pub drops: u64,
    /// Frames of lossless priorities the switches dropped (for want of room, or by the PFC
    /// watchdog), not counting frames no switch should forward (filtered, link-local).
    pub lossless_drops: u64,
    pub max_egress_bytes: u64,
    /// Segments the receivers saw out of order (each follows a loss on the way).
    pub out_of_order_at_receivers: u64,
    /// PFC frames the storming hosts sent.
    pub storm_frames: u64,
    pub storm: Option<StormWindows>,
    /// FCTs over all classes and per group.
    pub groups: Vec<GroupSummary>,
    pub average_queue_bytes: f64,
    /// Under OFC, the tables' average bytes per port over the run (Table II):
    /// flow_in_port_tab, congested_flow_tab, pause_frame_tab.
    pub ofc_table_bytes: Option<[f64; 3]>,
    /// Long-lived flows phase by phase (goodput, CNMs, fairness).
    pub phases: Vec<Phase>,
    /// CNMs the switches sent.
    pub cnms_sent: u64,
    /// The switch port that sent the most, over the run (a fan-in's bottleneck).
    pub busiest_output: Option<PortLoad>,
}

/// What one switch port sent over a run.
#[derive(Clone, Debug, Serialize)]
pub struct PortLoad {
    pub switch: String,
    pub port: String,
    /// Ethernet frames (without preamble and gap), bit/s ÷ 10⁶, over the run from the epoch.
    pub tx_mbps: f64,
    /// Of the port's speed.
    pub utilisation: f64,
}

impl PortLoad {
    fn busiest(snapshots: &[(String, Snapshot)], seconds: f64) -> Option<PortLoad> {
        let ports = snapshots.iter().flat_map(|(switch, s)| s.ports.iter().map(move |p| (switch, p)));
        let tx = |p: &pfcswitch_switch::report::PortReport| p.priorities.iter().map(|q| q.tx_bytes).sum::<u64>();
        let (switch, port) = ports.max_by_key(|(_, p)| tx(p))?;
        let tx_mbps = tx(port) as f64 * 8.0 / seconds / 1e6;
        Some(PortLoad {
            switch: switch.clone(),
            port: port.name.clone(),
            tx_mbps,
            utilisation: tx_mbps * 1e6 / port.speed_bps as f64,
        })
    }
}

/// The `q` quantile of sorted values (nearest rank).
fn quantile(sorted: &[f64], q: f64) -> Option<f64> {
    let rank = ((sorted.len() as f64 * q).ceil() as usize).clamp(1, sorted.len().max(1));
    sorted.get(rank - 1).copied()
}

fn ms(value: Option<f64>) -> String {
    value.map_or("-".into(), |v| format!("{v:.3}"))
}

struct Flow<'a> {
    connection: &'a PlannedConnection,
    sender: Option<&'a SenderResult>,
    receiver: Option<&'a ReceiverResult>,
}

impl Flow<'_> {
    /// The receiver, and the seconds from its first to its last segment, if it got two.
    fn active(&self) -> Option<(&ReceiverResult, f64)> {
        let r = self.receiver?;
        match (r.first_rx_ns, r.last_rx_ns) {
            (Some(first), Some(last)) if last > first => Some((r, (last - first) as f64 / 1e9)),
            _ => None,
        }
    }

    fn goodput_mbps(&self) -> f64 {
        self.active().map_or(0.0, |(r, seconds)| r.bytes as f64 * 8.0 / seconds / 1e6)
    }

    /// Share of the link the flow's frames used on the wire (preamble, gap and FCS included).
    fn utilisation(&self, speed_bps: u64) -> f64 {
        self.active().map_or(0.0, |(r, seconds)| {
            (r.frame_bytes + WIRE_OVERHEAD * r.segments) as f64 * 8.0 / seconds / speed_bps as f64
        })
    }
}

/// `CLASS SENDER→RECEIVER`, how plots and tables name a flow.
fn flow_label(record: &RunRecord, c: &PlannedConnection) -> String {
    format!("{} {}→{}", record.scenario.classes[c.class].name, record.hosts[c.sender], record.hosts[c.receiver])
}

fn flows<'a>(record: &'a RunRecord) -> Vec<Flow<'a>> {
    record
        .connections
        .iter()
        .map(|c| Flow {
            connection: c,
            sender: record.endpoints[c.sender].senders.iter().find(|s| s.connection == c.id),
            receiver: record.endpoints[c.receiver].receivers.iter().find(|r| r.connection == c.id),
        })
        .collect()
}

/// FCTs (ms) per class; unfinished messages are counted, not timed.
fn fcts(record: &RunRecord) -> Vec<(Vec<f64>, usize)> {
    let mut per_class = vec![(Vec::new(), 0usize); record.scenario.classes.len()];
    for endpoint in record.endpoints {
        for m in endpoint.messages.iter().filter(|m| m.size.is_some()) {
            let class = record.connections[m.connection as usize].class;
            per_class[class].1 += 1;
            if let Some(finish) = m.finish_ns {
                per_class[class].0.push((finish - m.start_ns) as f64 / 1e6);
            }
        }
    }
    for (values, _) in &mut per_class {
        values.sort_by(f64::total_cmp);
    }
    per_class
}

/// Per class, the egress queues its flows crossed.
fn class_paths(record: &RunRecord) -> Vec<Crossed> {
    let paths = Paths::new(record.links, record.snapshots);
    let mut per_class = vec![Crossed::default(); record.scenario.classes.len()];
    for c in record.connections {
        per_class[c.class].add(paths.hops(&record.hosts[c.sender], &record.hosts[c.receiver]), c.priority);
    }
    per_class
}

fn summaries(record: &RunRecord, flows: &[Flow], fcts: &[(Vec<f64>, usize)], paths: &[Crossed]) -> Vec<ClassSummary> {
    fcts.iter()
        .zip(&record.scenario.classes)
        .enumerate()
        .map(|(c, ((values, messages), class))| {
            let (values, messages) = (values.as_slice(), *messages);
            let class_flows = || flows.iter().filter(|f| f.connection.class == c);
            let senders = class_flows().filter_map(|f| f.sender);
            let (retransmitted, timeouts) = senders.fold((0, 0), |(r, t), s| (r + s.retransmitted, t + s.timeouts));
            ClassSummary {
                class: class.name.clone(),
                priority: class.priority,
                fct: FctStats::of(values, messages),
                retransmitted,
                timeouts,
                goodput_mbps: class_flows().map(Flow::goodput_mbps).sum(),
                long_lived: matches!(class.kind, Pattern::Long | Pattern::Constant) && class.size.is_none(),
                offered_mbps: (class.kind == Pattern::Constant)
                    .then(|| class.bandwidth.map(|b| b.bps() as f64 / 1e6 * class_flows().count() as f64))
                    .flatten(),
                senders_paused_ms: {
                    let mut senders: Vec<usize> = class_flows().map(|f| f.connection.sender).collect();
                    senders.sort_unstable();
                    senders.dedup();
                    let p = usize::from(class.priority);
                    senders.iter().map(|&h| record.endpoints[h].paused_seconds[p] * 1e3).sum()
                },
                group: class.group.clone(),
                path: PathSummary::of(&paths[c], record.samples, record.snapshots),
            }
        })
        .collect()
}

/// Table II: each OFC table's bytes per port, averaged over the samples.
fn ofc_table_bytes(samples: &[QueueSample]) -> [f64; 3] {
    // One sample per port carries its tables: those of the first sampled priority.
    let first = samples.first().map(|s| s.priority);
    let n = samples.iter().filter(|s| Some(s.priority) == first).count().max(1) as f64;
    std::array::from_fn(|t| samples.iter().map(|s| s.ofc_table_bytes[t] as f64).sum::<f64>() / n)
}

/// Drops of lossless priorities that lost a frame the network should have delivered.
fn lossless_drops(snapshots: &[(String, Snapshot)]) -> u64 {
    let not_loss = [DropReason::Filtered.name(), DropReason::LinkLocal.name()];
    (snapshots.iter().flat_map(|(_, s)| &s.ports).flat_map(|p| &p.priorities))
        .filter(|p| p.lossless)
        .flat_map(|p| p.drops.iter())
        .filter(|(reason, _)| !not_loss.contains(&reason.as_str()))
        .map(|(_, n)| n)
        .sum()
}

fn switch_table(snapshots: &[(String, Snapshot)]) -> (Table, u64, u64, u64) {
    let mut table = Table::new(&["SWITCH", "PORT", "PFC-TX", "PFC-RX", "DROPS", "MAX-EGRESS", "MAX-INGRESS"]);
    let (mut pfc, mut drops, mut max_egress) = (0, 0, 0);
    for (switch, snapshot) in snapshots {
        for port in &snapshot.ports {
            let sum =
                |f: fn(&pfcswitch_switch::report::PriorityReport) -> u64| port.priorities.iter().map(f).sum::<u64>();
            let (port_pfc, port_drops) = (sum(|p| p.pfc_tx), sum(|p| p.drops.values().sum()));
            let egress = port.priorities.iter().map(|p| p.egress_high_water).max().unwrap_or(0);
            let ingress = port.priorities.iter().map(|p| p.ingress_high_water).max().unwrap_or(0);
            pfc += port_pfc;
            drops += port_drops;
            max_egress = max_egress.max(egress);
            table.row(vec![
                switch.clone(),
                port.name.clone(),
                port_pfc.to_string(),
                sum(|p| p.pfc_rx).to_string(),
                port_drops.to_string(),
                egress.to_string(),
                ingress.to_string(),
            ]);
        }
    }
    (table, pfc, drops, max_egress)
}

fn plots(record: &RunRecord, flows: &[Flow], fcts: &[(Vec<f64>, usize)], out: &Path) -> Result<Vec<String>> {
    let mut written = Vec::new();
    let name = &record.scenario.name;
    let cdfs: Vec<Series> = fcts
        .iter()
        .zip(&record.scenario.classes)
        .filter(|((values, _), _)| !values.is_empty())
        .map(|((values, _), class)| Series {
            label: format!("{} (prio {})", class.name, class.priority),
            points: plot::cdf(values),
        })
        .collect();
    let mut draw = |file: &str, what: &str, axes: [&str; 2], x_scale, series: &[Series]| -> Result<()> {
        let scheme = |name: &str, mode: &str| if mode == "off" { String::new() } else { format!(", {name} {mode}") };
        let schemes = scheme("qcn", record.qcn) + &scheme("fecn", record.fecn);
        let title =
            format!("{name}: {what} ({}, pfcwd {}{schemes}, seed {})", record.policy, record.pfcwd, record.seed);
        let chart = Chart { title: &title, x_label: axes[0], y_label: axes[1], x_scale, series, step: true };
        written.extend(plot::draw(&chart, &out.join(file))?);
        Ok(())
    };
    draw("fct-cdf", "FCT per class", ["FCT (ms)", "fraction of messages"], Scale::Log10, &cdfs)?;

    let mut queues: BTreeMap<(String, String), BTreeMap<u64, f64>> = BTreeMap::new();
    for s in record.samples {
        let at = queues.entry((s.switch.clone(), s.port.clone())).or_default();
        *at.entry((s.seconds * 1e6) as u64).or_default() += s.egress_bytes as f64 / 1e3;
    }
    let queue_series: Vec<Series> = queues
        .into_iter()
        .filter(|(_, points)| points.values().any(|&v| v > 0.0))
        .map(|((switch, port), points)| Series {
            label: format!("{switch}:{port}"),
            points: points.into_iter().map(|(us, kb)| (us as f64 / 1e6, kb)).collect(),
        })
        .collect();
    draw("queues", "egress queue depth", ["time (s)", "egress queue (KB)"], Scale::Linear, &queue_series)?;

    const SHOWN: usize = 16;
    let mut by_bytes: Vec<&Flow> = flows.iter().filter(|f| f.receiver.is_some()).collect();
    by_bytes.sort_by_key(|f| std::cmp::Reverse(f.receiver.map_or(0, |r| r.bytes)));
    let bin = record.scenario.transport.bin.as_secs_f64();
    let throughput: Vec<Series> = by_bytes
        .iter()
        .take(SHOWN)
        .map(|f| {
            let c = f.connection;
            let bins = f.receiver.map_or(&[][..], |r| &r.goodput_bins[..]);
            Series {
                label: flow_label(record, c),
                points: bins
                    .iter()
                    .enumerate()
                    .map(|(i, &b)| ((i as f64 + 0.5) * bin, b as f64 * 8.0 / bin / 1e6))
                    .collect(),
            }
        })
        .collect();
    let what = if by_bytes.len() > SHOWN {
        format!("goodput of the {SHOWN} largest of {} flows", by_bytes.len())
    } else {
        "goodput per flow".to_string()
    };
    draw("throughput", &what, ["time (s)", "goodput (Mbit/s)"], Scale::Linear, &throughput)?;

    // Each flow from its class's start to its stop: outside, a released limiter says nothing.
    let shown: Vec<&Flow> = by_bytes.iter().take(SHOWN).copied().collect();
    let per_bin = |f: &Flow, values: &mut dyn Iterator<Item = f64>| -> Vec<(f64, f64)> {
        let class = &record.scenario.classes[f.connection.class];
        let (start, stop) = (class.start.as_secs_f64(), class.stop.unwrap_or(record.scenario.duration).as_secs_f64());
        let points = values.enumerate().map(|(i, v)| (i as f64 * bin, v));
        points.filter(|&(t, _)| t >= start && t < stop).collect()
    };
    let series = |values: &dyn Fn(&SenderResult) -> Option<Vec<f64>>| -> Vec<Series> {
        (shown.iter())
            .filter_map(|f| {
                let values = values(f.sender?)?;
                Some(Series { label: flow_label(record, f.connection), points: per_bin(f, &mut values.into_iter()) })
            })
            .collect()
    };
    // QCN: each flow's rate limit, and when its CNMs came (the QCN paper's Fig. 2(c)).
    let rates = series(&|s| Some(s.qcn.as_ref()?.rate_mbps.clone()));
    if !rates.is_empty() {
        let what = "QCN rate limit per flow (reaction point's current rate)";
        draw("qcn-rates", what, ["time (s)", "rate limit (Mbit/s)"], Scale::Linear, &rates)?;
        let cnms = series(&|s| {
            let q = s.qcn.as_ref()?;
            let total = (0..q.rate_mbps.len().max(q.cnm_bins.len())).scan(0.0, |total, i| {
                *total += f64::from(q.cnm_bins.get(i).copied().unwrap_or(0));
                Some(*total)
            });
            Some(total.collect())
        });
        draw("qcn-cnms", "CNMs received per flow, cumulative", ["time (s)", "CNMs"], Scale::Linear, &cnms)?;
    }
    // FECN: each flow's rate, as its reflected probes set it.
    let rates = series(&|s| Some(s.fecn.as_ref()?.rate_mbps.clone()));
    if !rates.is_empty() {
        let what = "FECN rate per flow (from reflected probes)";
        draw("fecn-rates", what, ["time (s)", "rate (Mbit/s)"], Scale::Linear, &rates)?;
    }
    Ok(written.iter().map(|p| p.display().to_string()).collect())
}

/// Writes results.json and the plots into `out`, prints the table, returns the summary.
pub fn write(record: &RunRecord, out: &Path) -> Result<Outcome> {
    let flows = flows(record);
    let fcts = fcts(record);
    let paths = class_paths(record);
    let classes = summaries(record, &flows, &fcts, &paths);
    let scenario = record.scenario;
    println!(
        "scenario {} ({}), policy {}, pfcwd {}, qcn {}, fecn {}, seed {}: {} hosts at {}, workload {:.2} s, finished after {:.3} s{}",
        scenario.name,
        scenario.topology_label(),
        record.policy,
        record.pfcwd,
        record.qcn,
        record.fecn,
        record.seed,
        record.hosts.len(),
        scenario.speed,
        scenario.duration.as_secs_f64(),
        record.seconds,
        if record.gave_up { " (GAVE UP: some messages did not finish)" } else { "" }
    );
    if let Some(speed) = record.simulator {
        println!("simulator: {speed}");
    }
    let mut table = Table::new(&[
        "CLASS",
        "PRIO",
        "MESSAGES",
        "DONE",
        "FCT-AVG-MS",
        "P50-MS",
        "P99-MS",
        "MAX-MS",
        "RETX",
        "TIMEOUTS",
    ]);
    for c in &classes {
        let long_lived = c.long_lived;
        table.row(vec![
            c.class.clone(),
            c.priority.to_string(),
            if long_lived { "long-lived".into() } else { c.fct.messages.to_string() },
            if long_lived { "-".into() } else { c.fct.finished.to_string() },
            ms(c.fct.fct_avg_ms),
            ms(c.fct.fct_p50_ms),
            ms(c.fct.fct_p99_ms),
            ms(c.fct.fct_max_ms),
            c.retransmitted.to_string(),
            c.timeouts.to_string(),
        ]);
    }
    table.print();
    println!();
    let qcn = flows.iter().any(|f| f.sender.is_some_and(|s| s.qcn.is_some()));
    let mut headers = vec!["FLOW", "CLASS", "FROM", "TO", "BYTES", "GOODPUT-MBPS", "LINK-USE", "OUT-OF-ORDER"];
    if qcn {
        headers.push("CNMS");
    }
    let mut flow_table = Table::new(&headers);
    let speed = scenario.speed.bps();
    for f in flows.iter().take(24) {
        let c = f.connection;
        let mut row = vec![
            c.id.to_string(),
            scenario.classes[c.class].name.clone(),
            record.hosts[c.sender].clone(),
            record.hosts[c.receiver].clone(),
            f.receiver.map_or(0, |r| r.bytes).to_string(),
            format!("{:.2}", f.goodput_mbps()),
            format!("{:.1}%", 100.0 * f.utilisation(speed)),
            f.receiver.map_or(0, |r| r.out_of_order).to_string(),
        ];
        if qcn {
            row.push(f.sender.and_then(|s| s.qcn.as_ref()).map_or(0, |q| q.cnms).to_string());
        }
        flow_table.row(row);
    }
    flow_table.print();
    if flows.len() > 24 {
        println!("... {} more flows in results.json", flows.len() - 24);
    }
    println!();
    let storm = StormWindows::of(record, &flows);
    if let Some(windows) = &storm {
        print_storm_windows(record, windows);
    }
    let (switch_table, pfc_frames, drops, max_egress_bytes) = switch_table(record.snapshots);
    switch_table.print();
    let busiest_output = PortLoad::busiest(record.snapshots, record.seconds);
    if let Some(busiest) = &busiest_output {
        println!(
            "busiest output: {}:{} sent {:.1} Mbit/s, {:.1} % of its speed",
            busiest.switch,
            busiest.port,
            busiest.tx_mbps,
            busiest.utilisation * 100.0
        );
    }
    let long_lived: Vec<FlowBins> = flows
        .iter()
        .filter(|f| {
            let class = &scenario.classes[f.connection.class];
            matches!(class.kind, Pattern::Long | Pattern::Constant) && class.size.is_none()
        })
        .map(|f| FlowBins {
            connection: f.connection,
            label: flow_label(record, f.connection),
            receiver_host: &record.hosts[f.connection.receiver],
            sender: f.sender,
            receiver: f.receiver,
        })
        .collect();
    let phases = phases::phases(scenario, &long_lived);
    if phases.len() > 1 || phases.iter().any(|p| !p.fairness.is_empty()) {
        println!();
        print_phases(&[("goodput Mbit/s".to_string(), &phases)]);
    }
    let out_of_order_at_receivers = flows.iter().filter_map(|f| f.receiver).map(|r| r.out_of_order).sum();
    let plot_files = plots(record, &flows, &fcts, out)?;
    let outcome = Outcome {
        classes,
        pfc_frames,
        drops,
        lossless_drops: lossless_drops(record.snapshots),
        max_egress_bytes,
        out_of_order_at_receivers,
        storm_frames: record.storms.iter().map(|s| s.frames).sum(),
        storm,
        groups: groups(record, &fcts, &paths),
        average_queue_bytes: average_queue_bytes(record.samples),
        ofc_table_bytes: (record.policy == "ofc").then(|| ofc_table_bytes(record.samples)),
        phases,
        cnms_sent: (record.snapshots.iter().filter_map(|(_, s)| s.qcn.as_ref()))
            .flat_map(|q| &q.points)
            .map(|p| p.counters.cnms_sent)
            .sum(),
        busiest_output,
    };
    let results = json!({
        "scenario": scenario.name, "topology": scenario.topology_label(), "policy": record.policy, "pfcwd": record.pfcwd, "qcn": record.qcn, "fecn": record.fecn,
        "seed": record.seed, "storms": record.storms,
        "speed": scenario.speed, "duration_seconds": scenario.duration.as_secs_f64(),
        "seconds": record.seconds, "gave_up": record.gave_up, "hosts": record.hosts,
        "summary": outcome,
        "flows": flows.iter().map(|f| json!({
            "id": f.connection.id, "class": scenario.classes[f.connection.class].name,
            "from": record.hosts[f.connection.sender], "to": record.hosts[f.connection.receiver],
            "priority": f.connection.priority, "sender": f.sender, "receiver": f.receiver,
            "goodput_mbps": f.goodput_mbps(), "link_use": f.utilisation(speed),
        })).collect::<Vec<_>>(),
        "messages": record.endpoints.iter().flat_map(|e| e.messages.iter().map(|m| json!({
            "flow": m.connection, "class": scenario.classes[record.connections[m.connection as usize].class].name,
            "id": m.id, "size": m.size,
            "start_seconds": (m.start_ns - record.epoch.as_nanos()) as f64 / 1e9,
            "fct_ms": m.finish_ns.map(|f| (f - m.start_ns) as f64 / 1e6),
        }))).collect::<Vec<_>>(),
        "endpoints": record.endpoints.iter().map(|e| json!({
            "host": e.host, "pfc_rx": e.pfc_rx, "pause_rx": e.pause_rx, "paused_seconds": e.paused_seconds,
            "foreign_frames": e.foreign_frames, "socket_drops": e.socket_drops, "timer_late_p99_us": e.timer_late_p99_us,
            "reflections_dropped": e.reflections_dropped,
        })).collect::<Vec<_>>(),
        "switches": record.snapshots.iter().map(|(name, s)| json!({ "name": name, "snapshot": s })).collect::<Vec<_>>(),
        "queue_samples": record.samples,
        "simulator": record.simulator,
        "plots": plot_files,
    });
    let path = out.join("results.json");
    std::fs::write(&path, serde_json::to_vec_pretty(&results)?)
        .with_context(|| format!("cannot write {}", path.display()))?;
    println!("\nresults: {}", path.display());
    for file in &plot_files {
        println!("plot:    {file}");
    }
    Ok(outcome)
}

fn mbps(value: Option<f64>) -> String {
    value.map_or("-".into(), |v| format!("{v:.1}"))
}

fn print_storm_windows(record: &RunRecord, windows: &StormWindows) {
    for s in record.storms {
        println!(
            "storm: {} paused priority {} from {:.2} s for {:.2} s with {} PFC frames of {} quanta",
            s.host, s.priority, s.start_seconds, s.duration_seconds, s.frames, s.quanta
        );
    }
    let storm = format!("STORM {:.2}-{:.2}s", windows.start_seconds, windows.end_seconds);
    let mut table = Table::new(&["FLOW", "CLASS", "FROM", "TO", "BEFORE-MBPS", &format!("{storm}-MBPS"), "AFTER-MBPS"]);
    for f in &windows.flows {
        table.row(vec![
            f.flow.to_string(),
            f.class.clone(),
            f.from.clone(),
            f.to.clone(),
            mbps(f.before_mbps),
            mbps(f.storm_mbps),
            mbps(f.after_mbps),
        ]);
    }
    table.print();
    println!();
}

/// The FCTs of every group under every compared policy as a box plot (OFC's Fig. 4), written
/// to `<stem>.svg` and `.png`.
pub fn plot_comparison(scenario: &Scenario, outcomes: &[(String, Outcome)], stem: &Path) -> Result<[PathBuf; 2]> {
    let categories: Vec<String> =
        outcomes.first().map(|(_, o)| o.groups.iter().map(|g| g.group.clone()).collect()).unwrap_or_default();
    let series: Vec<BoxSeries> = outcomes
        .iter()
        .map(|(label, outcome)| BoxSeries {
            label: label.clone(),
            boxes: outcome.groups.iter().map(|g| g.fct.box_stats()).collect(),
        })
        .collect();
    let title = format!("{}: FCT per flow group", scenario.name);
    let chart =
        BoxChart { title: &title, x_label: "flows", y_label: "FCT (ms)", categories: &categories, series: &series };
    plot::draw_boxes(&chart, stem)
}

/// Several seeds' comparisons at once: per class and policy the median over the seeds of
/// the max FCT (with its range) and of the p99, printed and written to `file` with every
/// seed's figures.
pub fn print_seeds(scenario: &Scenario, per_seed: &[(u64, Vec<(String, Outcome)>)], file: &Path) -> Result<()> {
    let labels: Vec<&str> = per_seed[0].1.iter().map(|(label, _)| label.as_str()).collect();
    let seeds: Vec<u64> = per_seed.iter().map(|(seed, _)| *seed).collect();
    println!(
        "scenario {}, seeds {seeds:?}: FCT in ms, median over the seeds of max [lowest, highest] and of p99",
        scenario.name
    );
    let mut headers = vec!["CLASS".to_string()];
    headers.extend(labels.iter().map(|l| l.to_uppercase()));
    let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
    let mut table = Table::new(&headers);
    let mut rows = Vec::new();
    for (c, class) in scenario.classes.iter().enumerate() {
        let mut row = vec![class.name.clone()];
        for (l, label) in labels.iter().enumerate() {
            let stat = |pick: fn(&FctStats) -> Option<f64>| -> Vec<f64> {
                per_seed.iter().filter_map(|(_, outcomes)| pick(&outcomes[l].1.classes[c].fct)).collect()
            };
            let (max, p99) = (stat(|f| f.fct_max_ms), stat(|f| f.fct_p99_ms));
            let lowest = max.iter().copied().reduce(f64::min);
            let highest = max.iter().copied().reduce(f64::max);
            row.push(format!("{} [{}, {}] / {}", ms(median(&max)), ms(lowest), ms(highest), ms(median(&p99))));
            rows.push(json!({ "class": class.name, "policy": label, "max_ms": max, "p99_ms": p99,
                "max_median_ms": median(&max), "p99_median_ms": median(&p99) }));
        }
        table.row(row);
    }
    table.print();
    let runs: Vec<_> = per_seed
        .iter()
        .flat_map(|(seed, outcomes)| {
            outcomes.iter().map(move |(label, o)| {
                json!({ "seed": seed, "policy": label, "classes": o.classes, "pfc_frames": o.pfc_frames,
                    "lossless_drops": o.lossless_drops, "drops": o.drops })
            })
        })
        .collect();
    let summary = json!({ "scenario": scenario.name, "seeds": seeds, "classes": rows, "runs": runs });
    std::fs::write(file, serde_json::to_vec_pretty(&summary)?)
        .with_context(|| format!("cannot write {}", file.display()))?;
    println!("\nseeds summary: {}", file.display());
    Ok(())
}

/// The median of `values` (nearest rank: the lower middle one of an even count).
fn median(values: &[f64]) -> Option<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    quantile(&sorted, 0.5)
}

/// One row per class, one column group per policy.
pub fn print_comparison(scenario: &Scenario, seed: u64, outcomes: &[(String, Outcome)]) {
    println!(
        "scenario {}, seed {}: FCT in ms (p50 / p99 / max, finished/messages); long-lived classes: goodput",
        scenario.name, seed
    );
    let mut headers = vec!["CLASS".to_string()];
    headers.extend(outcomes.iter().map(|(policy, _)| policy.to_uppercase()));
    let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
    let mut table = Table::new(&headers);
    for (c, class) in scenario.classes.iter().enumerate() {
        let mut row = vec![class.name.clone()];
        for (_, outcome) in outcomes {
            let s = &outcome.classes[c];
            let paused = if s.senders_paused_ms > 0.0 {
                format!(", senders paused {:.0} ms", s.senders_paused_ms)
            } else {
                String::new()
            };
            let offered = s.offered_mbps.map_or(String::new(), |o| format!(" of {o:.0}"));
            row.push(if s.long_lived {
                format!("{:.1}{offered} Mbit/s goodput{paused}", s.goodput_mbps)
            } else if s.offered_mbps.is_some() {
                format!("{} ms, {:.1}{offered} Mbit/s{paused}", ms(s.fct.fct_max_ms), s.goodput_mbps)
            } else {
                format!(
                    "{} / {} / {} ({}/{})",
                    ms(s.fct.fct_p50_ms),
                    ms(s.fct.fct_p99_ms),
                    ms(s.fct.fct_max_ms),
                    s.fct.finished,
                    s.fct.messages
                )
            });
        }
        table.row(row);
    }
    // Storm scenarios: each flow's goodput before / during / after the storms.
    if let Some((_, first)) = outcomes.first()
        && let Some(windows) = &first.storm
    {
        for (i, f) in windows.flows.iter().enumerate() {
            let mut row = vec![format!("{} {}→{} (before / storm / after)", f.class, f.from, f.to)];
            for (_, outcome) in outcomes {
                row.push(outcome.storm.as_ref().and_then(|w| w.flows.get(i)).map_or("-".into(), |f| {
                    format!("{} / {} / {} Mbit/s", mbps(f.before_mbps), mbps(f.storm_mbps), mbps(f.after_mbps))
                }));
            }
            table.row(row);
        }
    }
    if let Some((_, first)) = outcomes.first() {
        for (g, group) in first.groups.iter().enumerate().filter(|(_, g)| g.group != "all" || first.groups.len() > 1) {
            let mut row = vec![format!("FCT p99 / max: {}", group.group)];
            row.extend(outcomes.iter().map(|(_, o)| {
                o.groups.get(g).map_or("-".into(), |x| format!("{} / {}", ms(x.fct.fct_p99_ms), ms(x.fct.fct_max_ms)))
            }));
            table.row(row);
        }
        for (g, group) in first.groups.iter().enumerate() {
            let mut row = vec![format!("path queue avg (B) / paused (ms): {}", group.group)];
            row.extend(outcomes.iter().map(|(_, o)| {
                o.groups
                    .get(g)
                    .map_or("-".into(), |x| format!("{:.0} / {:.1}", x.path.average_queue_bytes, x.path.paused_ms))
            }));
            table.row(row);
        }
        let mut row = vec!["busiest output (Mbit/s sent)".to_string()];
        row.extend(outcomes.iter().map(|(_, o)| {
            o.busiest_output.as_ref().map_or("-".into(), |b| format!("{}:{} {:.1}", b.switch, b.port, b.tx_mbps))
        }));
        table.row(row);
        let mut row = vec!["average egress queue (B)".to_string()];
        row.extend(outcomes.iter().map(|(_, o)| format!("{:.0}", o.average_queue_bytes)));
        table.row(row);
        if outcomes.iter().any(|(_, o)| o.ofc_table_bytes.is_some()) {
            let mut row = vec!["OFC tables per port (B): flow_in_port / congested / pause_frame".to_string()];
            row.extend(outcomes.iter().map(|(_, o)| {
                o.ofc_table_bytes.map_or("-".into(), |b| format!("{:.1} / {:.1} / {:.1}", b[0], b[1], b[2]))
            }));
            table.row(row);
        }
    }
    for (label, value) in [
        ("PFC frames", (|o: &Outcome| o.pfc_frames) as fn(&Outcome) -> u64),
        ("CNMs sent", |o| o.cnms_sent),
        ("storm PFC frames", |o| o.storm_frames),
        ("switch drops", |o| o.drops),
        ("lossless drops", |o| o.lossless_drops),
        ("max egress queue (B)", |o| o.max_egress_bytes),
        ("out-of-order at receivers", |o| o.out_of_order_at_receivers),
    ] {
        let mut row = vec![label.to_string()];
        row.extend(outcomes.iter().map(|(_, o)| value(o).to_string()));
        table.row(row);
    }
    table.print();
    let phases: Vec<(String, &[Phase])> = outcomes.iter().map(|(label, o)| (label.clone(), &o.phases[..])).collect();
    if phases.iter().any(|(_, p)| p.len() > 1 || p.iter().any(|p| !p.fairness.is_empty())) {
        println!();
        print_phases(&phases);
    }
}

/// Per phase: each active flow's goodput (and CNMs) under each run, then Jain's index per
/// receiver shared by several flows.
fn print_phases(runs: &[(String, &[Phase])]) {
    let Some((_, first)) = runs.first() else { return };
    for (p, phase) in first.iter().enumerate() {
        println!("phase {:.2}-{:.2} s: goodput Mbit/s (CNMs received)", phase.from_seconds, phase.to_seconds);
        let mut headers = vec!["FLOW".to_string()];
        headers.extend(runs.iter().map(|(label, _)| label.to_uppercase()));
        let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
        let mut table = Table::new(&headers);
        let cell = |phases: &[Phase], pick: &dyn Fn(&Phase) -> Option<String>| {
            phases.get(p).and_then(pick).unwrap_or_else(|| "-".into())
        };
        for (f, flow) in phase.flows.iter().enumerate() {
            let mut row = vec![flow.label.clone()];
            row.extend(runs.iter().map(|(_, phases)| {
                cell(phases, &|x| {
                    let flow = x.flows.get(f)?;
                    let cnms = flow.cnms.map_or(String::new(), |n| format!(" ({n})"));
                    Some(format!("{:.1}{cnms}", flow.goodput_mbps))
                })
            }));
            table.row(row);
        }
        for (r, fairness) in phase.fairness.iter().enumerate() {
            let mut row = vec![format!("Jain's index, {} flows into {}", fairness.flows, fairness.receiver)];
            row.extend(
                runs.iter().map(|(_, phases)| cell(phases, &|x| x.fairness.get(r)?.jain.map(|j| format!("{j:.3}")))),
            );
            table.row(row);
            let mut row = vec![format!("within 5 % of the mean after (s), into {}", fairness.receiver)];
            row.extend(runs.iter().map(|(_, phases)| {
                cell(phases, &|x| {
                    let after = x.fairness.get(r)?.converged_after_seconds;
                    Some(after.map_or("never".into(), |s| format!("{s:.2}")))
                })
            }));
            table.row(row);
        }
        table.print();
    }
}
