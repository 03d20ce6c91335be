//! The sending side of 802.1Qbb: which (ingress port, priority) pairs assert XOFF towards
//! their peer, and the PFC frames that say so.
//!
//! Policies only decide XOFF or XON per (port, priority), and the datapath may hold a port's
//! lossless priorities while its receive ring backs up ([`XoffTransmitter::set_backlog`]);
//! a class is asserted while either asks. This transmitter turns changes into frames (one per
//! port, covering every class that changed or is asserted), refreshes an asserted pause at
//! half its duration so the peer never resumes by timeout, and keeps the pausing time and
//! XOFF→XON counts.

use crate::port_set::ports_in;
use pfcswitch_link::time::Instant;
use pfcswitch_link::units::BitRate;
use pfcswitch_wire::{Pcp, PfcRepr};
use std::time::Duration;

#[derive(Clone, Debug)]
struct PortXoff {
    /// `policy | backlog`: the classes paused on the wire.
    asserted: u8,
    /// Classes the policy asserts.
    policy: u8,
    /// Classes the datapath holds for a backlog in front of the switch.
    backlog: u8,
    /// Classes whose state changed since the last frame (resumes must be announced).
    changed: u8,
    refresh_every: Duration,
    refresh_at: Option<Instant>,
    since: [Instant; 8],
    /// When the current assertion began (`since` restarts at a counter reset; this does not).
    asserted_at: [Instant; 8],
    pausing: [Duration; 8],
    xoff_to_xon: [u64; 8],
}

#[derive(Clone, Debug)]
pub struct XoffTransmitter {
    ports: Vec<PortXoff>,
    quanta: u16,
    /// Bit i set: port i has a frame to send (its `changed` is not 0), so that a large
    /// switch finds its pending ports without visiting all of them.
    pending: u64,
    /// Bit i set: port i has a refresh booked (its `refresh_at` is set): the switch asks
    /// for the next timeout at every poll, and visiting every port for it was a tenth of
    /// `poll_timeout` on a 32-port switch.
    refreshing: u64,
}

impl XoffTransmitter {
    /// `speeds[i]` is port i's speed, which turns `quanta` into a refresh period.
    pub fn new(speeds: &[BitRate], quanta: u16) -> XoffTransmitter {
        let ports = speeds
            .iter()
            .map(|speed| PortXoff {
                asserted: 0,
                policy: 0,
                backlog: 0,
                changed: 0,
                refresh_every: speed.pause_duration(quanta) / 2,
                refresh_at: None,
                since: [Instant::ZERO; 8],
                asserted_at: [Instant::ZERO; 8],
                pausing: [Duration::ZERO; 8],
                xoff_to_xon: [0; 8],
            })
            .collect();
        XoffTransmitter { ports, quanta, pending: 0, refreshing: 0 }
    }

    /// Uses a new pause time from now on (a configuration reload); asserted classes are
    /// refreshed with it right away.
    pub fn set_quanta(&mut self, speeds: &[pfcswitch_link::units::BitRate], quanta: u16) {
        self.quanta = quanta;
        for (state, speed) in self.ports.iter_mut().zip(speeds) {
            state.refresh_every = speed.pause_duration(quanta) / 2;
            state.changed |= state.asserted;
        }
        self.pending = Self::pending_of(&self.ports);
    }

    /// The policy asserts (`xoff`) or releases XOFF for (port, priority); a no-op if
    /// unchanged.
    pub fn set(&mut self, now: Instant, port: usize, priority: Pcp, xoff: bool) {
        let state = &mut self.ports[port];
        let policy = if xoff { state.policy | priority.mask() } else { state.policy & !priority.mask() };
        // `asserted` is `policy | backlog` after every change of either, so an unchanged
        // `policy` changes nothing: the common case, as the PFC policy says XON or XOFF for
        // every lossless frame it sees, and the call to `apply` cost 40 instructions a frame.
        if policy != state.policy {
            state.policy = policy;
            self.apply(now, port);
        }
    }

    /// The datapath holds the classes of `mask` on `port` (and no others) for frames waiting
    /// in front of the switch, whatever the policy says.
    pub fn set_backlog(&mut self, now: Instant, port: usize, mask: u8) {
        self.ports[port].backlog = mask;
        self.apply(now, port);
    }

    /// Brings `asserted` to `policy | backlog`, timing and announcing each class that changed.
    fn apply(&mut self, now: Instant, port: usize) {
        let state = &mut self.ports[port];
        let asserted = state.policy | state.backlog;
        let flipped = state.asserted ^ asserted;
        if flipped == 0 {
            return;
        }
        for p in (0..8).filter(|p| flipped & (1 << p) != 0) {
            if asserted & (1 << p) != 0 {
                state.since[p] = now;
                state.asserted_at[p] = now;
            } else {
                state.pausing[p] += now - state.since[p];
                state.xoff_to_xon[p] += 1;
            }
        }
        state.asserted = asserted;
        state.changed |= flipped;
        self.pending |= 1 << port;
    }

    /// Sends an asserted class again at the next poll (its OFC flows changed).
    pub fn announce(&mut self, port: usize, priority: Pcp) {
        let state = &mut self.ports[port];
        state.changed |= state.asserted & priority.mask();
        self.pending |= u64::from(state.changed != 0) << port;
    }

    pub fn is_pending(&self, port: usize) -> bool {
        debug_assert_eq!(self.pending & (1 << port) != 0, self.ports[port].changed != 0, "port {port}");
        self.pending & (1 << port) != 0
    }

    /// Bit i set: port i has a PFC frame to send.
    pub fn pending_ports(&self) -> u64 {
        self.pending
    }

    fn pending_of(ports: &[PortXoff]) -> u64 {
        (ports.iter().enumerate()).filter(|(_, state)| state.changed != 0).fold(0, |mask, (i, _)| mask | 1 << i)
    }

    /// The PFC frame to send on `port` now, if a class changed: asserted classes carry the
    /// configured quanta, released ones 0.
    pub fn poll_frame(&mut self, now: Instant, port: usize) -> Option<PfcRepr> {
        let state = &mut self.ports[port];
        if state.changed == 0 {
            return None;
        }
        let enable = state.asserted | state.changed;
        let quanta = std::array::from_fn(|p| if state.asserted & (1 << p) != 0 { self.quanta } else { 0 });
        state.changed = 0;
        state.refresh_at = (state.asserted != 0).then(|| now + state.refresh_every);
        self.refreshing = self.refreshing & !(1 << port) | u64::from(state.asserted != 0) << port;
        self.pending &= !(1 << port);
        Some(PfcRepr { enable, quanta })
    }

    /// [`XoffTransmitter::poll_frame`], with the classes that changed or are due for a
    /// refresh: the frame restates the other asserted classes too.
    pub fn poll_changes(&mut self, now: Instant, port: usize) -> Option<(PfcRepr, u8)> {
        let changed = self.ports[port].changed;
        self.poll_frame(now, port).map(|pfc| (pfc, changed))
    }

    /// The earliest refresh due.
    pub fn next_timeout(&self) -> Option<Instant> {
        ports_in(self.refreshing).filter_map(|port| self.ports[port].refresh_at).min()
    }

    /// Marks ports whose refresh is due as pending.
    pub fn handle_timeout(&mut self, now: Instant) {
        for port in ports_in(self.refreshing) {
            let state = &mut self.ports[port];
            debug_assert!(state.refresh_at.is_some(), "port {port}");
            if state.refresh_at.is_some_and(|at| at <= now) {
                state.changed |= state.asserted;
                state.refresh_at = None;
                self.refreshing &= !(1 << port);
                self.pending |= u64::from(state.changed != 0) << port;
            }
        }
    }

    /// Bit p set: `port` asserts XOFF for priority p.
    pub fn asserted(&self, port: usize) -> u8 {
        self.ports[port].asserted
    }

    /// When (port, priority) began asserting its current XOFF, if it does.
    pub fn asserting_since(&self, port: usize, priority: usize) -> Option<Instant> {
        let state = &self.ports[port];
        (state.asserted & (1 << priority) != 0).then(|| state.asserted_at[priority])
    }

    /// Total time (port, priority) has asserted XOFF up to `now`.
    pub fn pausing_time(&self, now: Instant, port: usize, priority: Pcp) -> Duration {
        let state = &self.ports[port];
        let ongoing =
            if state.asserted & priority.mask() != 0 { now - state.since[priority.index()] } else { Duration::ZERO };
        state.pausing[priority.index()] + ongoing
    }

    pub fn xoff_to_xon(&self, port: usize, priority: Pcp) -> u64 {
        self.ports[port].xoff_to_xon[priority.index()]
    }

    /// Zeroes the time and transition counters; assertions stay in force.
    pub fn reset_counters(&mut self, now: Instant) {
        for state in &mut self.ports {
            state.pausing = [Duration::ZERO; 8];
            state.xoff_to_xon = [0; 8];
            state.since = [now; 8];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pcp(n: u8) -> Pcp {
        Pcp::new(n).unwrap()
    }

    #[test]
    fn xoff_then_refresh_then_xon() {
        let mut tx = XoffTransmitter::new(&[BitRate::gbps(1), BitRate::gbps(1)], 1000);
        let t0 = Instant::from_nanos(0);
        tx.set(t0, 1, pcp(3), true);
        tx.set(t0, 1, pcp(3), true);
        assert!(!tx.is_pending(0) && tx.is_pending(1));
        assert_eq!(tx.poll_frame(t0, 1), Some(PfcRepr::default().with_class(pcp(3), 1000)));
        assert_eq!(tx.poll_frame(t0, 1), None);
        // 1000 quanta at 1 Gbit/s = 512 µs: refreshed at 256 µs.
        assert_eq!(tx.next_timeout(), Some(Instant::from_nanos(256_000)));
        tx.handle_timeout(Instant::from_nanos(256_000));
        let t1 = Instant::from_nanos(256_000);
        assert_eq!(tx.poll_frame(t1, 1), Some(PfcRepr::default().with_class(pcp(3), 1000)));
        tx.set(Instant::from_nanos(300_000), 1, pcp(4), true);
        tx.set(Instant::from_nanos(300_000), 1, pcp(3), false);
        let frame = tx.poll_frame(Instant::from_nanos(300_000), 1).unwrap();
        assert_eq!(frame, PfcRepr::default().with_class(pcp(3), 0).with_class(pcp(4), 1000));
        assert_eq!(tx.pausing_time(Instant::from_nanos(400_000), 1, pcp(3)), Duration::from_nanos(300_000));
        assert_eq!(tx.xoff_to_xon(1, pcp(3)), 1);
    }

    #[test]
    fn a_class_stays_paused_while_either_the_policy_or_the_backlog_holds_it() {
        let mut tx = XoffTransmitter::new(&[BitRate::gbps(1)], 1000);
        let at = Instant::from_nanos;
        tx.set(at(0), 0, pcp(3), true);
        assert_eq!(tx.poll_frame(at(0), 0), Some(PfcRepr::default().with_class(pcp(3), 1000)));
        tx.set_backlog(at(10), 0, pcp(3).mask() | pcp(4).mask());
        assert_eq!(
            tx.poll_frame(at(10), 0),
            Some(PfcRepr::default().with_class(pcp(3), 1000).with_class(pcp(4), 1000))
        );
        tx.set(at(20), 0, pcp(3), false);
        assert!(!tx.is_pending(0), "the backlog still holds 3: nothing changed on the wire");
        tx.set_backlog(at(30), 0, 0);
        assert_eq!(tx.poll_frame(at(30), 0), Some(PfcRepr::default().with_class(pcp(3), 0).with_class(pcp(4), 0)));
        assert_eq!(tx.pausing_time(at(40), 0, pcp(3)), Duration::from_nanos(30));
        assert_eq!((tx.xoff_to_xon(0, pcp(3)), tx.xoff_to_xon(0, pcp(4))), (1, 1));
    }
}
