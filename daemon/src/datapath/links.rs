//! Ports follow their interfaces: a link going down or up is handed to the switch; an
//! interface that vanishes is unbound (its sockets closed, the frames they held taken back,
//! its XDP link and classifier entry dropped) and the port kept as absent; an interface of
//! that name appearing again is bound again, with no restart and no reload.
//!
//! Binding waits [`BIND_SETTLE`] after the interface appears: a new veth announces itself
//! before the kernel has trimmed its RX queues to the real number (binding a queue that
//! is about to vanish fails), and a failed attempt's sockets release their device queues
//! only when the kernel's deferred work runs. A failed attempt is retried every
//! [`BIND_RETRY`] while the interface exists.

use super::{Datapath, classification, iface_mac, iface_of};
use crate::link::{Events, LinkEvent, LinkState};
use pfcswitch_link::time::Instant;
use std::time::Duration;

pub const BIND_SETTLE: Duration = Duration::from_millis(20);
pub const BIND_RETRY: Duration = Duration::from_millis(100);

impl Datapath {
    /// Applies the kernel's link changes to the ports.
    #[cold]
    #[inline(never)]
    pub(super) fn follow_links(&mut self, now: Instant) {
        let events = match self.links.read() {
            Ok(Events::Changes(events)) => events,
            Ok(Events::Lost) => {
                log::warn!("link events were lost (socket overrun): reading every port's link again");
                (0..self.config.ports.len()).map(|port| LinkEvent::read(iface_of(&self.config, port))).collect()
            }
            Err(error) => {
                log::error!("cannot read link events: {error}");
                return;
            }
        };
        for event in events {
            for port in 0..self.config.ports.len() {
                if iface_of(&self.config, port) == event.iface {
                    self.follow(now, port, &event);
                }
            }
        }
    }

    /// Port `port`'s interface reported `event`.
    fn follow(&mut self, now: Instant, port: usize, event: &LinkEvent) {
        let link = self.port_links[port];
        let replaced = link.bound.is_some_and(|index| event.state != LinkState::Absent && index != event.index);
        if event.state == LinkState::Absent || replaced {
            // Deleted (and, if replaced, created again since): what was bound is gone.
            self.set_link(now, port, LinkState::Absent);
            self.unbind(port);
        }
        let link = &mut self.port_links[port];
        if link.is_bound() {
            self.set_link(now, port, event.state);
        } else if event.state == LinkState::Absent {
            link.bind_at = None;
        } else if link.bind_at.is_none() {
            link.bind_at = Some(now + BIND_SETTLE);
            link.bind_failures = 0;
        }
    }

    /// When the next attempt to bind an interface that appeared is due.
    pub(super) fn next_bind(&self) -> Option<Instant> {
        self.port_links.iter().filter_map(|link| link.bind_at).min()
    }

    /// Binds the interfaces that appeared and whose attempt is due; the link state is read
    /// afresh (events of an unbound port only schedule this).
    #[cold]
    #[inline(never)]
    pub(super) fn bind_due(&mut self, now: Instant) {
        for port in 0..self.port_links.len() {
            if self.port_links[port].bind_at.is_none_or(|at| at > now) {
                continue;
            }
            let current = LinkEvent::read(iface_of(&self.config, port));
            if current.state == LinkState::Absent {
                self.port_links[port].bind_at = None;
                continue;
            }
            match self.bind(port, current.index) {
                Ok(()) => {
                    self.port_links[port].bind_at = None;
                    self.set_link(now, port, current.state);
                }
                Err(error) => {
                    let link = &mut self.port_links[port];
                    link.bind_failures += 1;
                    link.bind_at = Some(now + BIND_RETRY);
                    let (name, iface) = (&self.config.ports[port].name, iface_of(&self.config, port));
                    // Once when it starts failing, then every 10 s: the next engineer sees
                    // why without a flood of lines.
                    if link.bind_failures % 100 == 1 {
                        log::warn!("port {name}: interface {iface} is back but cannot be bound yet: {error}; retrying");
                    }
                }
            }
        }
    }

    /// One port's link changed: the switch follows (a port down drops and counts what it
    /// holds and what arrives for it), with one log line.
    fn set_link(&mut self, now: Instant, port: usize, state: LinkState) {
        let link = &mut self.port_links[port];
        if link.state == state {
            return;
        }
        let (name, iface) = (&self.config.ports[port].name, iface_of(&self.config, port));
        log::info!("port {name} ({iface}): link {} -> {}", link.state.name(), state.name());
        link.state = state;
        link.transitions += 1;
        self.switch.set_link(now, port, state == LinkState::Up);
        if state != LinkState::Up
            && let Some(cable) = self.cables[port].as_mut()
        {
            // Before an unbind forgets the port's frames: these are on the cable, not in a ring.
            let (outgoing, incoming) = cable.cut();
            outgoing.iter().for_each(|desc| self.pool.completed(desc.addr, port));
            incoming.iter().for_each(|desc| self.pool.release(desc.addr));
            let name = &self.config.ports[port].name;
            log::info!("port {name}: {} frames on its cable lost", outgoing.len() + incoming.len());
        }
    }

    /// Closes the sockets of a port whose interface vanished and takes back every frame the
    /// kernel had of it; drops its XDP link and classifier entry.
    fn unbind(&mut self, port: usize) {
        if self.port_links[port].bound.take().is_none() {
            return;
        }
        self.sockets.close_port(port);
        let frames = self.pool.forget_port(port);
        self.classifier.release(port as u32);
        // The other ports' sockets moved up in `sockets.queues`.
        self.tx_queue = (0..self.tx_queue.len()).map(|port| self.sockets.tx_queue(port)).collect();
        let name = &self.config.ports[port].name;
        log::warn!(
            "port {name}: interface {} is gone: unbound, {frames} UMEM frames taken back",
            iface_of(&self.config, port)
        );
    }

    /// Binds port `port` to the interface (index `index`) that appeared under its name:
    /// sockets on the shared UMEM, XDP attached. On failure nothing of the attempt stays.
    fn bind(&mut self, port: usize, index: u32) -> Result<(), String> {
        let (name, iface) = (self.config.ports[port].name.clone(), iface_of(&self.config, port).to_string());
        let result = (|| -> Result<usize, String> {
            let queues = self.sockets.open_port(port, &iface).map_err(|e| e.to_string())?;
            for socket in &self.sockets.queues[queues.clone()] {
                self.classifier.register_socket(port as u32, socket.queue, socket.fd()).map_err(|e| e.to_string())?;
            }
            let classification = classification(&self.config, port).map_err(|e| e.to_string())?;
            self.classifier.attach(&iface, &classification).map_err(|e| e.to_string())?;
            Ok(queues.len())
        })();
        match result {
            Ok(queues) => {
                self.tx_queue[port] = self.sockets.tx_queue(port);
                self.port_links[port].bound = Some(index);
                if let Some(mac) = iface_mac(&iface) {
                    self.switch.set_port_mac(port, mac);
                }
                self.refill();
                log::info!("port {name}: interface {iface} is back: bound again on {queues} RX queue(s)");
                Ok(())
            }
            Err(error) => {
                self.sockets.close_port(port);
                self.pool.forget_port(port);
                self.classifier.release(port as u32);
                // Without the anchor on lo, the UMEM belongs to the first port's socket, and
                // the kernel lets no socket join it once that port's interface is gone.
                let hint = if self.sockets.has_anchor() {
                    ""
                } else {
                    " (if the first port's interface was deleted, the UMEM it owned takes no new socket: restart pfcswitchd)"
                };
                Err(format!("{error}{hint}"))
            }
        }
    }
}
