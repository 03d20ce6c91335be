//! The event loop, over a share of the network: the pending events, frames and schedule of
//! a set of nodes ([`Part`]), run with mutable access to those nodes only ([`Shard`]). A
//! network on one thread has one part holding every node; a network split over threads
//! (`parallel`) has one per thread, and frames crossing to another part's node wait in an
//! outbox ([`Crossings`]) until the parts meet.

use crate::cables::{Cables, Wire, arrival_bytes};
use crate::endpoint::{Endpoint, Node};
use crate::frame_store::{self, FrameStore};
use crate::host::SimHost;
use crate::queue::{Event, EventQueue};
use crate::rank::{EventKind, Sender};
use crate::records::{CHECK_EVERY, PauseArrival, SimStats, Tap, TxRecord};
use pfcswitch_link::rng::Rng;
use pfcswitch_link::time::Instant;
use pfcswitch_switch::switch::{RxVerdict, Switch, Tx};
use pfcswitch_wire::{FrameView, ethertype};
use std::ops::ControlFlow;

/// What a run asks every [`CHECK_EVERY`] events whether to go on (see
/// [`crate::Network::run_until_or`]).
pub(crate) type Check<'a> = dyn FnMut(Instant, &SimStats) -> ControlFlow<()> + 'a;

/// A node's place in the schedule: the wake-up it has pending, and whether something
/// happened to it at the current instant (so it must be polled before time moves on).
#[derive(Clone, Copy, Debug, Default)]
struct Slot {
    wake: Option<Instant>,
    touched: bool,
}

/// Frames sent to another part's nodes, each with its arrival's key, its destination, and
/// its buffer (moved from one part's store to the other's, with where the frame starts);
/// and the buffers going back the other way.
#[derive(Debug, Default)]
pub(crate) struct Crossings {
    frames: Vec<(u128, Endpoint, Vec<u8>, usize)>,
    returns: Vec<Vec<u8>>,
}

impl Crossings {
    /// The earliest arrival held, in ns.
    pub(crate) fn earliest(&self) -> Option<u64> {
        self.frames.iter().map(|&(key, ..)| Event { key, handle: 0, bytes_at: 0 }.time_ns()).min()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.frames.is_empty() && self.returns.is_empty()
    }

    /// Moves everything held to the end of `to`.
    pub(crate) fn move_to(&mut self, to: &mut Crossings) {
        to.frames.append(&mut self.frames);
        to.returns.append(&mut self.returns);
    }
}

/// Records kept on request, each with its frame's place in the sending order (so that the
/// parts' records merge into the order one thread keeps).
#[derive(Debug, Default)]
pub(crate) struct Logs {
    pub(crate) trace: Option<Vec<(u128, TxRecord)>>,
    pub(crate) pauses: Option<Vec<(u128, PauseArrival)>>,
}

/// A share of the network's run state. Aligned past a cache line pair (the adjacent-line
/// prefetcher's unit), so that two parts side by side share none: their counters and clocks
/// in one line made every event of a split run a line stolen from the other core, and
/// split runs of `websearch-fat-tree` took from 3.6 to 6.2 s by where the allocator put
/// them, 4.5 s every time aligned.
#[derive(Debug)]
#[repr(align(128))]
pub(crate) struct Part {
    /// Which part this is (what `Owners` says of its nodes).
    pub(crate) index: usize,
    pub(crate) now: Instant,
    switch_slots: Vec<Slot>,
    host_slots: Vec<Slot>,
    touched: Vec<Node>,
    store: FrameStore,
    events: EventQueue,
    /// The instant of the last polling round, and how many rounds it has had.
    pub(crate) round: (Instant, u64),
    /// The node being polled (see `rank`).
    sender: Sender,
    pub(crate) stats: SimStats,
    scratch: Vec<u8>,
    pub(crate) logs: Logs,
    /// Frames sent to other parts' nodes since the parts last met.
    pub(crate) outbox: Crossings,
}

impl Part {
    pub(crate) fn new(index: usize) -> Part {
        Part {
            index,
            now: Instant::ZERO,
            switch_slots: Vec::new(),
            host_slots: Vec::new(),
            touched: Vec::new(),
            store: FrameStore::default(),
            events: EventQueue::default(),
            round: (Instant::ZERO, 0),
            sender: Sender::default(),
            stats: SimStats::default(),
            scratch: vec![0u8; 65536],
            logs: Logs::default(),
            outbox: Crossings::default(),
        }
    }

    /// Frame buffers ever held at once.
    pub(crate) fn peak_frames(&self) -> usize {
        self.store.peak()
    }

    /// The time of the earliest pending event, in ns.
    pub(crate) fn next_time(&mut self) -> Option<u64> {
        self.events.next_time()
    }

    /// The earliest instant this part has something to do at, in ns: now if it has nodes
    /// to poll, else its earliest event's.
    pub(crate) fn next_work(&mut self) -> Option<u64> {
        if self.touched.is_empty() { self.next_time() } else { Some(self.now.as_nanos()) }
    }

    /// Books the arrival of every frame in `crossings` (another part's) and takes back the
    /// buffers it returns, emptying it; the buffers the frames displace go back in the
    /// outbox.
    pub(crate) fn receive(&mut self, crossings: &mut Crossings) {
        for (key, to, buffer, start) in crossings.frames.drain(..) {
            let (handle, displaced) = self.store.put(buffer, start);
            self.outbox.returns.push(displaced);
            self.store.set_destination(handle, to);
            let bytes_at = self.store.get(handle).as_ptr() as usize;
            self.events.push(Event { key, handle, bytes_at });
        }
        self.store.give_back(crossings.returns.drain(..));
    }

    fn slot(&mut self, node: Node) -> &mut Slot {
        match node {
            Node::Switch(s) => &mut self.switch_slots[s],
            Node::Host(h) => &mut self.host_slots[h],
        }
    }

    /// Notes that `node` must be polled before time moves on.
    pub(crate) fn touch(&mut self, node: Node) {
        let slot = self.slot(node);
        if !slot.touched {
            slot.touched = true;
            self.touched.push(node);
        }
    }

    /// Makes room in the schedule for `switches` and `hosts` nodes.
    pub(crate) fn size_for(&mut self, switches: usize, hosts: usize) {
        self.switch_slots.resize(switches, Slot::default());
        self.host_slots.resize(hosts, Slot::default());
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
}

/// The nodes a part runs, by their index in the network: all of them (a slice), or those
/// of one thread (`None` where another thread's node is).
pub(crate) trait Members<T> {
    fn member(&mut self, index: usize) -> &mut T;
}

impl<T> Members<T> for [T] {
    fn member(&mut self, index: usize) -> &mut T {
        &mut self[index]
    }
}

impl<T> Members<T> for [Option<&mut T>] {
    fn member(&mut self, index: usize) -> &mut T {
        self[index].as_deref_mut().expect("a node of this part")
    }
}

/// Which part each node is in: every node in part 0 unless split.
#[derive(Debug, Default)]
pub(crate) struct Owners {
    pub(crate) switches: Vec<u8>,
    pub(crate) hosts: Vec<u8>,
}

impl Owners {
    pub(crate) fn of(&self, node: Node) -> usize {
        let owner = match node {
            Node::Switch(s) => self.switches.get(s),
            Node::Host(h) => self.hosts.get(h),
        };
        owner.copied().map_or(0, usize::from)
    }
}

/// What only a network on one thread has: its tap, whose callback sees frames in sending
/// order, and the draws of its lossy cables, in sending order too.
pub(crate) struct OneThread<'a> {
    pub(crate) tap: Option<&'a mut Tap>,
    pub(crate) loss_rng: &'a mut Rng,
}

/// A part with its nodes and the network it is in: what runs the events.
pub(crate) struct Shard<'a, S: ?Sized, H: ?Sized> {
    pub(crate) part: &'a mut Part,
    pub(crate) switches: &'a mut S,
    pub(crate) hosts: &'a mut H,
    pub(crate) cables: &'a Cables,
    pub(crate) killed: &'a [bool],
    pub(crate) owners: &'a Owners,
    pub(crate) one_thread: Option<OneThread<'a>>,
}

impl<S: ?Sized + Members<Switch>, H: ?Sized + Members<SimHost>> Shard<'_, S, H> {
    /// Puts the frame held at `handle` on the wire from `from`, starting now.
    fn transmit(&mut self, from: Endpoint, handle: u64) {
        let part = &mut *self.part;
        let Some(Wire { to, speed, delay, up, loss }) = self.cables.wire(from) else {
            part.store.remove(handle);
            return;
        };
        if !up {
            part.stats.lost_on_down_links += 1;
            part.store.remove(handle);
            return;
        }
        let now = part.now;
        let frame = part.store.get(handle);
        let one_thread = self.one_thread.as_mut();
        if let Some(tap) = one_thread.and_then(|one| one.tap.as_deref_mut()).filter(|tap| tap.ends.contains(&from)) {
            (tap.see)(now, from, frame);
        }
        if let Some(trace) = &mut part.logs.trace {
            let view = FrameView::parse(frame).ok();
            let record = TxRecord {
                start: now,
                from,
                len: frame.len(),
                priority: view.and_then(|v| v.pcp()),
                control: view.and_then(|v| v.mac_control().ok()),
            };
            trace.push((part.sender.order(now), record));
        }
        // Lost on the cable: sent (the tap and the trace saw it) but never arriving.
        if loss > 0.0 {
            let rng = &mut self.one_thread.as_mut().expect("a lossy cable on a network run on one thread").loss_rng;
            if rng.fraction() < loss {
                part.stats.lost_on_cables += 1;
                part.store.remove(handle);
                return;
            }
        }
        let at = now + speed.bits_duration(arrival_bytes(frame.len()) * 8) + delay;
        if let Some(log) = &mut part.logs.pauses
            && frame.get(12..14) == Some(&ethertype::MAC_CONTROL.to_be_bytes()[..])
            && let Ok(control) = FrameView::parse(frame).and_then(|v| v.mac_control())
        {
            log.push((part.sender.order(now), PauseArrival { at, to, control }));
        }
        let arrival = Event::arrival(at, now, &mut part.sender, handle, frame);
        if self.owners.of(to.node) == part.index {
            part.store.set_destination(handle, to);
            part.events.push(arrival);
        } else {
            let (buffer, start) = part.store.take(handle);
            part.outbox.frames.push((arrival.key, to, buffer, start));
        }
    }

    /// Lets switch `s` transmit what it may now, on every port that has work, in port order.
    /// The others are not polled: their `poll_tx` would only let the shaper rest, which with
    /// the exact shaper (no burst) the simulator keeps changes no later decision. Sending on
    /// one port may give a later one work (the pipeline, a pause), so the set is read again
    /// after each port, as a pass over every port would find it.
    fn poll_switch(&mut self, s: usize) {
        let now = self.part.now;
        let mut from = 0u32;
        loop {
            let work = self.switches.member(s).ports_with_work() & u64::MAX.checked_shl(from).unwrap_or(0);
            if work == 0 {
                break;
            }
            from = work.trailing_zeros() + 1;
            let port = from as usize - 1;
            while let Some(tx) = self.switches.member(s).poll_tx(now, port) {
                let store = &mut self.part.store;
                let handle = match tx {
                    Tx::Data { handle, last, mark, ce, int, .. } => {
                        let sent = if last { handle } else { store.duplicate(handle) };
                        if let Some(mark) = mark {
                            pfcswitch_wire::mark_fecn_probe(store.get_mut(sent), mark.rate_kbps, mark.port);
                        }
                        if ce {
                            pfcswitch_wire::mark_ecn_ce(store.get_mut(sent));
                        }
                        if let Some(int) = int {
                            store.stamp_int(sent, &int);
                        }
                        sent
                    }
                    Tx::Control(control) => {
                        let scratch = &mut self.part.scratch;
                        let len = self.switches.member(s).emit_control(port, &control, scratch);
                        store.insert(&scratch[..len])
                    }
                };
                self.transmit(Endpoint::switch(s, port), handle);
            }
        }
        while let Some(handle) = self.switches.member(s).poll_free() {
            self.part.store.remove(handle);
        }
    }

    fn poll_host(&mut self, h: usize) {
        while let Some(len) = self.hosts.member(h).poll_tx(self.part.now, &mut self.part.scratch) {
            let handle = self.part.store.insert(&self.part.scratch[..len]);
            self.transmit(Endpoint::host(h), handle);
        }
    }

    /// Every node touched at this instant, switches then hosts, each by index: fires its
    /// timers that are due (after all of the instant's arrivals), polls it for
    /// transmissions, and books its next wake-up.
    fn poll_touched(&mut self) {
        let now = self.part.now;
        if self.part.touched.is_empty() {
            return;
        }
        let round = &mut self.part.round;
        *round = if round.0 == now { (now, round.1 + 1) } else { (now, 1) };
        self.part.touched.sort_unstable_by(|a, b| b.cmp(a));
        while let Some(node) = self.part.touched.pop() {
            self.part.sender = Sender::new(self.part.round.1, node);
            let next = match node {
                Node::Switch(s) if is_killed(self.killed, s) => None,
                Node::Switch(s) => {
                    if self.switches.member(s).is_due(now) {
                        self.switches.member(s).handle_timeout(now);
                    }
                    self.poll_switch(s);
                    self.switches.member(s).poll_timeout()
                }
                Node::Host(h) => {
                    self.hosts.member(h).handle_timeout(now);
                    self.poll_host(h);
                    self.hosts.member(h).poll_timeout()
                }
            };
            // A timer in the past means now.
            let next = next.map(|at| at.max(now));
            let slot = self.part.slot(node);
            slot.touched = false;
            if slot.wake != next {
                slot.wake = next;
                if let Some(at) = next {
                    self.part.events.push(Event::wake(at, node));
                }
            }
        }
    }

    fn deliver(&mut self, to: Endpoint, handle: u64) {
        let killed = matches!(to.node, Node::Switch(s) if is_killed(self.killed, s));
        let part = &mut *self.part;
        if !self.cables.wire(to).is_some_and(|wire| wire.up) {
            // The link went down while the frame was on it.
            part.stats.lost_on_down_links += 1;
            part.store.remove(handle);
            return;
        }
        part.stats.frame_hops += 1;
        let frame = part.store.get(handle);
        match to.node {
            Node::Switch(_) if killed => {
                part.stats.lost_at_killed_switches += 1;
                part.store.remove(handle);
                return;
            }
            Node::Switch(s) => {
                let verdict = self.switches.member(s).handle_rx(part.now, to.port, handle, frame);
                if verdict == RxVerdict::Consumed {
                    part.store.remove(handle);
                }
            }
            Node::Host(h) => {
                self.hosts.member(h).handle_rx(part.now, frame);
                part.store.remove(handle);
            }
        }
        part.touch(to.node);
    }

    /// Handles every event until `end`, each instant's in order and its touched nodes
    /// polled before time moves on, asking `check` every [`CHECK_EVERY`] events whether to
    /// go on (see [`crate::Network::run_until_or`]). False if `check` stopped it.
    pub(crate) fn advance(&mut self, end: Instant, check: &mut Check<'_>) -> bool {
        let mut stuck = 0u32;
        let mut next_check = self.part.stats.events + CHECK_EVERY;
        loop {
            self.poll_touched();
            if self.part.stats.events >= next_check {
                next_check = self.part.stats.events + CHECK_EVERY;
                if check(self.part.now, &self.part.stats).is_break() {
                    return false;
                }
            }
            let Some(first) = self.part.next_event(end) else { break };
            let at = first.at();
            if at <= self.part.now {
                stuck += 1;
                assert!(stuck < 1_000_000, "the network makes no progress at {}", self.part.now);
            } else {
                stuck = 0;
            }
            self.part.now = self.part.now.max(at);
            // Everything due now happens before anyone transmits again.
            let mut next = Some(first);
            while let Some(event) = next {
                let handled = match event.kind() {
                    EventKind::Arrival(handle) => {
                        self.deliver(self.part.store.destination(handle), handle);
                        true
                    }
                    EventKind::Wake(node) => self.part.wake(node, event.at()),
                };
                self.part.stats.events += u64::from(handled);
                next = self.part.next_event(self.part.now);
            }
        }
        self.part.now = self.part.now.max(end);
        true
    }
}

/// Whether switch `s` is killed, by the network's list.
fn is_killed(killed: &[bool], s: usize) -> bool {
    killed.get(s).copied().unwrap_or(false)
}
