//! The switch configuration: what a TOML file says, checked before anything is built.
//!
//! Types deserialize with `deny_unknown_fields`, so a misspelt key is an error, not a
//! silently ignored setting. [`SwitchConfig::validate`] then checks the values and returns
//! the first error with the key it concerns (`pfc.xon`, `port[2].speed`), plus warnings
//! that do not stop the switch but that a user must see (a headroom below the PFC bound).

use crate::ecn::EcnConfig;
use crate::fecn::FecnConfig;
use crate::qcn::QcnConfig;
use pfcswitch_link::shaper::WIRE_OVERHEAD;
use pfcswitch_link::units::{self, BitRate, ByteSize, PacketRate};
use pfcswitch_wire::{EthernetAddress, Pcp};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::time::Duration;

/// At most this many ports: the classifier's counter rows and the egress bitmasks.
pub const MAX_PORTS: usize = 64;

/// Ethernet header with one 802.1Q tag, without FCS: what a frame adds to its MTU.
pub const L2_HEADER_MAX: u64 = 18;
/// A PAUSE/PFC frame on the wire: 60 B + FCS + preamble + gap.
pub const PFC_WIRE_BYTES: u64 = 60 + WIRE_OVERHEAD;
/// The least a frame costs the ingress accounting (a minimum Ethernet frame without FCS).
pub const MIN_FRAME_CHARGE: u64 = pfcswitch_wire::MIN_FRAME_LEN as u64;
/// Under `pfc`, descriptors beyond the lossless bound that lossy traffic needs at least.
pub const MIN_LOSSY_FRAMES: u64 = 64;
/// Descriptors the default `buffer.frames` adds for lossy traffic.
pub const DEFAULT_LOSSY_FRAMES: u64 = 4096;

#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SwitchConfig {
    pub switch: SwitchSection,
    #[serde(rename = "port", default)]
    pub ports: Vec<PortConfig>,
    #[serde(default)]
    pub pfc: PfcConfig,
    #[serde(default)]
    pub buffer: BufferConfig,
    #[serde(default)]
    pub pipeline: PipelineConfig,
    #[serde(default)]
    pub scheduler: SchedulerConfig,
    #[serde(default)]
    pub policy: PolicyConfig,
    #[serde(default)]
    pub fdb: FdbConfig,
    #[serde(default)]
    pub pfcwd: PfcwdConfig,
    /// QCN congestion points, beside the pause policy.
    #[serde(default)]
    pub qcn: QcnConfig,
    /// FECN rate points, beside the pause policy.
    #[serde(default)]
    pub fecn: FecnConfig,
    /// ECN marking at egress (a RED-style profile).
    #[serde(default)]
    pub ecn: EcnConfig,
}

/// `[switch]`: identity and the daemon's endpoints (the core only reads `name`).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SwitchSection {
    pub name: String,
    /// Unix control socket; the daemon defaults to /run/pfcswitch/NAME.sock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control_socket: Option<String>,
    /// Prometheus endpoint; the daemon defaults to 127.0.0.1:9464.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics_listen: Option<String>,
}

/// How a port assigns a priority to untagged frames.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Trust {
    /// Tagged frames use their PCP; untagged ones the port's default priority.
    #[default]
    Pcp,
    /// As `pcp`, but untagged IPv4/IPv6 frames take the DSCP map's priority.
    Dscp,
}

/// `[[port]]`.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PortConfig {
    pub name: String,
    /// Network interface; defaults to `name`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iface: Option<String>,
    /// Emulated by the egress shaper (veth has no speed of its own).
    pub speed: BitRate,
    #[serde(default = "default_mtu")]
    pub mtu: u32,
    #[serde(default)]
    pub default_priority: u8,
    #[serde(default)]
    pub trust: Trust,
    /// Priority → DSCP values, e.g. `{ 3 = [24, 26], 5 = [46] }`; unlisted DSCPs map to
    /// DSCP >> 3 (the class selector). Only with `trust = "dscp"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dscp_map: Option<BTreeMap<String, Vec<u8>>>,
    /// Learn the source addresses of frames received here. Off on the uplinks of a fabric
    /// with several paths, where a host's frames arrive on any of them and static ECMP
    /// entries say where it is.
    #[serde(default = "enabled")]
    pub learning: bool,
    /// Send broadcasts, multicasts and unknown unicasts out of this port. Off on all but one
    /// uplink of each leaf of a fabric with several spines, so flooded frames follow a tree
    /// and never loop.
    #[serde(default = "enabled")]
    pub flooding: bool,
}

fn default_mtu() -> u32 {
    1500
}

fn enabled() -> bool {
    true
}

/// `[pfc]`: 802.1Qbb thresholds on ingress accounting, per (port, lossless priority).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct PfcConfig {
    /// PFC-enabled priorities; the others are lossy (tail drop).
    pub lossless: Vec<u8>,
    pub xoff: ByteSize,
    pub xon: ByteSize,
    /// Ingress MAX: a lossless frame that would exceed it is dropped.
    pub max: ByteSize,
    /// Pause time sent with XOFF; refreshed at half of it while still above XON.
    pub quanta: u16,
    /// One-way propagation delay of the cables, for the headroom check.
    #[serde(with = "units::duration")]
    pub cable_delay: Duration,
    /// Time from XOFF crossing to the peer's reaction, beyond wire times (processing, DMA).
    #[serde(with = "units::duration")]
    pub response_time: Duration,
}

impl Default for PfcConfig {
    /// The CaPFC paper's Table II ingress thresholds.
    fn default() -> Self {
        PfcConfig {
            lossless: vec![3],
            xoff: ByteSize(50_000),
            xon: ByteSize(40_000),
            max: ByteSize(60_000),
            quanta: u16::MAX,
            cable_delay: Duration::from_nanos(100),
            response_time: Duration::from_micros(1),
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BufferMode {
    /// Every egress queue has its own `egress_max` bytes.
    #[default]
    Dedicated,
    /// Per-queue reserve plus a shared pool with per-queue and per-port caps (CaPFC §II-F, §IV-7).
    Shared,
}

/// `[buffer]`: egress queues.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct BufferConfig {
    pub mode: BufferMode,
    /// Dedicated mode: capacity of each egress queue (default 60KB, CaPFC Table II).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub egress_max: Option<ByteSize>,
    /// Shared mode: bytes reserved per queue (default 8KB).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reserve: Option<ByteSize>,
    /// Shared mode: the pool (default 350KB).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pool: Option<ByteSize>,
    /// Shared mode: most of the pool one queue may hold (default 80KB).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue_cap: Option<ByteSize>,
    /// Shared mode: most of the pool one egress port may hold (default 100KB).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port_cap: Option<ByteSize>,
    /// Frames the switch can hold at once (the datapath sizes its UMEM from it). Default:
    /// what the lossless ingress limits can need ([`SwitchConfig::lossless_frames_bound`])
    /// plus 4096 for lossy traffic.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frames: Option<u32>,
}

impl Default for BufferConfig {
    fn default() -> Self {
        BufferConfig {
            mode: BufferMode::Dedicated,
            egress_max: None,
            reserve: None,
            pool: None,
            queue_cap: None,
            port_cap: None,
            frames: None,
        }
    }
}

/// What happens when a processed frame finds its egress queue full (CaPFC §II-A, §IV-C).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EgressFull {
    /// Drop the frame (PFC_wdrop).
    Drop,
    /// Stall the pipeline until the queue has room (PFC_wstop): head-of-line blocking
    /// across all ports and priorities.
    Stop,
}

/// `[pipeline]`: the packet processor between ingress and egress.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct PipelineConfig {
    /// Packets per second, round-robin over ingress ports; absent = infinitely fast.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate: Option<PacketRate>,
    /// Defaults to `stop` under policy `pfc-wstop`, `drop` otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub egress_full: Option<EgressFull>,
}

/// `[scheduler]`: per egress port, strict priority above weighted deficit round robin.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct SchedulerConfig {
    /// Priorities served strictly, higher number first, before any WDRR priority.
    pub strict: Vec<u8>,
    /// WDRR weight per priority, e.g. `{ 0 = 1, 3 = 4 }`; unlisted priorities weigh 1.
    pub weights: BTreeMap<String, u32>,
}

/// Flow-control scheme names, as in DESIGN.md.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
pub enum PolicyKind {
    /// IEEE 802.1Qbb PFC as switches deploy it (SONiC on merchant silicon, Linux `dcb`): a
    /// lossless frame is admitted at ingress (XOFF/XON/MAX and headroom) or not at all, and an
    /// admitted one is never dropped at egress; lossy priorities tail-drop at egress.
    #[default]
    #[serde(rename = "pfc")]
    Pfc,
    /// The CaPFC paper's PFC_wdrop baseline (§IV): 802.1Qbb thresholds, and a full egress queue
    /// drops, lossless or not.
    #[serde(rename = "pfc-wdrop")]
    PfcWdrop,
    /// The CaPFC paper's PFC_wstop baseline (§IV): a full egress queue stalls the pipeline.
    #[serde(rename = "pfc-wstop")]
    PfcWstop,
    /// No pause at all: lossless priorities behave as lossy ones.
    #[serde(rename = "none")]
    None,
    /// Congestion-aware PFC (CaPFC paper §II): ingress state OR egress congestion signals.
    #[serde(rename = "capfc")]
    Capfc,
    /// Original-congestion fine-grained PFC (OFC paper §III): PAUSE frames carry the congested
    /// flows, upstream egresses park only those in a nested three-queue hierarchy; lossless
    /// like `pfc` (egress never drops an admitted lossless frame).
    #[serde(rename = "ofc")]
    Ofc,
}

impl PolicyKind {
    pub const fn name(self) -> &'static str {
        match self {
            PolicyKind::Pfc => "pfc",
            PolicyKind::PfcWdrop => "pfc-wdrop",
            PolicyKind::PfcWstop => "pfc-wstop",
            PolicyKind::None => "none",
            PolicyKind::Capfc => "capfc",
            PolicyKind::Ofc => "ofc",
        }
    }

    /// Whether admitted lossless frames are exempt from egress limits (only bounded by the
    /// ingress accounting that feeds their queue).
    pub const fn lossless_egress_unbounded(self) -> bool {
        self.keeps_lossless()
    }

    /// Policies that promise lossless priorities never lose an admitted frame (`pfc` and
    /// `ofc`, which is PFC with finer pauses): the config checks refuse what would break it.
    pub const fn keeps_lossless(self) -> bool {
        matches!(self, PolicyKind::Pfc | PolicyKind::Ofc)
    }
}

/// CaPFC's choice of the inputs to pause for a congested egress queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CapfcAlgorithm {
    /// Stop-Max (Algorithm 1): the heaviest contributor.
    #[default]
    Max,
    /// Stop-Calibrate (Algorithm 2): the fewest inputs whose share passes `cut`.
    Calibrate,
}

/// `[policy]`. The egress thresholds and `cut` apply to `capfc`; their defaults are the
/// CaPFC paper's Table II (egress XOFF 25KB, XON 20KB, WARN 20KB, CUT 80%).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct PolicyConfig {
    pub kind: PolicyKind,
    pub algorithm: CapfcAlgorithm,
    /// Stop-Calibrate: the share of the counted arrivals the paused inputs must cover, in (0, 1].
    pub cut: f64,
    pub egress_xoff: ByteSize,
    pub egress_xon: ByteSize,
    pub egress_warn: ByteSize,
    /// OFC: the congested pause threshold X^c_OFF = alpha × pfc.xoff (§III-C), with
    /// pfc.xon < X^c_OFF < pfc.xoff.
    pub alpha: f64,
    /// OFC: flows each of the three tables holds per port and lossless priority.
    pub flow_table_capacity: u32,
}

impl Default for PolicyConfig {
    fn default() -> Self {
        PolicyConfig {
            kind: PolicyKind::default(),
            algorithm: CapfcAlgorithm::default(),
            cut: 0.8,
            egress_xoff: ByteSize(25_000),
            egress_xon: ByteSize(20_000),
            egress_warn: ByteSize(20_000),
            alpha: 0.9,
            flow_table_capacity: 256,
        }
    }
}

/// What the PFC watchdog does with a stormed queue (SONiC pfcwd's actions).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PfcwdAction {
    /// Drop the queue's frames and those that arrive for it, and ignore the peer's PFC for the
    /// priority, so the storm does not spread back.
    #[default]
    Drop,
    /// Ignore the peer's PFC for the priority and transmit.
    Forward,
    /// Count and report only; the queue stays paused.
    Alert,
}

impl PfcwdAction {
    pub const fn name(self) -> &'static str {
        match self {
            PfcwdAction::Drop => "drop",
            PfcwdAction::Forward => "forward",
            PfcwdAction::Alert => "alert",
        }
    }
}

/// `[pfcwd]`: the PFC watchdog, with the semantics of SONiC's pfcwd. Off by default: its
/// `drop` action gives up losslessness to contain a storm, which is the operator's call.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct PfcwdConfig {
    pub enabled: bool,
    pub action: PfcwdAction,
    /// A lossless egress queue that holds frames and stays paused by its peer this long is stormed.
    #[serde(with = "units::duration")]
    pub detection_time: Duration,
    /// A stormed queue is restored after this long without PFC from its peer for the priority.
    #[serde(with = "units::duration")]
    pub restoration_time: Duration,
    /// A port asserting XOFF towards its peer continuously for longer than this is reported.
    #[serde(with = "units::duration")]
    pub pausing_peer_limit: Duration,
}

impl Default for PfcwdConfig {
    /// SONiC's defaults: 200 ms detection and restoration.
    fn default() -> Self {
        PfcwdConfig {
            enabled: false,
            action: PfcwdAction::Drop,
            detection_time: Duration::from_millis(200),
            restoration_time: Duration::from_millis(200),
            pausing_peer_limit: Duration::from_secs(5),
        }
    }
}

/// `[fdb]`: MAC learning.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct FdbConfig {
    /// A learned address is forgotten after this long without a frame from it.
    #[serde(with = "units::duration")]
    pub aging: Duration,
    /// Entries that never age and are never overwritten by learning.
    #[serde(rename = "static")]
    pub static_entries: Vec<StaticEntry>,
}

impl Default for FdbConfig {
    fn default() -> Self {
        FdbConfig { aging: Duration::from_secs(300), static_entries: Vec::new() }
    }
}

#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct StaticEntry {
    pub mac: String,
    /// A port, or several: an ECMP group, one port picked per flow.
    pub port: StaticPorts,
}

/// `port = "p1"` or `port = ["up1", "up2"]`.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(untagged)]
pub enum StaticPorts {
    One(String),
    Group(Vec<String>),
}

impl StaticPorts {
    pub fn names(&self) -> &[String] {
        match self {
            StaticPorts::One(name) => std::slice::from_ref(name),
            StaticPorts::Group(names) => names,
        }
    }
}

impl From<&str> for StaticPorts {
    fn from(name: &str) -> Self {
        StaticPorts::One(name.to_string())
    }
}

/// A rejected configuration: the key and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{key}: {reason}")]
pub struct ConfigError {
    pub key: String,
    pub reason: String,
}

/// A setting that works but is probably not what the user wants.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigWarning {
    pub key: String,
    pub message: String,
}

impl fmt::Display for ConfigWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.key, self.message)
    }
}

fn error(key: impl Into<String>, reason: impl Into<String>) -> ConfigError {
    ConfigError { key: key.into(), reason: reason.into() }
}

/// Buffer settings with mode defaults applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BufferLimits {
    Dedicated { egress_max: u64 },
    Shared { reserve: u64, pool: u64, queue_cap: u64, port_cap: u64 },
}

/// Minimum PFC headroom (MAX − XOFF) for a port, in bytes, so that no lossless frame is lost.
///
/// After the frame that crosses XOFF (up to one maximum frame above XOFF), the bytes that
/// still arrive are: the frame our port may be sending when XOFF is raised (the PFC frame
/// waits for it), the PFC frame itself, the round trip of the cable, the peer's response
/// time, and the frame the peer may have just started. In wire bytes:
/// `speed·(2·cable_delay + response_time) + 3·(MTU + 18 + 24) + 84`. This is DESIGN.md's
/// `speed × (2 × cable delay + response time) + 2 × MTU` made exact for our accounting: it
/// adds the crossing frame, the PFC frame and the per-frame wire overhead.
pub fn headroom_bound(speed: BitRate, mtu: u32, cable_delay: Duration, response_time: Duration) -> u64 {
    let flight = cable_delay * 2 + response_time;
    let flight_bytes = (flight.as_nanos() * u128::from(speed.bps())).div_ceil(8 * 1_000_000_000);
    let max_frame_wire = u64::from(mtu) + L2_HEADER_MAX + WIRE_OVERHEAD;
    u64::try_from(flight_bytes).unwrap_or(u64::MAX).saturating_add(3 * max_frame_wire + PFC_WIRE_BYTES)
}

impl SwitchConfig {
    /// A minimal configuration: `ports` at `speed`, everything else at its default.
    pub fn with_ports(name: &str, ports: usize, speed: BitRate) -> SwitchConfig {
        SwitchConfig {
            switch: SwitchSection { name: name.into(), control_socket: None, metrics_listen: None },
            ports: (0..ports)
                .map(|i| PortConfig {
                    name: format!("p{i}"),
                    iface: None,
                    speed,
                    mtu: default_mtu(),
                    default_priority: 0,
                    trust: Trust::Pcp,
                    dscp_map: None,
                    learning: true,
                    flooding: true,
                })
                .collect(),
            pfc: PfcConfig::default(),
            buffer: BufferConfig::default(),
            pipeline: PipelineConfig::default(),
            scheduler: SchedulerConfig::default(),
            policy: PolicyConfig::default(),
            fdb: FdbConfig::default(),
            pfcwd: PfcwdConfig::default(),
            qcn: QcnConfig::default(),
            fecn: FecnConfig::default(),
            ecn: EcnConfig::default(),
        }
    }

    /// Checks every value; returns the warnings, or the first error.
    pub fn validate(&self) -> Result<Vec<ConfigWarning>, ConfigError> {
        let mut warnings = Vec::new();
        self.validate_switch()?;
        self.validate_ports()?;
        self.validate_pfc(&mut warnings)?;
        self.buffer_limits()?;
        self.validate_lossless_capacity(&mut warnings)?;
        self.validate_capfc()?;
        self.validate_ofc()?;
        if self.frames() < 64 {
            return Err(error("buffer.frames", format!("{} is too few; at least 64", self.frames())));
        }
        self.egress_full()?;
        self.scheduler_weights()?;
        self.static_fdb_entries()?;
        if self.fdb.aging.is_zero() {
            return Err(error("fdb.aging", "must be greater than zero"));
        }
        self.validate_pfcwd()?;
        self.qcn.validate()?;
        self.fecn.validate()?;
        self.ecn.validate()?;
        Ok(warnings)
    }

    fn validate_switch(&self) -> Result<(), ConfigError> {
        let name = &self.switch.name;
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')) {
            return Err(error("switch.name", format!("`{name}` must be non-empty letters, digits, '-', '_' or '.'")));
        }
        Ok(())
    }

    fn validate_ports(&self) -> Result<(), ConfigError> {
        if self.ports.is_empty() {
            return Err(error("port", "at least one [[port]] is needed"));
        }
        if self.ports.len() > MAX_PORTS {
            return Err(error("port", format!("{} ports configured; at most {MAX_PORTS}", self.ports.len())));
        }
        let mut names = HashSet::new();
        let mut ifaces = HashSet::new();
        for (index, port) in self.ports.iter().enumerate() {
            let key = |field: &str| format!("port[{index}].{field}");
            if port.name.is_empty() || !names.insert(port.name.as_str()) {
                return Err(error(key("name"), format!("`{}` is empty or used by another port", port.name)));
            }
            let iface = port.iface.as_deref().unwrap_or(&port.name);
            if iface.is_empty() || iface.len() > 15 || !ifaces.insert(iface) {
                return Err(error(
                    key("iface"),
                    format!("`{iface}` is empty, longer than 15 bytes or used by another port"),
                ));
            }
            if !(68..=9216).contains(&port.mtu) {
                return Err(error(key("mtu"), format!("{} is outside 68..=9216", port.mtu)));
            }
            if Pcp::new(port.default_priority).is_none() {
                return Err(error(key("default_priority"), format!("{} is not a priority 0-7", port.default_priority)));
            }
            if port.dscp_map.is_some() && port.trust != Trust::Dscp {
                return Err(error(key("dscp_map"), "only meaningful with trust = \"dscp\""));
            }
            self.dscp_map(index)?;
        }
        Ok(())
    }

    fn validate_pfcwd(&self) -> Result<(), ConfigError> {
        let wd = &self.pfcwd;
        for (key, value) in [
            ("detection_time", wd.detection_time),
            ("restoration_time", wd.restoration_time),
            ("pausing_peer_limit", wd.pausing_peer_limit),
        ] {
            if value < Duration::from_millis(1) {
                return Err(error(format!("pfcwd.{key}"), "must be at least 1ms"));
            }
        }
        Ok(())
    }

    /// CaPFC §III: XON < XOFF ≤ egress MAX, XON ≤ WARN < XOFF (WARN below XON would keep
    /// stale counters through persistent congestion), CUT in (0, 1].
    fn validate_capfc(&self) -> Result<(), ConfigError> {
        let policy = &self.policy;
        if policy.kind != PolicyKind::Capfc {
            return Ok(());
        }
        if !(policy.cut > 0.0 && policy.cut <= 1.0) {
            return Err(error("policy.cut", format!("{} is not in (0, 1]", policy.cut)));
        }
        let (xoff, xon, warn) = (policy.egress_xoff, policy.egress_xon, policy.egress_warn);
        if xon >= xoff {
            return Err(error("policy.egress_xon", format!("egress_xon ({xon}) must be below egress_xoff ({xoff})")));
        }
        if warn < xon || warn >= xoff {
            return Err(error(
                "policy.egress_warn",
                format!("egress_warn ({warn}) must be at least egress_xon ({xon}) and below egress_xoff ({xoff})"),
            ));
        }
        // What one egress queue can hold: its MAX, or its reserve plus its share of the pool.
        let capacity = match self.buffer_limits()? {
            BufferLimits::Dedicated { egress_max } => egress_max,
            BufferLimits::Shared { reserve, queue_cap, .. } => reserve + queue_cap,
        };
        if xoff.bytes() > capacity {
            return Err(error(
                "policy.egress_xoff",
                format!("egress_xoff ({xoff}) is above the egress queues' capacity ({capacity} B)"),
            ));
        }
        Ok(())
    }

    /// OFC §III-C: X_ON < X^c_OFF = α·X_OFF < X_OFF, i.e. X_ON / X_OFF < α < 1.
    fn validate_ofc(&self) -> Result<(), ConfigError> {
        let policy = &self.policy;
        if policy.kind != PolicyKind::Ofc {
            return Ok(());
        }
        let xoff_c = self.ofc_xoff_c();
        let (xoff, xon) = (self.pfc.xoff.bytes(), self.pfc.xon.bytes());
        if !(policy.alpha < 1.0 && xoff_c > xon && xoff_c < xoff) {
            return Err(error(
                "policy.alpha",
                format!(
                    "{} gives X^c_OFF = {xoff_c} B; OFC needs pfc.xon ({xon} B) < alpha × pfc.xoff < pfc.xoff \
                     ({xoff} B), i.e. alpha in ({:.3}, 1)",
                    policy.alpha,
                    xon as f64 / xoff as f64
                ),
            ));
        }
        if !(1..=65_536).contains(&policy.flow_table_capacity) {
            return Err(error(
                "policy.flow_table_capacity",
                format!("{} is outside 1..=65536", policy.flow_table_capacity),
            ));
        }
        Ok(())
    }

    /// OFC's congested pause threshold X^c_OFF in bytes.
    pub fn ofc_xoff_c(&self) -> u64 {
        (self.policy.alpha * self.pfc.xoff.bytes() as f64).round() as u64
    }

    /// Priorities whose egress queues are OFC's nested hierarchy.
    pub fn nested_egress_mask(&self) -> u8 {
        if self.policy.kind == PolicyKind::Ofc { self.lossless_mask() } else { 0 }
    }

    fn validate_pfc(&self, warnings: &mut Vec<ConfigWarning>) -> Result<(), ConfigError> {
        let pfc = &self.pfc;
        let mut seen = 0u8;
        for &priority in &pfc.lossless {
            let pcp =
                Pcp::new(priority).ok_or_else(|| error("pfc.lossless", format!("{priority} is not a priority 0-7")))?;
            if seen & pcp.mask() != 0 {
                return Err(error("pfc.lossless", format!("priority {priority} is listed twice")));
            }
            seen |= pcp.mask();
        }
        if pfc.xon >= pfc.xoff {
            return Err(error("pfc.xon", format!("xon ({}) must be below xoff ({})", pfc.xon, pfc.xoff)));
        }
        if pfc.xoff >= pfc.max {
            return Err(error("pfc.xoff", format!("xoff ({}) must be below max ({})", pfc.xoff, pfc.max)));
        }
        if pfc.quanta == 0 {
            return Err(error("pfc.quanta", "0 would send XOFF frames that pause nothing"));
        }
        if pfc.lossless.is_empty() {
            return Ok(());
        }
        let headroom = pfc.max.bytes() - pfc.xoff.bytes();
        for (index, port) in self.ports.iter().enumerate() {
            let bound = headroom_bound(port.speed, port.mtu, pfc.cable_delay, pfc.response_time);
            if headroom < bound {
                let problem = format!(
                    "headroom max − xoff = {headroom} B is below the {bound} B that port[{index}] `{}` needs \
                     at {} with MTU {}, cable delay {} and response time {} (speed × (2 × cable delay + \
                     response time) + 3 maximum frames + one PFC frame): lossless frames can be dropped",
                    port.name,
                    port.speed,
                    port.mtu,
                    units::format_duration(pfc.cable_delay),
                    units::format_duration(pfc.response_time),
                );
                self.lossless_at_risk(warnings, "pfc.max", problem)?;
            }
        }
        Ok(())
    }

    /// A way lossless frames can be lost: refused under `pfc`, whose promise it breaks, and a
    /// warning under the other policies.
    fn lossless_at_risk(
        &self,
        warnings: &mut Vec<ConfigWarning>,
        key: &str,
        problem: String,
    ) -> Result<(), ConfigError> {
        if self.policy.kind.keeps_lossless() {
            return Err(error(
                key,
                format!(
                    "{problem}; policy \"{}\" keeps lossless priorities lossless and refuses this",
                    self.policy.kind.name()
                ),
            ));
        }
        warnings.push(ConfigWarning { key: key.into(), message: problem });
        Ok(())
    }

    /// Where else than at a headroom below the bound a lossless frame can be lost under the
    /// configured policy: descriptors, egress queues and the shared pool too small for what
    /// the lossless ingress limits admit.
    fn validate_lossless_capacity(&self, warnings: &mut Vec<ConfigWarning>) -> Result<(), ConfigError> {
        let lossless = self.lossless_mask().count_ones() as u64;
        let kind = self.policy.kind;
        if lossless == 0 {
            return Ok(());
        }
        if kind == PolicyKind::None {
            warnings.push(ConfigWarning {
                key: "policy.kind".into(),
                message: format!(
                    "\"none\" sends no PFC: lossless priorities {:?} are dropped like lossy ones when queues fill",
                    self.pfc.lossless
                ),
            });
            return Ok(());
        }
        let (ports, max) = (self.ports.len() as u64, self.pfc.max.bytes());
        let frames_needed = self.lossless_frames_bound();
        let lossy_room = if kind.keeps_lossless() { MIN_LOSSY_FRAMES } else { 0 };
        if u64::from(self.frames()) < frames_needed + lossy_room {
            let lossy = if lossy_room > 0 { format!(" + {lossy_room} for lossy traffic") } else { String::new() };
            self.lossless_at_risk(
                warnings,
                "buffer.frames",
                format!(
                    "{} frames cannot hold what the lossless ingress limits admit: {ports} ports × {lossless} \
                     lossless priorities × ⌊pfc.max {max} B / {MIN_FRAME_CHARGE} B⌋ = {frames_needed} frames{lossy}; \
                     raise buffer.frames or lower pfc.max",
                    self.frames()
                ),
            )?;
        }
        if kind.lossless_egress_unbounded() || kind == PolicyKind::PfcWstop {
            // Lossless queues are unbounded (pfc, ofc) or stall the pipeline instead of dropping.
            return Ok(());
        }
        let feeders = ports.saturating_sub(1);
        let (key, capacity) = match self.buffer_limits()? {
            BufferLimits::Dedicated { egress_max } => ("buffer.egress_max", egress_max),
            BufferLimits::Shared { reserve, queue_cap, .. } => ("buffer.queue_cap", reserve + queue_cap),
        };
        if feeders * max > capacity {
            warnings.push(ConfigWarning {
                key: key.into(),
                message: format!(
                    "under policy \"{}\" a full egress queue drops lossless frames: {feeders} ports × pfc.max \
                     {max} B = {} B can be admitted for one egress queue, which holds {capacity} B; use policy \
                     \"pfc\" (lossless frames are never dropped at egress) or make the queues hold {} B",
                    kind.name(),
                    feeders * max,
                    feeders * max,
                ),
            });
        }
        if let BufferLimits::Shared { pool, .. } = self.buffer_limits()? {
            let need = ports * lossless * max;
            if need > pool {
                warnings.push(ConfigWarning {
                    key: "buffer.pool".into(),
                    message: format!(
                        "under policy \"{}\" lossless frames share the pool: {ports} ports × {lossless} lossless \
                         priorities × pfc.max {max} B = {need} B can be admitted, above buffer.pool {pool} B",
                        kind.name()
                    ),
                });
            }
        }
        Ok(())
    }

    /// Descriptors the lossless ingress limits can need: every (port, lossless priority) at
    /// MAX in frames charged the minimum.
    pub fn lossless_frames_bound(&self) -> u64 {
        let lossless = u64::from(self.lossless_mask().count_ones());
        self.ports.len() as u64 * lossless * (self.pfc.max.bytes() / MIN_FRAME_CHARGE)
    }

    /// `buffer.frames`, or its default.
    pub fn frames(&self) -> u32 {
        self.buffer
            .frames
            .unwrap_or_else(|| u32::try_from(self.lossless_frames_bound() + DEFAULT_LOSSY_FRAMES).unwrap_or(u32::MAX))
    }

    /// The most frames lossy priorities may hold: under `pfc` what the lossless limits leave.
    pub fn lossy_frame_limit(&self) -> u32 {
        if !self.policy.kind.keeps_lossless() {
            return self.frames();
        }
        let bound = u32::try_from(self.lossless_frames_bound()).unwrap_or(u32::MAX);
        self.frames().saturating_sub(bound)
    }

    /// Priorities whose egress queues only the ingress accounting bounds (`pfc`'s lossless ones).
    pub fn unbounded_egress_mask(&self) -> u8 {
        if self.policy.kind.lossless_egress_unbounded() { self.lossless_mask() } else { 0 }
    }

    /// The egress limits with the mode's defaults; keys of the other mode are errors.
    pub fn buffer_limits(&self) -> Result<BufferLimits, ConfigError> {
        let b = &self.buffer;
        let bytes = |value: Option<ByteSize>, default: u64| value.map_or(default, ByteSize::bytes);
        match b.mode {
            BufferMode::Dedicated => {
                for (key, value) in
                    [("reserve", b.reserve), ("pool", b.pool), ("queue_cap", b.queue_cap), ("port_cap", b.port_cap)]
                {
                    if value.is_some() {
                        return Err(error(format!("buffer.{key}"), "only applies to mode = \"shared\""));
                    }
                }
                let egress_max = bytes(b.egress_max, 60_000);
                if egress_max == 0 {
                    return Err(error("buffer.egress_max", "must be greater than zero"));
                }
                Ok(BufferLimits::Dedicated { egress_max })
            }
            BufferMode::Shared => {
                if b.egress_max.is_some() {
                    return Err(error("buffer.egress_max", "only applies to mode = \"dedicated\"; use queue_cap"));
                }
                let (reserve, pool) = (bytes(b.reserve, 8_000), bytes(b.pool, 350_000));
                let (queue_cap, port_cap) = (bytes(b.queue_cap, 80_000), bytes(b.port_cap, 100_000));
                if queue_cap > port_cap || port_cap > pool {
                    return Err(error("buffer.queue_cap", "need queue_cap ≤ port_cap ≤ pool"));
                }
                Ok(BufferLimits::Shared { reserve, pool, queue_cap, port_cap })
            }
        }
    }

    /// What a full egress queue does, with the policy's default.
    pub fn egress_full(&self) -> Result<EgressFull, ConfigError> {
        match (self.policy.kind, self.pipeline.egress_full) {
            (PolicyKind::PfcWstop, Some(EgressFull::Drop)) => {
                Err(error("pipeline.egress_full", "\"drop\" contradicts policy kind \"pfc-wstop\" (which means stop)"))
            }
            (PolicyKind::PfcWstop, _) => Ok(EgressFull::Stop),
            (PolicyKind::Capfc, Some(EgressFull::Stop)) => Err(error(
                "pipeline.egress_full",
                "\"stop\" contradicts policy kind \"capfc\" (§II-D: a full egress queue drops; CaPFC never stalls the pipeline)",
            )),
            (_, Some(choice)) => Ok(choice),
            (_, None) => Ok(EgressFull::Drop),
        }
    }

    /// The port's DSCP → priority table (class selector for unlisted values).
    pub fn dscp_map(&self, port: usize) -> Result<[Pcp; 64], ConfigError> {
        let mut map: [Pcp; 64] = std::array::from_fn(|dscp| Pcp::from_low_bits((dscp >> 3) as u8));
        let Some(entries) = &self.ports[port].dscp_map else { return Ok(map) };
        let key = format!("port[{port}].dscp_map");
        let mut assigned = [false; 64];
        for (priority, dscps) in entries {
            let pcp = priority
                .parse::<u8>()
                .ok()
                .and_then(Pcp::new)
                .ok_or_else(|| error(&key, format!("`{priority}` is not a priority 0-7")))?;
            for &dscp in dscps {
                let slot = usize::from(dscp);
                if slot >= 64 || assigned[slot] {
                    return Err(error(&key, format!("DSCP {dscp} is out of range 0-63 or mapped twice")));
                }
                assigned[slot] = true;
                map[slot] = pcp;
            }
        }
        Ok(map)
    }

    /// WDRR weight per priority, 0 for strict priorities.
    pub fn scheduler_weights(&self) -> Result<[u32; 8], ConfigError> {
        let mut weights = [1u32; 8];
        for &priority in &self.scheduler.strict {
            let pcp = Pcp::new(priority)
                .ok_or_else(|| error("scheduler.strict", format!("{priority} is not a priority 0-7")))?;
            if weights[pcp.index()] == 0 {
                return Err(error("scheduler.strict", format!("priority {priority} is listed twice")));
            }
            weights[pcp.index()] = 0;
        }
        for (priority, &weight) in &self.scheduler.weights {
            let key = format!("scheduler.weights.{priority}");
            let pcp =
                priority.parse::<u8>().ok().and_then(Pcp::new).ok_or_else(|| error(&key, "not a priority 0-7"))?;
            if weights[pcp.index()] == 0 {
                return Err(error(&key, "this priority is strict; a weight would be ignored"));
            }
            if !(1..=1000).contains(&weight) {
                return Err(error(&key, format!("weight {weight} is outside 1..=1000")));
            }
            weights[pcp.index()] = weight;
        }
        Ok(weights)
    }

    /// Static FDB entries resolved to (address, port set: bit i for port i).
    pub fn static_fdb_entries(&self) -> Result<Vec<(EthernetAddress, u64)>, ConfigError> {
        self.fdb
            .static_entries
            .iter()
            .enumerate()
            .map(|(index, entry)| {
                let key = format!("fdb.static[{index}]");
                let mac: EthernetAddress =
                    entry.mac.parse().map_err(|e| error(format!("{key}.mac"), format!("{e}")))?;
                if !mac.is_unicast() {
                    return Err(error(format!("{key}.mac"), format!("{mac} is not a unicast address")));
                }
                let names = entry.port.names();
                if names.is_empty() {
                    return Err(error(format!("{key}.port"), "an empty list; name one port or more"));
                }
                names
                    .iter()
                    .try_fold(0u64, |ports, name| {
                        let port = self
                            .ports
                            .iter()
                            .position(|p| &p.name == name)
                            .ok_or_else(|| error(format!("{key}.port"), format!("no port named `{name}`")))?;
                        if ports & (1 << port) != 0 {
                            return Err(error(format!("{key}.port"), format!("`{name}` is listed twice")));
                        }
                        Ok(ports | 1 << port)
                    })
                    .map(|ports| (mac, ports))
            })
            .collect()
    }

    /// The ports for which `has` holds (bit i: port i).
    pub fn port_mask(&self, has: impl Fn(&PortConfig) -> bool) -> u64 {
        self.ports.iter().enumerate().filter(|(_, port)| has(port)).fold(0, |mask, (index, _)| mask | 1 << index)
    }

    /// Lossless priorities as a class-enable style bitmask.
    pub fn lossless_mask(&self) -> u8 {
        self.pfc.lossless.iter().filter_map(|&p| Pcp::new(p)).fold(0, |mask, p| mask | p.mask())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> SwitchConfig {
        SwitchConfig::with_ports("sw1", 3, BitRate::gbps(1))
    }

    fn rejects(config: &SwitchConfig, key: &str) -> String {
        let err = config.validate().expect_err("config should be rejected");
        assert_eq!(err.key, key, "{err}");
        err.reason
    }

    #[test]
    fn defaults_validate() {
        assert_eq!(config().validate().unwrap(), vec![]);
    }

    #[test]
    fn threshold_order_is_enforced() {
        let mut c = config();
        c.pfc.xon = ByteSize(50_000);
        assert!(rejects(&c, "pfc.xon").contains("must be below xoff"));
        let mut c = config();
        c.pfc.xoff = ByteSize(60_000);
        assert!(rejects(&c, "pfc.xoff").contains("must be below max"));
    }

    #[test]
    fn headroom_below_the_bound_is_refused_under_pfc_and_a_warning_otherwise() {
        let mut c = config();
        c.ports[1].speed = BitRate::gbps(10);
        c.pfc.response_time = Duration::from_micros(10);
        let reason = rejects(&c, "pfc.max");
        assert!(reason.contains("17460 B") && reason.contains("policy \"pfc\" keeps lossless"), "{reason}");
        c.policy.kind = PolicyKind::PfcWstop;
        let warnings = c.validate().unwrap();
        assert_eq!(warnings.len(), 1, "only the 10G port lacks headroom: {warnings:?}");
        let message = &warnings[0].message;
        // 10 Gbit/s × 10.2 µs = 12750 B, + 3 × 1542 + 84 = 17460 B.
        assert!(
            message.contains("10000 B") && message.contains("17460 B") && message.contains("port[1] `p1`"),
            "{message}"
        );
        assert_eq!(
            headroom_bound(BitRate::gbps(10), 1500, Duration::from_nanos(100), Duration::from_micros(10)),
            17_460
        );
    }

    #[test]
    fn buffer_keys_of_the_other_mode_are_errors() {
        let mut c = config();
        c.buffer.pool = Some(ByteSize(1));
        assert!(rejects(&c, "buffer.pool").contains("shared"));
        c.buffer.mode = BufferMode::Shared;
        c.buffer.pool = None;
        assert_eq!(
            c.buffer_limits().unwrap(),
            BufferLimits::Shared { reserve: 8_000, pool: 350_000, queue_cap: 80_000, port_cap: 100_000 }
        );
        c.buffer.egress_max = Some(ByteSize(1));
        assert!(rejects(&c, "buffer.egress_max").contains("dedicated"));
    }

    #[test]
    fn egress_full_follows_the_policy() {
        let mut c = config();
        assert_eq!(c.egress_full().unwrap(), EgressFull::Drop);
        c.policy.kind = PolicyKind::PfcWstop;
        assert_eq!(c.egress_full().unwrap(), EgressFull::Stop);
        c.pipeline.egress_full = Some(EgressFull::Drop);
        assert!(rejects(&c, "pipeline.egress_full").contains("contradicts"));
        c.policy.kind = PolicyKind::Capfc;
        c.pipeline.egress_full = Some(EgressFull::Stop);
        assert!(rejects(&c, "pipeline.egress_full").contains("CaPFC never stalls"));
    }

    #[test]
    fn capfc_thresholds_follow_section_iii() {
        let mut c = config();
        c.policy.kind = PolicyKind::Capfc;
        let keys: Vec<_> = c.validate().unwrap().into_iter().map(|w| w.key).collect();
        assert_eq!(keys, ["buffer.egress_max"], "Table II defaults: a full egress queue drops under CaPFC");
        c.policy.cut = 0.0;
        assert!(rejects(&c, "policy.cut").contains("not in (0, 1]"));
        c.policy.cut = 1.0;
        c.policy.egress_xon = ByteSize(25_000);
        assert!(rejects(&c, "policy.egress_xon").contains("below egress_xoff"));
        c.policy.egress_xon = ByteSize(20_000);
        c.policy.egress_warn = ByteSize(19_000);
        assert!(rejects(&c, "policy.egress_warn").contains("at least egress_xon"));
        c.policy.egress_warn = ByteSize(20_000);
        c.buffer.egress_max = Some(ByteSize(24_000));
        assert!(rejects(&c, "policy.egress_xoff").contains("capacity (24000 B)"));
        // Shared memory: a queue holds its reserve plus its share of the pool.
        c.buffer.egress_max = None;
        c.buffer.mode = BufferMode::Shared;
        c.buffer.reserve = Some(ByteSize(5_000));
        c.buffer.queue_cap = Some(ByteSize(15_000));
        assert!(rejects(&c, "policy.egress_xoff").contains("capacity (20000 B)"));
        c.buffer.queue_cap = Some(ByteSize(80_000));
        let keys: Vec<_> = c.validate().unwrap().into_iter().map(|w| w.key).collect();
        assert_eq!(keys, ["buffer.queue_cap"]);
    }

    /// configs/pfc-only.toml: three 20 Mbit/s ports and only the documented `[pfc]` keys.
    fn three_ports_with_pfc_keys_only() -> SwitchConfig {
        toml::from_str(include_str!("../../configs/pfc-only.toml")).unwrap()
    }

    #[test]
    fn pfc_keeps_lossless_queues_unbounded_and_pfc_wdrop_warns_with_the_numbers() {
        let mut c = three_ports_with_pfc_keys_only();
        assert_eq!(c.validate().unwrap(), vec![], "pfc: admission at ingress only");
        assert_eq!(c.unbounded_egress_mask(), 1 << 3);
        assert_eq!(c.lossless_frames_bound(), 3 * (65_536 / 60));
        assert_eq!(c.lossy_frame_limit(), 4096);
        c.policy.kind = PolicyKind::PfcWdrop;
        assert_eq!(c.unbounded_egress_mask(), 0);
        let warnings = c.validate().unwrap();
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert_eq!(warnings[0].key, "buffer.egress_max");
        let message = &warnings[0].message;
        assert!(
            message.contains("2 ports × pfc.max 65536 B = 131072 B") && message.contains("holds 60000 B"),
            "{message}"
        );
        c.buffer.egress_max = Some(ByteSize::kib(128));
        assert_eq!(c.validate().unwrap(), vec![], "queues that hold what ingress admits");
    }

    #[test]
    fn ofc_checks_its_thresholds_as_section_3c_says() {
        let paper: SwitchConfig = toml::from_str(include_str!("../../configs/ofc-paper.toml")).unwrap();
        assert_eq!(paper.validate().unwrap(), vec![], "§IV-A's parameters");
        assert_eq!(paper.ofc_xoff_c(), 67_500);
        assert_eq!(paper.nested_egress_mask(), 1 << 3);
        assert_eq!(paper.unbounded_egress_mask(), 1 << 3, "lossless like pfc");
        let mut c = paper.clone();
        c.policy.alpha = 0.6; // 45 KB = X_ON
        assert!(rejects(&c, "policy.alpha").contains("alpha in (0.600, 1)"));
        c.policy.alpha = 1.0;
        rejects(&c, "policy.alpha");
        c.policy.alpha = 0.8;
        c.policy.flow_table_capacity = 0;
        rejects(&c, "policy.flow_table_capacity");
        let mut other = paper;
        other.policy.kind = PolicyKind::Pfc;
        other.policy.alpha = 5.0;
        assert_eq!(other.validate().unwrap(), vec![], "alpha is OFC's only");
        assert_eq!(other.nested_egress_mask(), 0);
    }

    #[test]
    fn descriptors_for_the_lossless_limits_are_required_under_pfc() {
        let mut c = three_ports_with_pfc_keys_only();
        assert_eq!(c.frames(), 3 * 1092 + 4096, "the default holds the lossless limits");
        c.buffer.frames = Some(3 * 1092 + 63);
        let reason = rejects(&c, "buffer.frames");
        assert!(
            reason.contains("3 ports × 1 lossless priorities × ⌊pfc.max 65536 B / 60 B⌋ = 3276 frames + 64"),
            "{reason}"
        );
        c.policy.kind = PolicyKind::PfcWdrop;
        c.buffer.frames = Some(3000);
        let keys: Vec<_> = c.validate().unwrap().into_iter().map(|w| w.key).collect();
        assert_eq!(keys, ["buffer.frames", "buffer.egress_max"]);
        c.buffer.mode = BufferMode::Shared;
        c.buffer.frames = None;
        let keys: Vec<_> = c.validate().unwrap().into_iter().map(|w| w.key).collect();
        assert_eq!(keys, ["buffer.queue_cap"], "the default pool holds 3 × 64 KiB");
        c.buffer.pool = Some(ByteSize(150_000));
        c.buffer.port_cap = Some(ByteSize(100_000));
        let keys: Vec<_> = c.validate().unwrap().into_iter().map(|w| w.key).collect();
        assert_eq!(keys, ["buffer.queue_cap", "buffer.pool"]);
        c.policy.kind = PolicyKind::None;
        let keys: Vec<_> = c.validate().unwrap().into_iter().map(|w| w.key).collect();
        assert_eq!(keys, ["policy.kind"]);
    }

    #[test]
    fn dscp_maps_and_weights() {
        let mut c = config();
        c.ports[0].dscp_map = Some(BTreeMap::from([("5".to_string(), vec![46])]));
        assert!(rejects(&c, "port[0].dscp_map").contains("trust"));
        c.ports[0].trust = Trust::Dscp;
        let map = c.dscp_map(0).unwrap();
        assert_eq!((map[46].value(), map[26].value(), map[8].value()), (5, 3, 1));
        c.ports[0].dscp_map = Some(BTreeMap::from([("5".to_string(), vec![46]), ("6".to_string(), vec![46])]));
        assert!(rejects(&c, "port[0].dscp_map").contains("mapped twice"));

        let mut c = config();
        c.scheduler.strict = vec![7];
        c.scheduler.weights = BTreeMap::from([("0".to_string(), 4)]);
        assert_eq!(c.scheduler_weights().unwrap(), [4, 1, 1, 1, 1, 1, 1, 0]);
        c.scheduler.weights.insert("7".into(), 2);
        assert!(rejects(&c, "scheduler.weights.7").contains("strict"));
    }

    const EXAMPLE: &str = r#"
        [switch]
        name = "sw1"

        [[port]]
        name = "p1"
        speed = "1Gbps"

        [[port]]
        name = "p2"
        iface = "veth-p2"
        speed = "10Gbps"
        mtu = 9000
        trust = "dscp"
        dscp_map = { 3 = [24, 26], 5 = [46] }

        [pfc]
        lossless = [3, 4]
        xoff = "48KiB"
        xon = "32KiB"
        max = "96KiB"
        cable_delay = "500ns"

        [buffer]
        mode = "shared"
        pool = "1MiB"
        port_cap = "200KB"

        [pipeline]
        rate = "1Mpps"

        [scheduler]
        strict = [6]
        weights = { 0 = 1, 3 = 4 }

        [policy]
        kind = "pfc-wstop"
    "#;

    #[test]
    fn a_toml_file_parses_with_units_and_defaults() {
        let config: SwitchConfig = toml::from_str(EXAMPLE).unwrap();
        assert_eq!(config.pfc.xoff, ByteSize::kib(48));
        assert_eq!(config.ports[1].speed, BitRate::gbps(10));
        assert_eq!(config.ports[0].mtu, 1500);
        assert_eq!(config.pfc.quanta, 65535);
        assert_eq!(config.pipeline.rate, PacketRate::from_pps(1_000_000));
        assert_eq!(config.egress_full().unwrap(), EgressFull::Stop);
        assert_eq!(config.dscp_map(1).unwrap()[26].value(), 3);
        assert_eq!(config.scheduler_weights().unwrap(), [1, 1, 1, 4, 1, 1, 0, 1]);
        assert!(config.validate().is_ok());
    }

    #[test]
    fn unknown_keys_and_bad_units_are_rejected_by_name() {
        let misspelt = EXAMPLE.replace("xon = ", "x_on = ");
        let error = toml::from_str::<SwitchConfig>(&misspelt).unwrap_err().to_string();
        assert!(error.contains("unknown field `x_on`"), "{error}");
        let bad_unit = EXAMPLE.replace("\"10Gbps\"", "\"10GB\"");
        let error = toml::from_str::<SwitchConfig>(&bad_unit).unwrap_err().to_string();
        assert!(error.contains("unknown unit `GB` in `10GB`"), "{error}");
    }

    #[test]
    fn ports_must_be_distinct() {
        let mut c = config();
        c.ports[2].name = "p0".into();
        assert!(rejects(&c, "port[2].name").contains("used by another port"));
        let mut c = config();
        c.ports[1].iface = Some("p0".into());
        assert!(rejects(&c, "port[1].iface").contains("used by another port"));
        let mut c = config();
        c.fdb.static_entries.push(StaticEntry { mac: "02:00:00:00:00:01".into(), port: "p9".into() });
        assert!(rejects(&c, "fdb.static[0].port").contains("no port named"));
        c.fdb.static_entries[0].port = StaticPorts::Group(vec!["p1".into(), "p2".into(), "p1".into()]);
        assert!(rejects(&c, "fdb.static[0].port").contains("`p1` is listed twice"));
        c.fdb.static_entries[0].port = StaticPorts::Group(vec![]);
        assert!(rejects(&c, "fdb.static[0].port").contains("empty list"));
        c.fdb.static_entries[0].port = StaticPorts::Group(vec!["p1".into(), "p2".into()]);
        assert_eq!(c.static_fdb_entries().unwrap(), vec![("02:00:00:00:00:01".parse().unwrap(), 0b110)]);
    }
}
