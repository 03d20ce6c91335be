//! A run's report: the tables it prints, its plots, and `results.json` with the summary
//! (`summary.rs`) and what the run collected (`record.rs`). Comparing runs is `compare.rs`'s.

use super::endpoint::{ReceiverResult, SenderResult};
use super::phases::{self, FlowBins, Phase};
use super::record::RunRecord;
use super::slowdown::{self, FlowTime, SlowdownSummary};
use super::summary::{
    Flow, OfferedLoad, Outcome, PortLoad, StormWindows, average_queue_bytes, class_paths, datapath_drops, fcts, flows,
    groups, lossless_drops, ofc_table_bytes, port_datapath_drops, summaries,
};
use crate::plot::{self, Chart, Scale, Series};
use crate::table::Table;
use crate::workload::{Pattern, PlannedConnection};
use anyhow::{Context, Result};
use pfcswitch_switch::report::Snapshot;
use serde_json::json;
use std::collections::BTreeMap;
use std::path::Path;

/// Writes results.json and the plots into `out`, prints the table, returns the summary.
pub(super) fn write(record: &RunRecord, out: &Path) -> Result<Outcome> {
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
        match (record.interrupted, record.gave_up) {
            (true, _) => " (INTERRUPTED: partial results)",
            (false, true) => " (GAVE UP: some messages did not finish)",
            (false, false) => "",
        }
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
    for c in &classes {
        if let Some(load) = &c.offered_load {
            let target = load.target.map_or(String::new(), |t| format!("{t:.3} asked, "));
            println!(
                "class {}: offered load {target}{:.3} offered (of its senders' link rate)",
                c.class, load.achieved
            );
        }
    }
    println!();
    let slowdown = SlowdownSummary::of(&slowdown::flow_times(record, record.ideal));
    if let Some(slowdown) = &slowdown {
        slowdown.print();
        println!();
    }
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
    let busiest_output = PortLoad::busiest(record.snapshots, record.seconds, record.samples);
    if let Some(busiest) = &busiest_output {
        let queue = match (busiest.queue_p50_bytes, busiest.queue_p99_bytes) {
            (Some(p50), Some(p99)) => format!("; its queue {p50} B at p50, {p99} B at p99"),
            _ => String::new(),
        };
        println!(
            "busiest output: {}:{} sent {:.1} Mbit/s, {:.1} % of its speed{queue}",
            busiest.switch,
            busiest.port,
            busiest.tx_mbps,
            busiest.utilisation * 100.0
        );
    }
    print_pfc_verdicts(record.snapshots);
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
    let mut plot_files = plots(record, &flows, &fcts, out)?;
    if let Some(summary) = &slowdown {
        let title = format!("{}: FCT slowdown by flow size ({}, seed {})", scenario.name, record.policy, record.seed);
        let files = slowdown::plot(&title, &[(String::new(), summary)], &out.join("slowdown"))?;
        plot_files.extend(files.iter().map(|f| f.display().to_string()));
    }
    let offered_load = OfferedLoad::overall(&classes);
    let outcome = Outcome {
        classes,
        pfc_frames,
        drops,
        lossless_drops: lossless_drops(record.snapshots),
        datapath_drops: datapath_drops(record.snapshots),
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
        slowdown,
        offered_load,
    };
    let results = json!({
        "scenario": scenario.name, "topology": scenario.topology_label(), "policy": record.policy, "pfcwd": record.pfcwd, "qcn": record.qcn, "fecn": record.fecn,
        "seed": record.seed, "storms": record.storms, "faults": record.faults,
        "capture_epoch_seconds": record.capture_epoch_seconds,
        "set": scenario.sets,
        "speed": scenario.speed, "duration_seconds": scenario.duration.as_secs_f64(),
        "seconds": record.seconds, "gave_up": record.gave_up, "interrupted": record.interrupted, "hosts": record.hosts,
        "summary": outcome,
        "endpoints": record.endpoints.iter().map(|e| json!({
            "host": e.host, "pfc_rx": e.pfc_rx, "pause_rx": e.pause_rx, "paused_seconds": e.paused_seconds,
            "foreign_frames": e.foreign_frames, "socket_drops": e.socket_drops, "unstamped_frames": e.unstamped_frames,
            "read_wait_p50_us": e.read_wait_p50_us, "read_wait_p99_us": e.read_wait_p99_us,
            "timer_late_p99_us": e.timer_late_p99_us,
            "reflections_dropped": e.reflections_dropped, "malformed": e.malformed,
        })).collect::<Vec<_>>(),
        "pfc_explain": record.snapshots.iter()
            .map(|(name, s)| json!({ "switch": name, "priority_groups": pfcswitch_switch::explain::explain(s) }))
            .collect::<Vec<_>>(),
        "simulator": record.simulator,
        "plots": plot_files,
    });
    let path = out.join("results.json");
    let write = || -> Result<()> {
        let mut file = std::io::BufWriter::new(std::fs::File::create(&path)?);
        let switches = record.snapshots.iter().map(|(name, snapshot)| SwitchEntry { name, snapshot }).collect();
        let class = |c: &PlannedConnection| scenario.classes[c.class].name.as_str();
        let flows = Sequence(|| {
            flows.iter().map(|f| FlowEntry {
                id: f.connection.id,
                class: class(f.connection),
                from: &record.hosts[f.connection.sender],
                to: &record.hosts[f.connection.receiver],
                priority: f.connection.priority,
                sender: f.sender,
                receiver: f.receiver,
                goodput_mbps: f.goodput_mbps(),
                link_use: f.utilisation(speed),
            })
        });
        let messages = Sequence(|| {
            record.endpoints.iter().flat_map(|e| &e.messages).map(|m| {
                let fct_ns = m.finish_ns.map(|f| f - m.start_ns);
                let ideal = FlowTime::of(record, record.ideal, m).map(|(_, ideal)| ideal);
                MessageEntry {
                    flow: m.connection,
                    class: class(&record.connections[m.connection as usize]),
                    id: m.id,
                    size: m.size,
                    start_seconds: (m.start_ns - record.epoch.as_nanos()) as f64 / 1e9,
                    fct_ms: fct_ns.map(|f| f as f64 / 1e6),
                    ideal_fct_ms: ideal.map(|i| i.as_secs_f64() * 1e3),
                    slowdown: fct_ns.zip(ideal).map(|(f, i)| f as f64 / 1e9 / i.as_secs_f64()),
                }
            })
        });
        let streamed = Streamed { rest: &results, flows, messages, switches, queue_samples: record.samples };
        serde_json::to_writer_pretty(&mut file, &streamed)?;
        std::io::Write::flush(&mut file)?;
        Ok(())
    };
    write().with_context(|| format!("cannot write {}", path.display()))?;
    println!("\nresults: {}", path.display());
    println!("fct.txt: {} (HPCC's format)", super::hpcc_out::write_fct(record, out)?.display());
    if record.simulator.is_some() {
        println!("pfc.txt: {} (HPCC's format)", super::hpcc_out::write_pfc(record, out)?.display());
    }
    for file in &plot_files {
        println!("plot:    {file}");
    }
    Ok(outcome)
}

/// `results.json`: its largest parts, the flows and messages (1.66 million of each for
/// 100 ms of HPCC's fat-tree), the switches' snapshots and the queue samples (1.2 GB for a
/// k = 32 fat-tree), are written from the record as they are serialised, not built as a
/// JSON tree first (which took ten gigabytes in either run).
#[derive(serde::Serialize)]
#[serde(bound(serialize = "Sequence<F>: serde::Serialize, Sequence<M>: serde::Serialize"))]
struct Streamed<'a, F, M> {
    #[serde(flatten)]
    rest: &'a serde_json::Value,
    flows: Sequence<F>,
    messages: Sequence<M>,
    switches: Vec<SwitchEntry<'a>>,
    queue_samples: &'a [super::record::QueueSample],
}

/// A JSON array of the items of the iterator `F` makes, serialised one by one.
struct Sequence<F>(F);

impl<F: Fn() -> I, I: Iterator<Item: serde::Serialize>> serde::Serialize for Sequence<F> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq((self.0)())
    }
}

/// A flow of `results.json`: the planned connection and what its ends reported.
#[derive(serde::Serialize)]
struct FlowEntry<'a> {
    id: u32,
    class: &'a str,
    from: &'a str,
    to: &'a str,
    priority: u8,
    sender: Option<&'a SenderResult>,
    receiver: Option<&'a ReceiverResult>,
    goodput_mbps: f64,
    link_use: f64,
}

/// A message of `results.json`, timed against its ideal.
#[derive(serde::Serialize)]
struct MessageEntry<'a> {
    flow: u32,
    class: &'a str,
    id: u32,
    size: Option<u32>,
    start_seconds: f64,
    fct_ms: Option<f64>,
    ideal_fct_ms: Option<f64>,
    slowdown: Option<f64>,
}

#[derive(serde::Serialize)]
struct SwitchEntry<'a> {
    name: &'a str,
    snapshot: &'a Snapshot,
}

/// Per switch port: PFC frames, drops and high-water marks; with the totals.
/// Why PFC fired or did not (`pfcswitch pfc explain`): the priority groups that paused, were
/// paused or dropped; else the one that came closest to XOFF.
fn print_pfc_verdicts(snapshots: &[(String, Snapshot)]) {
    const SHOWN: usize = 12;
    let groups: Vec<(&str, pfcswitch_switch::explain::PgExplanation)> = snapshots
        .iter()
        .flat_map(|(name, snapshot)| {
            pfcswitch_switch::explain::explain(snapshot).into_iter().map(move |e| (name.as_str(), e))
        })
        .collect();
    let fired: Vec<_> = groups.iter().filter(|(_, e)| e.pfc_tx + e.pfc_rx > 0 || !e.drops.is_empty()).collect();
    let closest = groups.iter().max_by(|(_, a), (_, b)| {
        (a.peak_bytes as f64 / a.xoff_bytes.max(1) as f64)
            .total_cmp(&(b.peak_bytes as f64 / b.xoff_bytes.max(1) as f64))
    });
    for (switch, e) in fired.iter().take(SHOWN).copied().chain(closest.filter(|_| fired.is_empty())) {
        println!("pfc {switch}:{} priority {}: {}", e.port, e.priority, e.verdict);
    }
    if fired.len() > SHOWN {
        println!("... {} more in results.json (pfc_explain)", fired.len() - SHOWN);
    }
}

fn switch_table(snapshots: &[(String, Snapshot)]) -> (Table, u64, u64, u64) {
    let mut table =
        Table::new(&["SWITCH", "PORT", "PFC-TX", "PFC-RX", "DROPS", "XDP-DROPS", "MAX-EGRESS", "MAX-INGRESS"]);
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
                port_datapath_drops(port).to_string(),
                egress.to_string(),
                ingress.to_string(),
            ]);
        }
    }
    (table, pfc, drops, max_egress)
}

/// Draws the run's plots into `out`: FCT CDFs, queues, goodput, QCN and FECN rates.
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
        let chart = Chart {
            title: &title,
            x_label: axes[0],
            y_label: axes[1],
            x_scale,
            y_scale: Scale::Linear,
            series,
            step: true,
        };
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
    if !record.faults.is_empty() {
        let rates = super::faults::port_rates(record.samples, record.faults);
        draw(
            "ports",
            "send rate of the faults' switches' ports",
            ["time (s)", "sent (Mbit/s)"],
            Scale::Linear,
            &rates,
        )?;
    }

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
    // QCN and DCQCN: each flow's rate limit, and when its notifications came (the QCN
    // paper's Fig. 2(c)).
    type Limits = fn(&SenderResult) -> Option<(&[f64], &[u32])>;
    let qcn: Limits = |s| s.qcn.as_ref().map(|q| (&q.rate_mbps[..], &q.cnm_bins[..]));
    let dcqcn: Limits = |s| s.dcqcn.as_ref().map(|d| (&d.rate_mbps[..], &d.cnp_bins[..]));
    let schemes = [
        ("qcn", "QCN rate limit per flow (reaction point's current rate)", "CNMs", qcn),
        ("dcqcn", "DCQCN rate per queue pair (reaction point's RC)", "CNPs", dcqcn),
    ];
    for (scheme, what, notices, limits) in schemes {
        let rates = series(&|s| Some(limits(s)?.0.to_vec()));
        if rates.is_empty() {
            continue;
        }
        draw(&format!("{scheme}-rates"), what, ["time (s)", "rate limit (Mbit/s)"], Scale::Linear, &rates)?;
        let received = series(&|s| {
            let (rates, bins) = limits(s)?;
            let total = (0..rates.len().max(bins.len())).scan(0.0, |total, i| {
                *total += f64::from(bins.get(i).copied().unwrap_or(0));
                Some(*total)
            });
            Some(total.collect())
        });
        let what = format!("{notices} received per flow, cumulative");
        draw(&format!("{scheme}-{}", notices.to_lowercase()), &what, ["time (s)", notices], Scale::Linear, &received)?;
    }
    // FECN: each flow's rate, as its reflected probes set it.
    let rates = series(&|s| Some(s.fecn.as_ref()?.rate_mbps.clone()));
    if !rates.is_empty() {
        let what = "FECN rate per flow (from reflected probes)";
        draw("fecn-rates", what, ["time (s)", "rate (Mbit/s)"], Scale::Linear, &rates)?;
    }
    Ok(written.iter().map(|p| p.display().to_string()).collect())
}

/// `CLASS SENDER→RECEIVER`, how plots and tables name a flow.
fn flow_label(record: &RunRecord, c: &PlannedConnection) -> String {
    format!("{} {}→{}", record.scenario.classes[c.class].name, record.hosts[c.sender], record.hosts[c.receiver])
}

/// Milliseconds as the tables show them.
pub(super) fn ms(value: Option<f64>) -> String {
    value.map_or("-".into(), |v| format!("{v:.3}"))
}

/// Mbit/s as the tables show them.
pub(super) fn mbps(value: Option<f64>) -> String {
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

/// Per phase: each active flow's goodput (and CNMs) under each run, then Jain's index per
/// receiver shared by several flows.
pub(super) fn print_phases(runs: &[(String, &[Phase])]) {
    let Some((_, first)) = runs.first() else { return };
    for (p, phase) in first.iter().enumerate() {
        println!("phase {}: goodput Mbit/s (CNMs received)", phase_span(phase.from_seconds, phase.to_seconds));
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

/// A phase's span in seconds, or in milliseconds for runs shorter than a second (the
/// simulator's 100 Gbit/s experiments), where two decimals of a second say nothing.
fn phase_span(from: f64, to: f64) -> String {
    match to < 1.0 {
        true => format!("{:.2}-{:.2} ms", from * 1e3, to * 1e3),
        false => format!("{from:.2}-{to:.2} s"),
    }
}
