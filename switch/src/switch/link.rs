//! A port's link going down and coming back (the daemon follows the kernel's link state).
//!
//! Down, the port loses nothing uncounted: what its egress queues hold and every frame that
//! arrives for it afterwards is dropped as `link_down`, lossless priorities included, and the
//! ingress bytes of those frames are released, so the upstreams they came from are resumed
//! rather than held by a port that will never drain. Pauses received from the dead peer end
//! with it, the addresses learned on the port are forgotten (flooding and the ECMP groups'
//! live members take over), and nothing is sent on it. Up again, it starts clean: the new
//! peer is told of any pause the port still asserts (the frames its old peer sent may still
//! be queued at other ports, and they still count at this ingress until they leave).

use super::Switch;
use crate::counters::DropReason;
use pfcswitch_link::time::Instant;
use pfcswitch_wire::{MacControlRepr, Pcp, PfcRepr};

impl Switch {
    /// Whether `port`'s link is up; every port starts up.
    pub fn link_is_up(&self, port: usize) -> bool {
        self.links_down & (1u64 << port) == 0
    }

    /// Sets `port`'s link state at `now`; a state it already has changes nothing.
    pub fn set_link(&mut self, now: Instant, port: usize, up: bool) {
        if up == self.link_is_up(port) {
            return;
        }
        if up {
            self.links_down &= !(1u64 << port);
            let asserted = self.xoff.asserted(port);
            for priority in Pcp::ALL.into_iter().filter(|p| asserted & p.mask() != 0) {
                self.xoff.announce(port, priority);
            }
            return;
        }
        self.links_down |= 1u64 << port;
        self.fdb.flush_port(port);
        let resume_all = PfcRepr { enable: 0xFF, quanta: [0; 8] };
        self.ports[port].peer_pause.apply(now, &MacControlRepr::Pfc(resume_all));
        for p in 0..8 {
            self.drop_queue(now, port, p, DropReason::LinkDown);
            self.watch_queue(now, port, p);
        }
    }
}
