//! Egress scheduling: a token-bucket shaper at the port speed and a scheduler that serves
//! strict priorities first, then the others by weighted deficit round robin.

use crate::config::WIRE_OVERHEAD;
use crate::time::Instant;
use crate::units::BitRate;
use crate::wire::MIN_FRAME_LEN;
use std::time::Duration;

/// Bytes a frame of `len` bytes (without FCS) occupies on the wire: padded to 60, plus FCS,
/// preamble and inter-frame gap.
pub fn wire_bytes(len: usize) -> u64 {
    len.max(MIN_FRAME_LEN) as u64 + WIRE_OVERHEAD
}

/// Paces an egress at its configured speed (veth has none of its own).
///
/// Time is kept exactly, in units of ns × bit/s, so rounding never accumulates: a saturated
/// port carries exactly its speed. Up to `burst` of unused time is credited, so a datapath
/// that wakes late can catch up without exceeding the long-run rate; at least 1 ns is always
/// credited, since callers can only be on time to the nanosecond.
#[derive(Clone, Debug)]
pub struct Shaper {
    speed: BitRate,
    /// When the wire is free, × speed.
    free_at: u128,
    burst: u128,
}

impl Shaper {
    pub fn new(speed: BitRate, burst: Duration) -> Shaper {
        let burst = burst.max(Duration::from_nanos(1));
        Shaper { speed, free_at: 0, burst: burst.as_nanos() * u128::from(speed.bps()) }
    }

    pub fn speed(&self) -> BitRate {
        self.speed
    }

    /// Changes the speed from the next frame on; the frame on the wire keeps its end time.
    pub fn set_speed(&mut self, speed: BitRate) {
        let rescale = |scaled: u128| scaled * u128::from(speed.bps()) / u128::from(self.speed.bps());
        self.free_at = rescale(self.free_at);
        self.burst = rescale(self.burst);
        self.speed = speed;
    }

    fn scaled(&self, now: Instant) -> u128 {
        u128::from(now.as_nanos()) * u128::from(self.speed.bps())
    }

    /// The earliest time the next frame may start.
    pub fn ready_at(&self) -> Instant {
        Instant::from_nanos(u64::try_from(self.free_at.div_ceil(u128::from(self.speed.bps()))).unwrap_or(u64::MAX))
    }

    pub fn is_ready(&self, now: Instant) -> bool {
        self.free_at <= self.scaled(now)
    }

    /// Books the wire for a frame of `len` bytes starting now (the caller checked
    /// [`Shaper::is_ready`]).
    pub fn send(&mut self, now: Instant, len: usize) {
        let start = self.free_at.max(self.scaled(now).saturating_sub(self.burst));
        self.free_at = start + u128::from(wire_bytes(len) * 8) * 1_000_000_000;
    }

    /// Keeps the wire idle for `idle` more after the frame booked last (a gap in a flow's
    /// arrivals).
    pub fn idle(&mut self, idle: Duration) {
        self.free_at += idle.as_nanos() * u128::from(self.speed.bps());
    }
}

/// Per-port choice of the next priority to send.
#[derive(Clone, Debug)]
pub struct Scheduler {
    /// Priorities served strictly (bit n = priority n), higher number first.
    strict: u8,
    quantum: [u32; 8],
    deficit: [u32; 8],
    /// The WDRR priority whose turn it is, if any.
    current: Option<usize>,
    /// Where the round continues after `current`.
    next: usize,
}

impl Scheduler {
    /// `weights[p] == 0` makes priority p strict. A quantum is `weight × max_frame` bytes,
    /// so one quantum always covers the head frame (DRR's O(1) condition).
    pub fn new(weights: [u32; 8], max_frame: u32) -> Scheduler {
        let strict = (0..8).filter(|&p| weights[p] == 0).fold(0u8, |mask, p| mask | 1 << p);
        Scheduler { strict, quantum: weights.map(|w| w * max_frame), deficit: [0; 8], current: None, next: 0 }
    }

    /// Chooses among `eligible` priorities (backlogged and not paused); `head_len(p)` is the
    /// length of priority p's head frame. The caller must then send that frame and report
    /// it with [`Scheduler::sent`].
    pub fn pick(&mut self, eligible: u8, head_len: impl Fn(usize) -> u32) -> Option<usize> {
        let strict = eligible & self.strict;
        if strict != 0 {
            return Some(7 - strict.leading_zeros() as usize);
        }
        let weighted = eligible & !self.strict;
        if weighted == 0 {
            return None;
        }
        loop {
            if let Some(p) = self.current {
                if weighted & (1 << p) != 0 {
                    if head_len(p) <= self.deficit[p] {
                        return Some(p);
                    }
                } else {
                    // Empty or paused: its turn ends without credit carried over.
                    self.deficit[p] = 0;
                }
                self.current = None;
                self.next = (p + 1) % 8;
            }
            let p = (0..8).map(|i| (self.next + i) % 8).find(|&p| weighted & (1 << p) != 0).expect("weighted != 0");
            self.deficit[p] += self.quantum[p];
            self.current = Some(p);
        }
    }

    /// Records that priority `p` sent `len` bytes; `now_empty` if its queue drained.
    pub fn sent(&mut self, p: usize, len: u32, now_empty: bool) {
        if self.strict & (1 << p) != 0 {
            return;
        }
        self.deficit[p] = self.deficit[p].saturating_sub(len);
        if now_empty {
            self.deficit[p] = 0;
            if self.current == Some(p) {
                self.current = None;
                self.next = (p + 1) % 8;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shaper_is_exact_over_many_frames() {
        let mut shaper = Shaper::new(BitRate::gbps(10), Duration::ZERO);
        let mut now = Instant::ZERO;
        for _ in 0..1_000_000 {
            now = now.max(shaper.ready_at());
            assert!(shaper.is_ready(now));
            shaper.send(now, 60);
        }
        // 1e6 × 84 B × 8 / 10 Gbit/s = 67.2 ms, to the nanosecond.
        assert_eq!(shaper.ready_at(), Instant::from_nanos(67_200_000));
    }

    #[test]
    fn burst_credit_lets_a_late_sender_catch_up_but_no_further() {
        let mut shaper = Shaper::new(BitRate::gbps(1), Duration::from_micros(10));
        shaper.send(Instant::ZERO, 1500); // busy until 12.192 µs
        let late = Instant::from_nanos(20_000);
        shaper.send(late, 1500);
        assert_eq!(shaper.ready_at(), Instant::from_nanos(24_384), "starts at 12.192 µs: within the 10 µs credit");
        let very_late = Instant::from_nanos(1_000_000);
        shaper.send(very_late, 1500);
        assert_eq!(shaper.ready_at(), Instant::from_nanos(1_000_000 - 10_000 + 12_192));
    }

    fn serve(scheduler: &mut Scheduler, backlog: [u32; 8], rounds: usize) -> [u64; 8] {
        let mut sent = [0u64; 8];
        let eligible = (0..8).filter(|&p| backlog[p] > 0).fold(0u8, |m, p| m | 1 << p);
        for _ in 0..rounds {
            let p = scheduler.pick(eligible, |p| backlog[p]).unwrap();
            scheduler.sent(p, backlog[p], false);
            sent[p] += u64::from(backlog[p]);
        }
        sent
    }

    #[test]
    fn strict_priorities_come_first_highest_number_first() {
        let mut scheduler = Scheduler::new([1, 1, 0, 1, 1, 0, 1, 1], 1518);
        assert_eq!(scheduler.pick(0b0010_0101, |_| 100), Some(5));
        assert_eq!(scheduler.pick(0b0000_0101, |_| 100), Some(2));
        assert_eq!(scheduler.pick(0b0000_0001, |_| 100), Some(0));
        assert_eq!(scheduler.pick(0, |_| 100), None);
    }

    #[test]
    fn wdrr_shares_bytes_by_weight_whatever_the_frame_sizes() {
        let mut scheduler = Scheduler::new([1, 3, 1, 1, 1, 1, 1, 1], 1518);
        let sent = serve(&mut scheduler, [64, 1500, 0, 0, 0, 0, 0, 0], 200_000);
        let share = sent[1] as f64 / (sent[0] + sent[1]) as f64;
        assert!((share - 0.75).abs() < 0.005, "share of weight 3 vs 1: {share}");
    }
}
