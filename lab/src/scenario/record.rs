//! What a run collected, on either engine, before any summary: the queue samples, the
//! storms, the endpoints' results, the switches' snapshots and the simulator's speed
//! ([`RunRecord`]). What `results.json` and the report make of it is `summary.rs`'s and
//! `report.rs`'s.

use super::endpoint::EndpointResult;
use super::hpcc_nodes::HpccNodes;
use super::ideal::IdealFct;
use super::plan::Scenario;
use crate::workload::PlannedConnection;
use pfcswitch_link::time::Instant;
use pfcswitch_sim::PauseArrival;
use pfcswitch_sim::SimStats;
use pfcswitch_switch::report::{QueueDepths, Snapshot};
use serde::Serialize;
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
    /// Bytes the port has sent on the priority since its switch started.
    pub tx_bytes: u64,
    /// PFC frames for the priority the port has sent since its switch started.
    pub pfc_tx: u64,
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
                tx_bytes: port.tx_bytes[usize::from(p)],
                pfc_tx: port.pfc_tx[usize::from(p)],
            })
        })
    }
}

/// A fault as it happened, for results.json.
#[derive(Clone, Debug, Serialize)]
pub struct AppliedFault {
    /// When it was applied, from the workload's start.
    pub seconds: f64,
    /// `down sw1:p4`, `up sw1:p4-sw4:p1`, `kill sw3`, `restart sw3`.
    pub what: String,
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
    /// The topology's links, as `pfcswitch topology describe` lists them.
    pub links: &'a [String],
    pub connections: &'a [PlannedConnection],
    pub storms: &'a [StormRun],
    pub epoch: Instant,
    /// From the workload's start to the last host finishing (or giving up).
    pub seconds: f64,
    pub gave_up: bool,
    /// Stopped by SIGINT or SIGTERM before its end (simulated runs; a datapath run that is
    /// interrupted tears down without a report).
    pub interrupted: bool,
    pub endpoints: &'a [EndpointResult],
    pub samples: &'a [QueueSample],
    pub snapshots: &'a [(String, Snapshot)],
    /// How fast the simulator ran (simulated runs only).
    pub simulator: Option<&'a SimulatorSpeed>,
    /// Each message's FCT alone on the network, for its slowdown.
    pub ideal: &'a IdealFct,
    /// How HPCC's files number the run's nodes.
    pub hpcc_nodes: &'a HpccNodes,
    /// The PAUSE and PFC frames that arrived (simulated runs only).
    pub pause_arrivals: &'a [PauseArrival],
    /// The scenario's faults, when each was applied.
    pub faults: &'a [AppliedFault],
    /// The workload's start on the captures' clock (pcap timestamps, seconds): the wall clock
    /// on the datapath, virtual time in the simulator.
    pub capture_epoch_seconds: f64,
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
    /// Frames lost on links while they were down, and at killed switches (`[[fault]]`).
    pub lost_on_down_links: u64,
    pub lost_at_killed_switches: u64,
    /// Frames lossy links (a topology file's `loss`) lost.
    pub lost_on_cables: u64,
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
            lost_on_down_links: stats.lost_on_down_links,
            lost_at_killed_switches: stats.lost_at_killed_switches,
            lost_on_cables: stats.lost_on_cables,
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
