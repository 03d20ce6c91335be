//! The switch state machine, quinn-proto style: frames and time go in, transmissions come
//! out when polled.
//!
//! ```text
//! handle_rx(now, port, handle, bytes)  a frame arrived; the switch keeps `handle` or not
//! poll_tx(now, port) -> Option<Tx>     what to put on port's wire now
//! poll_free() -> Option<handle>        handles the switch dropped after accepting them
//! poll_timeout() -> Option<Instant>    when to call handle_timeout/poll_tx next
//! handle_timeout(now)
//! ```
//!
//! Every decision about a frame is made here, on the caller's clock. Payloads are never
//! copied: a data frame is held by its handle. Every structure is bounded in [`Switch::new`]
//! and allocated as it fills, so that an idle switch costs little (a simulated fabric has
//! thousands); [`Switch::preallocate`] allocates everything at once, so that the datapath's
//! per-frame path does not allocate.
//!
//! The files here split one `impl Switch` by concern: `rx` (the receive path), `forward`
//! (the pipeline onto egress queues), `tx` (polling the wire), `pause` (PFC obeyed, sent and
//! watched), `link` (a port's link going down and up), `ofc` and `qcn_feedback` (those
//! policies' hooks), `timers`, `reconfigure` and `inspect` (read-only views). This file holds the public types, the `Switch` struct and its
//! construction; `state` the per-port and pipeline state the struct holds.

mod forward;
mod inspect;
mod link;
mod ofc;
mod pause;
mod qcn_feedback;
mod reconfigure;
mod rx;
mod state;
mod timers;
mod tx;

use self::state::{Pipeline, Port};
use crate::buffer::{Arena, Buffers, Level};
use crate::config::{ConfigWarning, SwitchConfig};
use crate::config_error::ConfigError;
use crate::counters::PortCounters;
use crate::ecn::EcnMarker;
use crate::fdb::{DEFAULT_FDB_CAPACITY, Fdb};
use crate::fecn::{Fecn, ProbeMark};
use crate::int::IntStamper;
use crate::pfcwd::{PfcwdEvent, Watchdog};
use crate::policy::{OfcFrame, PolicyEngine, XoffTransmitter};
use crate::qcn::{CnmFrame, Qcn};
use crate::sched::Scheduler;
use pfcswitch_link::pause::PeerPause;
use pfcswitch_link::shaper::Shaper;
use pfcswitch_link::time::Instant;
use pfcswitch_link::units::BitRate;
use pfcswitch_wire::{EthernetAddress, IntEgress, MacControlRepr, Pcp};
use std::collections::VecDeque;
use std::time::Duration;

/// What the switch did with a received frame's buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RxVerdict {
    /// The switch holds the handle; it comes back in a [`Tx::Data`] or from [`Switch::poll_free`].
    Accepted,
    /// The switch is done with the buffer (a MAC control frame, a malformed frame or a drop).
    Consumed,
}

/// A transmission to start now on the polled port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tx {
    /// A held frame. `last`: no other copy remains, the buffer is free once sent. `mark`:
    /// a FECN probe, whose rate the caller lowers in the frame before sending it
    /// ([`pfcswitch_wire::mark_fecn_probe`]). `ce`: the egress marked congestion, which the caller
    /// writes into the frame's IP header before sending it ([`pfcswitch_wire::mark_ecn_ce`]).
    /// `int`: what the caller writes into the frame's INT ([`pfcswitch_wire::apply_int`]),
    /// which a pushed record makes longer than `len`.
    Data { handle: u64, len: u32, last: bool, mark: Option<ProbeMark>, ce: bool, int: Option<IntEgress> },
    /// A frame the switch generated (PFC, OFC, CNM); [`Switch::emit_control`] writes it.
    Control(ControlFrame),
}

/// A frame the switch makes, as values; no buffer is involved until the caller emits it
/// with [`Switch::emit_control`]. Both kinds leave before queued data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ControlFrame {
    Pause(PauseFrame),
    /// A QCN congestion notification.
    Cnm(CnmFrame),
}

impl ControlFrame {
    /// Bytes on the wire (FCS excluded): 60, or more for an OFC frame with many flows or a
    /// CNM with a long encapsulated MSDU.
    pub fn wire_len(&self) -> usize {
        match self {
            ControlFrame::Pause(frame) => frame.wire_len(),
            ControlFrame::Cnm(cnm) => cnm.wire_len(),
        }
    }
}

/// A PFC frame, or an OFC PAUSE/RESUME.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PauseFrame {
    pub src: EthernetAddress,
    pub dst: EthernetAddress,
    /// The PFC fields (of an OFC frame too).
    pub repr: MacControlRepr,
    /// An OFC PAUSE or RESUME: its TLV header; the flows stay in the switch until the next
    /// poll on the same port.
    pub ofc: Option<OfcFrame>,
}

impl PauseFrame {
    fn wire_len(&self) -> usize {
        self.ofc.map_or(pfcswitch_wire::MIN_FRAME_LEN, |frame| pfcswitch_wire::ofc_frame_len(frame.entries()))
    }
}

/// Live state of one (port, priority), for `pfcswitch queues` and the metrics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueState {
    pub ingress: Level,
    pub egress: Level,
    /// The peer has paused our egress on this priority.
    pub peer_paused: bool,
    /// We assert XOFF towards the peer for this priority.
    pub pausing_peer: bool,
    pub paused_time: Duration,
    pub pausing_time: Duration,
    pub xoff_to_xon: u64,
    /// The PFC watchdog holds this egress queue as stormed.
    pub stormed: bool,
}

#[derive(Debug)]
pub struct Switch {
    ports: Vec<Port>,
    /// Ports whose frames' source addresses are learned (bit i: port i).
    learning: u64,
    /// Ports that flooded frames leave by.
    flooding: u64,
    /// Ports whose link is down (bit i: port i); see `link`.
    links_down: u64,
    /// This switch's ECMP hash seed, from its name: switches of two tiers pick unlike.
    flow_seed: u32,
    counters: Vec<PortCounters>,
    buffers: Buffers,
    arena: Arena,
    fdb: Fdb,
    policy: PolicyEngine,
    xoff: XoffTransmitter,
    pipeline: Pipeline,
    freed: VecDeque<u64>,
    lossless: u8,
    /// Read MAC Control frames shorter than 60 bytes as padded (`[pfc] short_frames`).
    pad_short_frames: bool,
    frames: u32,
    /// [`Switch::preallocate`] was called: a reload allocates the new bounds too.
    preallocated: bool,
    /// Lossless frames held, and the most frames lossy ones may hold (under `pfc` the
    /// descriptors the lossless ingress limits can need are kept from lossy traffic).
    lossless_held: u32,
    lossy_frame_limit: u32,
    pfcwd: Watchdog,
    /// The watchdog's decisions of one timeout, carried out right after (sized once).
    pfcwd_events: Vec<PfcwdEvent>,
    /// QCN's congestion points, when `[qcn]` monitors a priority.
    qcn: Option<Qcn>,
    /// FECN's rate points, when `[fecn]` monitors a priority.
    fecn: Option<Fecn>,
    /// ECN marking at egress, when `[ecn]` names a priority.
    ecn: Option<EcnMarker>,
    /// INT records at egress, when `[int]` names a priority.
    int: Option<IntStamper>,
}

/// A locally administered MAC for port `index` of the switch named `name`.
pub fn default_port_mac(name: &str, index: usize) -> EthernetAddress {
    let hash = name.bytes().fold(0x811C_9DC5u32, |h, b| (h ^ u32::from(b)).wrapping_mul(0x0100_0193));
    let [a, b, c, _] = hash.to_be_bytes();
    EthernetAddress([0x02, a, b, c, 0x00, index as u8])
}

impl Switch {
    /// Builds a switch from a configuration, validating it first.
    pub fn new(config: &SwitchConfig) -> Result<(Switch, Vec<ConfigWarning>), ConfigError> {
        let warnings = config.validate()?;
        let limits = config.buffer_limits()?;
        let weights = config.scheduler_weights()?;
        let frames = config.frames();
        let mut ports = Vec::with_capacity(config.ports.len());
        for (index, port) in config.ports.iter().enumerate() {
            let max_frame = port.mtu + crate::config::L2_HEADER_MAX as u32;
            ports.push(Port {
                mac: default_port_mac(&config.switch.name, index),
                default_priority: Pcp::from_low_bits(port.default_priority),
                dscp_map: (port.trust == crate::config::Trust::Dscp).then(|| config.dscp_map(index)).transpose()?,
                shaper: Shaper::new(port.speed, Duration::ZERO),
                scheduler: Scheduler::new(weights, max_frame),
                peer_pause: PeerPause::new(port.speed),
                rx_memo: None,
            });
        }
        let mut fdb = Fdb::new(DEFAULT_FDB_CAPACITY, config.fdb.aging);
        fdb.set_default_route(config.fdb_default_route()?);
        for (mac, port) in config.static_fdb_entries()? {
            fdb.add_static(mac, port);
        }
        let speeds: Vec<BitRate> = config.ports.iter().map(|p| p.speed).collect();
        let switch = Switch {
            learning: config.port_mask(|port| port.learning),
            flooding: config.port_mask(|port| port.flooding),
            links_down: 0,
            flow_seed: flow_seed(&config.switch.name),
            counters: vec![PortCounters::default(); ports.len()],
            buffers: Buffers::new(
                ports.len(),
                limits,
                config.static_pg(),
                config.unbounded_egress_mask(),
                config.nested_egress_mask(),
                frames,
            ),
            arena: Arena::new(frames),
            fdb,
            policy: PolicyEngine::from_config(config),
            xoff: XoffTransmitter::new(&speeds, config.pfc.quanta),
            pipeline: Pipeline {
                fifos: (0..ports.len()).map(|_| VecDeque::new()).collect(),
                waiting: 0,
                interval: config.pipeline.rate.map(|rate| rate.interval()),
                next_slot: Instant::ZERO,
                next_port: 0,
                egress_full: config.egress_full()?,
                blocked: None,
            },
            freed: VecDeque::new(),
            lossless: config.lossless_mask(),
            pad_short_frames: config.pfc.short_frames == crate::config::ShortFrames::Pad,
            frames,
            preallocated: false,
            lossless_held: 0,
            lossy_frame_limit: config.lossy_frame_limit(),
            pfcwd: Watchdog::new(ports.len(), config.lossless_mask(), &config.pfcwd),
            pfcwd_events: Vec::with_capacity(ports.len() * 8),
            qcn: Qcn::new(&config.qcn, ports.len()),
            fecn: Fecn::new(&config.fecn, &speeds),
            ecn: EcnMarker::new(&config.ecn, &speeds),
            int: IntStamper::new(&config.int, &config.switch.name, &config.ports),
            ports,
        };
        Ok((switch, warnings))
    }

    /// Allocates every descriptor, queue and record up to its bound now rather than as
    /// frames arrive: the datapath calls it at start and after a reload, so that its
    /// per-frame path never allocates. Behaviour is the same either way.
    pub fn preallocate(&mut self) {
        self.preallocated = true;
        let frames = self.frames as usize;
        self.arena.preallocate();
        self.buffers.preallocate();
        for fifo in &mut self.pipeline.fifos {
            fifo.reserve(frames.saturating_sub(fifo.len()));
        }
        self.freed.reserve(frames.saturating_sub(self.freed.len()));
        self.fdb.preallocate();
        if let Some(qcn) = &mut self.qcn {
            qcn.preallocate(self.frames);
        }
    }

    /// Lets each port send up to `burst` early to make up for a late wake-up (the datapath
    /// sets this to its timer jitter; virtual-time users keep the exact default of zero).
    pub fn set_shaper_burst(&mut self, burst: Duration) {
        for port in &mut self.ports {
            port.shaper = Shaper::new(port.shaper.speed(), burst);
        }
    }

    /// Uses `mac` as `port`'s source address (the datapath passes the interface's).
    pub fn set_port_mac(&mut self, port: usize, mac: EthernetAddress) {
        self.ports[port].mac = mac;
    }

    pub fn port_count(&self) -> usize {
        self.ports.len()
    }
}

/// FNV-1a of the switch's name: a fixed ECMP seed per switch, the same on every run.
fn flow_seed(name: &str) -> u32 {
    name.bytes().fold(0x811C_9DC5, |hash, byte| (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193))
}
