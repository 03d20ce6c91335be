//! Faults at set times: a link going down and coming back, a switch killed and restarted. A
//! link's carrier goes at both ends at once, as a veth pair's does when either end is taken
//! down and as a cut cable's does; what was on the wire is lost and counted
//! ([`SimStats::lost_on_down_links`](super::SimStats)), and each switch end follows with
//! `Switch::set_link` (its queues dropped as `link_down`, its FDB and ECMP groups following).
//! A killed switch is what a killed pfcswitchd leaves: its links stay up (the kernel keeps
//! the interfaces), it forwards nothing and sends nothing, and what reaches it is lost
//! ([`SimStats::lost_at_killed_switches`](super::SimStats)); its peers learn nothing of it.

use super::{Endpoint, Network, Node};
use pfcswitch_switch::switch::Switch;

impl Network {
    /// Takes the link at `end` down or brings it up, now (between runs: the next run polls
    /// every node first). A link that is not there, or is in that state already, changes
    /// nothing.
    pub fn set_link(&mut self, end: Endpoint, up: bool) {
        let Some(wire) = self.cables.wire(end) else { return };
        if wire.up == up {
            return;
        }
        let now = self.now();
        for side in [end, wire.to] {
            if let Some(wire) = self.cables.wire_mut(side).as_mut() {
                wire.up = up;
            }
            if let Node::Switch(s) = side.node {
                self.switches[s].set_link(now, side.port, up);
            }
        }
    }

    /// Switch `s`'s process dies: nothing it holds leaves it again, nothing reaching it is
    /// forwarded.
    pub fn kill_switch(&mut self, s: usize) {
        if self.killed.len() <= s {
            self.killed.resize(s + 1, false);
        }
        self.killed[s] = true;
    }

    /// Switch `s` starts again as `fresh`: a switch just built from its config, nothing
    /// learned, nothing queued (what the old one held is gone with it).
    pub fn restart_switch(&mut self, s: usize, fresh: Switch) {
        self.switches[s] = fresh;
        if let Some(killed) = self.killed.get_mut(s) {
            *killed = false;
        }
    }
}
