//! The run-to-completion loop: frames from the RX rings into the core, the core's
//! transmissions into the TX rings, buffers back to the fill rings, timers from the real
//! clock. One thread owns the switch; everything else talks to it through [`Call`]s.

use crate::classifier::{Classifier, ClassifierDrop, ClassifierError, META_LEN, META_MAGIC, PortClassification};
use crate::config;
use crate::control::Call;
use crate::link::{LinkEvent, LinkState, LinkWatcher, PortLink};
use crate::notify;
use crate::signals::{EventFd, SignalAction, SignalFd};
use crate::timer::{self, Clock, Lateness};
use crate::umem::{FramePool, UmemArea, chunk_base};
use crate::xsk::{Owner, QueueSocket, RING_SIZE, Sockets, TX_BUDGET, XskError, tx_desc};
use pfcswitch_link::time::Instant;
use pfcswitch_switch::config::{PolicyConfig, SwitchConfig};
use pfcswitch_switch::report::{
    CableReport, ControlRequest, ControlResponse, DatapathReport, QueueDepths, Snapshot, XdpPortReport,
};
use pfcswitch_switch::{RxVerdict, Switch, Tx};
use pfcswitch_wire::{EthernetAddress, IntEgress, Pcp, apply_int, mark_ecn_ce, mark_fecn_probe};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc::Receiver;
use std::time::Duration;
use xdpilone::xdp::XdpDesc;

mod backlog;
mod cable;
mod links;

use backlog::Backlog;
pub use cable::CableSpec;
use cable::{Cable, Fate};

/// Line-rate credit of the endpoints' NICs and pacers (the switch's ports take theirs from
/// `[switch] shaper_burst`, by default the same): a wake-up late by scheduling (two cores
/// shared with the switches) costs no throughput, and the long-run rate stays exact.
pub const BURST_CREDIT: Duration = pfcswitch_switch::config::DEFAULT_SHAPER_BURST;

/// Descriptors moved per ring per loop iteration.
const BATCH: u32 = TX_BUDGET;
/// Frames whose first cache line is requested ahead of the one the core parses.
const PREFETCH_AHEAD: usize = 8;
/// Frames kept off the fill rings, for the PFC frames the switch generates.
const CONTROL_RESERVE: usize = 64;
/// Fill-ring depth per socket: half the ring, so TX and the core always find buffers. Beyond
/// the frames waiting in its RX ring, a port can take this many before the loop comes back:
/// the headroom a lossless sender's pause (`backlog`) must arrive within.
const FILL_TARGET: u32 = RING_SIZE / 2;
/// How often the signalfd is read while the loop is busy (each read is a syscall; control
/// requests arrive on a channel and are answered every turn at no syscall cost).
const HOUSEKEEPING: Duration = Duration::from_millis(10);
/// When the kernel leaves descriptors in a TX ring (its send buffer is full), kick again after
/// this long rather than spinning on sendto and starving the kernel work that drains it.
const TX_RETRY: Duration = Duration::from_micros(20);
/// How recently a turn must have found a whole batch waiting for the loop to spin for frames
/// before it sleeps ([`frame_spin`]): a few turns' time, so a lightly loaded switch, whose
/// turns find a frame or two, never spins for them.
const SATURATED_RECENTLY: Duration = Duration::from_millis(1);
/// How long a loop saturated a moment ago spins for the next frame: longer than the late
/// wake-ups measured here (about 2 ms), short enough that the end of an overload costs
/// nothing worth counting.
const FRAME_SPIN: Duration = Duration::from_millis(2);

#[derive(Debug, thiserror::Error)]
pub enum DatapathError {
    #[error(transparent)]
    Classifier(#[from] ClassifierError),
    #[error(transparent)]
    Xsk(#[from] XskError),
    #[error("cannot {what}: {source}")]
    Io { what: &'static str, source: std::io::Error },
    #[error("{0}")]
    Config(String),
}

/// Options that are not part of the switch configuration.
#[derive(Clone, Debug)]
pub struct Options {
    pub config_path: PathBuf,
    /// Spin this long before each deadline instead of sleeping (0: never spin, not even for
    /// frames after a saturated turn, `frame_spin`).
    pub spin: Duration,
    /// Emulated cables on ports (`--cable`).
    pub cables: Vec<CableSpec>,
}

/// Everything the loop owns. Field order is drop order: sockets close before the UMEM is
/// unmapped, and the classifier (whose drop detaches XDP) goes last.
pub struct Datapath {
    sockets: Sockets,
    area: UmemArea,
    pool: FramePool,
    switch: Switch,
    config: SwitchConfig,
    options: Options,
    /// For each port, the index in `sockets.queues` of its TX queue (queue 0), while it has
    /// sockets.
    tx_queue: Vec<Option<usize>>,
    clock: Clock,
    started: std::time::Instant,
    lateness: Lateness,
    signals: SignalFd,
    wake: Arc<EventFd>,
    calls: Receiver<Call>,
    loops: u64,
    meta_missing: u64,
    /// When a turn last found a receive ring holding a whole batch: the loop was saturated.
    saturated_at: Option<Instant>,
    /// The kernel's link events, and each port's link as they left it.
    links: LinkWatcher,
    port_links: Vec<PortLink>,
    /// The descriptors the idle wait polls: every RX ring, then the link events, the
    /// signalfd and the eventfd.
    poll_fds: Vec<libc::pollfd>,
    /// Each port's emulated cable, if it has one.
    cables: Vec<Option<Cable>>,
    /// What each port does about frames waiting in its receive rings.
    backlogs: Vec<Backlog>,
    classifier: Classifier,
}

impl std::fmt::Debug for Datapath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Datapath").field("switch", &self.config.switch.name).finish_non_exhaustive()
    }
}

/// The interface port `index` is bound to.
fn iface_of(config: &SwitchConfig, index: usize) -> &str {
    let port = &config.ports[index];
    port.iface.as_deref().unwrap_or(&port.name)
}

fn iface_mac(iface: &str) -> Option<EthernetAddress> {
    std::fs::read_to_string(format!("/sys/class/net/{iface}/address")).ok()?.trim().parse().ok()
}

fn classification(config: &SwitchConfig, index: usize) -> Result<PortClassification, DatapathError> {
    let port = &config.ports[index];
    let dscp_map = (port.trust == pfcswitch_switch::config::Trust::Dscp)
        .then(|| config.dscp_map(index))
        .transpose()
        .map_err(|e| DatapathError::Config(e.to_string()))?;
    Ok(PortClassification {
        port_index: index as u32,
        default_priority: Pcp::from_low_bits(port.default_priority),
        dscp_map,
        lossless: config.lossless_mask(),
    })
}

impl Datapath {
    /// Sets up the classifier, the UMEM and every socket, and attaches XDP to every port.
    pub fn new(
        config: SwitchConfig,
        options: Options,
        wake: Arc<EventFd>,
        calls: Receiver<Call>,
    ) -> Result<Datapath, DatapathError> {
        let ifaces: Vec<String> = (0..config.ports.len()).map(|index| iface_of(&config, index).to_string()).collect();
        for iface in &ifaces {
            crate::classifier::if_index(iface)?;
        }
        let cables = cables_of(&config, &options.cables)?;
        let (mut switch, _) = Switch::new(&config).map_err(|e| DatapathError::Config(e.to_string()))?;
        switch.preallocate();
        switch.set_shaper_burst(config.switch.shaper_burst);
        // Subscribed before the first read of the states, so that no change falls between.
        let links =
            LinkWatcher::open().map_err(|source| DatapathError::Io { what: "open the rtnetlink socket", source })?;
        let port_links: Vec<PortLink> = ifaces.iter().map(|iface| PortLink::bound(LinkEvent::read(iface))).collect();
        for (port, link) in port_links.iter().enumerate().filter(|(_, link)| link.state != LinkState::Up) {
            log::warn!("port {} ({}): link {} at start", config.ports[port].name, ifaces[port], link.state.name());
            switch.set_link(Instant::ZERO, port, false);
        }
        for (port, iface) in ifaces.iter().enumerate() {
            if let Some(mac) = iface_mac(iface) {
                switch.set_port_mac(port, mac);
            }
        }
        let mut classifier = Classifier::load()?;
        let queues: u32 = ifaces.iter().map(|i| crate::xsk::rx_queue_count(i)).sum();
        let frames = config.frames() + queues * (FILL_TARGET + RING_SIZE / 4) + CONTROL_RESERVE as u32;
        let area = UmemArea::new(frames).map_err(|source| DatapathError::Io { what: "map the UMEM", source })?;
        let huge = area.huge_page_bytes().map_or("unknown".into(), |bytes| format!("{} MiB", bytes >> 20));
        log::info!("UMEM: {frames} frames, {} MiB, on huge pages: {huge}", area.len() >> 20);
        let sockets = Sockets::open(&area, &ifaces, Owner::Loopback)?;
        for socket in &sockets.queues {
            classifier.register_socket(socket.port as u32, socket.queue, socket.fd())?;
        }
        for (index, iface) in ifaces.iter().enumerate() {
            classifier.attach(iface, &classification(&config, index)?)?;
        }
        let tx_queue = (0..ifaces.len()).map(|port| sockets.tx_queue(port)).collect();
        let signals = SignalFd::new().map_err(|source| DatapathError::Io { what: "create the signalfd", source })?;
        Ok(Datapath {
            sockets,
            area,
            pool: FramePool::new(frames),
            switch,
            config,
            options,
            tx_queue,
            clock: Clock::new(),
            started: std::time::Instant::now(),
            lateness: Lateness::new(),
            signals,
            wake,
            calls,
            loops: 0,
            meta_missing: 0,
            saturated_at: None,
            links,
            port_links,
            poll_fds: Vec::new(),
            backlogs: vec![Backlog::default(); ifaces.len()],
            cables,
            classifier,
        })
    }

    /// Runs until SIGTERM or SIGINT.
    pub fn run(&mut self) {
        timer::tighten_timer_slack();
        self.refill();
        notify::notify("READY=1");
        let socket_mode = self.sockets.mode();
        for (index, port) in self.config.ports.iter().enumerate() {
            let attach = self.classifier.attach_mode(index as u32).unwrap_or("not attached");
            let queues = self.sockets.queues.iter().filter(|q| q.port == index).count();
            log::info!(
                "port {} ({}): XDP {attach}, AF_XDP {socket_mode} mode, {queues} RX queue(s)",
                port.name,
                iface_of(&self.config, index)
            );
        }
        log::info!("forwarding on {} ports", self.config.ports.len());
        let mut housekeeping = Instant::ZERO;
        loop {
            self.loops += 1;
            let now = self.clock.now();
            let received = self.receive(now);
            // Taking a batch in took time: the rest of the turn reads the clock again, so that
            // the wires count it. With `now` alone, the first frame for an idle port booked
            // its wire from `now` and the rest of the batch waited a turn behind it.
            let now = if received { self.clock.now() } else { now };
            self.follow_backlogs(now);
            if self.switch.is_due(now) {
                self.switch.handle_timeout(now);
            }
            let (sent, tx_waiting) = self.transmit(now);
            self.reclaim();
            self.refill();
            if now >= housekeeping {
                housekeeping = now + HOUSEKEEPING;
                if self.read_signals() == Some(SignalAction::Stop) {
                    break;
                }
                self.follow_links(now);
                // Here, not on every turn: a scan of the ports costs nothing every 10 ms,
                // and the idle wait wakes for the next attempt (`next_bind`).
                if self.next_bind().is_some_and(|at| at <= now) {
                    self.bind_due(now);
                }
            }
            self.answer_calls();
            if received || sent {
                continue;
            }
            if self.wait_for_work(now, tx_waiting) {
                housekeeping = Instant::ZERO;
            }
        }
        notify::notify("STOPPING=1");
        log::info!("stopping: closing sockets and detaching XDP");
    }

    /// Sleeps (or spins, `--spin`) until a frame, a timer, a link event, a signal or a control
    /// call is due, or a TX ring the kernel left full is to be kicked again. Returns whether
    /// the links, signals, calls or a bind are due (their descriptors woke the loop): a frame's
    /// wake-up costs no extra reads.
    ///
    /// This and the other paths a busy loop rarely takes are cold and out of line, so that
    /// the code a busy turn runs is a few contiguous kilobytes (`run` was 39 KB with them
    /// inlined, 12 KB without): the kernel's transmit work between two turns may evict it.
    #[cold]
    #[inline(never)]
    fn wait_for_work(&mut self, now: Instant, tx_waiting: bool) -> bool {
        let next_bind = self.next_bind();
        let arrivals = self.cables.iter().flatten().filter_map(Cable::next_arrival);
        let timers = self.switch.poll_timeout().into_iter().chain(next_bind).chain(arrivals).min();
        let spin = frame_spin(now, self.saturated_at, tx_waiting, self.options.spin);
        if !spin.is_zero() && self.spin_for_rx(timers.map_or(now + spin, |at| at.min(now + spin))) {
            return false;
        }
        let fds = &mut self.poll_fds;
        fds.clear();
        fds.extend(self.sockets.queues.iter().map(|q| timer::readable(q.fd())));
        fds.push(timer::readable(self.links.fd()));
        fds.push(timer::readable(self.signals.raw()));
        fds.push(timer::readable(self.wake.raw()));
        let queues = &self.sockets.queues;
        let has_rx = || frames_waiting(queues);
        match tx_retry(now, tx_waiting, timers) {
            // The kernel work that drains the ring may need this CPU: sleep, never spin.
            Some(retry) => timer::wait(&self.clock, Some(retry), Duration::ZERO, fds, has_rx, None),
            None => timer::wait(&self.clock, timers, self.options.spin, fds, has_rx, Some(&mut self.lateness)),
        }
        let bind_due = next_bind.is_some_and(|at| at <= self.clock.now());
        bind_due || fds[fds.len() - 3..].iter().any(|fd| fd.revents != 0)
    }

    /// Spins until `until` (the spin's end or the next timer) for a frame in a receive ring;
    /// returns whether one came.
    fn spin_for_rx(&self, until: Instant) -> bool {
        while self.clock.now() < until {
            if frames_waiting(&self.sockets.queues) {
                return true;
            }
            std::hint::spin_loop();
        }
        false
    }

    /// Moves received frames into the core (through the port's cable, where it has one that
    /// carries both ways). Returns whether any arrived.
    fn receive(&mut self, now: Instant) -> bool {
        let mut any = false;
        let mut batch = [XdpDesc::default(); BATCH as usize];
        let Datapath { sockets, area, pool, switch, meta_missing, cables, saturated_at, .. } = self;
        for queue in &mut sockets.queues {
            let mut reader = queue.rx.receive(BATCH);
            let mut count = 0;
            while let Some(desc) = reader.read() {
                batch[count] = desc;
                count += 1;
            }
            reader.release();
            let batch = &batch[..count];
            any |= count > 0;
            if count == BATCH as usize {
                *saturated_at = Some(now);
            }
            if let Some(cable) = cables[queue.port].as_mut().filter(|cable| cable.delays_incoming()) {
                for desc in batch.iter().filter(|&&desc| cable.receive(now, desc) == Fate::Lost) {
                    pool.release(desc.addr);
                }
                continue;
            }
            for desc in batch.iter().take(PREFETCH_AHEAD) {
                prefetch_received(area, pool, desc);
            }
            for (index, desc) in batch.iter().enumerate() {
                if let Some(ahead) = batch.get(index + PREFETCH_AHEAD) {
                    prefetch_received(area, pool, ahead);
                }
                deliver(area, pool, switch, meta_missing, now, queue.port, desc);
            }
        }
        for (port, cable) in cables.iter_mut().enumerate() {
            while let Some(desc) = cable.as_mut().and_then(|cable| cable.arrived_in(now)) {
                deliver(area, pool, switch, meta_missing, now, port, &desc);
                any = true;
            }
        }
        any
    }

    /// Sheds lossy frames in the classifier and holds lossless senders with PFC while a
    /// port's receive rings back up ([`backlog`]).
    fn follow_backlogs(&mut self, now: Instant) {
        let lossless = self.config.lossless_mask();
        for (port, state) in self.backlogs.iter_mut().enumerate() {
            let waiting = self.sockets.queues.iter().filter(|q| q.port == port).map(|q| q.rx.available()).sum();
            let counters = &self.switch.counters(port).priority;
            let lossless_rx = (0..8).filter(|p| lossless & (1 << p) != 0).map(|p| counters[p].rx_frames).sum();
            let next = state.next(now, waiting, lossless_rx);
            if next.shedding != state.shedding {
                self.classifier.set_shedding(port as u32, next.shedding);
            }
            if next.holding != state.holding {
                self.switch.hold_lossless(now, port, next.holding);
            }
            *state = next;
        }
    }

    /// Hands the core's transmissions to the TX rings and the kernel. Returns whether any
    /// went out, and whether some ring still holds descriptors the kernel has not taken.
    ///
    /// Transmission comes first: each port may send in one turn as many frames as a turn
    /// receives on all ports together, so the outputs run as fast as the CPU allows and the
    /// loop never takes in more than it can send. When the CPU is saturated, the frames it
    /// cannot take wait in the kernel's RX rings and the kernel drops the excess there,
    /// before anyone has parsed or forwarded it, rather than the switch after paying for
    /// both. The bound keeps a turn, and so the timers' lateness, short.
    fn transmit(&mut self, now: Instant) -> (bool, bool) {
        let (mut any, mut waiting) = (false, false);
        let turn = BATCH * self.sockets.queues.len() as u32;
        for port in 0..self.tx_queue.len() {
            let Some(tx_queue) = self.tx_queue[port] else { continue };
            let mut budget = turn;
            while budget > 0 {
                let sent = self.write_tx(now, port, tx_queue, budget.min(BATCH));
                budget -= sent;
                any |= sent > 0;
                let queue = &mut self.sockets.queues[tx_queue];
                let left = queue.drain_tx();
                queue.reap_completions(|addr| self.pool.completed(addr, port));
                if left {
                    waiting = true;
                    break;
                }
                if sent == 0 {
                    break;
                }
            }
        }
        (any, waiting)
    }

    /// Moves up to `max` of the core's transmissions on `port` into its TX ring (in
    /// `sockets.queues[tx_queue]`), through the port's cable if it has one. Returns how many
    /// went into the ring.
    fn write_tx(&mut self, now: Instant, port: usize, tx_queue: usize, max: u32) -> u32 {
        let Datapath { sockets, area, pool, switch, cables, .. } = self;
        let mut writer = sockets.queues[tx_queue].tx.transmit(max);
        let Some(cable) = cables[port].as_mut() else {
            // One `insert` of an iterator, generic and so inlined here: `insert_once` per
            // frame was a call into xdpilone each time. `take` keeps the iterator within the
            // ring's room, so no transmission is pulled that finds no slot.
            let room = writer.capacity() as usize;
            let frames =
                std::iter::from_fn(|| (pool.free_count() > 0).then(|| next_tx(area, pool, switch, now, port))?);
            let sent = writer.insert(frames.take(room));
            writer.commit();
            return sent;
        };
        let (mut taken, mut sent) = (0, 0);
        while taken < max && pool.free_count() > 0 {
            let Some(desc) = next_tx(area, pool, switch, now, port) else { break };
            if cable.send(now, desc) == Fate::Lost {
                pool.completed(desc.addr, port);
            }
            taken += 1;
        }
        while sent < writer.capacity() {
            let Some(desc) = cable.arrived_out(now) else { break };
            writer.insert_once(desc);
            sent += 1;
        }
        writer.commit();
        sent
    }

    /// Takes back the frames the core dropped. (`transmit` reaps every TX queue's completed
    /// transmissions in each turn.)
    fn reclaim(&mut self) {
        while let Some(handle) = self.switch.poll_free() {
            self.pool.unhold(handle);
        }
    }

    /// Tops up every fill ring, keeping a reserve for generated frames.
    fn refill(&mut self) {
        for queue in &mut self.sockets.queues {
            queue.refill(&mut self.pool, FILL_TARGET, CONTROL_RESERVE);
        }
    }

    /// Reads pending signals (and drains the control thread's wake-up). Returns the signal
    /// that asks to stop, if any.
    #[cold]
    #[inline(never)]
    fn read_signals(&mut self) -> Option<SignalAction> {
        self.wake.drain();
        while let Some(action) = self.signals.read() {
            match action {
                SignalAction::Stop => return Some(SignalAction::Stop),
                SignalAction::Reload => {
                    let response = self.reload();
                    log::info!("SIGHUP: {response:?}");
                }
            }
        }
        None
    }

    /// Answers the control thread's requests waiting on the channel.
    fn answer_calls(&mut self) {
        while let Ok(call) = self.calls.try_recv() {
            self.answer(call);
        }
    }

    /// Answers one control call: out of line, as calls are rare and their code is large.
    #[cold]
    #[inline(never)]
    fn answer(&mut self, call: Call) {
        let response = match call.request {
            ControlRequest::Snapshot => ControlResponse::Snapshot(Box::new(self.snapshot())),
            ControlRequest::Queues => {
                ControlResponse::Queues { ports: QueueDepths::of(&self.switch, &self.config, self.clock.now()) }
            }
            ControlRequest::ResetCounters => {
                self.switch.reset_counters(self.clock.now());
                ControlResponse::Done { message: "counters reset".into() }
            }
            ControlRequest::ClearWatermarks => {
                self.switch.clear_watermarks();
                ControlResponse::Done { message: "watermarks cleared".into() }
            }
            ControlRequest::Reload => self.reload(),
            ControlRequest::SetPolicy { policy } => self.set_policy(policy),
        };
        let _ = call.reply.send(response);
    }

    /// Applies another policy to the running configuration without losing a frame.
    #[cold]
    #[inline(never)]
    fn set_policy(&mut self, policy: PolicyConfig) -> ControlResponse {
        let mut new = self.config.clone();
        new.policy = policy;
        // `reconfigure` validates the new configuration before it changes anything.
        match self.switch.reconfigure(self.clock.now(), &self.config, &new) {
            Ok(warnings) => {
                log::info!("policy set to {}", new.policy.kind.name());
                let message = with_warnings(
                    format!("policy {} in force (not saved: a reload returns to the file's)", new.policy.kind.name()),
                    &warnings,
                );
                self.config = new;
                ControlResponse::Done { message }
            }
            Err(error) => ControlResponse::Error { message: error.to_string() },
        }
    }

    /// Re-reads the configuration file and applies it without losing a frame.
    fn reload(&mut self) -> ControlResponse {
        notify::reloading();
        let path = self.options.config_path.display().to_string();
        let result = config::load(&self.options.config_path).map_err(|e| e.to_string()).and_then(|(new, _)| {
            let warnings =
                self.switch.reconfigure(self.clock.now(), &self.config, &new).map_err(|e| format!("{path}: {e}"))?;
            if new.switch.shaper_burst != self.config.switch.shaper_burst {
                self.switch.set_shaper_burst(new.switch.shaper_burst);
            }
            for index in (0..new.ports.len()).filter(|&index| self.port_links[index].is_bound()) {
                let port = classification(&new, index).map_err(|e| e.to_string())?;
                self.classifier.configure_port(iface_of(&new, index), &port).map_err(|e| e.to_string())?;
            }
            self.config = new;
            Ok(warnings)
        });
        notify::notify("READY=1");
        match result {
            Ok(warnings) => ControlResponse::Done { message: with_warnings(format!("reloaded {path}"), &warnings) },
            Err(message) => {
                log::error!("reload failed, keeping the running configuration: {message}");
                ControlResponse::Error { message }
            }
        }
    }

    #[cold]
    #[inline(never)]
    fn snapshot(&self) -> Snapshot {
        let now = self.clock.now();
        let mut snapshot = Snapshot::of(&self.switch, &self.config, now, self.started.elapsed().as_secs_f64());
        for (index, port) in snapshot.ports.iter_mut().enumerate() {
            port.link = self.port_links[index].state.name().to_string();
            port.link_transitions = self.port_links[index].transitions;
            let counters = self.classifier.rx_counters(index as u32).unwrap_or_default();
            let shed = self.classifier.shed_frames(index as u32).unwrap_or_default();
            port.xdp = Some(XdpPortReport {
                attach: self.classifier.attach_mode(index as u32).unwrap_or_default().to_string(),
                socket: if self.tx_queue[index].is_some() { self.sockets.mode().to_string() } else { String::new() },
                rx_frames: counters.iter().map(|c| c.frames).collect(),
                rx_bytes: counters.iter().map(|c| c.bytes).collect(),
                drops: ClassifierDrop::ALL
                    .iter()
                    .map(|&reason| {
                        (reason.name().to_string(), self.classifier.drops(index as u32, reason).unwrap_or(0))
                    })
                    .chain([("shed".to_string(), shed.iter().sum())])
                    .collect(),
                shed_frames: shed.to_vec(),
                socket_dropped: self.sockets.port_rx_frames_dropped(index),
            });
            port.cable = self.cables[index].as_ref().map(|cable| CableReport {
                delay_seconds: cable.spec.delay.as_secs_f64(),
                loss: cable.spec.loss,
                both_ways: cable.spec.both_ways,
                lost_out: cable.outgoing.lost,
                lost_in: cable.incoming.lost,
            });
        }
        let xsk_rx_dropped = snapshot.ports.iter().filter_map(|p| p.xdp.as_ref()).map(|x| x.socket_dropped).sum();
        let (held, in_flight) = self.pool.held_and_in_flight();
        snapshot.datapath = Some(DatapathReport {
            umem_frames_held: held as u64,
            umem_frames_in_flight: in_flight as u64,
            umem_frames_filling: self.sockets.queues.iter().map(|q| u64::from(q.device.pending())).sum(),
            loops: self.loops,
            umem_frames: (self.area.len() / crate::umem::FRAME_SIZE as usize) as u64,
            umem_frames_free: self.pool.free_count() as u64,
            meta_missing: self.meta_missing,
            timer_wakeups: self.lateness.count(),
            timer_late_p50_us: self.lateness.quantile_us(0.5),
            timer_late_p99_us: self.lateness.quantile_us(0.99),
            timer_late_max_us: self.lateness.max().as_secs_f64() * 1e6,
            timer_late_sum_seconds: self.lateness.sum().as_secs_f64(),
            xsk_rx_dropped,
            resident_bytes: resident_bytes(),
        });
        snapshot
    }
}

/// When to kick a TX ring again that the kernel left descriptors in (`tx_waiting`), if that
/// comes before every timer: a back-off, which the loop sleeps through instead of spinning
/// (a spin would keep veth's receive and softirq work, which drains the ring, off this CPU).
fn tx_retry(now: Instant, tx_waiting: bool, timers: Option<Instant>) -> Option<Instant> {
    let retry = now + TX_RETRY;
    (tx_waiting && timers.is_none_or(|at| retry < at)).then_some(retry)
}

/// Whether a receive ring holds a frame.
fn frames_waiting(queues: &[QueueSocket]) -> bool {
    queues.iter().any(|q| q.rx.available() > 0)
}

/// How long the loop, out of work at `now`, spins for the next frame before it sleeps. A loop
/// that was saturated a moment ago (a turn within `SATURATED_RECENTLY` found a whole batch
/// waiting) finds its receive rings empty only for a moment: a gap in the arrivals, or the
/// shedding that drained them. If it sleeps then, it wakes late, on this VM
/// up to 2 ms late with the frames already there, by which time the fill ring has run dry and
/// the kernel has dropped what came (docs/performance.md, "The loop's sleeps"). Never with
/// `--spin 0us` (a core shared with endpoints and other switches), nor while a TX ring waits
/// for the kernel, whose draining may need this CPU.
fn frame_spin(now: Instant, saturated_at: Option<Instant>, tx_waiting: bool, spin: Duration) -> Duration {
    let saturated = saturated_at.is_some_and(|at| now - at < SATURATED_RECENTLY);
    if saturated && !tx_waiting && !spin.is_zero() { FRAME_SPIN } else { Duration::ZERO }
}

/// Asks for what a received frame's delivery reads: the line of its metadata and headers
/// (one line: `umem::HEADROOM`), and its pool entry, last touched when the frame went into
/// the fill ring a thousand frames ago.
#[inline]
fn prefetch_received(area: &UmemArea, pool: &FramePool, desc: &XdpDesc) {
    area.prefetch(desc.addr - META_LEN as u64);
    pool.prefetch(desc.addr);
}

/// A received frame into the core, checking the classifier's metadata in front of it.
fn deliver(
    area: &UmemArea,
    pool: &mut FramePool,
    switch: &mut Switch,
    meta_missing: &mut u64,
    now: Instant,
    port: usize,
    desc: &XdpDesc,
) {
    let meta_ok = area.metadata(desc.addr, META_LEN).is_some_and(|meta| meta[..2] == META_MAGIC.to_ne_bytes());
    if !meta_ok {
        *meta_missing += 1;
    }
    let frame = area.bytes(desc.addr, desc.len as usize);
    match switch.handle_rx(now, port, desc.addr, frame) {
        RxVerdict::Accepted => pool.hold(desc.addr),
        RxVerdict::Consumed => pool.release(desc.addr),
    }
}

/// The core's next transmission on `port` as a TX descriptor (a generated frame in a frame of
/// its own), marked as in flight on `port`; the caller checked that a frame is free.
/// Inlined into the loop that writes the TX ring, so the descriptor stays in registers (not
/// inlined, it came back through memory, and the ring's write waited on it).
#[inline(always)]
fn next_tx(
    area: &mut UmemArea,
    pool: &mut FramePool,
    switch: &mut Switch,
    now: Instant,
    port: usize,
) -> Option<XdpDesc> {
    let desc = match switch.poll_tx(now, port)? {
        Tx::Data { handle, len, last, mark, ce, int } => {
            if let Some(mark) = mark {
                mark_fecn_probe(area.bytes_mut(handle, len as usize), mark.rate_kbps, mark.port);
            }
            if ce {
                mark_ecn_ce(area.bytes_mut(handle, len as usize));
            }
            let (addr, len) = match int {
                Some(int) => stamp_int(area, handle, len, &int),
                None => (handle, len),
            };
            pool.submitted(handle, port);
            if last {
                pool.unhold(handle);
            }
            tx_desc(addr, len)
        }
        Tx::Control(control) => {
            let addr = pool.alloc().expect("checked free_count");
            let len = switch.emit_control(port, &control, area.chunk_mut(addr));
            pool.submitted(addr, port);
            tx_desc(addr, len as u32)
        }
    };
    Some(desc)
}

/// Writes an INT record (or flag) into the frame at `handle`, in place: a record goes in
/// after the INT-MD header, the headers before it moving into the chunk's XDP headroom, so
/// the frame starts earlier in its chunk. Returns its address and length. The core planned
/// it on this frame's bytes at reception; a frame that no longer parses goes unchanged.
fn stamp_int(area: &mut UmemArea, handle: u64, len: u32, int: &IntEgress) -> (u64, u32) {
    let base = chunk_base(handle);
    let offset = (handle - base) as usize;
    let chunk = area.bytes_mut(base, offset + len as usize);
    match apply_int(chunk, offset, len as usize, int) {
        Ok((start, len)) => (base + start as u64, len as u32),
        Err(_) => (handle, len),
    }
}

/// Each port's cable from `--cable`; a spec for no port of the configuration, or a second one
/// for a port, is refused.
fn cables_of(config: &SwitchConfig, specs: &[CableSpec]) -> Result<Vec<Option<Cable>>, DatapathError> {
    let mut cables: Vec<Option<Cable>> = config.ports.iter().map(|_| None).collect();
    for spec in specs {
        let Some(port) = config.ports.iter().position(|p| p.name == spec.port) else {
            return Err(DatapathError::Config(format!("--cable {spec}: no port `{}` in the configuration", spec.port)));
        };
        if cables[port].is_some() {
            return Err(DatapathError::Config(format!("--cable {spec}: port `{}` has a cable already", spec.port)));
        }
        cables[port] = Some(Cable::new(spec.clone(), &config.switch.name));
    }
    Ok(cables)
}

/// This process's resident set size, from /proc/self/statm.
fn resident_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm.split_whitespace().nth(1).and_then(|p| p.parse().ok()).unwrap_or(0);
    // SAFETY: sysconf has no preconditions.
    pages * unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as u64
}

/// `message`, then each warning on a line of its own; each is also logged.
fn with_warnings(message: String, warnings: &[pfcswitch_switch::config::ConfigWarning]) -> String {
    warnings.iter().fold(message, |text, warning| {
        log::warn!("{warning}");
        format!("{text}\nwarning: {warning}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ring_the_kernel_left_full_is_kicked_after_the_back_off_unless_a_timer_wakes_the_loop_first() {
        let now = Instant::ZERO + Duration::from_millis(1);
        assert_eq!(tx_retry(now, false, None), None, "no ring waits");
        assert_eq!(tx_retry(now, true, None), Some(now + TX_RETRY));
        assert_eq!(tx_retry(now, true, Some(now + 2 * TX_RETRY)), Some(now + TX_RETRY));
        assert_eq!(tx_retry(now, true, Some(now + TX_RETRY / 2)), None, "the timer comes first");
    }

    #[test]
    fn only_a_loop_saturated_a_moment_ago_with_a_core_of_its_own_spins_for_frames() {
        let at = |micros| Instant::ZERO + Duration::from_micros(micros);
        let now = at(10_000);
        let spin = Duration::from_micros(60);
        let just = Some(at(9_500));
        assert_eq!(frame_spin(now, just, false, spin), FRAME_SPIN);
        assert_eq!(frame_spin(now, None, false, spin), Duration::ZERO, "never saturated: light load");
        assert_eq!(frame_spin(now, Some(at(9_000)), false, spin), Duration::ZERO, "long ago");
        assert_eq!(frame_spin(now, just, true, spin), Duration::ZERO, "a TX ring waits for the kernel");
        assert_eq!(frame_spin(now, just, false, Duration::ZERO), Duration::ZERO, "--spin 0us: a shared core");
    }
}
