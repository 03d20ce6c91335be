//! pfcswitch's discrete-event simulator: a network on one virtual clock, switches of
//! `pfcswitch-switch` and hosts of `pfcswitch-hosts` joined by links with a speed and a
//! propagation delay (see [`Network`]), the generated fabrics ([`fabric`]: fat-trees,
//! leaf-spines, dumbbells, failed links) and the deadlock experiment ([`deadlock`]).
//! Every frame is a real byte string built and parsed by `pfcswitch-wire`; every decision is
//! the switch's: the same [`Switch`] runs here and under the AF_XDP daemon. Scenarios,
//! workloads and reports are not here: `pfcswitch-lab` drives the simulator.
#![deny(unsafe_code)]

mod cables;
pub mod deadlock;
mod endpoint;
pub mod fabric;
mod faults;
mod frame_store;
mod host;
mod parallel;
mod part;
mod queue;
mod rank;
mod records;

pub use endpoint::{Endpoint, Node};
pub use host::SimHost;
pub use records::{CHECK_EVERY, PauseArrival, SimStats, TapFn, TxRecord};

use cables::{Cables, Wire};
use part::{OneThread, Owners, Part, Shard};
use pfcswitch_link::rng::Rng;
use pfcswitch_link::time::Instant;
use pfcswitch_link::units::BitRate;
use pfcswitch_switch::switch::Switch;
use records::Tap;
use std::ops::ControlFlow;
use std::time::Duration;

/// The network and its clock: a discrete-event simulator. Only pending events are kept
/// (frame arrivals, and per node its earliest timer); an event touches one node, and only
/// the nodes touched at an instant are polled for transmissions and asked for their next
/// timer, so the cost of a run grows with its frames, not with the network's size. Run on
/// one thread, or split over two ([`Network::split`]) with the same results.
#[derive(Debug)]
pub struct Network {
    pub switches: Vec<Switch>,
    pub hosts: Vec<SimHost>,
    cables: Cables,
    /// One part, or one per thread once split.
    parts: Vec<Part>,
    owners: Owners,
    /// Split: how far one part can run ahead of the other (the shortest flight of a frame
    /// between them).
    lookahead: Duration,
    tap: Option<Tap>,
    /// Per switch: killed, until restarted (see `faults`).
    killed: Vec<bool>,
    /// Draws the frames lossy cables lose: the same frames for the same run.
    loss_rng: Rng,
}

impl Default for Network {
    fn default() -> Network {
        Network {
            switches: Vec::new(),
            hosts: Vec::new(),
            cables: Cables::default(),
            parts: vec![Part::new(0)],
            owners: Owners::default(),
            lookahead: Duration::ZERO,
            tap: None,
            killed: Vec::new(),
            // A fixed seed: a run's losses are part of its definition, as its workload's
            // seed is.
            loss_rng: Rng::new(0x105_5CAB1E),
        }
    }
}

impl Network {
    pub fn new() -> Network {
        Network::default()
    }

    pub fn now(&self) -> Instant {
        self.parts[0].now
    }

    pub fn stats(&self) -> SimStats {
        let each = self.parts.iter().map(|part| SimStats { peak_frames: part.peak_frames(), ..part.stats });
        each.fold(SimStats::default(), SimStats::add)
    }

    pub fn add_switch(&mut self, switch: Switch) -> usize {
        self.switches.push(switch);
        self.switches.len() - 1
    }

    pub fn add_host(&mut self, host: SimHost) -> usize {
        self.hosts.push(host);
        self.hosts.len() - 1
    }

    /// The cable at `end` loses `loss` of the frames each way from now on (on one thread
    /// only: the draws are made in sending order).
    pub fn set_loss(&mut self, end: Endpoint, loss: f64) {
        assert!(loss == 0.0 || !self.is_split(), "a lossy cable in a network split over threads");
        let Some(to) = self.cables.wire(end).map(|wire| wire.to) else { return };
        for side in [end, to] {
            if let Some(wire) = self.cables.wire_mut(side).as_mut() {
                wire.loss = loss;
            }
        }
    }

    /// Joins two endpoints with a cable of `delay`; both ends run at `speed`.
    pub fn connect(&mut self, a: Endpoint, b: Endpoint, speed: BitRate, delay: Duration) {
        assert!(!self.is_split(), "a cable added to a network split over threads");
        *self.cables.wire_mut(a) = Some(Wire { to: b, speed, delay, up: true, loss: 0.0 });
        *self.cables.wire_mut(b) = Some(Wire { to: a, speed, delay, up: true, loss: 0.0 });
    }

    fn is_split(&self) -> bool {
        self.parts.len() > 1
    }

    /// Splits the network over two threads from its next run on, with the same results as
    /// one (see `parallel`). Call it once the network is built and before it first runs.
    /// Refused (the network stays on one thread) with the reason: a tap or a lossy cable,
    /// fewer than two hosts, or a run already made.
    pub fn split(&mut self) -> Result<(), String> {
        if self.is_split() {
            return Ok(());
        }
        if self.tap.is_some() {
            return Err("a tap sees frames in sending order: one thread".into());
        }
        if self.cables.all().any(|(_, wire)| wire.loss > 0.0) {
            return Err("lossy cables draw their losses in sending order: one thread".into());
        }
        if self.hosts.len() < 2 {
            return Err("fewer than two hosts".into());
        }
        let first = &mut self.parts[0];
        if first.now > Instant::ZERO || first.stats.events > 0 || first.next_time().is_some() {
            return Err("the network has run already".into());
        }
        self.owners = parallel::partition(self.switches.len(), self.hosts.len(), &self.cables);
        self.lookahead = parallel::lookahead(&self.cables, &self.owners);
        let mut second = Part::new(1);
        second.logs.trace = self.parts[0].logs.trace.as_ref().map(|_| Vec::new());
        second.logs.pauses = self.parts[0].logs.pauses.as_ref().map(|_| Vec::new());
        self.parts.push(second);
        Ok(())
    }

    /// Records every transmission from now on (see [`Network::trace`]).
    pub fn enable_trace(&mut self) {
        for part in &mut self.parts {
            part.logs.trace = Some(Vec::new());
        }
    }

    /// Every transmission since [`Network::enable_trace`], in sending order.
    pub fn trace(&self) -> Vec<TxRecord> {
        merged(self.parts.iter().map(|part| part.logs.trace.as_deref()))
    }

    /// Records every PAUSE and PFC frame's arrival from now on (see [`Network::pause_arrivals`]).
    pub fn log_pause_arrivals(&mut self) {
        for part in &mut self.parts {
            part.logs.pauses = Some(Vec::new());
        }
    }

    /// The PAUSE and PFC frames that arrived since [`Network::log_pause_arrivals`], in the
    /// order they were sent.
    pub fn pause_arrivals(&self) -> Vec<PauseArrival> {
        merged(self.parts.iter().map(|part| part.logs.pauses.as_deref()))
    }

    /// Hands every frame sent from one of `ends` to `see`, from now on (replacing any
    /// earlier tap); a link's two ends are both of its directions. On one thread only: the
    /// tap sees frames in sending order.
    pub fn tap(&mut self, ends: Vec<Endpoint>, see: TapFn) {
        assert!(!self.is_split(), "a tap on a network split over threads");
        self.tap = Some(Tap { ends, see });
    }

    /// Removes the tap, dropping what it holds.
    pub fn untap(&mut self) {
        self.tap = None;
    }

    /// Runs until `end` (or until nothing is left to happen).
    pub fn run_until(&mut self, end: Instant) {
        self.run_until_or(end, |_, _| ControlFlow::Continue(()));
    }

    /// As [`Network::run_until`], asking `check` (with the time and the work so far) every
    /// [`CHECK_EVERY`] events whether to go on: how a long run reports progress and stops
    /// when told to. `check` cannot touch the network, so a run that is checked gives the
    /// same results as one that is not. On `Break` it stops at once, before `end`, with
    /// every event of the current instant handled (split: of the current window, see
    /// `parallel`), and returns false.
    pub fn run_until_or(&mut self, end: Instant, check: impl FnMut(Instant, &SimStats) -> ControlFlow<()>) -> bool {
        self.touch_all();
        self.advance_until_or(end, check)
    }

    /// Polls every node before time moves on, as each run does first: nodes may have been
    /// changed from outside since the last run (flows added, a link cut).
    pub fn touch_all(&mut self) {
        let now = self.now();
        // Split, the next polling round is the same in every part: the one after the most
        // any part has had at this instant, as on one thread (see `rank`).
        let rounds = self.parts.iter().filter(|part| part.round.0 == now).map(|part| part.round.1).max();
        for part in &mut self.parts {
            part.size_for(self.switches.len(), self.hosts.len());
            if let Some(rounds) = rounds {
                part.round = (now, rounds);
            }
        }
        for s in 0..self.switches.len() {
            self.parts[self.owners.of(Node::Switch(s))].touch(Node::Switch(s));
        }
        for h in 0..self.hosts.len() {
            self.parts[self.owners.of(Node::Host(h))].touch(Node::Host(h));
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
        if self.is_split() {
            let split = parallel::Split {
                switches: &mut self.switches,
                hosts: &mut self.hosts,
                parts: &mut self.parts,
                cables: &self.cables,
                killed: &self.killed,
                owners: &self.owners,
                lookahead: self.lookahead,
            };
            return parallel::advance(split, end, &mut check);
        }
        let mut shard = Shard {
            part: &mut self.parts[0],
            switches: &mut self.switches[..],
            hosts: &mut self.hosts[..],
            cables: &self.cables,
            killed: &self.killed,
            owners: &self.owners,
            one_thread: Some(OneThread { tap: self.tap.as_mut(), loss_rng: &mut self.loss_rng }),
        };
        shard.advance(end, &mut check)
    }

    /// Runs for `duration` more.
    pub fn run_for(&mut self, duration: Duration) {
        self.run_until(self.now() + duration);
    }
}

/// The parts' records in sending order.
fn merged<'a, T: Copy + 'a>(logs: impl Iterator<Item = Option<&'a [(u128, T)]>>) -> Vec<T> {
    let mut all: Vec<(u128, T)> = logs.flatten().flatten().copied().collect();
    all.sort_by_key(|&(order, _)| order);
    all.into_iter().map(|(_, record)| record).collect()
}
