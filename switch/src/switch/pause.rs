//! PFC at the switch: obeying a peer's PAUSE and PFC frames, the pause frames we send, and
//! the watchdog's view of paused queues and its actions on a storm. OFC's flow-level
//! pauses are in `ofc`.

use super::{PauseFrame, Switch};
use crate::config::PfcwdAction;
use crate::counters::DropReason;
use crate::policy::PolicyEngine;
use pfcswitch_link::time::Instant;
use pfcswitch_wire::{MacControlRepr, OfcRepr, PAUSE_MULTICAST, Pcp, PfcRepr};

impl Switch {
    /// Holds (`hold`) or releases every lossless priority of `port` towards its peer for
    /// frames waiting in front of the switch: a datapath whose receive ring backs up, with
    /// frames the switch has not yet counted. PFC beside the policy's own, whatever the
    /// ingress accounting says; the ring is one FIFO for all priorities, so it cannot say
    /// whose frames wait.
    pub fn hold_lossless(&mut self, now: Instant, port: usize, hold: bool) {
        self.xoff.set_backlog(now, port, if hold { self.lossless } else { 0 });
    }

    /// A received PAUSE pauses every priority; a PFC frame its enabled classes that are
    /// PFC-enabled on this switch (802.1Qbb: the enable vector of a port governs both
    /// directions). The watchdog sees every pause and resume of a lossless class, and classes
    /// it holds as stormed under `drop` or `forward` are not obeyed. Under OFC a PAUSE with
    /// flows pauses only those (unless COARSE); see [`Switch::obey_ofc`].
    pub(super) fn obey(&mut self, now: Instant, port: usize, repr: &MacControlRepr, ofc: Option<OfcRepr<'_>>) {
        let counters = &mut self.counters[port];
        let (enable, quanta) = match repr {
            MacControlRepr::Pause { quanta } => {
                counters.pause_rx += 1;
                (0xFF, [*quanta; 8])
            }
            MacControlRepr::Pfc(pfc) => {
                for (class, _) in pfc.classes() {
                    counters.priority[class.index()].pfc_rx += 1;
                }
                (pfc.enable & self.lossless, pfc.quanta)
            }
        };
        let mut obeyed = PfcRepr { enable, quanta };
        for p in (0..8).filter(|&p| enable & self.lossless & (1 << p) != 0) {
            self.pfcwd.pfc_received(now, port, p, quanta[p] > 0);
            if self.pfcwd.ignores_pfc(port, p) {
                obeyed.enable &= !(1 << p);
            }
        }
        if matches!(self.policy, PolicyEngine::Ofc(_)) {
            obeyed = self.obey_ofc(now, port, obeyed, ofc);
        }
        self.ports[port].peer_pause.apply(now, &MacControlRepr::Pfc(obeyed));
        let watched = obeyed.enable & self.lossless;
        for p in (0..8).filter(|&p| watched & (1 << p) != 0) {
            self.watch_queue(now, port, p);
        }
    }

    /// Tells the watchdog whether egress queue (port, p) is stuck: frames held, peer pausing.
    pub(super) fn watch_queue(&mut self, now: Instant, port: usize, p: usize) {
        if !self.pfcwd.watches(p) {
            return;
        }
        let stuck = self.is_stuck(now, port, p);
        self.pfcwd.queue_state(now, port, p, stuck);
    }

    pub(super) fn is_stuck(&self, now: Instant, port: usize, p: usize) -> bool {
        self.buffers.queue_len(port, p) > 0 && self.ports[port].peer_pause.is_paused(now, Pcp::from_low_bits(p as u8))
    }

    /// The PFC frame the transmitter has for `port`, or under OFC the next OFC frame.
    pub(super) fn poll_pause(&mut self, now: Instant, port: usize) -> Option<PauseFrame> {
        let src = self.ports[port].mac;
        let plain = |pfc| PauseFrame { src, dst: PAUSE_MULTICAST, repr: MacControlRepr::Pfc(pfc), ofc: None };
        let PolicyEngine::Ofc(ofc) = &mut self.policy else {
            return self.xoff.poll_frame(now, port).map(plain);
        };
        if !ofc.has_frames(port) {
            let (pfc, changed) = self.xoff.poll_changes(now, port)?;
            let rest = ofc.queue_frames(port, pfc, changed);
            if rest.enable != 0 {
                return Some(plain(rest));
            }
        }
        let frame = ofc.poll_frame(port)?;
        let pfc = PfcRepr::default().with_class(frame.header.priority, frame.quanta);
        Some(PauseFrame { ofc: Some(frame), ..plain(pfc) })
    }

    /// Carries out the watchdog's action on a stormed queue: `drop` discards what it holds,
    /// and `drop` and `forward` end the peer's pause (its further PFC is ignored).
    pub(super) fn contain_storm(&mut self, now: Instant, port: usize, p: usize, action: PfcwdAction) {
        let priority = Pcp::from_low_bits(p as u8);
        if action == PfcwdAction::Alert {
            return;
        }
        let resume = PfcRepr::default().with_class(priority, 0);
        self.ports[port].peer_pause.apply(now, &MacControlRepr::Pfc(resume));
        if action != PfcwdAction::Drop {
            return;
        }
        for _ in 0..self.drop_queue(now, port, p, DropReason::Pfcwd) {
            self.pfcwd.count_tx_drop(port, p);
        }
    }

    /// Discards every frame egress queue (port, p) holds, counted under `reason`; returns
    /// how many. Each frame's ingress bytes are released as it goes, so the upstreams that
    /// sent them are resumed as PFC would resume them.
    pub(super) fn drop_queue(&mut self, now: Instant, port: usize, p: usize, reason: DropReason) -> u64 {
        // Paused OFC flows too: the queue drains whole, so flatten it (order no longer matters).
        self.buffers.nested_mut(port, p).flatten();
        if let PolicyEngine::Ofc(ofc) = &mut self.policy {
            ofc.commit_resumes(port, Pcp::from_low_bits(p as u8));
        }
        let mut dropped = 0;
        while self.buffers.queue_len(port, p) > 0 {
            let (frame, last) = self.take_head(now, port, p);
            let counters = &mut self.counters[port].priority[p];
            counters.drops[reason as usize] += 1;
            counters.egress_dropped += 1;
            dropped += 1;
            if last {
                self.freed.push_back(frame.handle);
            }
        }
        dropped
    }
}
