//! A network on one virtual clock: core switches and simulated hosts joined by links with a
//! speed and a propagation delay. Every frame is a real byte string built and parsed by
//! core::wire; every decision is the switch core's. This harness is the seed of the
//! paper-scale simulator: the same [`Switch`] runs here and under the AF_XDP daemon.

pub mod fabric;
mod host;

pub use host::SimHost;

use crate::switch::{Switch, Tx};
use crate::time::Instant;
use crate::units::BitRate;
use crate::wire::{self, FrameView, MacControlRepr, Pcp};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Duration;

/// A node of the network.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Node {
    Switch(usize),
    Host(usize),
}

/// One end of a link: a node and its port (hosts have port 0 only).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Endpoint {
    pub node: Node,
    pub port: usize,
}

impl Endpoint {
    pub const fn switch(index: usize, port: usize) -> Endpoint {
        Endpoint { node: Node::Switch(index), port }
    }

    pub const fn host(index: usize) -> Endpoint {
        Endpoint { node: Node::Host(index), port: 0 }
    }
}

#[derive(Clone, Copy, Debug)]
struct Link {
    ends: [Endpoint; 2],
    speed: BitRate,
    delay: Duration,
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

/// Frame bytes by handle, with buffers reused once freed.
#[derive(Debug, Default)]
struct FrameStore {
    frames: Vec<Vec<u8>>,
    free: Vec<usize>,
}

impl FrameStore {
    fn insert(&mut self, bytes: &[u8]) -> u64 {
        let index = self.free.pop().unwrap_or_else(|| {
            self.frames.push(Vec::with_capacity(1600));
            self.frames.len() - 1
        });
        self.frames[index].clear();
        self.frames[index].extend_from_slice(bytes);
        index as u64
    }

    /// A second buffer with the same bytes (a copy put on the wire while the switch still
    /// holds the original for other ports).
    fn duplicate(&mut self, handle: u64) -> u64 {
        let index = self.insert(&[]) as usize;
        let mut copy = std::mem::take(&mut self.frames[index]);
        copy.extend_from_slice(&self.frames[handle as usize]);
        self.frames[index] = copy;
        index as u64
    }

    fn get(&self, handle: u64) -> &[u8] {
        &self.frames[handle as usize]
    }

    fn get_mut(&mut self, handle: u64) -> &mut [u8] {
        &mut self.frames[handle as usize]
    }

    fn remove(&mut self, handle: u64) {
        self.free.push(handle as usize);
    }
}

#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Arrival {
    at: Instant,
    sequence: u64,
    to: Endpoint,
    handle: u64,
}

/// The network and its clock.
#[derive(Debug, Default)]
pub struct Network {
    now: Instant,
    pub switches: Vec<Switch>,
    pub hosts: Vec<SimHost>,
    links: Vec<Link>,
    store: FrameStore,
    arrivals: BinaryHeap<Reverse<Arrival>>,
    sequence: u64,
    trace: Option<Vec<TxRecord>>,
    scratch: Vec<u8>,
}

/// Bytes from the first preamble bit to the last FCS bit: when a frame has fully arrived.
fn arrival_bytes(len: usize) -> u64 {
    8 + len.max(crate::wire::MIN_FRAME_LEN) as u64 + 4
}

impl Network {
    pub fn new() -> Network {
        Network { scratch: vec![0u8; 65536], ..Network::default() }
    }

    pub fn now(&self) -> Instant {
        self.now
    }

    pub fn add_switch(&mut self, switch: Switch) -> usize {
        self.switches.push(switch);
        self.switches.len() - 1
    }

    pub fn add_host(&mut self, host: SimHost) -> usize {
        self.hosts.push(host);
        self.hosts.len() - 1
    }

    /// Joins two endpoints with a cable of `delay`; both ends run at `speed`.
    pub fn connect(&mut self, a: Endpoint, b: Endpoint, speed: BitRate, delay: Duration) {
        self.links.push(Link { ends: [a, b], speed, delay });
    }

    /// Records every transmission from now on (see [`Network::trace`]).
    pub fn enable_trace(&mut self) {
        self.trace = Some(Vec::new());
    }

    pub fn trace(&self) -> &[TxRecord] {
        self.trace.as_deref().unwrap_or(&[])
    }

    fn peer(&self, from: Endpoint) -> Option<(Endpoint, BitRate, Duration)> {
        self.links.iter().find_map(|link| match link.ends {
            [a, b] if a == from => Some((b, link.speed, link.delay)),
            [a, b] if b == from => Some((a, link.speed, link.delay)),
            _ => None,
        })
    }

    /// Puts the frame held at `handle` on the wire from `from`, starting now.
    fn transmit(&mut self, from: Endpoint, handle: u64) {
        let Some((to, speed, delay)) = self.peer(from) else {
            self.store.remove(handle);
            return;
        };
        let frame = self.store.get(handle);
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
        let at = self.now + speed.bits_duration(arrival_bytes(frame.len()) * 8) + delay;
        self.sequence += 1;
        self.arrivals.push(Reverse(Arrival { at, sequence: self.sequence, to, handle }));
    }

    /// Lets every node transmit what it may at the current time.
    fn poll_all(&mut self) {
        let now = self.now;
        for s in 0..self.switches.len() {
            for port in 0..self.switches[s].port_count() {
                while let Some(tx) = self.switches[s].poll_tx(now, port) {
                    let handle = match tx {
                        Tx::Data { handle, last, mark, ce, .. } => {
                            let sent = if last { handle } else { self.store.duplicate(handle) };
                            if let Some(mark) = mark {
                                wire::mark_fecn_probe(self.store.get_mut(sent), mark.rate_kbps, mark.port);
                            }
                            if ce {
                                wire::mark_ecn_ce(self.store.get_mut(sent));
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
        for h in 0..self.hosts.len() {
            while let Some(len) = self.hosts[h].poll_tx(now, &mut self.scratch) {
                let handle = self.store.insert(&self.scratch[..len]);
                self.transmit(Endpoint::host(h), handle);
            }
        }
    }

    fn deliver(&mut self, arrival: Arrival) {
        let frame = self.store.get(arrival.handle);
        match arrival.to.node {
            Node::Switch(s) => {
                let verdict = self.switches[s].handle_rx(self.now, arrival.to.port, arrival.handle, frame);
                if verdict == crate::switch::RxVerdict::Consumed {
                    self.store.remove(arrival.handle);
                }
            }
            Node::Host(h) => {
                self.hosts[h].handle_rx(self.now, frame);
                self.store.remove(arrival.handle);
            }
        }
    }

    fn next_event(&self) -> Option<Instant> {
        let arrivals = self.arrivals.peek().map(|Reverse(a)| a.at);
        let switches = self.switches.iter().filter_map(Switch::poll_timeout);
        let hosts = self.hosts.iter().filter_map(SimHost::poll_timeout);
        arrivals.into_iter().chain(switches).chain(hosts).min()
    }

    /// Runs until `end` (or until nothing is left to happen).
    pub fn run_until(&mut self, end: Instant) {
        let mut stuck = 0u32;
        loop {
            self.poll_all();
            let Some(next) = self.next_event() else { break };
            if next > end {
                break;
            }
            if next <= self.now {
                stuck += 1;
                assert!(stuck < 1_000_000, "the network makes no progress at {}", self.now);
            } else {
                stuck = 0;
            }
            self.now = self.now.max(next);
            while self.arrivals.peek().is_some_and(|Reverse(a)| a.at <= self.now) {
                let Reverse(arrival) = self.arrivals.pop().expect("peeked");
                self.deliver(arrival);
            }
            for switch in &mut self.switches {
                if switch.poll_timeout().is_some_and(|at| at <= self.now) {
                    switch.handle_timeout(self.now);
                }
            }
            for host in &mut self.hosts {
                host.handle_timeout(self.now);
            }
        }
        self.now = self.now.max(end);
    }

    /// Runs for `duration` more.
    pub fn run_for(&mut self, duration: Duration) {
        self.run_until(self.now + duration);
    }
}
