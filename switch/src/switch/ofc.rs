//! The switch's side of OFC (the tables and thresholds are `crate::policy::ofc`): flows a
//! peer pauses or resumes, arrivals that may pause a flow, and the nested egress queues
//! settled around paused flows.

use super::Switch;
use crate::policy::{Arrival, PolicyActions, PolicyEngine};
use pfcswitch_link::time::Instant;
use pfcswitch_wire::{FlowKey, OfcOp, OfcRepr, Pcp, PfcRepr};

impl Switch {
    /// OFC Algorithm 2 on egress `port`: a PAUSE's flows go into `congested_flow_tab` and no
    /// longer pause the whole class (unless COARSE, or the table is full); a RESUME, or a plain
    /// PFC resume (all flows), resumes flows and rotates the nested queues. Returns what is
    /// left to obey as plain PFC.
    pub(super) fn obey_ofc(
        &mut self,
        now: Instant,
        port: usize,
        mut obeyed: PfcRepr,
        tlv: Option<OfcRepr<'_>>,
    ) -> PfcRepr {
        let lossless = self.lossless;
        let PolicyEngine::Ofc(ofc) = &mut self.policy else { return obeyed };
        let listed = tlv.filter(|tlv| obeyed.is_enabled(tlv.priority) && lossless & tlv.priority.mask() != 0);
        if let Some(tlv) = listed {
            let priority = tlv.priority;
            match tlv.op {
                OfcOp::Pause => {
                    let until = now + self.ports[port].shaper.speed().pause_duration(obeyed.quanta[priority.index()]);
                    let stored = ofc.pause_received(port, priority, tlv.flows(), until);
                    if stored && !tlv.coarse {
                        obeyed.enable &= !priority.mask();
                    }
                    self.settle(port, priority.index());
                }
                OfcOp::Resume => {
                    ofc.count_resume_rx(port, priority);
                    self.ofc_resume(port, priority, Some(&mut tlv.flows()));
                }
            }
        }
        // A plain PFC resume: every flow of the class.
        let listed_class = listed.map_or(0, |tlv| tlv.priority.mask());
        let resumed = obeyed.classes().filter(|&(_, quanta)| quanta == 0).fold(0u8, |mask, (c, _)| mask | c.mask())
            & lossless
            & !listed_class;
        for class in Pcp::ALL.into_iter().filter(|c| resumed & c.mask() != 0) {
            self.ofc_resume(port, class, None);
        }
        obeyed
    }

    /// Resumes `flows` (every flow if `None`) on egress (port, priority): Algorithm 2 lines
    /// 7–9 and the rotation of Algorithm 3.
    pub(super) fn ofc_resume(&mut self, port: usize, priority: Pcp, flows: Option<&mut dyn Iterator<Item = FlowKey>>) {
        let PolicyEngine::Ofc(ofc) = &mut self.policy else { return };
        let queue = self.buffers.nested_mut(port, priority.index());
        ofc.resume_received(port, priority, flows, queue.is_draining());
        queue.resume();
        self.settle(port, priority.index());
    }

    /// OFC Algorithm 3 lines 7–15: moves frames of paused flows aside until egress (port, p)
    /// has a frame it may send, rotating back at order marks.
    #[inline]
    pub(super) fn settle(&mut self, port: usize, p: usize) {
        if matches!(self.policy, PolicyEngine::Ofc(_)) {
            self.settle_nested(port, p);
        }
    }

    fn settle_nested(&mut self, port: usize, p: usize) {
        let PolicyEngine::Ofc(ofc) = &mut self.policy else { return };
        let priority = Pcp::from_low_bits(p as u8);
        let arena = &self.arena;
        let queue = self.buffers.nested_mut(port, p);
        while queue.settle(|index| ofc.is_paused(port, priority, &arena.get(index).flow)) {
            ofc.commit_resumes(port, priority);
            queue.rotate();
        }
    }

    /// OFC Algorithm 1 lines 1–9 for a lossless arrival on `port` whose ingress accounting is
    /// now `q_in`, going to the ports of `egress`.
    pub(super) fn ofc_arrival(
        &mut self,
        now: Instant,
        port: usize,
        priority: Pcp,
        flow: FlowKey,
        q_in: u64,
        egress: u64,
    ) {
        let PolicyEngine::Ofc(ofc) = &mut self.policy else { return };
        if q_in < ofc.thresholds().xoff_c {
            return; // Algorithm 1 line 3: nothing to decide below X^c_OFF.
        }
        let p = priority.index();
        let targets = (0..self.ports.len()).filter(|&o| egress & (1u64 << o) != 0);
        let Some((out, q_out)) = targets.map(|o| (o, self.buffers.egress(o, p).bytes)).max_by_key(|&(_, bytes)| bytes)
        else {
            return;
        };
        let arrival = Arrival {
            ingress: port,
            priority,
            flow,
            q_in,
            egress: out,
            q_out,
            egress_coarse_paused: self.ports[out].peer_pause.is_paused(now, priority),
        };
        ofc.on_arrival(&arrival, &mut PolicyActions::new(now, &mut self.xoff));
    }
}
