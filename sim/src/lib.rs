//! pfcswitch's discrete-event simulator: a network on one virtual clock, switches of
//! `pfcswitch-switch` and hosts of `pfcswitch-hosts` joined by links with a speed and a
//! propagation delay (see [`Network`]), the generated fabrics ([`fabric`]: fat-trees,
//! leaf-spines, dumbbells, failed links) and the deadlock experiment ([`deadlock`]).
//! Every frame is a real byte string built and parsed by `pfcswitch-wire`; every decision is
//! the switch's: the same [`Switch`] runs here and under the AF_XDP daemon. Scenarios,
//! workloads and reports are not here: `pfcswitch-lab` drives the simulator.
#![deny(unsafe_code)]

pub mod deadlock;
mod endpoint;
pub mod fabric;
mod faults;
mod frame_store;
mod host;
mod queue;
mod rank;

pub use endpoint::{Endpoint, Node};
pub use host::SimHost;

use frame_store::FrameStore;
use pfcswitch_link::rng::Rng;
use pfcswitch_link::time::Instant;
use pfcswitch_link::units::BitRate;
use pfcswitch_switch::switch::{Switch, Tx};
use pfcswitch_wire::{FrameView, MacControlRepr, Pcp, ethertype};
use queue::{Event, EventQueue};
use rank::{EventKind, Sender};
use serde::Serialize;
use std::ops::ControlFlow;
use std::time::Duration;

/// Where a port's cable leads: the far end, the line rate and the propagation delay.
#[derive(Clone, Copy, Debug)]
struct Wire {
    to: Endpoint,
    speed: BitRate,
    delay: Duration,
    /// Down, a frame put on it or arriving over it is lost ([`SimStats::lost_on_down_links`]).
    up: bool,
    /// The fraction of frames the cable loses ([`Network::set_loss`]).
    loss: f64,
}

/// A frame that started on a wire, as the trace records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TxRecord {
    pub start: Instant,
    pub from: Endpoint,
    pub len: usize,
    /// The 802.1Q priority of a data frame, `None` for untagged ones.
    pub priority: Option<Pcp>,
    /// The content of a PAUSE/PFC frame.
    pub control: Option<MacControlRepr>,
}

/// A PAUSE or PFC frame as it arrived: when its last bit did, at which end, what it said.
/// What HPCC's simulator logs in its `pfc.txt`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PauseArrival {
    pub at: Instant,
    pub to: Endpoint,
    pub control: MacControlRepr,
}

/// Sees every frame that goes on a wire from a tapped end: when its first bit does (virtual
/// time), from which end, and its bytes (without FCS). How `scenario simulate --capture`
/// writes its pcaps.
pub type TapFn = Box<dyn FnMut(Instant, Endpoint, &[u8])>;

/// The tapped link ends and what sees their frames.
struct Tap {
    ends: Vec<Endpoint>,
    see: TapFn,
}

impl std::fmt::Debug for Tap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tap").field("ends", &self.ends).finish_non_exhaustive()
    }
}

/// Events between two calls of [`Network::run_until_or`]'s check: about 0.1 s of wall time.
pub const CHECK_EVERY: u64 = 1 << 16;

/// A node's place in the schedule: the wake-up it has pending, and whether something
/// happened to it at the current instant (so it must be polled before time moves on).
#[derive(Clone, Copy, Debug, Default)]
struct Slot {
    wake: Option<Instant>,
    touched: bool,
}

/// How much work a run took: what the simulator's speed is measured in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SimStats {
    /// Frames that crossed a link (a frame crossing five links counts five).
    pub frame_hops: u64,
    /// Arrivals and timer wake-ups handled.
    pub events: u64,
    /// Frame buffers the network ever held at once (in flight, queued or being built).
    pub peak_frames: usize,
    /// Frames lost because their link was down when they were sent or while they were on it
    /// (the switches count what they drop themselves, as `link_down`).
    pub lost_on_down_links: u64,
    /// Frames that reached a killed switch.
    pub lost_at_killed_switches: u64,
    /// Frames the cables lost at their `loss` rate.
    pub lost_on_cables: u64,
}

/// The network and its clock: a discrete-event simulator. Only pending events are kept
/// (frame arrivals, and per node its earliest timer); an event touches one node, and only
/// the nodes touched at an instant are polled for transmissions and asked for their next
/// timer, so the cost of a run grows with its frames, not with the network's size.
#[derive(Debug, Default)]
pub struct Network {
    now: Instant,
    pub switches: Vec<Switch>,
    pub hosts: Vec<SimHost>,
    switch_wires: Vec<Vec<Option<Wire>>>,
    host_wires: Vec<Option<Wire>>,
    switch_slots: Vec<Slot>,
    host_slots: Vec<Slot>,
    touched: Vec<Node>,
    store: FrameStore,
    events: EventQueue,
    /// The instant of the last polling round, and how many rounds it has had.
    round: (Instant, u64),
    /// The node being polled (see `rank`).
    sender: Sender,
    stats: SimStats,
    trace: Option<Vec<TxRecord>>,
    pause_arrivals: Option<Vec<PauseArrival>>,
    tap: Option<Tap>,
    scratch: Vec<u8>,
    /// Per switch: killed, until restarted (see `faults`).
    killed: Vec<bool>,
    /// Draws the frames lossy cables lose: the same frames for the same run.
    loss_rng: LossRng,
}

/// A fixed seed: a run's losses are part of its definition, as its workload's seed is.
#[derive(Debug)]
struct LossRng(Rng);

impl Default for LossRng {
    fn default() -> LossRng {
        LossRng(Rng::new(0x105_5CAB1E))
    }
}

/// Bytes from the first preamble bit to the last FCS bit: when a frame has fully arrived.
fn arrival_bytes(len: usize) -> u64 {
    8 + len.max(pfcswitch_wire::MIN_FRAME_LEN) as u64 + 4
}

impl Network {
    pub fn new() -> Network {
        Network { scratch: vec![0u8; 65536], ..Network::default() }
    }

    pub fn now(&self) -> Instant {
        self.now
    }

    pub fn stats(&self) -> SimStats {
        SimStats { peak_frames: self.store.peak(), ..self.stats }
    }

    pub fn add_switch(&mut self, switch: Switch) -> usize {
        self.switches.push(switch);
        self.switches.len() - 1
    }

    pub fn add_host(&mut self, host: SimHost) -> usize {
        self.hosts.push(host);
        self.hosts.len() - 1
    }

    /// The cable at `end` loses `loss` of the frames each way from now on.
    pub fn set_loss(&mut self, end: Endpoint, loss: f64) {
        let Some(to) = self.wire(end).map(|wire| wire.to) else { return };
        for side in [end, to] {
            if let Some(wire) = self.wire_mut(side).as_mut() {
                wire.loss = loss;
            }
        }
    }

    /// Joins two endpoints with a cable of `delay`; both ends run at `speed`.
    pub fn connect(&mut self, a: Endpoint, b: Endpoint, speed: BitRate, delay: Duration) {
        *self.wire_mut(a) = Some(Wire { to: b, speed, delay, up: true, loss: 0.0 });
        *self.wire_mut(b) = Some(Wire { to: a, speed, delay, up: true, loss: 0.0 });
    }

    fn wire_mut(&mut self, end: Endpoint) -> &mut Option<Wire> {
        let (wires, index) = match end.node {
            Node::Switch(s) => {
                if self.switch_wires.len() <= s {
                    self.switch_wires.resize(s + 1, Vec::new());
                }
                (&mut self.switch_wires[s], end.port)
            }
            Node::Host(h) => (&mut self.host_wires, h),
        };
        if wires.len() <= index {
            wires.resize(index + 1, None);
        }
        &mut wires[index]
    }

    fn wire(&self, from: Endpoint) -> Option<Wire> {
        let wire = match from.node {
            Node::Switch(s) => self.switch_wires.get(s).and_then(|ports| ports.get(from.port)),
            Node::Host(h) => self.host_wires.get(h),
        };
        wire.copied().flatten()
    }

    /// Records every transmission from now on (see [`Network::trace`]).
    pub fn enable_trace(&mut self) {
        self.trace = Some(Vec::new());
    }

    pub fn trace(&self) -> &[TxRecord] {
        self.trace.as_deref().unwrap_or(&[])
    }

    /// Records every PAUSE and PFC frame's arrival from now on (see [`Network::pause_arrivals`]).
    pub fn log_pause_arrivals(&mut self) {
        self.pause_arrivals = Some(Vec::new());
    }

    /// The PAUSE and PFC frames that arrived, in order, since [`Network::log_pause_arrivals`].
    pub fn pause_arrivals(&self) -> &[PauseArrival] {
        self.pause_arrivals.as_deref().unwrap_or(&[])
    }

    /// Hands every frame sent from one of `ends` to `see`, from now on (replacing any
    /// earlier tap); a link's two ends are both of its directions.
    pub fn tap(&mut self, ends: Vec<Endpoint>, see: TapFn) {
        self.tap = Some(Tap { ends, see });
    }

    /// Removes the tap, dropping what it holds.
    pub fn untap(&mut self) {
        self.tap = None;
    }

    fn schedule(&mut self, event: Event) {
        self.events.push(event);
    }

    /// The next event, if it comes at `until` or before.
    fn next_event(&mut self, until: Instant) -> Option<Event> {
        let limit = Event::key(until, u128::MAX);
        // A frame's bytes have gone cold in its time on the wire: reading them at its
        // arrival was a seventh of a run on HPCC's fat-tree.
        self.events.pop_at_most(limit, |event| {
            if let EventKind::Arrival(_) = event.kind() {
                frame_store::prefetch(event.bytes_at);
            }
        })
    }

    fn slot(&mut self, node: Node) -> &mut Slot {
        match node {
            Node::Switch(s) => &mut self.switch_slots[s],
            Node::Host(h) => &mut self.host_slots[h],
        }
    }

    /// Notes that `node` must be polled before time moves on.
    fn touch(&mut self, node: Node) {
        let slot = self.slot(node);
        if !slot.touched {
            slot.touched = true;
            self.touched.push(node);
        }
    }

    /// Puts the frame held at `handle` on the wire from `from`, starting now.
    fn transmit(&mut self, from: Endpoint, handle: u64) {
        let Some(Wire { to, speed, delay, up, loss }) = self.wire(from) else {
            self.store.remove(handle);
            return;
        };
        if !up {
            self.stats.lost_on_down_links += 1;
            self.store.remove(handle);
            return;
        }
        let frame = self.store.get(handle);
        if let Some(tap) = self.tap.as_mut().filter(|tap| tap.ends.contains(&from)) {
            (tap.see)(self.now, from, frame);
        }
        if let Some(trace) = &mut self.trace {
            let view = FrameView::parse(frame).ok();
            trace.push(TxRecord {
                start: self.now,
                from,
                len: frame.len(),
                priority: view.and_then(|v| v.pcp()),
                control: view.and_then(|v| v.mac_control().ok()),
            });
        }
        // Lost on the cable: sent (the tap and the trace saw it) but never arriving.
        if loss > 0.0 && self.loss_rng.0.fraction() < loss {
            self.stats.lost_on_cables += 1;
            self.store.remove(handle);
            return;
        }
        let at = self.now + speed.bits_duration(arrival_bytes(frame.len()) * 8) + delay;
        if let Some(log) = &mut self.pause_arrivals
            && frame.get(12..14) == Some(&ethertype::MAC_CONTROL.to_be_bytes()[..])
            && let Ok(control) = FrameView::parse(frame).and_then(|v| v.mac_control())
        {
            log.push(PauseArrival { at, to, control });
        }
        self.store.set_destination(handle, to);
        let arrival = Event::arrival(at, self.now, &mut self.sender, handle, self.store.get(handle));
        self.schedule(arrival);
    }

    /// Lets switch `s` transmit what it may now, on every port that has work, in port order.
    /// The others are not polled: their `poll_tx` would only let the shaper rest, which with
    /// the exact shaper (no burst) the simulator keeps changes no later decision. Sending on
    /// one port may give a later one work (the pipeline, a pause), so the set is read again
    /// after each port, as a pass over every port would find it.
    fn poll_switch(&mut self, s: usize) {
        let now = self.now;
        let mut from = 0u32;
        loop {
            let work = self.switches[s].ports_with_work() & u64::MAX.checked_shl(from).unwrap_or(0);
            if work == 0 {
                break;
            }
            from = work.trailing_zeros() + 1;
            let port = from as usize - 1;
            while let Some(tx) = self.switches[s].poll_tx(now, port) {
                let handle = match tx {
                    Tx::Data { handle, last, mark, ce, int, .. } => {
                        let sent = if last { handle } else { self.store.duplicate(handle) };
                        if let Some(mark) = mark {
                            pfcswitch_wire::mark_fecn_probe(self.store.get_mut(sent), mark.rate_kbps, mark.port);
                        }
                        if ce {
                            pfcswitch_wire::mark_ecn_ce(self.store.get_mut(sent));
                        }
                        if let Some(int) = int {
                            self.store.stamp_int(sent, &int);
                        }
                        sent
                    }
                    Tx::Control(control) => {
                        let len = self.switches[s].emit_control(port, &control, &mut self.scratch);
                        self.store.insert(&self.scratch[..len])
                    }
                };
                self.transmit(Endpoint::switch(s, port), handle);
            }
        }
        while let Some(handle) = self.switches[s].poll_free() {
            self.store.remove(handle);
        }
    }

    fn poll_host(&mut self, h: usize) {
        while let Some(len) = self.hosts[h].poll_tx(self.now, &mut self.scratch) {
            let handle = self.store.insert(&self.scratch[..len]);
            self.transmit(Endpoint::host(h), handle);
        }
    }

    /// Every node touched at this instant, switches then hosts, each by index: fires its
    /// timers that are due (after all of the instant's arrivals), polls it for
    /// transmissions, and books its next wake-up.
    fn poll_touched(&mut self) {
        let now = self.now;
        if self.touched.is_empty() {
            return;
        }
        self.round = if self.round.0 == now { (now, self.round.1 + 1) } else { (now, 1) };
        self.touched.sort_unstable_by(|a, b| b.cmp(a));
        while let Some(node) = self.touched.pop() {
            self.sender = Sender::new(self.round.1, node);
            let next = match node {
                Node::Switch(s) if self.is_killed(s) => None,
                Node::Switch(s) => {
                    if self.switches[s].is_due(now) {
                        self.switches[s].handle_timeout(now);
                    }
                    self.poll_switch(s);
                    self.switches[s].poll_timeout()
                }
                Node::Host(h) => {
                    self.hosts[h].handle_timeout(now);
                    self.poll_host(h);
                    self.hosts[h].poll_timeout()
                }
            };
            // A timer in the past means now.
            let next = next.map(|at| at.max(self.now));
            let slot = self.slot(node);
            slot.touched = false;
            if slot.wake != next {
                slot.wake = next;
                if let Some(at) = next {
                    self.schedule(Event::wake(at, node));
                }
            }
        }
    }

    fn deliver(&mut self, to: Endpoint, handle: u64) {
        if !self.wire(to).is_some_and(|wire| wire.up) {
            // The link went down while the frame was on it.
            self.stats.lost_on_down_links += 1;
            self.store.remove(handle);
            return;
        }
        self.stats.frame_hops += 1;
        let frame = self.store.get(handle);
        match to.node {
            Node::Switch(s) if self.is_killed(s) => {
                self.stats.lost_at_killed_switches += 1;
                self.store.remove(handle);
                return;
            }
            Node::Switch(s) => {
                let verdict = self.switches[s].handle_rx(self.now, to.port, handle, frame);
                if verdict == pfcswitch_switch::switch::RxVerdict::Consumed {
                    self.store.remove(handle);
                }
            }
            Node::Host(h) => {
                self.hosts[h].handle_rx(self.now, frame);
                self.store.remove(handle);
            }
        }
        self.touch(to.node);
    }

    /// A wake-up booked for `node` at `at`: the node is polled (its timers first) before
    /// time moves on. Returns false if it was stale (the node has booked another since).
    fn wake(&mut self, node: Node, at: Instant) -> bool {
        let slot = self.slot(node);
        if slot.wake != Some(at) {
            return false;
        }
        slot.wake = None;
        self.touch(node);
        true
    }

    /// Runs until `end` (or until nothing is left to happen).
    pub fn run_until(&mut self, end: Instant) {
        self.run_until_or(end, |_, _| ControlFlow::Continue(()));
    }

    /// As [`Network::run_until`], asking `check` (with the time and the work so far) every
    /// [`CHECK_EVERY`] events whether to go on: how a long run reports progress and stops
    /// when told to. `check` cannot touch the network, so a run that is checked gives the
    /// same results as one that is not. On `Break` it stops at once, before `end`, with
    /// every event of the current instant handled, and returns false.
    pub fn run_until_or(&mut self, end: Instant, check: impl FnMut(Instant, &SimStats) -> ControlFlow<()>) -> bool {
        self.touch_all();
        self.advance_until_or(end, check)
    }

    /// Polls every node before time moves on, as each run does first: nodes may have been
    /// changed from outside since the last run (flows added, a link cut).
    pub fn touch_all(&mut self) {
        self.switch_slots.resize(self.switches.len(), Slot::default());
        self.host_slots.resize(self.hosts.len(), Slot::default());
        for s in 0..self.switches.len() {
            self.touch(Node::Switch(s));
        }
        for h in 0..self.hosts.len() {
            self.touch(Node::Host(h));
        }
    }

    /// As [`Network::run_until_or`], without polling every node first: for an observer that
    /// stops the run only to look (HPCC's queue-length monitor, every 100 ns), after a run
    /// that began with [`Network::touch_all`], so that looking changes nothing and costs
    /// nothing per node. Polling all 376 nodes of HPCC's fat-tree at every look was most of
    /// such a run's time.
    pub fn advance_until_or(
        &mut self,
        end: Instant,
        mut check: impl FnMut(Instant, &SimStats) -> ControlFlow<()>,
    ) -> bool {
        let mut stuck = 0u32;
        let mut next_check = self.stats.events + CHECK_EVERY;
        loop {
            self.poll_touched();
            if self.stats.events >= next_check {
                next_check = self.stats.events + CHECK_EVERY;
                if check(self.now, &self.stats).is_break() {
                    return false;
                }
            }
            let Some(first) = self.next_event(end) else { break };
            let at = first.at();
            if at <= self.now {
                stuck += 1;
                assert!(stuck < 1_000_000, "the network makes no progress at {}", self.now);
            } else {
                stuck = 0;
            }
            self.now = self.now.max(at);
            // Everything due now happens before anyone transmits again.
            let mut next = Some(first);
            while let Some(event) = next {
                let handled = match event.kind() {
                    EventKind::Arrival(handle) => {
                        self.deliver(self.store.destination(handle), handle);
                        true
                    }
                    EventKind::Wake(node) => self.wake(node, event.at()),
                };
                self.stats.events += u64::from(handled);
                next = self.next_event(self.now);
            }
        }
        self.now = self.now.max(end);
        true
    }

    /// Runs for `duration` more.
    pub fn run_for(&mut self, duration: Duration) {
        self.run_until(self.now + duration);
    }
}
