//! A flow's rate limit over time, for results and plots: the limit averaged over each bin
//! (weighted by how long it held), and the feedback messages (QCN's CNMs) the flow received
//! in each bin. Bins are the transport's goodput bins, counted from its epoch, so a flow's
//! limit and its goodput line up. [`RateLimiter`] is the shaper that enforces such a limit
//! with its trace, as QCN's reaction points and FECN's sources use it.

use pfcswitch_link::shaper::Shaper;
use pfcswitch_link::time::Instant;
use pfcswitch_link::units::BitRate;
use std::time::Duration;

/// A flow's rate limiter: a shaper whose speed is the limit, and that limit's trace.
#[derive(Clone, Debug)]
pub struct RateLimiter {
    shaper: Shaper,
    trace: RateTrace,
}

impl RateLimiter {
    /// Starts at `rate`; the trace shares the transport's bins (`epoch`, `bin`).
    pub fn new(rate: BitRate, epoch: Instant, bin: Duration) -> RateLimiter {
        RateLimiter { shaper: Shaper::new(rate, Duration::ZERO), trace: RateTrace::new(epoch, bin, rate) }
    }

    /// The limit is `rate` from `now` on.
    pub fn set_rate(&mut self, now: Instant, rate: BitRate) {
        self.shaper.set_speed(rate);
        self.trace.set_rate(now, rate);
    }

    /// Lets the flow send up to `burst` early after a late wake-up.
    pub fn set_burst(&mut self, burst: Duration) {
        self.shaper = Shaper::new(self.shaper.speed(), burst);
    }

    /// When the flow's next frame may go.
    pub fn ready_at(&self) -> Instant {
        self.shaper.ready_at()
    }

    /// The flow sent a frame of `len` bytes.
    pub fn send(&mut self, now: Instant, len: usize) {
        self.shaper.send(now, len);
    }

    pub fn rate(&self) -> BitRate {
        self.shaper.speed()
    }

    pub fn trace(&self) -> &RateTrace {
        &self.trace
    }

    pub fn trace_mut(&mut self) -> &mut RateTrace {
        &mut self.trace
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct RateTrace {
    epoch: Instant,
    bin: Duration,
    /// The rate in force since `since`.
    rate_bps: u64,
    since: Instant,
    /// The rate integrated over each bin up to `since`, in bits.
    bits: Vec<f64>,
    cnms: Vec<u32>,
}

impl RateTrace {
    pub fn new(epoch: Instant, bin: Duration, rate: BitRate) -> RateTrace {
        assert!(!bin.is_zero(), "bins have a width");
        RateTrace { epoch, bin, rate_bps: rate.bps(), since: epoch, bits: Vec::new(), cnms: Vec::new() }
    }

    /// The limit is `rate` from `now` on.
    pub fn set_rate(&mut self, now: Instant, rate: BitRate) {
        if rate.bps() != self.rate_bps {
            self.integrate(now);
            self.rate_bps = rate.bps();
        }
    }

    pub fn cnm_received(&mut self, now: Instant) {
        let bin = self.bin_of(now);
        if bin >= self.cnms.len() {
            self.cnms.resize(bin + 1, 0);
        }
        self.cnms[bin] += 1;
    }

    /// CNMs received per bin (up to the last bin with one).
    pub fn cnms(&self) -> &[u32] {
        &self.cnms
    }

    /// The mean limit in each bin that ended by `now`, in Mbit/s.
    pub fn mean_rates_mbps(&self, now: Instant) -> Vec<f64> {
        let mut whole = self.clone();
        whole.integrate(now);
        let complete = self.bin_of(now);
        whole.bits.resize(complete, 0.0);
        whole.bits.iter().map(|bits| bits / self.bin.as_secs_f64() / 1e6).collect()
    }

    fn bin_of(&self, at: Instant) -> usize {
        (at.saturating_duration_since(self.epoch).as_nanos() / self.bin.as_nanos()) as usize
    }

    /// Adds the rate in force from `since` to `now` to the bins it spans.
    fn integrate(&mut self, now: Instant) {
        let mut from = self.since.max(self.epoch);
        while from < now {
            let bin = self.bin_of(from);
            let bin_end = self.epoch + self.bin * (bin as u32 + 1);
            let to = bin_end.min(now);
            if bin >= self.bits.len() {
                self.bits.resize(bin + 1, 0.0);
            }
            self.bits[bin] += self.rate_bps as f64 * (to - from).as_secs_f64();
            from = to;
        }
        self.since = self.since.max(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EPOCH: Instant = Instant::from_nanos(1_000_000_000);
    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn each_bin_holds_the_time_weighted_mean_of_the_limit() {
        let mut trace = RateTrace::new(EPOCH, 10 * MS, BitRate::mbps(100));
        // 100 Mbit/s for 5 ms, then 50 for 20 ms, then 100 again.
        trace.set_rate(EPOCH + 5 * MS, BitRate::mbps(50));
        trace.set_rate(EPOCH + 25 * MS, BitRate::mbps(100));
        let rates = trace.mean_rates_mbps(EPOCH + 35 * MS);
        assert_eq!(rates.len(), 3, "the bin from 30 ms is not over");
        for (got, want) in rates.iter().zip([75.0, 50.0, 75.0]) {
            assert!((got - want).abs() < 1e-9, "{rates:?}");
        }
    }

    #[test]
    fn cnms_count_in_the_bin_they_arrive_in_and_time_before_the_epoch_is_not_counted() {
        let mut trace = RateTrace::new(EPOCH, 10 * MS, BitRate::mbps(100));
        trace.set_rate(Instant::from_nanos(EPOCH.as_nanos() - 5_000_000), BitRate::mbps(10));
        trace.cnm_received(EPOCH + 12 * MS);
        trace.cnm_received(EPOCH + 19 * MS);
        trace.cnm_received(EPOCH + 31 * MS);
        assert_eq!(trace.cnms(), &[0, 2, 0, 1]);
        assert_eq!(trace.mean_rates_mbps(EPOCH + 10 * MS), vec![10.0]);
    }
}
