//! Time-driven work: when the switch next needs a call, and what expires then (XOFF
//! refreshes, OFC pauses, watchdog checks, FECN periods, the paced pipeline).

use super::Switch;
use crate::pfcwd::PfcwdEvent;
use pfcswitch_link::time::Instant;
use pfcswitch_wire::Pcp;

impl Switch {
    /// The earliest time at which `handle_timeout` or `poll_tx` has something to do; it may
    /// lie in the past, meaning now.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let mut next = self.xoff.next_timeout();
        let mut consider = |at: Instant| next = Some(next.map_or(at, |n: Instant| n.min(at)));
        if let Some(at) = self.pfcwd.next_timeout(|port, p| self.xoff.asserting_since(port, p)) {
            consider(at);
        }
        if let Some(at) = self.ofc().and_then(|ofc| ofc.next_timeout()) {
            consider(at);
        }
        if self.pipeline.waiting > 0 && self.pipeline.blocked.is_none() && self.pipeline.interval.is_some() {
            consider(self.pipeline.next_slot);
        }
        if let Some(fecn) = &self.fecn {
            consider(fecn.next_timeout());
        }
        let mut candidates = self.ports_with_work();
        while candidates != 0 {
            let index = candidates.trailing_zeros() as usize;
            candidates &= candidates - 1;
            let port = &self.ports[index];
            // Pause frames, OFC frames and CNMs: a CNM waiting behind a paused data priority
            // must not wait for the resume.
            let control = self.has_control(index);
            let backlog = self.buffers.backlog(index);
            if !control && backlog == 0 {
                continue;
            }
            let ready = port.shaper.ready_at();
            if control {
                consider(ready);
            }
            if let Some(resume) =
                Pcp::ALL.into_iter().filter(|p| backlog & p.mask() != 0).map(|p| port.peer_pause.paused_until(p)).min()
            {
                consider(ready.max(resume));
            }
        }
        next
    }

    pub fn handle_timeout(&mut self, now: Instant) {
        self.xoff.handle_timeout(now);
        // OFC: congested flows whose pause ran out without a refresh resume, as PFC's would.
        while let Some((port, priority)) = self.ofc().and_then(|ofc| ofc.expired(now)) {
            self.ofc_resume(port, priority, None);
        }
        let mut events = std::mem::take(&mut self.pfcwd_events);
        let (buffers, ports, xoff) = (&self.buffers, &self.ports, &self.xoff);
        let stuck = |port: usize, p: usize| {
            buffers.queue_len(port, p) > 0 && ports[port].peer_pause.is_paused(now, Pcp::from_low_bits(p as u8))
        };
        self.pfcwd.handle_timeout(now, stuck, |port, p| xoff.asserting_since(port, p), &mut events);
        for event in events.drain(..) {
            if let PfcwdEvent::Stormed { port, priority, action } = event {
                self.contain_storm(now, port, priority, action);
            }
        }
        self.pfcwd_events = events;
        if let Some(fecn) = &mut self.fecn {
            let buffers = &self.buffers;
            fecn.handle_timeout(now, |port, priority| buffers.egress(port, priority.index()).bytes);
        }
        self.run_pipeline(now);
    }
}
