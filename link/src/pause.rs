//! The receiving side of 802.3x PAUSE and 802.1Qbb PFC: which priorities a peer has paused
//! on one egress (a switch port or a host NIC), until when, and for how long in total.

use crate::time::Instant;
use crate::units::BitRate;
use pfcswitch_wire::{MacControlRepr, Pcp};
use std::time::Duration;

/// Pause timers of one egress, one per priority.
#[derive(Clone, Debug)]
pub struct PeerPause {
    speed: BitRate,
    until: [Instant; 8],
    /// Start of the current (or last) paused interval.
    since: [Instant; 8],
    /// Paused time of intervals already closed by a newer frame.
    closed: [Duration; 8],
    /// No timer runs past it (a resume can leave it later than every timer): from then on no
    /// priority is paused, which the transmit path checks with one comparison a frame.
    latest: Instant,
}

impl PeerPause {
    pub fn new(speed: BitRate) -> PeerPause {
        PeerPause {
            speed,
            until: [Instant::ZERO; 8],
            since: [Instant::ZERO; 8],
            closed: [Duration::ZERO; 8],
            latest: Instant::ZERO,
        }
    }

    /// Obeys a received PAUSE (every priority) or PFC (its enabled classes): each timer is
    /// replaced by quanta × 512 bit times from `now`; 0 resumes at once.
    pub fn apply(&mut self, now: Instant, repr: &MacControlRepr) {
        match repr {
            MacControlRepr::Pause { quanta } => Pcp::ALL.into_iter().for_each(|p| self.set(now, p, *quanta)),
            MacControlRepr::Pfc(pfc) => pfc.classes().for_each(|(p, quanta)| self.set(now, p, quanta)),
        }
    }

    fn set(&mut self, now: Instant, priority: Pcp, quanta: u16) {
        let p = priority.index();
        if self.until[p] > now {
            self.closed[p] += now - self.since[p];
        } else {
            self.closed[p] += self.until[p].saturating_duration_since(self.since[p]);
        }
        self.since[p] = now;
        self.until[p] = now + self.speed.pause_duration(quanta);
        self.latest = self.latest.max(self.until[p]);
    }

    #[inline]
    pub fn is_paused(&self, now: Instant, priority: Pcp) -> bool {
        self.until[priority.index()] > now
    }

    /// Bit n set: priority n is paused at `now`.
    #[inline]
    pub fn paused_mask(&self, now: Instant) -> u8 {
        if now >= self.latest {
            return 0;
        }
        self.until.iter().enumerate().fold(0, |mask, (p, &until)| mask | (u8::from(until > now) << p))
    }

    /// When priority `priority` resumes (in the past if it is not paused).
    pub fn paused_until(&self, priority: Pcp) -> Instant {
        self.until[priority.index()]
    }

    /// Total time `priority` has been paused up to `now`.
    pub fn paused_time(&self, now: Instant, priority: Pcp) -> Duration {
        let p = priority.index();
        let end = self.until[p].min(now);
        self.closed[p] + end.saturating_duration_since(self.since[p])
    }

    /// Forgets accumulated paused time (counters reset); current pauses stay in force.
    pub fn reset_time(&mut self, now: Instant) {
        for p in 0..8 {
            self.closed[p] = Duration::ZERO;
            self.since[p] = now.min(self.until[p]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pfcswitch_wire::PfcRepr;

    fn pcp(n: u8) -> Pcp {
        Pcp::new(n).unwrap()
    }

    #[test]
    fn pfc_pauses_only_enabled_classes_for_quanta_times_512_bit_times() {
        let mut pause = PeerPause::new(BitRate::gbps(1));
        let t0 = Instant::from_nanos(1_000);
        pause.apply(t0, &MacControlRepr::Pfc(PfcRepr::default().with_class(pcp(3), 1000)));
        assert_eq!(pause.paused_mask(t0), 0b0000_1000);
        assert_eq!(pause.paused_until(pcp(3)), t0 + Duration::from_nanos(512_000));
        assert!(pause.is_paused(t0 + Duration::from_nanos(511_999), pcp(3)));
        assert!(!pause.is_paused(t0 + Duration::from_nanos(512_000), pcp(3)));
        assert_eq!(pause.paused_time(t0 + Duration::from_secs(1), pcp(3)), Duration::from_nanos(512_000));
    }

    #[test]
    fn zero_resumes_and_an_empty_vector_changes_nothing() {
        let mut pause = PeerPause::new(BitRate::mbps(100));
        let t0 = Instant::from_nanos(0);
        pause.apply(t0, &MacControlRepr::Pfc(PfcRepr::default().with_class(pcp(3), 65535)));
        let t1 = Instant::from_nanos(10_000);
        pause.apply(t1, &MacControlRepr::Pfc(PfcRepr { enable: 0, quanta: [0; 8] }));
        assert!(pause.is_paused(t1, pcp(3)));
        pause.apply(t1, &MacControlRepr::Pfc(PfcRepr::default().with_class(pcp(3), 0)));
        assert!(!pause.is_paused(t1, pcp(3)));
        assert_eq!(pause.paused_time(Instant::from_nanos(50_000), pcp(3)), Duration::from_nanos(10_000));
    }

    #[test]
    fn the_mask_follows_each_timer_after_a_resume_shortened_the_longest() {
        let mut pause = PeerPause::new(BitRate::gbps(1));
        let t0 = Instant::from_nanos(0);
        pause.apply(t0, &MacControlRepr::Pfc(PfcRepr::default().with_class(pcp(3), 1000).with_class(pcp(5), 100)));
        assert_eq!(pause.paused_mask(Instant::from_nanos(50_000)), 0b0010_1000);
        assert_eq!(pause.paused_mask(Instant::from_nanos(60_000)), 0b0000_1000, "priority 5 resumed at 51.2 µs");
        pause.apply(Instant::from_nanos(70_000), &MacControlRepr::Pfc(PfcRepr::default().with_class(pcp(3), 0)));
        assert_eq!(pause.paused_mask(Instant::from_nanos(70_000)), 0, "resumed before its 512 µs ran out");
        pause.apply(Instant::from_nanos(80_000), &MacControlRepr::Pfc(PfcRepr::default().with_class(pcp(1), 10)));
        assert_eq!(pause.paused_mask(Instant::from_nanos(84_000)), 0b0000_0010);
        assert_eq!(pause.paused_mask(Instant::from_nanos(85_120)), 0);
    }

    #[test]
    fn refreshes_extend_and_paused_time_counts_the_union() {
        let mut pause = PeerPause::new(BitRate::gbps(1));
        let frame = MacControlRepr::Pause { quanta: 100 }; // 51.2 µs
        pause.apply(Instant::from_nanos(0), &frame);
        pause.apply(Instant::from_nanos(30_000), &frame);
        assert_eq!(pause.paused_mask(Instant::from_nanos(60_000)), 0xFF, "PAUSE pauses every priority");
        assert_eq!(pause.paused_time(Instant::from_nanos(1_000_000), pcp(0)), Duration::from_nanos(30_000 + 51_200));
        pause.apply(Instant::from_nanos(2_000_000), &frame);
        assert_eq!(
            pause.paused_time(Instant::from_nanos(3_000_000), pcp(7)),
            Duration::from_nanos(30_000 + 2 * 51_200)
        );
    }
}
