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
//! copied: a data frame is held by its handle, and every structure is sized in
//! [`Switch::new`], so the per-frame path does not allocate.

use crate::buffer::{Arena, Buffers, Descriptor, Level};
use crate::config::{ConfigError, ConfigWarning, EgressFull, PfcwdAction, PolicyKind, SwitchConfig};
use crate::counters::{DropReason, PortCounters};
use crate::ecn::EcnMarker;
use crate::fdb::{self, DEFAULT_FDB_CAPACITY, Fdb, FdbEntry};
use crate::fecn::{Fecn, ProbeMark};
use crate::pfcwd::{PfcwdEvent, Watchdog};
use crate::policy::{Arrival, EgressEvent, OfcFrame, PolicyActions, PolicyEngine, XoffTransmitter, ofc_thresholds};
use crate::qcn::culprit::Culprit;
use crate::qcn::{CnmFrame, Placement, Qcn, cpid};
use crate::sched::Scheduler;
use pfcswitch_link::pause::PeerPause;
use pfcswitch_link::shaper::Shaper;
use pfcswitch_link::time::Instant;
use pfcswitch_link::units::BitRate;
use pfcswitch_wire::{
    self, EthernetAddress, FecnSubtype, FlowKey, FrameView, MacControlRepr, OfcOp, OfcRepr, PAUSE_MULTICAST, Pcp,
    PfcRepr, build_mac_control_frame, build_ofc_frame,
};
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
    Data { handle: u64, len: u32, last: bool, mark: Option<ProbeMark>, ce: bool },
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
struct Port {
    mac: EthernetAddress,
    default_priority: Pcp,
    dscp_map: Option<[Pcp; 64]>,
    shaper: Shaper,
    scheduler: Scheduler,
    peer_pause: PeerPause,
}

/// The packet processor between ingress and egress (CaPFC §II-A): one FIFO per ingress
/// port, served round robin at `interval` per frame (or at once when unlimited).
#[derive(Debug)]
struct Pipeline {
    fifos: Vec<VecDeque<u32>>,
    waiting: usize,
    interval: Option<Duration>,
    next_slot: Instant,
    next_port: usize,
    egress_full: EgressFull,
    /// Stop mode: the ingress port whose head frame waits for egress room.
    blocked: Option<usize>,
}

#[derive(Debug)]
pub struct Switch {
    ports: Vec<Port>,
    /// Ports whose frames' source addresses are learned (bit i: port i).
    learning: u64,
    /// Ports that flooded frames leave by.
    flooding: u64,
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
    ingress_max: u64,
    frames: u32,
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
            });
        }
        let mut fdb = Fdb::new(DEFAULT_FDB_CAPACITY, config.fdb.aging);
        for (mac, port) in config.static_fdb_entries()? {
            fdb.add_static(mac, port);
        }
        let speeds: Vec<BitRate> = config.ports.iter().map(|p| p.speed).collect();
        let switch = Switch {
            learning: config.port_mask(|port| port.learning),
            flooding: config.port_mask(|port| port.flooding),
            flow_seed: flow_seed(&config.switch.name),
            counters: vec![PortCounters::default(); ports.len()],
            buffers: Buffers::new(
                ports.len(),
                limits,
                config.unbounded_egress_mask(),
                config.nested_egress_mask(),
                frames,
            ),
            arena: Arena::new(frames),
            fdb,
            policy: PolicyEngine::from_config(config),
            xoff: XoffTransmitter::new(&speeds, config.pfc.quanta),
            pipeline: Pipeline {
                fifos: (0..ports.len()).map(|_| VecDeque::with_capacity(frames as usize)).collect(),
                waiting: 0,
                interval: config.pipeline.rate.map(|rate| rate.interval()),
                next_slot: Instant::ZERO,
                next_port: 0,
                egress_full: config.egress_full()?,
                blocked: None,
            },
            freed: VecDeque::with_capacity(frames as usize),
            lossless: config.lossless_mask(),
            ingress_max: config.pfc.max.bytes(),
            frames,
            lossless_held: 0,
            lossy_frame_limit: config.lossy_frame_limit(),
            pfcwd: Watchdog::new(ports.len(), config.lossless_mask(), &config.pfcwd),
            pfcwd_events: Vec::with_capacity(ports.len() * 8),
            qcn: Qcn::new(&config.qcn, ports.len(), frames),
            fecn: Fecn::new(&config.fecn, &speeds),
            ecn: EcnMarker::new(&config.ecn),
            ports,
        };
        Ok((switch, warnings))
    }

    /// Applies `new` to the running switch without losing a frame: PFC thresholds and
    /// lossless set, policy, pipeline, scheduler, buffer limits, classification, FDB aging
    /// and static entries. Ports (name, interface, speed, MTU) and `buffer.frames` size the
    /// datapath and need a restart.
    pub fn reconfigure(
        &mut self,
        now: Instant,
        old: &SwitchConfig,
        new: &SwitchConfig,
    ) -> Result<Vec<ConfigWarning>, ConfigError> {
        if new.buffer.frames.is_some_and(|frames| frames != self.frames) {
            return Err(ConfigError {
                key: "buffer.frames".into(),
                reason: "changed; restart pfcswitchd to apply".into(),
            });
        }
        // The descriptors are those of the running switch: the new limits must fit them.
        let mut pinned = new.clone();
        pinned.buffer.frames = Some(self.frames);
        let new = &pinned;
        let warnings = new.validate()?;
        let same_port = |(a, b): (&crate::config::PortConfig, &crate::config::PortConfig)| {
            a.name == b.name && a.iface == b.iface && a.speed == b.speed && a.mtu == b.mtu
        };
        if old.ports.len() != new.ports.len() || !old.ports.iter().zip(&new.ports).all(same_port) {
            return Err(ConfigError {
                key: "port".into(),
                reason: "ports changed; restart pfcswitchd to apply".into(),
            });
        }
        let keep_ofc = match &self.policy {
            // The tables are per lossless priority: a new lossless set needs a new engine.
            PolicyEngine::Ofc(ofc) if new.policy.kind == PolicyKind::Ofc && new.lossless_mask() == self.lossless => {
                if ofc.capacity() != new.policy.flow_table_capacity as usize {
                    return Err(ConfigError {
                        key: "policy.flow_table_capacity".into(),
                        reason: "changed; the OFC tables are sized at start, restart pfcswitchd to apply".into(),
                    });
                }
                true
            }
            _ => false,
        };
        let weights = new.scheduler_weights()?;
        let egress_full = new.egress_full()?;
        self.buffers.set_limits(
            new.buffer_limits()?,
            new.unbounded_egress_mask(),
            new.nested_egress_mask(),
            self.frames,
        );
        self.lossy_frame_limit = new.lossy_frame_limit();
        self.learning = new.port_mask(|port| port.learning);
        self.flooding = new.port_mask(|port| port.flooding);
        for (index, (port, config)) in self.ports.iter_mut().zip(&new.ports).enumerate() {
            port.default_priority = Pcp::from_low_bits(config.default_priority);
            port.dscp_map = (config.trust == crate::config::Trust::Dscp).then(|| new.dscp_map(index)).transpose()?;
            port.scheduler = Scheduler::new(weights, config.mtu + crate::config::L2_HEADER_MAX as u32);
        }
        let mut statics = new.static_fdb_entries()?;
        statics.retain(|&(_, ports)| ports & !self.all_ports() == 0);
        self.fdb.reconfigure(new.fdb.aging, &statics);
        self.lossless = new.lossless_mask();
        self.ingress_max = new.pfc.max.bytes();
        let mut restored = Vec::new();
        self.pfcwd.reconfigure(self.lossless, &new.pfcwd, &mut restored);
        let speeds: Vec<BitRate> = new.ports.iter().map(|p| p.speed).collect();
        self.xoff.set_quanta(&speeds, new.pfc.quanta);
        match &mut self.policy {
            PolicyEngine::Ofc(ofc) if keep_ofc => ofc.set_thresholds(ofc_thresholds(new)),
            _ => {
                self.policy = PolicyEngine::from_config(new);
                self.count_queued_flows(now);
            }
        }
        // Re-decide every pause under the new thresholds; release what is no longer lossless.
        for port in 0..self.ports.len() {
            for priority in Pcp::ALL {
                let mut actions = PolicyActions::new(now, &mut self.xoff);
                if self.lossless & priority.mask() == 0 || matches!(self.policy, PolicyEngine::None) {
                    actions.set_xoff(port, priority, false);
                } else {
                    self.policy.adopt(port, priority, actions.is_asserted(port, priority));
                    self.policy.on_ingress(
                        port,
                        priority,
                        self.buffers.ingress(port, priority.index()).bytes,
                        &mut actions,
                    );
                }
            }
        }
        if new.qcn != old.qcn {
            // Fresh CPs and culprit records: frames held now are never blamed (see `Qcn`).
            self.qcn = Qcn::new(&new.qcn, self.ports.len(), self.frames);
        }
        if new.ecn != old.ecn {
            self.ecn = EcnMarker::new(&new.ecn);
        }
        if new.fecn != old.fecn {
            let speeds: Vec<BitRate> = self.ports.iter().map(|p| p.shaper.speed()).collect();
            self.fecn = Fecn::new(&new.fecn, &speeds);
        }
        self.pipeline.interval = new.pipeline.rate.map(|rate| rate.interval());
        self.pipeline.egress_full = egress_full;
        self.pipeline.blocked = None;
        self.run_pipeline(now);
        Ok(warnings)
    }

    /// A new OFC engine learns the flows already queued (Algorithm 2 line 12 for each).
    fn count_queued_flows(&mut self, now: Instant) {
        let PolicyEngine::Ofc(ofc) = &mut self.policy else { return };
        let mut actions = PolicyActions::new(now, &mut self.xoff);
        for port in 0..self.ports.len() {
            for priority in Pcp::ALL.into_iter().filter(|p| self.lossless & p.mask() != 0) {
                for index in self.buffers.nested(port, priority.index()).frames() {
                    let frame = self.arena.get(index);
                    let event = EgressEvent {
                        ingress: usize::from(frame.ingress),
                        egress: port,
                        priority,
                        len: frame.len,
                        flow: frame.flow,
                        queue_bytes: 0,
                        enqueued: true,
                    };
                    crate::policy::Policy::on_egress(ofc.as_mut(), &event, &mut actions);
                }
            }
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

    /// Processes a frame received on `port` at `now`.
    pub fn handle_rx(&mut self, now: Instant, port: usize, handle: u64, frame: &[u8]) -> RxVerdict {
        let view = match FrameView::parse(frame) {
            Ok(view) => view,
            Err(error) => return self.malformed(port, error),
        };
        if view.is_mac_control() {
            return match view.mac_control() {
                Ok(repr) => {
                    let ofc = match (&self.policy, view.ofc()) {
                        (PolicyEngine::Ofc(_), Ok(ofc)) => ofc,
                        (PolicyEngine::Ofc(_), Err(error)) => {
                            // The PFC part stands on its own: obey it, count the bad TLV.
                            self.malformed(port, error);
                            None
                        }
                        _ => None,
                    };
                    self.obey(now, port, &repr, ofc);
                    RxVerdict::Consumed
                }
                Err(error) => self.malformed(port, error),
            };
        }
        let priority = self.classify(port, &view);
        let p = priority.index();
        let len = frame.len() as u32;
        let counters = &mut self.counters[port].priority[p];
        counters.rx_frames += 1;
        counters.rx_bytes += u64::from(len);
        if self.pfcwd.drops(port, p) {
            self.pfcwd.count_rx_drop(port, p);
            return self.drop_rx(port, p, DropReason::Pfcwd);
        }
        if view.l2.dst.is_link_local() {
            return self.drop_rx(port, p, DropReason::LinkLocal);
        }
        if self.learning & (1 << port) != 0 {
            self.fdb.learn(now, view.l2.src, port);
        }
        let others = self.all_ports() & !(1u64 << port);
        let egress = match view.l2.dst.is_unicast().then(|| self.fdb.lookup(now, view.l2.dst)).flatten() {
            Some(ports) => match ports & others {
                candidates if candidates.count_ones() > 1 => {
                    1u64 << fdb::pick(candidates, view.flow_hash(self.flow_seed))
                }
                candidates => candidates,
            },
            None => others & self.flooding,
        };
        if egress == 0 {
            return self.drop_rx(port, p, DropReason::Filtered);
        }
        let lossless = self.lossless & priority.mask() != 0;
        if lossless && self.buffers.ingress(port, p).bytes + Buffers::ingress_charge(len) > self.ingress_max {
            return self.drop_rx(port, p, DropReason::IngressMax);
        }
        let lossy_held = self.arena.in_use() as u32 - self.lossless_held;
        if !self.buffers.is_unbounded(p) && !self.buffers.pool_has_room()
            || !lossless && lossy_held >= self.lossy_frame_limit
        {
            return self.drop_rx(port, p, DropReason::NoBuffer);
        }
        let flow = FlowKey { src: view.l2.src, dst: view.l2.dst };
        let probe = self.fecn.as_ref().filter(|fecn| fecn.monitors(priority)).and_then(|_| {
            view.fecn_probe().ok().filter(|probe| probe.subtype == FecnSubtype::Probe).map(|probe| probe.rate_kbps)
        });
        let ecn_capable =
            self.ecn.as_ref().is_some_and(|ecn| ecn.monitors(priority)) && matches!(view.ecn(), Some(1 | 2));
        let descriptor = Descriptor {
            handle,
            len,
            ecn_capable,
            ce: false,
            ingress: port as u16,
            priority: p as u8,
            lossless,
            copies: 0,
            egress,
            flow,
            probe,
        };
        let Some(index) = self.arena.alloc(descriptor) else {
            return self.drop_rx(port, p, DropReason::NoBuffer);
        };
        self.lossless_held += u32::from(lossless);
        if let Some(qcn) = self.qcn.as_mut().filter(|qcn| qcn.monitors(priority)) {
            qcn.remember(index, Culprit::of(&view, priority));
        }
        let bytes = self.buffers.add_ingress(port, p, len);
        self.policy.on_ingress(port, priority, bytes, &mut PolicyActions::new(now, &mut self.xoff));
        if lossless {
            self.ofc_arrival(now, port, priority, flow, bytes, egress);
        }
        self.pipeline.fifos[port].push_back(index);
        self.pipeline.waiting += 1;
        self.qcn_arrival(now, Placement::Input, (port, priority), len, bytes, index);
        self.run_pipeline(now);
        RxVerdict::Accepted
    }

    fn malformed(&mut self, port: usize, error: pfcswitch_wire::Error) -> RxVerdict {
        self.counters[port].malformed[error.index()] += 1;
        RxVerdict::Consumed
    }

    fn drop_rx(&mut self, port: usize, priority: usize, reason: DropReason) -> RxVerdict {
        self.counters[port].priority[priority].drops[reason as usize] += 1;
        RxVerdict::Consumed
    }

    fn all_ports(&self) -> u64 {
        u64::MAX >> (64 - self.ports.len())
    }

    /// PCP if tagged; else the DSCP map (trust dscp, IP) or the port's default.
    fn classify(&self, port: usize, view: &FrameView<'_>) -> Pcp {
        let config = &self.ports[port];
        view.pcp()
            .or_else(|| config.dscp_map.zip(view.dscp()).map(|(map, dscp)| map[usize::from(dscp)]))
            .unwrap_or(config.default_priority)
    }

    /// A received PAUSE pauses every priority; a PFC frame its enabled classes that are
    /// PFC-enabled on this switch (802.1Qbb: the enable vector of a port governs both
    /// directions). The watchdog sees every pause and resume of a lossless class, and classes
    /// it holds as stormed under `drop` or `forward` are not obeyed. Under OFC a PAUSE with
    /// flows pauses only those (unless COARSE); see [`Switch::obey_ofc`].
    fn obey(&mut self, now: Instant, port: usize, repr: &MacControlRepr, ofc: Option<OfcRepr<'_>>) {
        let counters = &mut self.counters[port];
        let (enable, quanta) = match repr {
            MacControlRepr::Pause { quanta } => {
                counters.pause_rx += 1;
                (0xFF, [*quanta; 8])
            }
            MacControlRepr::Pfc(pfc) => {
                for (class, _) in pfc.classes() {
                    counters.priority[class.index()].pfc_rx += 1;
                }
                (pfc.enable & self.lossless, pfc.quanta)
            }
        };
        let mut obeyed = pfcswitch_wire::PfcRepr { enable, quanta };
        for p in (0..8).filter(|&p| enable & self.lossless & (1 << p) != 0) {
            self.pfcwd.pfc_received(now, port, p, quanta[p] > 0);
            if self.pfcwd.ignores_pfc(port, p) {
                obeyed.enable &= !(1 << p);
            }
        }
        if matches!(self.policy, PolicyEngine::Ofc(_)) {
            obeyed = self.obey_ofc(now, port, obeyed, ofc);
        }
        self.ports[port].peer_pause.apply(now, &MacControlRepr::Pfc(obeyed));
        let watched = obeyed.enable & self.lossless;
        for p in (0..8).filter(|&p| watched & (1 << p) != 0) {
            self.watch_queue(now, port, p);
        }
    }

    /// OFC Algorithm 2 on egress `port`: a PAUSE's flows go into `congested_flow_tab` and no
    /// longer pause the whole class (unless COARSE, or the table is full); a RESUME, or a plain
    /// PFC resume (all flows), resumes flows and rotates the nested queues. Returns what is
    /// left to obey as plain PFC.
    fn obey_ofc(&mut self, now: Instant, port: usize, mut obeyed: PfcRepr, tlv: Option<OfcRepr<'_>>) -> PfcRepr {
        let lossless = self.lossless;
        let PolicyEngine::Ofc(ofc) = &mut self.policy else { return obeyed };
        let listed = tlv.filter(|tlv| obeyed.is_enabled(tlv.priority) && lossless & tlv.priority.mask() != 0);
        if let Some(tlv) = listed {
            let priority = tlv.priority;
            match tlv.op {
                OfcOp::Pause => {
                    let until = now + self.ports[port].shaper.speed().pause_duration(obeyed.quanta[priority.index()]);
                    let stored = ofc.pause_received(port, priority, tlv.flows(), until);
                    if stored && !tlv.coarse {
                        obeyed.enable &= !priority.mask();
                    }
                    self.settle(port, priority.index());
                }
                OfcOp::Resume => {
                    ofc.count_resume_rx(port, priority);
                    self.ofc_resume(port, priority, Some(&mut tlv.flows()));
                }
            }
        }
        // A plain PFC resume: every flow of the class.
        let listed_class = listed.map_or(0, |tlv| tlv.priority.mask());
        let resumed = obeyed.classes().filter(|&(_, quanta)| quanta == 0).fold(0u8, |mask, (c, _)| mask | c.mask())
            & lossless
            & !listed_class;
        for class in Pcp::ALL.into_iter().filter(|c| resumed & c.mask() != 0) {
            self.ofc_resume(port, class, None);
        }
        obeyed
    }

    /// Resumes `flows` (every flow if `None`) on egress (port, priority): Algorithm 2 lines
    /// 7–9 and the rotation of Algorithm 3.
    fn ofc_resume(&mut self, port: usize, priority: Pcp, flows: Option<&mut dyn Iterator<Item = FlowKey>>) {
        let PolicyEngine::Ofc(ofc) = &mut self.policy else { return };
        let queue = self.buffers.nested_mut(port, priority.index());
        ofc.resume_received(port, priority, flows, queue.is_draining());
        queue.resume();
        self.settle(port, priority.index());
    }

    /// OFC Algorithm 3 lines 7–15: moves frames of paused flows aside until egress (port, p)
    /// has a frame it may send, rotating back at order marks.
    fn settle(&mut self, port: usize, p: usize) {
        let PolicyEngine::Ofc(ofc) = &mut self.policy else { return };
        let priority = Pcp::from_low_bits(p as u8);
        let arena = &self.arena;
        let queue = self.buffers.nested_mut(port, p);
        while queue.settle(|index| ofc.is_paused(port, priority, &arena.get(index).flow)) {
            ofc.commit_resumes(port, priority);
            queue.rotate();
        }
    }

    /// OFC Algorithm 1 lines 1–9 for a lossless arrival on `port` whose ingress accounting is
    /// now `q_in`, going to the ports of `egress`.
    fn ofc_arrival(&mut self, now: Instant, port: usize, priority: Pcp, flow: FlowKey, q_in: u64, egress: u64) {
        let PolicyEngine::Ofc(ofc) = &mut self.policy else { return };
        if q_in < ofc.thresholds().xoff_c {
            return; // Algorithm 1 line 3: nothing to decide below X^c_OFF.
        }
        let p = priority.index();
        let targets = (0..self.ports.len()).filter(|&o| egress & (1u64 << o) != 0);
        let Some((out, q_out)) = targets.map(|o| (o, self.buffers.egress(o, p).bytes)).max_by_key(|&(_, bytes)| bytes)
        else {
            return;
        };
        let arrival = Arrival {
            ingress: port,
            priority,
            flow,
            q_in,
            egress: out,
            q_out,
            egress_coarse_paused: self.ports[out].peer_pause.is_paused(now, priority),
        };
        ofc.on_arrival(&arrival, &mut PolicyActions::new(now, &mut self.xoff));
    }

    /// QCN: a frame of `len` bytes (arena `index`) entered the queue the CP of (port,
    /// priority) at `placement` watches, which now holds `q` bytes. A congested sample
    /// queues a CNM to the culprit the sampling picks.
    fn qcn_arrival(&mut self, now: Instant, placement: Placement, at: (usize, Pcp), len: u32, q: u64, index: u32) {
        let Some(qcn) = &mut self.qcn else { return };
        let (port, priority) = at;
        if qcn.placement() != placement || !qcn.monitors(priority) {
            return;
        }
        let Some(feedback) = qcn.arrival(port, priority, len, q) else { return };
        let (buffers, arena, fifos, ports) = (&self.buffers, &self.arena, &self.pipeline.fifos, self.ports.len());
        let held = || monitored(buffers, arena, fifos, placement, ports, at);
        let Some(culprit) = qcn.pick(port, priority, index, held) else { return };
        let out = match placement {
            Placement::Input => port,
            Placement::Output => {
                // Towards the source; over the culprit's own ingress where an ECMP group leads there.
                match self.fdb.lookup(now, qcn.culprit(culprit).src) {
                    Some(ports) if ports.count_ones() == 1 => ports.trailing_zeros() as usize,
                    _ => usize::from(arena.get(culprit).ingress),
                }
            }
        };
        let mac = self.ports[port].mac;
        qcn.notify(at, out, mac, cpid(mac, priority, placement), feedback, culprit);
    }

    /// Tells the watchdog whether egress queue (port, p) is stuck: frames held, peer pausing.
    fn watch_queue(&mut self, now: Instant, port: usize, p: usize) {
        let stuck = self.is_stuck(now, port, p);
        self.pfcwd.queue_state(now, port, p, stuck);
    }

    fn is_stuck(&self, now: Instant, port: usize, p: usize) -> bool {
        self.buffers.queue_len(port, p) > 0 && self.ports[port].peer_pause.is_paused(now, Pcp::from_low_bits(p as u8))
    }

    /// Moves frames from the ingress FIFOs to egress queues, as far as the rate and (in stop
    /// mode) egress room allow.
    fn run_pipeline(&mut self, now: Instant) {
        while self.pipeline.waiting > 0 {
            if self.pipeline.interval.is_some() && now < self.pipeline.next_slot {
                return;
            }
            let port = match self.pipeline.blocked {
                Some(port) => port,
                None => {
                    let n = self.ports.len();
                    let start = self.pipeline.next_port;
                    (0..n).map(|i| (start + i) % n).find(|&p| !self.pipeline.fifos[p].is_empty()).expect("waiting > 0")
                }
            };
            let index = *self.pipeline.fifos[port].front().expect("non-empty FIFO");
            if !self.forward(now, index) {
                self.pipeline.blocked = Some(port);
                return;
            }
            self.pipeline.blocked = None;
            self.pipeline.fifos[port].pop_front();
            self.pipeline.waiting -= 1;
            self.pipeline.next_port = (port + 1) % self.ports.len();
            if let Some(interval) = self.pipeline.interval {
                self.pipeline.next_slot = self.pipeline.next_slot.max(now) + interval;
            }
        }
    }

    /// Queues a processed frame on its egress ports. Returns false, having changed nothing,
    /// when the pipeline must stall (stop mode and some queue lacks room).
    fn forward(&mut self, now: Instant, index: u32) -> bool {
        let frame = *self.arena.get(index);
        let (p, len) = (usize::from(frame.priority), frame.len);
        let targets = (0..self.ports.len()).filter(|&o| frame.egress & (1u64 << o) != 0);
        if self.pipeline.egress_full == EgressFull::Stop && !targets.clone().all(|o| self.buffers.fits(o, p, len)) {
            return false;
        }
        let mut copies = 0u8;
        for egress in targets {
            if self.pfcwd.drops(egress, p) {
                self.pfcwd.count_tx_drop(egress, p);
                self.counters[egress].priority[p].drops[DropReason::Pfcwd as usize] += 1;
                continue;
            }
            if !self.buffers.fits(egress, p, len) {
                self.counters[egress].priority[p].drops[DropReason::EgressFull as usize] += 1;
                continue;
            }
            let queue_bytes = self.buffers.enqueue(egress, p, index, len);
            copies += 1;
            // Only a frame with one egress: the bytes of a flooded frame are every copy's.
            if frame.ecn_capable
                && frame.egress.count_ones() == 1
                && self.ecn.as_mut().is_some_and(|ecn| ecn.marks(queue_bytes))
            {
                self.arena.get_mut(index).ce = true;
                self.counters[egress].priority[p].ecn_marked += 1;
            }
            if let Some(fecn) = &mut self.fecn {
                fecn.arrival(egress, Pcp::from_low_bits(frame.priority), len);
            }
            self.qcn_arrival(
                now,
                Placement::Output,
                (egress, Pcp::from_low_bits(frame.priority)),
                len,
                queue_bytes,
                index,
            );
            let event = EgressEvent {
                ingress: usize::from(frame.ingress),
                egress,
                priority: Pcp::from_low_bits(frame.priority),
                len,
                flow: frame.flow,
                queue_bytes,
                enqueued: true,
            };
            self.policy.on_egress(&event, &mut PolicyActions::new(now, &mut self.xoff));
            self.settle(egress, p);
            self.watch_queue(now, egress, p);
        }
        if copies == 0 {
            self.release(now, index);
            self.freed.push_back(frame.handle);
        } else {
            self.arena.get_mut(index).copies = copies;
        }
        true
    }

    /// Ends the switch's hold on a frame: its ingress bytes are released.
    fn release(&mut self, now: Instant, index: u32) {
        let frame = *self.arena.get(index);
        let (ingress, priority) = (usize::from(frame.ingress), Pcp::from_low_bits(frame.priority));
        let bytes = self.buffers.sub_ingress(ingress, priority.index(), frame.len);
        self.policy.on_ingress(ingress, priority, bytes, &mut PolicyActions::new(now, &mut self.xoff));
        self.arena.release(index);
        self.lossless_held -= u32::from(frame.lossless);
    }

    /// The next transmission on `port` at `now`, if its wire is free and something may go:
    /// a pending PFC frame first, then the scheduler's choice among unpaused priorities.
    pub fn poll_tx(&mut self, now: Instant, port: usize) -> Option<Tx> {
        if !self.ports[port].shaper.is_ready(now) {
            return None;
        }
        if let Some(control) = self.poll_control(now, port) {
            self.ports[port].shaper.send(now, control.wire_len());
            if let ControlFrame::Pause(PauseFrame { repr: MacControlRepr::Pfc(pfc), .. }) = control {
                for (class, _) in pfc.classes() {
                    self.counters[port].priority[class.index()].pfc_tx += 1;
                }
            }
            return Some(Tx::Control(control));
        }
        let eligible = self.buffers.backlog(port) & !self.ports[port].peer_pause.paused_mask(now);
        let (buffers, arena) = (&self.buffers, &self.arena);
        let head_len = |p: usize| arena.get(buffers.head(port, p).expect("eligible queue has a head")).len;
        let p = self.ports[port].scheduler.pick(eligible, head_len)?;
        let (frame, last) = self.take_head(now, port, p);
        self.settle(port, p);
        self.pfcwd.sent(port, p);
        let state = &mut self.ports[port];
        state.scheduler.sent(p, frame.len, self.buffers.queue_len(port, p) == 0);
        state.shaper.send(now, frame.len as usize);
        let counters = &mut self.counters[port].priority[p];
        counters.tx_frames += 1;
        counters.tx_bytes += u64::from(frame.len);
        if self.pipeline.waiting > 0 {
            self.run_pipeline(now);
        }
        let mac = self.ports[port].mac;
        let mark = frame
            .probe
            .zip(self.fecn.as_mut())
            .map(|(rate, fecn)| fecn.mark(port, Pcp::from_low_bits(p as u8), mac, rate));
        Some(Tx::Data { handle: frame.handle, len: frame.len, last, mark, ce: frame.ce })
    }

    /// The next frame the switch makes for `port`: pause frames first, then CNMs.
    fn poll_control(&mut self, now: Instant, port: usize) -> Option<ControlFrame> {
        if let Some(pause) = self.poll_pause(now, port) {
            return Some(ControlFrame::Pause(pause));
        }
        self.qcn.as_mut()?.poll_cnm(port).map(ControlFrame::Cnm)
    }

    /// The PFC frame the transmitter has for `port`, or under OFC the next OFC frame.
    fn poll_pause(&mut self, now: Instant, port: usize) -> Option<PauseFrame> {
        let src = self.ports[port].mac;
        let plain = |pfc| PauseFrame { src, dst: PAUSE_MULTICAST, repr: MacControlRepr::Pfc(pfc), ofc: None };
        let PolicyEngine::Ofc(ofc) = &mut self.policy else {
            return self.xoff.poll_frame(now, port).map(plain);
        };
        if !ofc.has_frames(port) {
            let rest = ofc.queue_frames(port, self.xoff.poll_frame(now, port)?);
            if rest.enable != 0 {
                return Some(plain(rest));
            }
        }
        let frame = ofc.poll_frame(port)?;
        let pfc = PfcRepr::default().with_class(frame.header.priority, frame.quanta);
        Some(PauseFrame { ofc: Some(frame), ..plain(pfc) })
    }

    /// Writes `frame`, polled from `port` (before the next poll there), into `buffer`, which
    /// holds at least [`ControlFrame::wire_len`] bytes; returns the length.
    pub fn emit_control(&self, port: usize, frame: &ControlFrame, buffer: &mut [u8]) -> usize {
        let frame = match frame {
            ControlFrame::Pause(frame) => frame,
            ControlFrame::Cnm(cnm) => return cnm.emit(buffer),
        };
        match (&frame.ofc, &self.policy) {
            (Some(ofc_frame), PolicyEngine::Ofc(ofc)) => {
                let flows = ofc.frame_flows(port, ofc_frame);
                build_ofc_frame(buffer, frame.src, ofc_frame.header, ofc_frame.quanta, flows.iter().copied())
            }
            _ => build_mac_control_frame(buffer, frame.src, frame.dst, &frame.repr),
        }
    }

    /// Takes the head frame off egress queue (port, p), tells the policy, and releases the
    /// frame if that was its last copy (returned as `true`).
    fn take_head(&mut self, now: Instant, port: usize, p: usize) -> (Descriptor, bool) {
        let index = self.buffers.head(port, p).expect("a queue with frames has a head");
        let frame = *self.arena.get(index);
        let queue_bytes = self.buffers.dequeue(port, p, frame.len);
        let event = EgressEvent {
            ingress: usize::from(frame.ingress),
            egress: port,
            priority: Pcp::from_low_bits(frame.priority),
            len: frame.len,
            flow: frame.flow,
            queue_bytes,
            enqueued: false,
        };
        self.policy.on_egress(&event, &mut PolicyActions::new(now, &mut self.xoff));
        let copies = &mut self.arena.get_mut(index).copies;
        *copies -= 1;
        let last = *copies == 0;
        if last {
            self.release(now, index);
        }
        (frame, last)
    }

    /// A handle the switch accepted and then dropped (egress full in the pipeline).
    pub fn poll_free(&mut self) -> Option<u64> {
        self.freed.pop_front()
    }

    /// The earliest time at which `handle_timeout` or `poll_tx` has something to do; it may
    /// lie in the past, meaning now.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let mut next = self.xoff.next_timeout();
        let mut consider = |at: Instant| next = Some(next.map_or(at, |n: Instant| n.min(at)));
        if let Some(at) = self.pfcwd.next_timeout(|port, p| self.xoff.asserting_since(port, p)) {
            consider(at);
        }
        let ofc = match &self.policy {
            PolicyEngine::Ofc(ofc) => Some(ofc),
            _ => None,
        };
        if let Some(at) = ofc.and_then(|ofc| ofc.next_timeout()) {
            consider(at);
        }
        if self.pipeline.waiting > 0 && self.pipeline.blocked.is_none() && self.pipeline.interval.is_some() {
            consider(self.pipeline.next_slot);
        }
        if let Some(fecn) = &self.fecn {
            consider(fecn.next_timeout());
        }
        for (index, port) in self.ports.iter().enumerate() {
            let ready = port.shaper.ready_at();
            if self.xoff.is_pending(index) || ofc.is_some_and(|ofc| ofc.has_frames(index)) {
                consider(ready);
            }
            let backlog = self.buffers.backlog(index);
            if let Some(resume) =
                Pcp::ALL.into_iter().filter(|p| backlog & p.mask() != 0).map(|p| port.peer_pause.paused_until(p)).min()
            {
                consider(ready.max(resume));
            }
        }
        next
    }

    pub fn handle_timeout(&mut self, now: Instant) {
        self.xoff.handle_timeout(now);
        // OFC: congested flows whose pause ran out without a refresh resume, as PFC's would.
        while let Some((port, priority)) = self.ofc().and_then(|ofc| ofc.expired(now)) {
            self.ofc_resume(port, priority, None);
        }
        let mut events = std::mem::take(&mut self.pfcwd_events);
        let (buffers, ports, xoff) = (&self.buffers, &self.ports, &self.xoff);
        let stuck = |port: usize, p: usize| {
            buffers.queue_len(port, p) > 0 && ports[port].peer_pause.is_paused(now, Pcp::from_low_bits(p as u8))
        };
        self.pfcwd.handle_timeout(now, stuck, |port, p| xoff.asserting_since(port, p), &mut events);
        for event in events.drain(..) {
            if let PfcwdEvent::Stormed { port, priority, action } = event {
                self.contain_storm(now, port, priority, action);
            }
        }
        self.pfcwd_events = events;
        if let Some(fecn) = &mut self.fecn {
            let buffers = &self.buffers;
            fecn.handle_timeout(now, |port, priority| buffers.egress(port, priority.index()).bytes);
        }
        self.run_pipeline(now);
    }

    /// Carries out the watchdog's action on a stormed queue: `drop` discards what it holds,
    /// and `drop` and `forward` end the peer's pause (its further PFC is ignored).
    fn contain_storm(&mut self, now: Instant, port: usize, p: usize, action: PfcwdAction) {
        let priority = Pcp::from_low_bits(p as u8);
        if action == PfcwdAction::Alert {
            return;
        }
        let resume = pfcswitch_wire::PfcRepr::default().with_class(priority, 0);
        self.ports[port].peer_pause.apply(now, &MacControlRepr::Pfc(resume));
        if action != PfcwdAction::Drop {
            return;
        }
        // Paused OFC flows too: the queue drains whole, so flatten it (order no longer matters).
        self.buffers.nested_mut(port, p).flatten();
        if let PolicyEngine::Ofc(ofc) = &mut self.policy {
            ofc.commit_resumes(port, priority);
        }
        while self.buffers.queue_len(port, p) > 0 {
            let (frame, last) = self.take_head(now, port, p);
            self.pfcwd.count_tx_drop(port, p);
            self.counters[port].priority[p].drops[DropReason::Pfcwd as usize] += 1;
            if last {
                self.freed.push_back(frame.handle);
            }
        }
    }

    pub fn counters(&self, port: usize) -> &PortCounters {
        &self.counters[port]
    }

    pub fn queue_state(&self, now: Instant, port: usize, priority: Pcp) -> QueueState {
        let p = priority.index();
        QueueState {
            ingress: self.buffers.ingress(port, p),
            egress: self.buffers.egress(port, p),
            peer_paused: self.ports[port].peer_pause.is_paused(now, priority),
            pausing_peer: self.xoff.asserted(port) & priority.mask() != 0,
            paused_time: self.ports[port].peer_pause.paused_time(now, priority),
            pausing_time: self.xoff.pausing_time(now, port, priority),
            xoff_to_xon: self.xoff.xoff_to_xon(port, priority),
            stormed: self.pfcwd.is_stormed(port, p),
        }
    }

    pub fn pfcwd(&self) -> &Watchdog {
        &self.pfcwd
    }

    /// How long `port` has been asserting XOFF on `priority` without a break (zero if not).
    pub fn pausing_for(&self, now: Instant, port: usize, priority: Pcp) -> Duration {
        crate::pfcwd::pausing_for(now, self.xoff.asserting_since(port, priority.index()))
    }

    /// The OFC engine's state, when the policy is OFC.
    pub fn ofc(&self) -> Option<&crate::policy::Ofc> {
        match &self.policy {
            PolicyEngine::Ofc(ofc) => Some(ofc),
            _ => None,
        }
    }

    /// OFC's nested queues of egress (port, priority): frames parked for paused flows,
    /// whether a backup is draining, and the rotations so far.
    pub fn nested_queue(&self, port: usize, priority: Pcp) -> &crate::policy::NestedQueue {
        self.buffers.nested(port, priority.index())
    }

    /// QCN's congestion points, when `[qcn]` monitors a priority.
    pub fn qcn(&self) -> Option<&Qcn> {
        self.qcn.as_ref()
    }

    /// FECN's rate points, when `[fecn]` monitors a priority.
    pub fn fecn(&self) -> Option<&Fecn> {
        self.fecn.as_ref()
    }

    /// The queue the CP of (port, priority) watches: the egress queue at the output, the
    /// ingress share at the input (0 without QCN).
    pub fn qcn_queue_bytes(&self, port: usize, priority: Pcp) -> u64 {
        match self.qcn.as_ref().map(Qcn::placement) {
            Some(Placement::Output) => self.buffers.egress(port, priority.index()).bytes,
            Some(Placement::Input) => self.buffers.ingress(port, priority.index()).bytes,
            None => 0,
        }
    }

    /// The CaPFC engine's state, when the policy is CaPFC.
    pub fn capfc(&self) -> Option<&crate::policy::Capfc> {
        match &self.policy {
            PolicyEngine::Capfc(capfc) => Some(capfc),
            _ => None,
        }
    }

    /// Frames the switch holds (in the pipeline or egress queues).
    pub fn frames_held(&self) -> usize {
        self.arena.in_use()
    }

    pub fn port_mac(&self, port: usize) -> EthernetAddress {
        self.ports[port].mac
    }

    pub fn fdb_entries(&self, now: Instant) -> Vec<FdbEntry> {
        self.fdb.entries(now)
    }

    /// Zeroes counters, high-water marks and accumulated pause times; state stays.
    pub fn reset_counters(&mut self, now: Instant) {
        self.counters.fill(PortCounters::default());
        self.buffers.reset_high_water();
        self.xoff.reset_counters(now);
        self.pfcwd.reset_counters();
        if let PolicyEngine::Ofc(ofc) = &mut self.policy {
            ofc.reset_counters();
        }
        if let Some(qcn) = &mut self.qcn {
            qcn.reset_counters();
        }
        if let Some(fecn) = &mut self.fecn {
            fecn.reset_counters();
        }
        for port in 0..self.ports.len() {
            for p in 0..8 {
                self.buffers.nested_mut(port, p).reset_rotations();
            }
        }
        for port in &mut self.ports {
            port.peer_pause.reset_time(now);
        }
    }
}

/// The frames (arena index, length) the CP of (port, priority) at `placement` watches: its
/// egress queue at the output; at the input, every frame received there on the priority and
/// not yet sent, wherever it waits.
fn monitored<'a>(
    buffers: &'a Buffers,
    arena: &'a Arena,
    fifos: &'a [VecDeque<u32>],
    placement: Placement,
    ports: usize,
    (port, priority): (usize, Pcp),
) -> impl Iterator<Item = (u32, u32)> + 'a {
    let p = priority.index();
    let output = (placement == Placement::Output).then(|| buffers.nested(port, p).frames()).into_iter().flatten();
    let queued = (0..ports).flat_map(move |o| buffers.nested(o, p).frames());
    let input = (placement == Placement::Input)
        .then(|| queued.chain(fifos[port].iter().copied()))
        .into_iter()
        .flatten()
        .filter(move |&i| {
            let frame = arena.get(i);
            usize::from(frame.ingress) == port && usize::from(frame.priority) == p
        });
    output.chain(input).map(move |i| (i, arena.get(i).len))
}

/// FNV-1a of the switch's name: a fixed ECMP seed per switch, the same on every run.
fn flow_seed(name: &str) -> u32 {
    name.bytes().fold(0x811C_9DC5, |hash, byte| (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193))
}
