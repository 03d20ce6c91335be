//! The transmit path: what the polled port sends next (control frames before data), writing
//! the control frames out, and the handles the switch gives back.

use super::{ControlFrame, PauseFrame, Switch, Tx};
use crate::buffer::Descriptor;
use crate::ecn::MarkAt;
use crate::policy::{EgressEvent, PolicyActions, PolicyEngine};
use pfcswitch_link::time::Instant;
use pfcswitch_wire::{IntEgress, MacControlRepr, Pcp, build_mac_control_frame, build_ofc_frame};

impl Switch {
    /// The next transmission on `port` at `now`, if its wire is free and something may go:
    /// a pending PFC frame first, then the scheduler's choice among unpaused priorities.
    /// Nothing leaves a port whose link is down.
    pub fn poll_tx(&mut self, now: Instant, port: usize) -> Option<Tx> {
        if !self.link_is_up(port) || !self.ports[port].shaper.is_ready(now) {
            return None;
        }
        let has_control = self.has_control(port);
        if self.buffers.port_is_empty(port) && !has_control {
            // Nothing at all to send (the common case on a large fabric): what the full
            // path below would conclude, without looking at eight queues.
            self.ports[port].shaper.rest(now);
            return None;
        }
        if let Some(control) = has_control.then(|| self.send_control(now, port)).flatten() {
            return Some(control);
        }
        let eligible = self.buffers.backlog(port) & !self.ports[port].peer_pause.paused_mask(now);
        let (buffers, arena) = (&self.buffers, &self.arena);
        let head_len = |p: usize| arena.get(buffers.head(port, p).expect("eligible queue has a head")).len;
        let Some(p) = self.ports[port].scheduler.pick(eligible, head_len) else {
            // The wire idles (nothing queued, or all of it paused): no credit for a burst later.
            self.ports[port].shaper.rest(now);
            return None;
        };
        let (frame, last) = self.take_head(now, port, p);
        let ce = frame.ce || self.marks_at_dequeue(port, &frame);
        self.settle(port, p);
        self.pfcwd.sent(port, p);
        let int = if self.int.is_some() { self.int_egress(now, port, &frame) } else { None };
        let wire_len = match int {
            Some(IntEgress::Push(_)) => frame.len + u32::from(frame.int.push_len()),
            _ => frame.len,
        };
        let state = &mut self.ports[port];
        state.scheduler.sent(p, frame.len, self.buffers.queue_len(port, p) == 0);
        state.shaper.send(now, wire_len as usize);
        let counters = &mut self.counters[port].priority[p];
        counters.tx_frames += 1;
        counters.tx_bytes += u64::from(frame.len);
        if self.pipeline.waiting > 0 {
            self.run_pipeline(now);
        }
        let mac = self.ports[port].mac;
        let mark = frame
            .probe
            .zip(self.fecn.as_mut())
            .map(|(rate, fecn)| fecn.mark(port, Pcp::from_low_bits(p as u8), mac, rate));
        let (handle, len) = (frame.handle, frame.len);
        // Without INT (almost every frame) the record's 64 bytes are not copied out.
        Some(match int {
            None => Tx::Data { handle, len, last, mark, ce, int: None },
            Some(_) => Tx::Data { handle, len, last, mark, ce, int },
        })
    }

    /// `[ecn] mark_at = "dequeue"`: whether `frame`, just taken from `port`'s queue, leaves
    /// behind a queue that marks it.
    fn marks_at_dequeue(&mut self, port: usize, frame: &Descriptor) -> bool {
        let Some(ecn) = self.ecn.as_mut().filter(|ecn| ecn.mark_at() == MarkAt::Dequeue && frame.ecn_markable()) else {
            return false;
        };
        let p = usize::from(frame.priority);
        let marked = ecn.marks(port, self.buffers.egress(port, p).bytes);
        self.counters[port].priority[p].ecn_marked += u64::from(marked);
        marked
    }

    /// The INT record (or flag) `frame` takes as it leaves `port`, if INT is on. Out of line,
    /// as the other features' work at dequeue: `poll_tx`'s own code is what every frame runs.
    #[inline(never)]
    fn int_egress(&mut self, now: Instant, port: usize, frame: &Descriptor) -> Option<IntEgress> {
        let int = self.int.as_mut()?;
        let queue_bytes = if int.reports_port() {
            (0..8).map(|p| self.buffers.egress(port, p).bytes).sum()
        } else {
            self.buffers.egress(port, usize::from(frame.priority)).bytes
        };
        let (ports, counters) = ((usize::from(frame.ingress), port), &mut self.counters[port].int);
        int.egress(now, ports, frame.priority, frame.len, frame.int, queue_bytes, counters)
    }

    /// The ports that may send (bit i: port i): link up, with frames queued or a frame of the
    /// switch's own (a PFC frame; under OFC or QCN every port, their outboxes are not tracked
    /// by port). [`Switch::poll_tx`] on any other port returns `None`, having only let its
    /// shaper rest, and [`Switch::poll_timeout`] passes it over: a 32-port switch touched by
    /// one frame need not visit 32 ports.
    #[inline]
    pub fn ports_with_work(&self) -> u64 {
        let own = match (&self.policy, &self.qcn) {
            (PolicyEngine::Ofc(_), _) | (_, Some(_)) => self.all_ports(),
            _ => self.xoff.pending_ports(),
        };
        (self.buffers.occupied_ports() | own) & self.all_ports() & !self.links_down
    }

    /// Whether the switch has a frame of its own to send on `port`: a PFC or OFC frame, or
    /// a CNM.
    pub(super) fn has_control(&self, port: usize) -> bool {
        self.xoff.is_pending(port)
            || matches!(&self.policy, PolicyEngine::Ofc(ofc) if ofc.has_frames(port))
            || self.qcn.as_ref().is_some_and(|qcn| qcn.has_cnm(port))
    }

    /// The switch's own next frame on `port`, if it has one, booked on the port's wire and
    /// counted. Cold and out of line: a pause is an event, not a frame of the data path, and
    /// `poll_tx`'s code stays half the size.
    #[cold]
    #[inline(never)]
    fn send_control(&mut self, now: Instant, port: usize) -> Option<Tx> {
        let control = self.poll_control(now, port)?;
        self.ports[port].shaper.send(now, control.wire_len());
        if let ControlFrame::Pause(PauseFrame { repr: MacControlRepr::Pfc(pfc), .. }) = control {
            for (class, _) in pfc.classes() {
                self.counters[port].priority[class.index()].pfc_tx += 1;
            }
        }
        Some(Tx::Control(control))
    }

    /// The next frame the switch makes for `port`: pause frames first, then CNMs.
    pub(super) fn poll_control(&mut self, now: Instant, port: usize) -> Option<ControlFrame> {
        if let Some(pause) = self.poll_pause(now, port) {
            return Some(ControlFrame::Pause(pause));
        }
        self.qcn.as_mut()?.poll_cnm(port).map(ControlFrame::Cnm)
    }

    /// Writes `frame`, polled from `port` (before the next poll there), into `buffer`, which
    /// holds at least [`ControlFrame::wire_len`] bytes; returns the length.
    pub fn emit_control(&self, port: usize, frame: &ControlFrame, buffer: &mut [u8]) -> usize {
        let frame = match frame {
            ControlFrame::Pause(frame) => frame,
            ControlFrame::Cnm(cnm) => return cnm.emit(buffer),
        };
        match (&frame.ofc, &self.policy) {
            (Some(ofc_frame), PolicyEngine::Ofc(ofc)) => {
                let flows = ofc.frame_flows(port, ofc_frame);
                build_ofc_frame(buffer, frame.src, ofc_frame.header, ofc_frame.quanta, flows.iter().copied())
            }
            _ => build_mac_control_frame(buffer, frame.src, frame.dst, &frame.repr),
        }
    }

    /// Takes the head frame off egress queue (port, p), tells the policy, and releases the
    /// frame if that was its last copy (returned as `true`).
    #[inline(always)]
    pub(super) fn take_head(&mut self, now: Instant, port: usize, p: usize) -> (Descriptor, bool) {
        let index = self.buffers.head(port, p).expect("a queue with frames has a head");
        let frame = *self.arena.get(index);
        let queue_bytes = self.buffers.dequeue(port, p, frame.len);
        let event = || EgressEvent {
            ingress: usize::from(frame.ingress),
            egress: port,
            priority: Pcp::from_low_bits(frame.priority),
            len: frame.len,
            flow: frame.flow,
            queue_bytes,
            enqueued: false,
        };
        self.policy.on_egress(event, &mut PolicyActions::new(now, &mut self.xoff));
        let copies = &mut self.arena.get_mut(index).copies;
        *copies -= 1;
        let last = *copies == 0;
        if last {
            self.release(now, index, &frame);
        }
        (frame, last)
    }

    /// A handle the switch accepted and then dropped (egress full in the pipeline).
    pub fn poll_free(&mut self) -> Option<u64> {
        self.freed.pop_front()
    }
}
