//! RTT samples at the sender, as a NIC with hardware timestamps takes them (TIMELY §3, Swift
//! §3): the time each in-flight segment left, and on an ACK that covers new data the time
//! since the newest segment it acknowledges left. No echo is needed.

use pfcswitch_link::time::Instant;
use std::collections::VecDeque;
use std::time::Duration;

/// When each unacknowledged segment was sent, from the first unacknowledged one on: as many
/// entries as segments in flight, so a connection without a window (`window = u32::MAX`)
/// costs what it sends, and the deque, once grown, allocates no more.
#[derive(Clone, Debug, Default)]
pub(super) struct SendTimes {
    /// The sequence number of `times[0]`.
    first: u32,
    /// `None`: sent more than once (Karn's rule: its RTT is ambiguous).
    times: VecDeque<Option<Instant>>,
}

impl SendTimes {
    /// Segment `seq` left at `now`; `retransmission`: not for the first time.
    pub(super) fn sent(&mut self, seq: u32, now: Instant, retransmission: bool) {
        if self.times.is_empty() {
            self.first = seq;
        }
        let Some(at) = seq.checked_sub(self.first).map(|at| at as usize) else { return };
        let time = (!retransmission).then_some(now);
        match at.cmp(&self.times.len()) {
            std::cmp::Ordering::Less => self.times[at] = time,
            _ => {
                // Go-back-N never skips ahead; a gap would be segments never sent.
                self.times.resize(at, None);
                self.times.push_back(time);
            }
        }
    }

    /// The RTT sample of an acknowledgement at `now` whose newest acknowledged segment is
    /// `newest`: none if that segment was retransmitted (Karn's rule) or never sent.
    pub(super) fn sample(&self, now: Instant, newest: u32) -> Option<Duration> {
        let at = newest.checked_sub(self.first)? as usize;
        let sent = (*self.times.get(at)?)?;
        Some(now.saturating_duration_since(sent))
    }

    /// Segments before `base` are acknowledged: their times go.
    pub(super) fn acknowledged(&mut self, base: u32) {
        let done = (base.saturating_sub(self.first) as usize).min(self.times.len());
        self.times.drain(..done);
        self.first = self.first.max(base);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(n: u64) -> Instant {
        Instant::from_nanos(n * 1_000)
    }

    #[test]
    fn it_holds_the_segments_in_flight_and_no_more_whatever_the_window() {
        let mut times = SendTimes::default();
        for seq in 0..1_000u32 {
            times.sent(seq, us(u64::from(seq)), false);
            if seq >= 10 {
                times.acknowledged(seq - 9);
            }
        }
        assert_eq!(times.times.len(), 10, "ten in flight");
        assert_eq!(times.sample(us(1_005), 995), Some(Duration::from_micros(10)), "sent at 995 µs");
        assert_eq!(times.sample(us(1_005), 989), None, "acknowledged already");
        times.sent(995, us(1_006), true);
        assert_eq!(times.sample(us(1_010), 995), None, "Karn: sent twice");
        times.acknowledged(2_000);
        assert!(times.times.is_empty());
        times.sent(2_000, us(2_000), false);
        assert_eq!(times.sample(us(2_004), 2_000), Some(Duration::from_micros(4)));
    }
}
