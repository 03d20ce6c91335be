//! The switch's state as plain serializable data: what the control socket returns, what the
//! CLI prints and what the metrics endpoint renders. Built at scrape time only, never on the
//! per-frame path.

mod buffer;
mod fecn;
mod ofc;
mod qcn;

pub use buffer::{BufferQueueReport, BufferReport, HeadroomReport, PgReport, PoolReport};
pub use fecn::{FecnReport, RateInterval, RateReport};
pub use ofc::{OfcCongestedFlow, OfcQueueReport, OfcQueuedFlow, OfcReport};
pub use qcn::{CpReport, CpSample, QcnReport};

use crate::config::{SwitchConfig, headroom_bound};
use crate::counters::DropReason;
use crate::switch::Switch;
use pfcswitch_link::time::Instant;
use pfcswitch_wire::Pcp;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A request on the control socket (one JSON object per line).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "command", rename_all = "snake_case")]
pub enum ControlRequest {
    /// Everything: status, ports, PFC, queues, FDB.
    Snapshot,
    /// Zero counters, high-water marks and pause times.
    ResetCounters,
    /// Re-read the configuration file (as SIGHUP does).
    Reload,
    /// Queue occupancy only: cheap enough to ask for every few milliseconds.
    Queues,
    /// Restart the high-water marks of PGs, queues and pools (counters stay).
    ClearWatermarks,
    /// Switch the flow-control policy now, without losing a frame. Not written to the
    /// configuration file: a reload returns to the file's policy.
    SetPolicy { policy: crate::config::PolicyConfig },
}

/// The answer to a [`ControlRequest`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "result", rename_all = "snake_case")]
pub enum ControlResponse {
    Snapshot(Box<Snapshot>),
    Queues { ports: Vec<QueueDepths> },
    Done { message: String },
    Error { message: String },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    pub switch: String,
    pub version: String,
    pub policy: String,
    /// The `[policy]` in force (kind, CaPFC algorithm, CUT, egress thresholds), whatever the
    /// kind: `pfcswitch policy set` changes only what it is told to.
    pub policy_settings: crate::config::PolicyConfig,
    pub uptime_seconds: f64,
    pub frames_held: usize,
    pub pfc: PfcReport,
    pub ports: Vec<PortReport>,
    pub fdb: Vec<FdbReport>,
    /// Filled by the datapath that runs the switch (absent under the simulator).
    pub datapath: Option<DatapathReport>,
    /// The PFC watchdog's settings in force (`[pfcwd]`).
    #[serde(default)]
    pub pfcwd: crate::config::PfcwdConfig,
    /// CaPFC's state, under policy `capfc`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capfc: Option<CapfcReport>,
    /// OFC's tables, nested queues and counters, under policy `ofc`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ofc: Option<OfcReport>,
    /// QCN's congestion points, when `[qcn]` monitors a priority.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qcn: Option<QcnReport>,
    /// FECN's rate points, when `[fecn]` monitors a priority.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fecn: Option<FecnReport>,
    /// Pools, priority groups and queues with their thresholds and watermarks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffer: Option<BufferReport>,
    /// INT at egress, when `[int]` stamps a priority; each port's counts are its `int`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub int: Option<IntReport>,
}

/// `[int]` in force and the node ID this switch's records carry.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IntReport {
    pub node_id: u32,
    pub settings: crate::int::IntConfig,
}

/// CaPFC (§II): per input and lossless priority the decision D = I ∨ ⋁E and the egress
/// queues it pauses for; per egress queue its arrival counters and signals.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CapfcReport {
    pub inputs: Vec<CapfcInputReport>,
    pub queues: Vec<CapfcQueueReport>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CapfcInputReport {
    pub port: String,
    pub priority: u8,
    /// I(i,p): the ingress queue is congested.
    pub ingress_congested: bool,
    /// D(i,p): XOFF is asserted towards the peer.
    pub paused: bool,
    /// The egress queues o with E(i,o,p) = 1: whom the input is paused on behalf of.
    pub on_behalf_of: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CapfcQueueReport {
    pub port: String,
    pub priority: u8,
    /// At or above WARN: counting arrivals.
    pub counting: bool,
    pub warn_activations: u64,
    /// C(i,o,p) per input port name.
    pub arrivals: BTreeMap<String, u32>,
    /// Inputs with E(i,o,p) = 1.
    pub signalled: Vec<String>,
    /// Times E(i,o,p) was raised, per input port name: whom the queue blamed for congestion.
    pub signals_total: BTreeMap<String, u64>,
}

impl CapfcReport {
    pub fn of(capfc: &crate::policy::Capfc, config: &SwitchConfig) -> CapfcReport {
        let names: Vec<&str> = config.ports.iter().map(|p| p.name.as_str()).collect();
        let lossless: Vec<Pcp> = Pcp::ALL.into_iter().filter(|p| config.lossless_mask() & p.mask() != 0).collect();
        let mut queues = Vec::new();
        for (o, name) in names.iter().enumerate() {
            for &p in &lossless {
                let state = capfc.queue_state(o, p).expect("a lossless priority");
                queues.push(CapfcQueueReport {
                    port: name.to_string(),
                    priority: p.value(),
                    counting: state.counting,
                    warn_activations: state.warn_activations,
                    arrivals: state.counters.iter().enumerate().map(|(i, &c)| (names[i].to_string(), c)).collect(),
                    signalled: state.signalled.iter().map(|&i| names[i].to_string()).collect(),
                    signals_total: (state.signal_activations.iter().enumerate())
                        .map(|(i, &n)| (names[i].to_string(), n))
                        .collect(),
                });
            }
        }
        let inputs = (names.iter().enumerate())
            .flat_map(|(i, name)| lossless.iter().map(move |&p| (i, name, p)))
            .map(|(i, name, p)| CapfcInputReport {
                port: name.to_string(),
                priority: p.value(),
                ingress_congested: capfc.ingress_congested(i, p),
                paused: capfc.decision(i, p),
                on_behalf_of: queues
                    .iter()
                    .filter(|q| q.priority == p.value() && q.signalled.iter().any(|s| s == name))
                    .map(|q| q.port.clone())
                    .collect(),
            })
            .collect();
        CapfcReport { inputs, queues }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PfcReport {
    pub lossless: Vec<u8>,
    pub xoff_bytes: u64,
    pub xon_bytes: u64,
    pub max_bytes: u64,
    pub quanta: u16,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PortReport {
    pub name: String,
    pub iface: String,
    pub mac: String,
    pub speed_bps: u64,
    pub mtu: u32,
    /// Minimum headroom this port needs (see `config::headroom_bound`).
    pub headroom_bound_bytes: u64,
    pub pause_rx: u64,
    /// MAC Control frames shorter than 60 bytes received (`[pfc] short_frames` says whether
    /// they were padded and obeyed or dropped as runts, counted in `malformed` then).
    #[serde(default)]
    pub short_mac_control: u64,
    /// INT-MD frames sent, stamped or not and why (all zero without `[int]`).
    #[serde(default)]
    pub int: crate::counters::IntCounters,
    /// The port's link: `up`, `down`, or, on the datapath, `absent` (its interface is gone).
    #[serde(default = "link_up")]
    pub link: String,
    /// Changes of `link` since the daemon started.
    #[serde(default)]
    pub link_transitions: u64,
    /// Malformed frames by `layer_reason` label (only non-zero ones).
    pub malformed: BTreeMap<String, u64>,
    pub priorities: Vec<PriorityReport>,
    /// The XDP classifier's own counters, when a datapath runs one.
    pub xdp: Option<XdpPortReport>,
    /// The port's emulated cable (`pfcswitchd --cable`), if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cable: Option<CableReport>,
}

fn link_up() -> String {
    "up".to_string()
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PriorityReport {
    pub priority: u8,
    pub lossless: bool,
    pub rx_frames: u64,
    pub rx_bytes: u64,
    pub tx_frames: u64,
    pub tx_bytes: u64,
    pub pfc_rx: u64,
    pub pfc_tx: u64,
    pub xoff_to_xon: u64,
    /// Frames this egress marked CE (`[ecn]`).
    #[serde(default)]
    pub ecn_marked: u64,
    /// Drops by reason label (every reason, zeros included, so scripts can rely on keys).
    pub drops: BTreeMap<String, u64>,
    pub ingress_bytes: u64,
    pub ingress_high_water: u64,
    pub egress_bytes: u64,
    pub egress_high_water: u64,
    pub peer_paused: bool,
    pub pausing_peer: bool,
    pub paused_seconds: f64,
    pub pausing_seconds: f64,
    /// How long this port has been asserting XOFF on the priority without a break (0 if not).
    #[serde(default)]
    pub pausing_peer_continuous_seconds: f64,
    /// The PFC watchdog's state and counters for this egress queue (lossless priorities).
    #[serde(default)]
    pub pfcwd: PfcwdQueueReport,
    /// Where every frame taken in went: [`crate::ledger`].
    #[serde(default)]
    pub ledger: crate::ledger::Ledger,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PfcwdQueueReport {
    pub stormed: bool,
    #[serde(flatten)]
    pub counters: crate::pfcwd::PfcwdCounters,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CableReport {
    pub delay_seconds: f64,
    pub loss: f64,
    /// Both directions (a port facing a host), else only what the port sends.
    pub both_ways: bool,
    /// Frames lost on the cable: drawn by its loss, or on it when the link went down.
    pub lost_out: u64,
    pub lost_in: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct XdpPortReport {
    /// Where the classifier runs: `native` (in the driver) or `generic` (on the kernel's
    /// skb, for drivers without XDP, such as vxlan); empty while the port is not attached.
    #[serde(default)]
    pub attach: String,
    /// How the port's AF_XDP sockets move frames: `zero-copy` or `copy` (veth, and drivers
    /// without AF_XDP zero-copy); empty while the port has no sockets.
    #[serde(default)]
    pub socket: String,
    pub rx_frames: Vec<u64>,
    pub rx_bytes: Vec<u64>,
    pub drops: BTreeMap<String, u64>,
    /// Data frames of lossy priorities the classifier dropped, per priority, while the port's
    /// receive rings backed up (also in `drops` as `shed`).
    #[serde(default)]
    pub shed_frames: Vec<u64>,
    /// Frames the classifier passed that the kernel could not put into the port's AF_XDP
    /// sockets (no fill buffer, or the RX ring full: `XDP_STATISTICS`), dropped before the
    /// switch saw them. Their priority is not known: the kernel counts per socket.
    #[serde(default)]
    pub socket_dropped: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FdbReport {
    /// The address, or `default` for `fdb.default_route`.
    pub mac: String,
    /// The port, or an ECMP group's ports separated by commas.
    pub port: String,
    pub is_static: bool,
    pub age_seconds: f64,
}

/// What the AF_XDP datapath reports about itself.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DatapathReport {
    pub loops: u64,
    pub umem_frames: u64,
    pub umem_frames_free: u64,
    /// Frames the switch core holds.
    pub umem_frames_held: u64,
    /// Frames in TX rings or on the wire, not yet completed.
    pub umem_frames_in_flight: u64,
    /// Frames given to the kernel in fill rings.
    pub umem_frames_filling: u64,
    /// Frames whose XDP metadata block was missing or invalid.
    pub meta_missing: u64,
    /// Timer wake-ups and how late they were, in microseconds.
    pub timer_wakeups: u64,
    pub timer_late_p50_us: f64,
    pub timer_late_p99_us: f64,
    pub timer_late_max_us: f64,
    pub timer_late_sum_seconds: f64,
    /// Frames the kernel could not deliver to the AF_XDP sockets (no fill buffer, ring full),
    /// each counted once.
    pub xsk_rx_dropped: u64,
    pub resident_bytes: u64,
}

/// One port's occupancy per priority, in bytes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueueDepths {
    pub port: String,
    pub ingress_bytes: [u64; 8],
    pub egress_bytes: [u64; 8],
    /// Under OFC: bytes held by `flow_in_port_tab`, `congested_flow_tab` and `pause_frame_tab`
    /// of this port, over its lossless priorities (Table II); zeros otherwise.
    #[serde(default)]
    pub ofc_table_bytes: [u64; 3],
    /// Bytes sent per priority since the switch started: rates over time from samples.
    #[serde(default)]
    pub tx_bytes: [u64; 8],
    /// PFC frames sent per priority since the switch started.
    #[serde(default)]
    pub pfc_tx: [u64; 8],
}

impl QueueDepths {
    pub fn of(switch: &Switch, config: &SwitchConfig, now: Instant) -> Vec<QueueDepths> {
        (config.ports.iter().enumerate())
            .map(|(index, port)| {
                let state = Pcp::ALL.map(|priority| switch.queue_state(now, index, priority));
                let ofc_tables = switch.ofc().into_iter().flat_map(|ofc| Pcp::ALL.map(|p| ofc.table_bytes(index, p)));
                let ofc_table_bytes =
                    ofc_tables.flatten().fold([0; 3], |sum, bytes| std::array::from_fn(|t| sum[t] + bytes[t]));
                QueueDepths {
                    port: port.name.clone(),
                    ingress_bytes: state.map(|q| q.ingress.bytes),
                    egress_bytes: state.map(|q| q.egress.bytes),
                    ofc_table_bytes,
                    tx_bytes: Pcp::ALL.map(|priority| switch.counters(index).priority[priority.index()].tx_bytes),
                    pfc_tx: Pcp::ALL.map(|priority| switch.counters(index).priority[priority.index()].pfc_tx),
                }
            })
            .collect()
    }
}

impl Snapshot {
    /// The switch's view; the datapath adds interface names, XDP counters and its own report.
    pub fn of(switch: &Switch, config: &SwitchConfig, now: Instant, uptime_seconds: f64) -> Snapshot {
        let lossless = config.lossless_mask();
        let ports = config
            .ports
            .iter()
            .enumerate()
            .map(|(index, port)| {
                let counters = switch.counters(index);
                let malformed = (0..pfcswitch_wire::Error::COUNT)
                    .filter(|&i| counters.malformed[i] > 0)
                    .map(|i| (pfcswitch_wire::Error::from_index(i).label(), counters.malformed[i]))
                    .collect();
                let priorities = Pcp::ALL
                    .iter()
                    .map(|&priority| {
                        let c = &counters.priority[priority.index()];
                        let q = switch.queue_state(now, index, priority);
                        PriorityReport {
                            priority: priority.value(),
                            lossless: lossless & priority.mask() != 0,
                            rx_frames: c.rx_frames,
                            rx_bytes: c.rx_bytes,
                            tx_frames: c.tx_frames,
                            tx_bytes: c.tx_bytes,
                            pfc_rx: c.pfc_rx,
                            pfc_tx: c.pfc_tx,
                            xoff_to_xon: q.xoff_to_xon,
                            ecn_marked: c.ecn_marked,
                            drops: DropReason::ALL.iter().map(|&r| (r.name().to_string(), c.drops(r))).collect(),
                            ingress_bytes: q.ingress.bytes,
                            ingress_high_water: q.ingress.high_water,
                            egress_bytes: q.egress.bytes,
                            egress_high_water: q.egress.high_water,
                            peer_paused: q.peer_paused,
                            pausing_peer: q.pausing_peer,
                            paused_seconds: q.paused_time.as_secs_f64(),
                            pausing_seconds: q.pausing_time.as_secs_f64(),
                            pausing_peer_continuous_seconds: switch.pausing_for(now, index, priority).as_secs_f64(),
                            pfcwd: PfcwdQueueReport {
                                stormed: q.stormed,
                                counters: switch.pfcwd().counters(index, priority.index()),
                            },
                            ledger: switch.ledger(index, priority),
                        }
                    })
                    .collect();
                PortReport {
                    name: port.name.clone(),
                    iface: port.iface.clone().unwrap_or_else(|| port.name.clone()),
                    mac: switch.port_mac(index).to_string(),
                    speed_bps: port.speed.bps(),
                    mtu: port.mtu,
                    headroom_bound_bytes: headroom_bound(
                        port.speed,
                        port.mtu,
                        config.pfc.cable_delay,
                        config.pfc.response_time,
                    ),
                    pause_rx: counters.pause_rx,
                    short_mac_control: counters.short_mac_control,
                    int: counters.int,
                    link: if switch.link_is_up(index) { "up" } else { "down" }.to_string(),
                    link_transitions: 0,
                    malformed,
                    priorities,
                    xdp: None,
                    cable: None,
                }
            })
            .collect();
        let names = |ports: u64| {
            (0..config.ports.len())
                .filter(|index| ports & (1 << index) != 0)
                .map(|index| config.ports[index].name.as_str())
                .collect::<Vec<_>>()
                .join(",")
        };
        let entries = switch.fdb_entries(now).into_iter().map(|e| FdbReport {
            mac: e.mac.to_string(),
            port: names(e.ports),
            is_static: e.is_static,
            age_seconds: e.age.as_secs_f64(),
        });
        // The default route last, as `default`, the way a routing table lists 0.0.0.0/0.
        let default_route = Some(switch.fdb_default_route()).filter(|&ports| ports != 0).map(|ports| FdbReport {
            mac: "default".into(),
            port: names(ports),
            is_static: true,
            age_seconds: 0.0,
        });
        let fdb = entries.chain(default_route).collect();
        Snapshot {
            switch: config.switch.name.clone(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            policy: config.policy.kind.name().to_string(),
            policy_settings: config.policy.clone(),
            uptime_seconds,
            frames_held: switch.frames_held(),
            pfc: PfcReport {
                lossless: config.pfc.lossless.clone(),
                xoff_bytes: config.pfc.xoff.bytes(),
                xon_bytes: config.pfc.xon.bytes(),
                max_bytes: config.pfc_max(),
                quanta: config.pfc.quanta,
            },
            ports,
            fdb,
            datapath: None,
            pfcwd: switch.pfcwd().config().clone(),
            capfc: switch.capfc().map(|capfc| CapfcReport::of(capfc, config)),
            ofc: OfcReport::of(switch, config, now),
            qcn: QcnReport::of(switch, config),
            fecn: FecnReport::of(switch, config),
            buffer: Some(BufferReport::of(switch.buffers(), config)),
            int: switch.int_node_id().map(|node_id| IntReport { node_id, settings: config.int.clone() }),
        }
    }

    pub fn port(&self, name: &str) -> Option<&PortReport> {
        self.ports.iter().find(|p| p.name == name || p.iface == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pfcswitch_link::units::BitRate;

    #[test]
    fn snapshots_round_trip_through_json() {
        let config = SwitchConfig::with_ports("sw", 2, BitRate::gbps(1));
        let (switch, _) = Switch::new(&config).unwrap();
        let snapshot = Snapshot::of(&switch, &config, Instant::ZERO, 1.5);
        assert_eq!(snapshot.ports[1].priorities[3].drops["ingress_max"], 0);
        assert!(snapshot.ports[0].priorities[3].lossless);
        let response = ControlResponse::Snapshot(Box::new(snapshot));
        let json = serde_json::to_string(&response).unwrap();
        assert_eq!(serde_json::from_str::<ControlResponse>(&json).unwrap(), response);
        let request: ControlRequest = serde_json::from_str(r#"{"command":"reset_counters"}"#).unwrap();
        assert_eq!(request, ControlRequest::ResetCounters);
    }
}
