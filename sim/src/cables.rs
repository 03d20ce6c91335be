//! The cables: per link end, where it leads, at what speed and delay, and whether it is up.

use crate::endpoint::{Endpoint, Node};
use pfcswitch_link::units::BitRate;
use std::time::Duration;

/// Where a port's cable leads: the far end, the line rate and the propagation delay.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Wire {
    pub(crate) to: Endpoint,
    pub(crate) speed: BitRate,
    pub(crate) delay: Duration,
    /// Down, a frame put on it or arriving over it is lost ([`crate::SimStats::lost_on_down_links`]).
    pub(crate) up: bool,
    /// The fraction of frames the cable loses ([`crate::Network::set_loss`]).
    pub(crate) loss: f64,
}

/// Every link end's wire, by node and port.
#[derive(Debug, Default)]
pub(crate) struct Cables {
    switch_wires: Vec<Vec<Option<Wire>>>,
    host_wires: Vec<Option<Wire>>,
}

impl Cables {
    pub(crate) fn wire_mut(&mut self, end: Endpoint) -> &mut Option<Wire> {
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

    pub(crate) fn wire(&self, from: Endpoint) -> Option<Wire> {
        let wire = match from.node {
            Node::Switch(s) => self.switch_wires.get(s).and_then(|ports| ports.get(from.port)),
            Node::Host(h) => self.host_wires.get(h),
        };
        wire.copied().flatten()
    }

    /// Every wire, from each end.
    pub(crate) fn all(&self) -> impl Iterator<Item = (Endpoint, Wire)> + '_ {
        let switches = self.switch_wires.iter().enumerate().flat_map(|(s, ports)| {
            ports.iter().enumerate().filter_map(move |(port, wire)| Some((Endpoint::switch(s, port), (*wire)?)))
        });
        let hosts = self.host_wires.iter().enumerate().filter_map(|(h, wire)| Some((Endpoint::host(h), (*wire)?)));
        switches.chain(hosts)
    }
}

/// Bytes from the first preamble bit to the last FCS bit: when a frame has fully arrived.
pub(crate) fn arrival_bytes(len: usize) -> u64 {
    8 + len.max(pfcswitch_wire::MIN_FRAME_LEN) as u64 + 4
}
