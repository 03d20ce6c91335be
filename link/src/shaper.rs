//! The wire at a port's speed: what a frame occupies on it and a token-bucket shaper that
//! serialises frames at that speed (veth has no speed of its own).

use crate::time::Instant;
use crate::units::BitRate;
use pfcswitch_wire::MIN_FRAME_LEN;
use std::time::Duration;

/// Bytes on the wire around a frame's bytes: 7 B preamble + 1 B SFD + 12 B inter-frame gap,
/// and the 4 B FCS that frames in memory lack.
pub const WIRE_OVERHEAD: u64 = 24;

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
    /// `free_at` ÷ speed rounded up, in ns: the first instant the wire is free. Kept beside
    /// it so that the per-event questions (ready? when?) need no 128-bit division.
    ready_ns: u64,
    /// The burst credit, in whole nanoseconds.
    burst_ns: u64,
}

impl Shaper {
    pub fn new(speed: BitRate, burst: Duration) -> Shaper {
        let burst_ns = u64::try_from(burst.max(Duration::from_nanos(1)).as_nanos()).unwrap_or(u64::MAX);
        Shaper { speed, free_at: 0, ready_ns: 0, burst_ns }
    }

    pub fn speed(&self) -> BitRate {
        self.speed
    }

    /// Changes the speed from the next frame on; the frame on the wire keeps its end time.
    pub fn set_speed(&mut self, speed: BitRate) {
        let old = self.speed;
        let rescale = |scaled: u128| scaled * u128::from(speed.bps()) / u128::from(old.bps());
        self.speed = speed;
        self.set_free_at(rescale(self.free_at));
    }

    fn set_free_at(&mut self, free_at: u128) {
        self.free_at = free_at;
        self.ready_ns = u64::try_from(free_at.div_ceil(u128::from(self.speed.bps()))).unwrap_or(u64::MAX);
    }

    /// The earliest time the next frame may start.
    pub fn ready_at(&self) -> Instant {
        Instant::from_nanos(self.ready_ns)
    }

    /// Whether a frame may start at `now`: `free_at ≤ now × speed`, which for a whole
    /// number of nanoseconds is `now ≥ ⌈free_at ÷ speed⌉`.
    pub fn is_ready(&self, now: Instant) -> bool {
        self.ready_ns <= now.as_nanos()
    }

    /// Books the wire for a frame of `len` bytes starting now (the caller checked
    /// [`Shaper::is_ready`]).
    ///
    /// This runs for every frame sent, so `ready_ns` is carried forward with one 64-bit
    /// division instead of a 128-bit one (a library call on x86-64): the start is either
    /// `free_at`, `slack` short of `ready_ns` × speed, or the burst's floor, a whole number
    /// of nanoseconds.
    pub fn send(&mut self, now: Instant, len: usize) {
        let speed = self.speed.bps();
        let floor_ns = now.as_nanos().saturating_sub(self.burst_ns);
        let (start_ns, slack) = if self.free_at >= u128::from(floor_ns) * u128::from(speed) {
            // < speed: `ready_ns` is `free_at` ÷ speed rounded up.
            (self.ready_ns, (u128::from(self.ready_ns) * u128::from(speed) - self.free_at) as u64)
        } else {
            (floor_ns, 0)
        };
        let length = wire_bytes(len) * 8 * 1_000_000_000;
        let (whole, part) = (length / speed, length % speed);
        self.free_at = u128::from(start_ns) * u128::from(speed) - u128::from(slack) + u128::from(length);
        self.ready_ns = start_ns + whole + u64::from(part > slack);
    }

    /// Nothing was ready to send at `now`: time the wire idles from here on is no credit. The
    /// burst credit is for a datapath that woke late while frames waited, not for a port that
    /// had nothing to send: a frame after a pause in traffic starts no earlier than it arrives
    /// (less the nanosecond always credited, so that a shaper without credit, the simulator's,
    /// times every frame as it did without resting).
    pub fn rest(&mut self, now: Instant) {
        // The nanosecond every send is credited (see the type's doc) stays credited: the wire
        // is free from now − 1 ns on, unless it is booked beyond that. `free_at ≤ (now − 1) ×
        // speed` exactly when `ready_ns ≤ now − 1`, so the usual case needs no arithmetic.
        let on_time = now.as_nanos().saturating_sub(1);
        if self.ready_ns <= on_time {
            self.free_at = u128::from(on_time) * u128::from(self.speed.bps());
            self.ready_ns = on_time;
        }
    }

    /// Keeps the wire idle for `idle` more after the frame booked last (a gap in a flow's
    /// arrivals).
    pub fn idle(&mut self, idle: Duration) {
        self.set_free_at(self.free_at + idle.as_nanos() * u128::from(self.speed.bps()));
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
    fn ready_stays_the_rounded_up_free_time_through_sends_early_late_and_rests() {
        for speed in [BitRate::mbps(7), BitRate::gbps(25), BitRate::gbps(400)] {
            let mut shaper = Shaper::new(speed, Duration::from_micros(3));
            let (mut now, mut seed) = (0u64, 0x9e37_79b9_7f4a_7c15u64);
            for _ in 0..10_000 {
                seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                // Sometimes on time, sometimes late by up to twice the burst credit.
                now = now.max(shaper.ready_at().as_nanos()) + (seed >> 33) % 6_000 * u64::from(seed & 1 == 0);
                if seed & 6 == 6 {
                    shaper.rest(Instant::from_nanos(now));
                }
                shaper.send(Instant::from_nanos(now), 60 + (seed >> 40) as usize % 1455);
                let exact = shaper.free_at.div_ceil(u128::from(speed.bps()));
                assert_eq!(u128::from(shaper.ready_at().as_nanos()), exact, "at {speed:?}");
            }
        }
    }

    #[test]
    fn ready_is_the_first_whole_nanosecond_the_wire_is_free() {
        // 7 Mbit/s does not divide a second into whole nanoseconds per bit: every frame ends
        // between two nanoseconds, and the wire is free at the later one.
        let mut shaper = Shaper::new(BitRate::mbps(7), Duration::ZERO);
        let mut now = Instant::ZERO;
        for len in [60, 61, 1500, 99, 1514] {
            shaper.send(now, len);
            let ready = shaper.ready_at();
            let exact = shaper.free_at;
            assert!(u128::from(ready.as_nanos()) * 7_000_000 >= exact);
            assert!(u128::from(ready.as_nanos() - 1) * 7_000_000 < exact);
            assert!(shaper.is_ready(ready) && !shaper.is_ready(Instant::from_nanos(ready.as_nanos() - 1)));
            now = ready;
            shaper.rest(now);
            assert_eq!(shaper.ready_at(), ready, "a wire that was just booked is not moved by a rest");
        }
    }

    #[test]
    fn an_idle_wire_earns_no_credit() {
        let mut shaper = Shaper::new(BitRate::mbps(100), Duration::from_millis(2));
        shaper.send(Instant::ZERO, 1500);
        // Nothing to send at 1.5 ms: a frame that comes then starts then (but for the nanosecond
        // always credited), not 1.5 ms earlier,
        // and the one after it waits its turn.
        shaper.rest(Instant::from_nanos(1_500_000));
        shaper.send(Instant::from_nanos(1_500_000), 1500);
        assert!(!shaper.is_ready(Instant::from_nanos(1_500_000)));
        assert_eq!(shaper.ready_at(), Instant::from_nanos(1_499_999 + 121_920));
        // Without the rest, the same frame would have been dated back by the whole credit.
        let mut credited = Shaper::new(BitRate::mbps(100), Duration::from_millis(2));
        credited.send(Instant::ZERO, 1500);
        credited.send(Instant::from_nanos(1_500_000), 1500);
        assert!(credited.is_ready(Instant::from_nanos(1_500_000)));
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
}
