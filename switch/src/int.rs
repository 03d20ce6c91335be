//! In-band network telemetry at egress (P4.org INT v2.1, INT-MD over UDP; the frame format
//! is `pfcswitch_wire::int`): a data frame that carries INT-MD gets one hop record as it
//! leaves, with the switch's node ID, the egress timestamp, the egress queue's occupancy,
//! the port's transmitted bytes and its link speed, which is what HPCC's senders read
//! (Li et al., SIGCOMM 2019, §3.1 and §4.1).
//!
//! The decision is taken at reception, where the frame's bytes are at hand: a frame for one
//! egress port on a stamped priority is planned a push, or the E flag when no hop remains,
//! or the M flag when its record would take the IP packet past the egress port's MTU. At
//! dequeue the plan becomes an [`IntEgress`] with the values of that instant, which the
//! datapath or the simulator writes into the frame ([`pfcswitch_wire::apply_int`]). Frames
//! flooded to several ports are not stamped (their copies share one buffer on the
//! datapath, and a record describes one egress), nor are frames whose INT does not parse;
//! both are counted.
//!
//! The occupancy is the egress port's total over all priorities by default, as HPCC's
//! simulator reports it (`GetNBytesTotal`) and as its control law assumes: the queue a
//! flow's bytes wait behind is the port's, whatever the scheduler. `queue = "priority"`
//! reports the frame's own queue, the INT specification's reading.

use crate::config::PortConfig;
use crate::config_error::ConfigError;
use crate::counters::{IntCounters, PortCounters};
use pfcswitch_link::time::Instant;
use pfcswitch_wire::{ErrorKind, FrameView, IntEgress, IntHop, IntKind, Layer, Pcp, int_in};
use serde::{Deserialize, Serialize};

/// `[int]`.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct IntConfig {
    /// Priorities whose frames are stamped; empty: INT off.
    pub priorities: Vec<u8>,
    /// Egress ports that stamp, by name; empty: every port.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ports: Vec<String>,
    /// This switch's node ID in its records; default: a hash of the switch's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_id: Option<u32>,
    /// Which occupancy a record carries.
    pub queue: IntQueue,
}

/// The occupancy a record reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum IntQueue {
    /// The egress port's bytes over all priorities (HPCC's simulator).
    #[default]
    Port,
    /// The frame's priority queue (the INT specification).
    Priority,
}

impl IntQueue {
    /// As in the config file.
    pub fn name(self) -> &'static str {
        match self {
            IntQueue::Port => "port",
            IntQueue::Priority => "priority",
        }
    }
}

impl IntConfig {
    pub fn validate(&self, ports: &[PortConfig]) -> Result<(), ConfigError> {
        let error = |key: &str, reason: String| Err(ConfigError { key: format!("int.{key}"), reason });
        if let Some(p) = self.priorities.iter().find(|&&p| Pcp::new(p).is_none()) {
            return error("priorities", format!("{p} is not a priority 0-7"));
        }
        if let Some(name) = self.ports.iter().find(|name| !ports.iter().any(|port| &port.name == *name)) {
            return error("ports", format!("no port `{name}` in the configuration"));
        }
        Ok(())
    }

    /// Whether the egress port named `port` stamps (every port does when `ports` is empty).
    pub fn stamps(&self, port: &str) -> bool {
        self.ports.is_empty() || self.ports.iter().any(|name| name == port)
    }

    fn mask(&self) -> u8 {
        self.priorities.iter().filter_map(|&p| Pcp::new(p)).fold(0, |mask, p| mask | p.mask())
    }
}

/// A node ID from the switch's name (FNV-1a), for configs that do not set one.
pub fn default_node_id(name: &str) -> u32 {
    name.bytes().fold(0x811C_9DC5u32, |h, b| (h ^ u32::from(b)).wrapping_mul(0x0100_0193))
}

/// What the egress does to a held frame's INT, decided at reception.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum IntPlan {
    /// No INT-MD, or not stamped here.
    #[default]
    None,
    /// Push a record of this many bytes.
    Push(u8),
    HopLimit,
    Mtu,
}

impl IntPlan {
    /// Bytes a push adds (0 for the other plans).
    pub fn push_len(self) -> u8 {
        if let IntPlan::Push(len) = self { len } else { 0 }
    }
}

/// The switch's INT: where it stamps, and each port's transmitted bytes.
#[derive(Clone, Debug)]
pub struct IntStamper {
    priorities: u8,
    ports: u64,
    node_id: u32,
    queue: IntQueue,
    mtu: Vec<u32>,
    link_mbps: Vec<u32>,
    /// Data bytes each port sent, INT records included, modulo 2^32.
    tx_bytes: Vec<u32>,
}

impl IntStamper {
    /// None when no priority is stamped.
    pub fn new(config: &IntConfig, switch_name: &str, ports: &[PortConfig]) -> Option<IntStamper> {
        let priorities = config.mask();
        (priorities != 0).then(|| IntStamper {
            priorities,
            ports: ports
                .iter()
                .enumerate()
                .filter(|(_, p)| config.stamps(&p.name))
                .fold(0, |mask, (i, _)| mask | 1 << i),
            node_id: config.node_id.unwrap_or_else(|| default_node_id(switch_name)),
            queue: config.queue,
            mtu: ports.iter().map(|p| p.mtu).collect(),
            link_mbps: ports.iter().map(|p| (p.speed.bps() / 1_000_000) as u32).collect(),
            tx_bytes: vec![0; ports.len()],
        })
    }

    /// This stamper, carrying on the transmitted bytes of `old` (a reconfiguration): a
    /// sender takes differences of them, which a restart from zero would make nonsense.
    pub fn continuing(mut self, old: Option<&IntStamper>) -> IntStamper {
        if let Some(old) = old.filter(|old| old.tx_bytes.len() == self.tx_bytes.len()) {
            self.tx_bytes.copy_from_slice(&old.tx_bytes);
        }
        self
    }

    pub fn node_id(&self) -> u32 {
        self.node_id
    }

    /// The plan for a received frame of `priority` going to the ports in `egress`; frames
    /// with INT that cannot be stamped are counted on their egress port.
    pub fn plan(&self, view: &FrameView<'_>, priority: Pcp, egress: u64, counters: &mut [PortCounters]) -> IntPlan {
        if self.priorities & priority.mask() == 0 || view.l2.ethertype != pfcswitch_wire::ethertype::IPV4 {
            return IntPlan::None;
        }
        if self.ports & egress == 0 {
            return IntPlan::None;
        }
        // The egress port, or for a flooded frame the first of its ports that stamps: the
        // counts stay on stamping ports, the ones `int show` and the metrics list.
        let out = (egress & self.ports).trailing_zeros() as usize;
        let header = match int_in(view) {
            Ok(header) if header.kind() == IntKind::Md => header,
            Ok(_) => return IntPlan::None,
            // Another UDP port is `WrongEtherType` at layer INT: no INT, nothing to count.
            Err(error) if error.layer == Layer::Int && error.kind != ErrorKind::WrongEtherType => {
                counters[out].int.malformed += 1;
                return IntPlan::None;
            }
            Err(_) => return IntPlan::None,
        };
        if egress.count_ones() > 1 {
            counters[out].int.flooded += 1;
            return IntPlan::None;
        }
        let hop_len = header.hop_words() * 4;
        let ip_total = usize::from(u16::from_be_bytes([view.payload[2], view.payload[3]]));
        match () {
            () if header.remaining_hops() == 0 => IntPlan::HopLimit,
            () if ip_total + hop_len > self.mtu[out] as usize || hop_len > usize::from(u8::MAX) => IntPlan::Mtu,
            () => IntPlan::Push(hop_len as u8),
        }
    }

    /// A data frame of `len` bytes leaves `port`; what to write into it. `queue_bytes` is
    /// the occupancy to report, after the frame left.
    #[allow(clippy::too_many_arguments)]
    pub fn egress(
        &mut self,
        now: Instant,
        (ingress, port): (usize, usize),
        priority: u8,
        len: u32,
        plan: IntPlan,
        queue_bytes: u64,
        counters: &mut IntCounters,
    ) -> Option<IntEgress> {
        self.tx_bytes[port] = self.tx_bytes[port].wrapping_add(len + u32::from(plan.push_len()));
        match plan {
            IntPlan::None => None,
            IntPlan::HopLimit => {
                counters.hop_limit += 1;
                Some(IntEgress::HopLimit)
            }
            IntPlan::Mtu => {
                counters.mtu += 1;
                Some(IntEgress::Mtu)
            }
            IntPlan::Push(_) => {
                counters.stamped += 1;
                Some(IntEgress::Push(IntHop {
                    node_id: Some(self.node_id),
                    ports: Some((ingress as u16, port as u16)),
                    queue: Some((priority, queue_bytes.min(u64::from(u32::MAX)) as u32)),
                    egress_ns: Some(now.as_nanos()),
                    tx_bytes: Some(self.tx_bytes[port]),
                    link_mbps: Some(self.link_mbps[port]),
                }))
            }
        }
    }

    /// Whether the record reports the port's occupancy (else the frame's queue's).
    pub fn reports_port(&self) -> bool {
        self.queue == IntQueue::Port
    }
}
