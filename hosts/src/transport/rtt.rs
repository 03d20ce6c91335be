//! RTT samples at the sender, as a NIC with hardware timestamps takes them (TIMELY §3, Swift
//! §3): the time each in-flight segment left, and on an ACK that covers new data the time
//! since the newest segment it acknowledges left. No echo is needed.

use pfcswitch_link::time::Instant;
use std::time::Duration;

/// When each in-flight segment was sent, in a ring indexed by sequence number modulo its
/// length, the window: a connection never has a segment at or beyond `base + window` in
/// flight, so the slots of `[base, base + window)` are distinct and a segment's slot is not
/// reused before it is acknowledged. Allocated once, at the first send.
#[derive(Clone, Debug, Default)]
pub(super) struct SendTimes {
    /// `None`: sent more than once (Karn's rule: its RTT is ambiguous), or never.
    slots: Vec<Option<Instant>>,
}

impl SendTimes {
    /// Segment `seq` left at `now`; `retransmission`: not for the first time.
    pub(super) fn sent(&mut self, seq: u32, now: Instant, retransmission: bool, window: u32) {
        if self.slots.is_empty() {
            self.slots = vec![None; window.max(1) as usize];
        }
        let len = self.slots.len();
        self.slots[seq as usize % len] = (!retransmission).then_some(now);
    }

    /// The RTT sample of an acknowledgement at `now` whose newest acknowledged segment is
    /// `newest`: none if that segment was retransmitted (Karn's rule) or never sent.
    pub(super) fn sample(&self, now: Instant, newest: u32) -> Option<Duration> {
        let len = self.slots.len();
        let sent = (len > 0).then(|| self.slots[newest as usize % len]).flatten()?;
        Some(now.saturating_duration_since(sent))
    }
}
