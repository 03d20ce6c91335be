//! A run's summary, as `results.json` holds it and `compare` puts it side by side
//! ([`Outcome`]: FCTs per class and group, the queues the flows crossed, goodput around
//! storms, the busiest port), and the per-flow view of a [`RunRecord`] it is computed from.
//! Printing and plotting it is `report.rs`'s.

use super::endpoint::{ReceiverResult, SenderResult, first_by_id};
use super::paths::{Crossed, PathSummary, Paths};
use super::phases::Phase;
use super::record::{QueueSample, RunRecord};
use super::slowdown::SlowdownSummary;
use super::topology::nth_host;
use crate::stats::quantile;
use crate::workload::{Pattern, PlannedConnection};
use pfcswitch_link::shaper::WIRE_OVERHEAD;
use pfcswitch_switch::counters::DropReason;
use pfcswitch_switch::report::{PortReport, Snapshot};
use pfcswitch_wire::FlowKey;
use serde::Serialize;
use std::collections::{HashMap, HashSet};

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
    pub(super) fn of(record: &RunRecord, flows: &[Flow]) -> Option<StormWindows> {
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
    /// OFC PAUSE frames that named one of the class's flows, on any link, refreshes included:
    /// how often OFC stopped the class upstream. `None` under other policies.
    pub ofc_pauses_naming: Option<u64>,
    pub group: Option<String>,
    /// The egress queues its flows crossed.
    pub path: PathSummary,
    /// Classes of sized Poisson flows: the load they offered.
    pub offered_load: Option<OfferedLoad>,
}

/// The bytes of flows that arrived per second as a fraction of their senders' link rate
/// (payload bytes, as a class's `load` counts them), against the `load` asked for.
#[derive(Clone, Debug, Serialize)]
pub struct OfferedLoad {
    pub target: Option<f64>,
    pub achieved: f64,
    /// Bit/s over which `achieved` is a fraction: senders × link rate.
    #[serde(skip)]
    capacity_bps: f64,
}

impl OfferedLoad {
    /// Of class `c`'s messages in the run.
    fn of(record: &RunRecord, c: usize) -> Option<OfferedLoad> {
        let class = &record.scenario.classes[c];
        if class.kind != Pattern::Poisson {
            return None;
        }
        let senders = if class.senders.is_empty() { record.hosts.len() } else { class.senders.len() };
        let duration = record.scenario.duration;
        let window = class.stop.unwrap_or(duration).min(duration).saturating_sub(class.start).as_secs_f64();
        let bytes: u64 = (record.connections.iter().filter(|connection| connection.class == c))
            .flat_map(|connection| &connection.messages)
            .filter_map(|m| m.size.map(u64::from))
            .sum();
        let capacity_bps = senders as f64 * record.scenario.speed.bps() as f64 * window;
        (capacity_bps > 0.0).then(|| OfferedLoad {
            target: class.load,
            achieved: bytes as f64 * 8.0 / capacity_bps,
            capacity_bps,
        })
    }

    /// Over the classes that ask for a load: their bytes over their senders' capacity.
    pub(super) fn overall(classes: &[ClassSummary]) -> Option<OfferedLoad> {
        let asked: Vec<&OfferedLoad> =
            classes.iter().filter_map(|c| c.offered_load.as_ref()).filter(|l| l.target.is_some()).collect();
        let capacity_bps: f64 = asked.iter().map(|l| l.capacity_bps).sum();
        (capacity_bps > 0.0).then(|| OfferedLoad {
            target: Some(asked.iter().map(|l| l.target.unwrap_or(0.0) * l.capacity_bps).sum::<f64>() / capacity_bps),
            achieved: asked.iter().map(|l| l.achieved * l.capacity_bps).sum::<f64>() / capacity_bps,
            capacity_bps,
        })
    }
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
pub(super) fn groups(record: &RunRecord, fcts: &[(Vec<f64>, usize)], paths: &[Crossed]) -> Vec<GroupSummary> {
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
pub(super) fn average_queue_bytes(samples: &[QueueSample]) -> f64 {
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
    /// Frames the switches' datapaths dropped before their switch saw them: the XDP
    /// classifier's (malformed, or lossy frames shed while a receive ring backed up) and the
    /// AF_XDP sockets' (no fill buffer, or the RX ring full). Not in `drops`, which counts the
    /// switches' own; 0 on the simulator, which has no datapath.
    pub datapath_drops: u64,
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
    /// FCT slowdown of the finished sized messages, over all and by size.
    pub slowdown: Option<SlowdownSummary>,
    /// Over the classes with a `load`: asked for and offered.
    pub offered_load: Option<OfferedLoad>,
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
    /// Its egress queue (the sampled priorities together) at the median and the 99th
    /// percentile of the samples from the workload's start, if the run sampled it.
    #[serde(default)]
    pub queue_p50_bytes: Option<u64>,
    #[serde(default)]
    pub queue_p99_bytes: Option<u64>,
}

impl PortLoad {
    pub(super) fn busiest(
        snapshots: &[(String, Snapshot)],
        seconds: f64,
        samples: &[super::record::QueueSample],
    ) -> Option<PortLoad> {
        let ports = snapshots.iter().flat_map(|(switch, s)| s.ports.iter().map(move |p| (switch, p)));
        let tx = |p: &pfcswitch_switch::report::PortReport| p.priorities.iter().map(|q| q.tx_bytes).sum::<u64>();
        let (switch, port) = ports.max_by_key(|(_, p)| tx(p))?;
        let tx_mbps = tx(port) as f64 * 8.0 / seconds / 1e6;
        // One queue per sampling instant of the workload (not the warm-up before its start):
        // the port's sampled priorities summed.
        let mut queue = std::collections::BTreeMap::<u64, u64>::new();
        for s in samples.iter().filter(|s| s.seconds >= 0.0 && &s.switch == switch && s.port == port.name) {
            *queue.entry(s.seconds.to_bits()).or_default() += s.egress_bytes;
        }
        let mut queue: Vec<f64> = queue.into_values().map(|b| b as f64).collect();
        queue.sort_by(f64::total_cmp);
        let at = |q| crate::stats::quantile(&queue, q).map(|b| b as u64);
        Some(PortLoad {
            switch: switch.clone(),
            port: port.name.clone(),
            tx_mbps,
            utilisation: tx_mbps * 1e6 / port.speed_bps as f64,
            queue_p50_bytes: at(0.5),
            queue_p99_bytes: at(0.99),
        })
    }
}

/// One planned connection with what its sender and receiver reported.
pub(super) struct Flow<'a> {
    pub connection: &'a PlannedConnection,
    pub sender: Option<&'a SenderResult>,
    pub receiver: Option<&'a ReceiverResult>,
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

    pub(super) fn goodput_mbps(&self) -> f64 {
        self.active().map_or(0.0, |(r, seconds)| r.bytes as f64 * 8.0 / seconds / 1e6)
    }

    /// Share of the link the flow's frames used on the wire (preamble, gap and FCS included).
    pub(super) fn utilisation(&self, speed_bps: u64) -> f64 {
        self.active().map_or(0.0, |(r, seconds)| {
            (r.frame_bytes + WIRE_OVERHEAD * r.segments) as f64 * 8.0 / seconds / speed_bps as f64
        })
    }
}

/// The run's connections, in plan order, with their results.
pub(super) fn flows<'a>(record: &'a RunRecord) -> Vec<Flow<'a>> {
    let senders: Vec<HashMap<u32, &SenderResult>> =
        record.endpoints.iter().map(|e| first_by_id(e.senders.iter().map(|s| (s.connection, s)))).collect();
    let receivers: Vec<HashMap<u32, &ReceiverResult>> =
        record.endpoints.iter().map(|e| first_by_id(e.receivers.iter().map(|r| (r.connection, r)))).collect();
    record
        .connections
        .iter()
        .map(|c| Flow {
            connection: c,
            sender: senders[c.sender].get(&c.id).copied(),
            receiver: receivers[c.receiver].get(&c.id).copied(),
        })
        .collect()
}

/// FCTs (ms) per class; unfinished messages are counted, not timed.
pub(super) fn fcts(record: &RunRecord) -> Vec<(Vec<f64>, usize)> {
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
pub(super) fn class_paths(record: &RunRecord) -> Vec<Crossed> {
    let paths = Paths::new(record.hosts, record.links, record.snapshots);
    let mut per_class = vec![Crossed::default(); record.scenario.classes.len()];
    for c in record.connections {
        per_class[c.class].add(paths.hops(&record.hosts[c.sender], &record.hosts[c.receiver]), c.priority);
    }
    per_class
}

/// What each traffic class did.
pub(super) fn summaries(
    record: &RunRecord,
    flows: &[Flow],
    fcts: &[(Vec<f64>, usize)],
    paths: &[Crossed],
) -> Vec<ClassSummary> {
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
                ofc_pauses_naming: ofc_pauses_naming(record, class_flows().map(|f| f.connection)),
                group: class.group.clone(),
                path: PathSummary::of(&paths[c], record.samples, record.snapshots),
                offered_load: OfferedLoad::of(record, c),
            }
        })
        .collect()
}

/// OFC PAUSE frames any switch sent naming one of `connections`' flows (`None` unless a
/// switch runs OFC).
fn ofc_pauses_naming<'a>(record: &RunRecord, connections: impl Iterator<Item = &'a PlannedConnection>) -> Option<u64> {
    let mac = |host: usize| nth_host(host).map(|(mac, _)| mac).ok();
    let flows: HashSet<String> =
        connections.filter_map(|c| Some(FlowKey { src: mac(c.sender)?, dst: mac(c.receiver)? }.to_string())).collect();
    let reports: Vec<_> = record.snapshots.iter().filter_map(|(_, s)| s.ofc.as_ref()).collect();
    (!reports.is_empty()).then(|| {
        (reports.iter().flat_map(|r| &r.queues))
            .flat_map(|q| &q.pauses_naming)
            .filter(|(flow, _)| flows.contains(flow.as_str()))
            .map(|(_, n)| n)
            .sum()
    })
}

/// Table II: each OFC table's bytes per port, averaged over the samples.
pub(super) fn ofc_table_bytes(samples: &[QueueSample]) -> [f64; 3] {
    // One sample per port carries its tables: those of the first sampled priority.
    let first = samples.first().map(|s| s.priority);
    let n = samples.iter().filter(|s| Some(s.priority) == first).count().max(1) as f64;
    std::array::from_fn(|t| samples.iter().map(|s| s.ofc_table_bytes[t] as f64).sum::<f64>() / n)
}

/// What the switches' datapaths dropped before the switch: see [`Outcome::datapath_drops`].
pub(super) fn datapath_drops(snapshots: &[(String, Snapshot)]) -> u64 {
    snapshots.iter().flat_map(|(_, s)| &s.ports).map(port_datapath_drops).sum()
}

/// What `port`'s datapath dropped before its switch saw the frames.
pub(super) fn port_datapath_drops(port: &PortReport) -> u64 {
    port.xdp.as_ref().map_or(0, |xdp| xdp.drops.values().sum::<u64>() + xdp.socket_dropped)
}

/// Drops of lossless priorities that lost a frame the network should have delivered.
pub(super) fn lossless_drops(snapshots: &[(String, Snapshot)]) -> u64 {
    let not_loss = [DropReason::Filtered.name(), DropReason::LinkLocal.name()];
    (snapshots.iter().flat_map(|(_, s)| &s.ports).flat_map(|p| &p.priorities))
        .filter(|p| p.lossless)
        .flat_map(|p| p.drops.iter())
        .filter(|(reason, _)| !not_loss.contains(&reason.as_str()))
        .map(|(_, n)| n)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pfcswitch_link::time::Instant;
    use pfcswitch_link::units::BitRate;
    use pfcswitch_switch::Switch;
    use pfcswitch_switch::config::SwitchConfig;
    use pfcswitch_switch::report::XdpPortReport;

    #[test]
    fn datapath_drops_count_the_classifier_and_the_sockets_of_every_switch_and_never_the_switch() {
        let config = SwitchConfig::with_ports("sw", 2, BitRate::gbps(1));
        let (switch, _) = Switch::new(&config).unwrap();
        let simulated = Snapshot::of(&switch, &config, Instant::ZERO, 1.0);
        let mut datapath = simulated.clone();
        datapath.ports[0].priorities[0].drops.insert(DropReason::NoBuffer.name().into(), 5);
        datapath.ports[0].xdp = Some(XdpPortReport {
            attach: "native".into(),
            socket: "copy".into(),
            rx_frames: vec![0; 8],
            rx_bytes: vec![0; 8],
            drops: [("runt".to_string(), 2), ("shed".to_string(), 30)].into(),
            shed_frames: [30, 0, 0, 0, 0, 0, 0, 0].into(),
            socket_dropped: 7,
        });
        let snapshots =
            [("sw1".to_string(), datapath.clone()), ("sw2".to_string(), datapath), ("sim".into(), simulated)];
        assert_eq!(datapath_drops(&snapshots), 2 * (2 + 30 + 7), "the switch's own 5 drops are not the datapath's");
        assert_eq!(port_datapath_drops(&snapshots[2].1.ports[0]), 0, "no datapath on the simulator");
    }
}
