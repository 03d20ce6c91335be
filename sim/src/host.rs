//! Simulated hosts: [`FlowSender`]s that obey PFC through [`HostNic`], and a
//! [`FlowReceiver`] that checks sequence numbers per flow.

use pfcswitch_hosts::{FlowReceiver, FlowSender, FlowSpec, FlowStats, HostNic, Transport};
use pfcswitch_link::time::Instant;
use pfcswitch_link::units::BitRate;
use pfcswitch_wire::{
    EthernetAddress, FrameView, Ipv4Addr, MacControlRepr, PAUSE_MULTICAST, Pcp, build_announcement_frame,
    build_mac_control_frame,
};
use std::cmp::Reverse;

/// A host with one NIC.
#[derive(Clone, Debug)]
pub struct SimHost {
    pub mac: EthernetAddress,
    pub ip: Ipv4Addr,
    pub nic: HostNic,
    flows: Vec<FlowSender>,
    next_flow: usize,
    receiver: FlowReceiver,
    /// Frames received that were neither PFC nor for this host (flooded).
    pub foreign_frames: u64,
    announce: bool,
    /// MAC control frames to send at given times, ahead of data and regardless of pauses.
    injections: Vec<(Instant, MacControlRepr)>,
    /// Messages over go-back-N connections, sent before the plain flows.
    pub transport: Option<Transport>,
}

impl SimHost {
    pub fn new(mac: EthernetAddress, ip: Ipv4Addr, speed: BitRate) -> SimHost {
        SimHost {
            mac,
            ip,
            nic: HostNic::new(speed, 0xFF),
            flows: Vec::new(),
            next_flow: 0,
            receiver: FlowReceiver::default(),
            foreign_frames: 0,
            announce: false,
            injections: Vec::new(),
            transport: None,
        }
    }

    pub fn add_flow(&mut self, spec: FlowSpec) {
        self.flows.push(FlowSender::new(spec));
    }

    /// Sends a PAUSE or PFC frame at `at` (or as soon after as the wire is free).
    pub fn inject(&mut self, at: Instant, repr: MacControlRepr) {
        self.inject_all([(at, repr)]);
    }

    /// Sends each of `frames` at its time, as [`SimHost::inject`] does (a PFC storm is many).
    pub fn inject_all(&mut self, frames: impl IntoIterator<Item = (Instant, MacControlRepr)>) {
        self.injections.extend(frames);
        self.injections.sort_by_key(|&(at, _)| Reverse(at));
    }

    /// Sends one broadcast frame first, so that switches learn this host's address.
    pub fn announce(&mut self) {
        self.announce = true;
    }

    /// Frames sent so far by flow `id`.
    pub fn sent(&self, id: u32) -> u64 {
        self.flows.iter().filter(|f| f.spec.id == id).map(FlowSender::sent).sum()
    }

    pub fn received(&self, id: u32) -> FlowStats {
        self.receiver.stats(id)
    }

    /// Writes the next frame to send at `now` into `buffer` and returns its length.
    pub fn poll_tx(&mut self, now: Instant, buffer: &mut [u8]) -> Option<usize> {
        if !self.nic.wire_free(now) {
            return None;
        }
        if let Some(&(_, repr)) = self.injections.last().filter(|(at, _)| *at <= now) {
            self.injections.pop();
            return Some(self.book_wire(now, build_mac_control_frame(buffer, self.mac, PAUSE_MULTICAST, &repr)));
        }
        if self.announce && self.nic.can_send(now, Pcp::default()) {
            self.announce = false;
            let len = build_announcement_frame(buffer, self.mac);
            return Some(self.book_wire(now, len));
        }
        if let Some(transport) = &mut self.transport
            && let Some(len) = transport.poll_transmit(now, &mut self.nic, buffer)
        {
            return Some(len);
        }
        let n = self.flows.len();
        let chosen = (0..n).map(|i| (self.next_flow + i) % n).find(|&i| {
            let flow = &self.flows[i];
            !flow.is_done() && flow.ready_at() <= now && self.nic.can_send_to(now, flow.spec.priority, flow.spec.dst)
        })?;
        self.next_flow = (chosen + 1) % n;
        let len = self.flows[chosen].next_frame(now, self.mac, self.ip, buffer);
        Some(self.book_wire(now, len))
    }

    fn book_wire(&mut self, now: Instant, len: usize) -> usize {
        self.nic.sent(now, len);
        len
    }

    /// When this host next has something to send, if ever.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let injection = self.injections.last().map(|&(at, _)| at.max(self.nic.wire_free_at()));
        let announce = self.announce.then(|| self.nic.ready_at(Pcp::default()));
        let flows = self
            .flows
            .iter()
            .filter(|f| !f.is_done())
            .map(|f| f.ready_at().max(self.nic.ready_at_to(f.spec.priority, f.spec.dst)));
        let transport = self.transport.as_ref().and_then(|t| t.poll_timeout(&self.nic));
        injection.into_iter().chain(announce).chain(flows).chain(transport).min()
    }

    /// Fires the transport's retransmission timers.
    pub fn handle_timeout(&mut self, now: Instant) {
        if let Some(transport) = &mut self.transport {
            transport.handle_timeout(now);
        }
    }

    pub fn handle_rx(&mut self, now: Instant, frame: &[u8]) {
        if self.nic.handle_rx(now, frame) {
            return;
        }
        if self.transport.as_mut().is_some_and(|t| t.handle_rx(now, frame)) {
            return;
        }
        let Ok(view) = FrameView::parse(frame) else { return };
        if view.l2.dst != self.mac {
            self.foreign_frames += 1;
            return;
        }
        self.receiver.handle(now, &view, frame.len());
    }
}
