//! The ideal FCT of a message: the time it takes alone on an idle network, which its FCT is
//! divided by to give its slowdown (the normalisation of HPCC's `fct_analysis`, pFabric and
//! Homa).
//!
//! A message of `S` bytes goes out as `n = ⌈S / P⌉` segments (`P` the transport's payload per
//! full segment). A frame of `len` bytes has wholly arrived after `a(len) = max(len, 60) + 12`
//! bytes of line time (preamble and FCS) and holds the line for `w(len) = a(len) + 12` (the
//! inter-frame gap). On a path of links `1..L` with rates `r_j` and propagation `d`,
//! store-and-forward switches and no other traffic, the last byte is acknowledged no earlier
//! than
//!
//! ```text
//! max over b of [ Σ_{j<b} a_first/r_j + ((n−1)·w_full + a_last)/r_b + Σ_{j>b} a_last/r_j ] + L·d   (data)
//!   + Σ_j a_ack/r_j + L·d                                                                       (ACK)
//! ```
//!
//! The first frame must reach link `b` before link `b` carries anything, every frame must
//! cross `b`, and the last must still cross the links after it. This is a lower bound for every `b`, so the largest is taken (the
//! bottleneck's, when rates differ). The ACK is the receiver's at the last segment of a
//! message (it never waits for `ack_every`). Switches forward in zero time in the simulator
//! and never faster on the datapath, so no FCT can beat it: a slowdown below 1 is a bug.
//!
//! HPCC's simulator uses `base RTT + S_with_headers / bottleneck rate`, where the base RTT
//! counts a full packet's serialisation on every hop: a little above this bound for short
//! flows (its analysis then clamps slowdowns at 1), the same for long ones.
//!
//! The path is the shortest in hops (the fabrics' ECMP routes and the learning topologies'
//! trees are); where several are shortest, each position takes the fastest link among them,
//! which keeps the bound below every one of them.

use anyhow::{Context, Result};
use pfcswitch_hosts::TransportConfig;
use pfcswitch_link::shaper::wire_bytes;

/// The 12 bytes of idle line that follow every frame.
const INTER_FRAME_GAP: u64 = 12;
use pfcswitch_link::units::BitRate;
use pfcswitch_sim::{Endpoint, Node};
use pfcswitch_topology::Link;
use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::time::Duration;

/// Of each link of a path, in order: bit/s and propagation delay (ns).
pub(super) type Hops = Vec<(u64, u128)>;

/// The network's cables and what a segment carries: enough to compute any message's ideal FCT.
pub(super) struct IdealFct {
    switches: usize,
    /// Per node (switches, then hosts), its neighbours and the rate and delay of the cable
    /// to each.
    neighbours: Vec<Vec<(usize, BitRate, Duration)>>,
    frame_len: usize,
    payload: usize,
    ack_len: usize,
    /// Per (sender, receiver): the rate and delay of each link of the path, in order.
    paths: RefCell<HashMap<(usize, usize), Option<Hops>>>,
}

impl IdealFct {
    /// Of a network of `switches` switches and `hosts` hosts wired by `cables` (ends, rate,
    /// propagation delay), whose hosts send segments as `transport` says.
    pub fn new(
        switches: usize,
        hosts: usize,
        cables: impl IntoIterator<Item = (Endpoint, Endpoint, BitRate, Duration)>,
        transport: &TransportConfig,
    ) -> IdealFct {
        let mut neighbours = vec![Vec::new(); switches + hosts];
        let node = |end: Endpoint| match end.node {
            Node::Switch(s) => s,
            Node::Host(h) => switches + h,
        };
        for (a, b, rate, delay) in cables {
            neighbours[node(a)].push((node(b), rate, delay));
            neighbours[node(b)].push((node(a), rate, delay));
        }
        IdealFct {
            switches,
            neighbours,
            frame_len: transport.frame_len,
            payload: transport.payload_len(),
            ack_len: transport.ack_len(),
            paths: RefCell::new(HashMap::new()),
        }
    }

    /// Of a topology's `links`, every one at `speed`.
    pub fn of_links(
        switch_names: &[String],
        host_names: &[String],
        links: &[Link],
        speed: BitRate,
        delay: Duration,
        transport: &TransportConfig,
    ) -> Result<IdealFct> {
        let end = |name: &str| -> Result<Endpoint> {
            let node = name.split_once(':').map_or(name, |(node, _)| node);
            if let Some(s) = switch_names.iter().position(|n| n == node) {
                return Ok(Endpoint::switch(s, 0));
            }
            let h = host_names.iter().position(|n| n == node).with_context(|| format!("link end `{name}`"))?;
            Ok(Endpoint::host(h))
        };
        let cables = links
            .iter()
            .map(|link| Ok((end(&link.a.to_string())?, end(&link.b.to_string())?, speed, delay)))
            .collect::<Result<Vec<_>>>()?;
        Ok(IdealFct::new(switch_names.len(), host_names.len(), cables, transport))
    }

    /// The links from host `sender` to host `receiver` on a shortest path, in order: bit/s
    /// and propagation delay (ns) of each; `None` if they are not connected.
    pub fn hops(&self, sender: usize, receiver: usize) -> Option<Hops> {
        self.paths.borrow_mut().entry((sender, receiver)).or_insert_with(|| self.path(sender, receiver)).clone()
    }

    /// The ideal FCT of `size` bytes from host `sender` to host `receiver`, if they are connected.
    pub fn of(&self, sender: usize, receiver: usize, size: u64) -> Option<Duration> {
        let hops = self.hops(sender, receiver)?;
        let rates: Vec<u64> = hops.iter().map(|&(rate, _)| rate).collect();
        let payload = self.payload as u64;
        let segments = size.div_ceil(payload).max(1);
        // Headers (and the CN-TAG with QCN) are what a full frame carries besides payload.
        let headers = (self.frame_len - self.payload) as u64;
        let last_len = (headers + (size - (segments - 1) * payload).max(1)) as usize;
        let (a_last, a_full) = (arrival_bytes(last_len), arrival_bytes(self.frame_len));
        let a_first = if segments == 1 { a_last } else { a_full };
        let through_bottleneck = (segments - 1) * wire_bytes(self.frame_len) + a_last;
        let a_ack = arrival_bytes(self.ack_len);
        let serialise = |bytes: u64, bps: u64| u128::from(bytes) * 8 * 1_000_000_000 / u128::from(bps);
        let data = (0..rates.len())
            .map(|b| {
                let before: u128 = rates[..b].iter().map(|&r| serialise(a_first, r)).sum();
                let after: u128 = rates[b + 1..].iter().map(|&r| serialise(a_last, r)).sum();
                before + serialise(through_bottleneck, rates[b]) + after
            })
            .max()?;
        let ack: u128 = rates.iter().map(|&r| serialise(a_ack, r)).sum();
        let propagation = 2 * hops.iter().map(|&(_, delay)| delay).sum::<u128>();
        // Each hop's time is floored to the nanosecond here, but the simulator's clock may
        // round an arrival either way: a nanosecond of slack per hop keeps this a lower bound.
        let slack = 2 * rates.len() as u128;
        Some(Duration::from_nanos(u64::try_from(data + ack + propagation - slack).unwrap_or(u64::MAX)))
    }

    /// Hops from `from` to every node; only `from` itself may be a host on the way.
    fn distances(&self, from: usize) -> Vec<Option<usize>> {
        let mut distance = vec![None; self.neighbours.len()];
        distance[from] = Some(0);
        let mut queue = VecDeque::from([from]);
        while let Some(u) = queue.pop_front() {
            if u != from && u >= self.switches {
                continue;
            }
            for &(v, _, _) in &self.neighbours[u] {
                if distance[v].is_none() {
                    distance[v] = Some(distance[u].expect("queued") + 1);
                    queue.push_back(v);
                }
            }
        }
        distance
    }

    /// Per link of the shortest paths from host `sender` to host `receiver`, the fastest rate
    /// (bit/s) and the shortest delay (ns) at that position: a lower bound over the paths.
    fn path(&self, sender: usize, receiver: usize) -> Option<Hops> {
        let (from, to) = (self.switches + sender, self.switches + receiver);
        let (forward, backward) = (self.distances(from), self.distances(to));
        let length = forward[to]?;
        let mut hops = vec![(0, u128::MAX); length];
        for (u, links) in self.neighbours.iter().enumerate() {
            for &(v, rate, delay) in links {
                let (Some(du), Some(dv), Some(left)) = (forward[u], forward[v], backward[v]) else { continue };
                let on_a_shortest_path = dv == du + 1 && left + dv == length && (u == from || u < self.switches);
                if on_a_shortest_path {
                    hops[du] = (hops[du].0.max(rate.bps()), hops[du].1.min(delay.as_nanos()));
                }
            }
        }
        Some(hops)
    }
}

/// Bytes on the wire until a frame of `len` bytes has wholly arrived: preamble, frame and FCS;
/// the inter-frame gap after it only delays the next frame.
fn arrival_bytes(len: usize) -> u64 {
    wire_bytes(len) - INTER_FRAME_GAP
}
