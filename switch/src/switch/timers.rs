//! Time-driven work: when the switch next needs a call, and what expires then (XOFF
//! refreshes, OFC pauses, watchdog checks, FECN periods, the paced pipeline).

use super::Switch;
use crate::pfcwd::PfcwdEvent;
use crate::port_set::ports_in;
use pfcswitch_link::time::Instant;
use pfcswitch_wire::Pcp;

impl Switch {
    /// The earliest time at which `handle_timeout` or `poll_tx` has something to do; it may
    /// lie in the past, meaning now.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.earliest_deadline(|_| false)
    }

    /// Whether `handle_timeout` or `poll_tx` has something to do at `now`: `poll_timeout()`
    /// at or before `now`, found without computing the rest once one deadline is due (a
    /// busy port usually is, and the watchdog's deadlines cost a visit of every queue).
    pub fn is_due(&self, now: Instant) -> bool {
        self.earliest_deadline(|at| at <= now).is_some_and(|at| at <= now)
    }

    /// The least deadline, or the first one for which `enough` holds.
    fn earliest_deadline(&self, enough: impl Fn(Instant) -> bool) -> Option<Instant> {
        let mut next: Option<Instant> = None;
        let mut consider = |at: Instant| {
            let least = next.map_or(at, |n| n.min(at));
            next = Some(least);
            enough(least)
        };
        for index in ports_in(self.ports_with_work()) {
            let port = &self.ports[index];
            // Pause frames, OFC frames and CNMs: a CNM waiting behind a paused data priority
            // must not wait for the resume.
            let control = self.has_control(index);
            let backlog = self.buffers.backlog(index);
            if !control && backlog == 0 {
                continue;
            }
            let ready = port.shaper.ready_at();
            if control && consider(ready) {
                return next;
            }
            if let Some(resume) =
                Pcp::ALL.into_iter().filter(|p| backlog & p.mask() != 0).map(|p| port.peer_pause.paused_until(p)).min()
                && consider(ready.max(resume))
            {
                return next;
            }
        }
        let pipeline = (self.pipeline.waiting > 0 && self.pipeline.blocked.is_none())
            .then_some(self.pipeline.interval)
            .flatten()
            .map(|_| self.pipeline.next_slot);
        let timers = [
            self.xoff.next_timeout(),
            pipeline,
            self.ofc().and_then(|ofc| ofc.next_timeout()),
            self.fecn.as_ref().map(|fecn| fecn.next_timeout()),
        ];
        for at in timers.into_iter().flatten() {
            if consider(at) {
                return next;
            }
        }
        if let Some(at) = self.pfcwd.next_timeout(|port, p| self.xoff.asserting_since(port, p)) {
            consider(at);
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
