//! The pipeline between ingress and egress: frames leave the ingress FIFOs round robin at
//! the pipeline's rate onto their egress queues, where ECN, FECN, QCN and the policy see
//! them; a frame's hold on its ingress bytes ends with its last copy.

use super::Switch;
use crate::buffer::Descriptor;
use crate::config::EgressFull;
use crate::counters::DropReason;
use crate::ecn::MarkAt;
use crate::policy::{EgressEvent, PolicyActions};
use crate::port_set::ports_in;
use crate::qcn::Placement;
use pfcswitch_link::time::Instant;
use pfcswitch_wire::Pcp;

impl Switch {
    /// Moves frames from the ingress FIFOs to egress queues, as far as the rate and (in stop
    /// mode) egress room allow.
    pub(super) fn run_pipeline(&mut self, now: Instant) {
        while self.pipeline.waiting > 0 {
            if self.pipeline.interval.is_some() && now < self.pipeline.next_slot {
                return;
            }
            let port = match self.pipeline.blocked {
                Some(port) => port,
                None => {
                    // Round robin from `next_port`, without a division per step.
                    let fifos = &self.pipeline.fifos;
                    let start = self.pipeline.next_port;
                    (start..fifos.len()).chain(0..start).find(|&p| !fifos[p].is_empty()).expect("waiting > 0")
                }
            };
            let index = *self.pipeline.fifos[port].front().expect("non-empty FIFO");
            let frame = *self.arena.get(index);
            if !self.pass_pipeline(now, port, index, &frame, 0) {
                return;
            }
            self.pipeline.fifos[port].pop_front();
            self.pipeline.waiting -= 1;
            if let Some(interval) = self.pipeline.interval {
                self.pipeline.next_slot = self.pipeline.next_slot.max(now) + interval;
            }
        }
    }

    /// Frame `index`, at the head of `port`'s FIFO, through the pipeline onto its egress
    /// queues. Returns false when it must wait (stop mode, no room), blocking the pipeline.
    /// `frame` is its descriptor as the caller holds it: a frame that passes on arrival does
    /// not read back the slot just written, which stalls on the narrower stores that wrote it.
    /// `fits`: the egress ports whose queue is known to have room for it (see `forward`).
    pub(super) fn pass_pipeline(
        &mut self,
        now: Instant,
        port: usize,
        index: u32,
        frame: &Descriptor,
        fits: u64,
    ) -> bool {
        if !self.forward(now, index, frame, fits) {
            self.pipeline.blocked = Some(port);
            return false;
        }
        self.pipeline.blocked = None;
        self.pipeline.next_port = if port + 1 == self.ports.len() { 0 } else { port + 1 };
        true
    }

    /// Queues a processed frame on its egress ports. Returns false, having changed nothing,
    /// when the pipeline must stall (stop mode and some queue lacks room). `fits`: ports
    /// whose queue the caller found to have room for the frame, with nothing changed since,
    /// so they are not asked again.
    pub(super) fn forward(&mut self, now: Instant, index: u32, frame: &Descriptor, fits: u64) -> bool {
        let (p, len) = (usize::from(frame.priority), frame.len);
        // Its egress ports by their bits: a unicast frame visits one port, not every port.
        let targets = ports_in(frame.egress & self.all_ports());
        if self.pipeline.egress_full == EgressFull::Stop && !targets.clone().all(|o| self.buffers.fits(o, p, len)) {
            return false;
        }
        self.counters[usize::from(frame.ingress)].priority[p].forwarded += 1;
        let mut copies = 0u8;
        for egress in targets {
            if self.links_down & (1u64 << egress) != 0 {
                self.drop_assigned(egress, p, DropReason::LinkDown);
                continue;
            }
            if self.pfcwd.drops(egress, p) {
                self.pfcwd.count_tx_drop(egress, p);
                self.drop_assigned(egress, p, DropReason::Pfcwd);
                continue;
            }
            if fits & (1 << egress) == 0 && !self.buffers.fits(egress, p, len) {
                self.drop_assigned(egress, p, DropReason::EgressFull);
                continue;
            }
            self.counters[egress].priority[p].assigned += 1;
            if self.buffers.backlog(egress) == 0 {
                // The port had nothing to send until now: its idle time is no credit.
                self.ports[egress].shaper.rest(now);
            }
            let queue_bytes = self.buffers.enqueue(egress, p, index, len);
            copies += 1;
            if frame.ecn_markable()
                && self
                    .ecn
                    .as_mut()
                    .is_some_and(|ecn| ecn.mark_at() == MarkAt::Enqueue && ecn.marks(egress, queue_bytes))
            {
                self.arena.get_mut(index).ce = true;
                self.counters[egress].priority[p].ecn_marked += 1;
            }
            if let Some(fecn) = &mut self.fecn {
                fecn.arrival(egress, Pcp::from_low_bits(frame.priority), len);
            }
            self.qcn_arrival(
                now,
                Placement::Output,
                (egress, Pcp::from_low_bits(frame.priority)),
                len,
                queue_bytes,
                index,
            );
            let event = || EgressEvent {
                ingress: usize::from(frame.ingress),
                egress,
                priority: Pcp::from_low_bits(frame.priority),
                len,
                flow: frame.flow,
                queue_bytes,
                enqueued: true,
            };
            self.policy.on_egress(event, &mut PolicyActions::new(now, &mut self.xoff));
            self.settle(egress, p);
            self.watch_queue(now, egress, p);
        }
        if copies == 0 {
            self.release(now, index, frame);
            self.freed.push_back(frame.handle);
        } else {
            self.arena.get_mut(index).copies = copies;
        }
        true
    }

    /// Ends the switch's hold on `frame`, at `index`: its ingress bytes are released.
    pub(super) fn release(&mut self, now: Instant, index: u32, frame: &Descriptor) {
        let (ingress, priority) = (usize::from(frame.ingress), Pcp::from_low_bits(frame.priority));
        let level = self.buffers.sub_ingress(ingress, priority.index(), frame.len);
        if self.lossless & priority.mask() != 0 {
            // Every policy pauses lossless priorities only, and only looks at theirs.
            self.policy.on_ingress(ingress, priority, level, &mut PolicyActions::new(now, &mut self.xoff));
        }
        self.arena.release(index);
        self.lossless_held -= u32::from(frame.lossless);
    }
}
