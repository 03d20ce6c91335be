//! The reaction point (RP) of IEEE 802.1Qau (§32.13–32.14, the RP's rate limiter), as the
//! public QCN pseudo-code and Alizadeh et al. ("Data center transport mechanisms", 2008)
//! describe it: one rate limiter per flow, with a current rate CR and a target rate TR.
//!
//! - A CNM carrying QntzFb sets TR = CR and CR = CR·(1 − Gd·QntzFb), with Gd = 1/128 so that
//!   one CNM at most halves the rate (QntzFb ≤ 63), and never below the minimum rate; the
//!   byte counter and the timer restart in fast recovery.
//! - The byte counter fires each `byte_reset` bytes sent (half that once fast recovery is
//!   over), the timer each `time_reset` (half that once fast recovery is over); each firing
//!   advances its stage count and raises the rate:
//!   - fast recovery, while both counts are below `fast_recovery_threshold` (5):
//!     CR = (CR + TR) / 2;
//!   - active increase, once either reaches it: TR += `active_increase`, then
//!     CR = (CR + TR) / 2;
//!   - hyper-active increase, once both exceed it: TR += i·`hyper_active_increase` with i
//!     = min(counts) − threshold, then CR = (CR + TR) / 2.
//! - Rates never exceed the line rate; when CR is back at the line rate the limiter is
//!   released (the flow is no longer rate limited until the next CNM).
//!
//! The increase machinery (stage counts, byte counter, timer, the three phases, the release)
//! is `rate_increase`'s, shared with DCQCN's RP; QCN's halves its cycles after fast recovery.
//!
//! Deterministic: time comes in as a parameter and the byte counter and timer are not
//! randomized (the standard's ±15 % jitter serves hardware that cannot desynchronize its
//! flows otherwise; our flows start at seeded times).

use crate::rate_increase::{IncreaseParams, RateIncrease};
use pfcswitch_link::time::Instant;
use pfcswitch_link::units::{BitRate, ByteSize, duration};
use serde::{Deserialize, Serialize};
use std::time::Duration;

pub use crate::rate_increase::RpPhase;

/// The RP's settings; the defaults are 802.1Qau's MIB values. A scenario's `[qcn.reaction]`
/// sets them (scaled with the link speed, see docs/qcn.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct RpParams {
    /// Bytes per byte-counter cycle in fast recovery (rpgByteReset, 150000).
    pub byte_reset: ByteSize,
    /// Timer period in fast recovery (rpgTimeReset, 15 ms).
    #[serde(with = "duration")]
    pub time_reset: Duration,
    /// Cycles of fast recovery before the rate climbs past TR (rpgThreshold, 5).
    pub fast_recovery_threshold: u32,
    /// TR's step in active increase (rpgAiRate, 5 Mbit/s).
    pub active_increase: BitRate,
    /// TR's step in hyper-active increase (rpgHaiRate, 50 Mbit/s).
    pub hyper_active_increase: BitRate,
    /// The lowest CR a decrease may set (rpgMinRate, 5 Mbit/s).
    pub min_rate: BitRate,
}

impl Default for RpParams {
    fn default() -> Self {
        RpParams {
            byte_reset: ByteSize(150_000),
            time_reset: Duration::from_millis(15),
            fast_recovery_threshold: 5,
            active_increase: BitRate::mbps(5),
            hyper_active_increase: BitRate::mbps(50),
            min_rate: BitRate::mbps(5),
        }
    }
}

impl RpParams {
    /// The cycles must be at least two bytes and two nanoseconds long: each firing waits for
    /// half a cycle once fast recovery is over.
    pub fn validate(&self) -> Result<(), String> {
        if self.byte_reset.0 < 2 {
            return Err(format!("byte_reset {} must be at least 2 bytes", self.byte_reset));
        }
        if self.time_reset < Duration::from_nanos(2) {
            return Err("time_reset must be at least 2ns".into());
        }
        Ok(())
    }
}

/// Gd = 1 / GD_DIVISOR: a CNM with the largest QntzFb (63) cuts CR by 63/128, just under half.
const GD_DIVISOR: u64 = 128;

/// One flow's rate limiter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReactionPoint {
    params: RpParams,
    increase: RateIncrease,
    cnms: u64,
}

impl ReactionPoint {
    pub fn new(params: RpParams, line_rate: BitRate) -> ReactionPoint {
        let increase = IncreaseParams {
            byte_reset: params.byte_reset.0,
            time_reset: params.time_reset,
            threshold: params.fast_recovery_threshold,
            active_increase: params.active_increase.bps(),
            hyper_increase: params.hyper_active_increase.bps(),
            halve_after_fast_recovery: true,
        };
        ReactionPoint { params, increase: RateIncrease::new(increase, line_rate.bps()), cnms: 0 }
    }

    /// The rate the flow may send at now (CR, or the line rate while released).
    pub fn rate(&self) -> BitRate {
        BitRate::from_bps(self.increase.current()).expect("the rate stays above zero")
    }

    pub fn target(&self) -> BitRate {
        BitRate::from_bps(self.increase.target()).expect("the rate stays above zero")
    }

    pub fn cnms(&self) -> u64 {
        self.cnms
    }

    pub fn phase(&self) -> RpPhase {
        self.increase.phase()
    }

    /// A CNM for this flow arrived carrying `quantized` (QntzFb).
    pub fn on_cnm(&mut self, now: Instant, quantized: u8) {
        self.cnms += 1;
        let current = self.increase.current();
        let cut = current * u64::from(quantized.min(63)) / GD_DIVISOR;
        let floor = self.params.min_rate.bps().min(self.increase.line_rate());
        self.increase.decrease(now, (current - cut).max(floor));
    }

    /// The flow sent `bytes`: the byte counter may fire.
    pub fn on_sent(&mut self, bytes: u64) {
        self.increase.on_sent(bytes);
    }

    /// When the timer fires next.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.increase.poll_timeout()
    }

    pub fn handle_timeout(&mut self, now: Instant) {
        self.increase.handle_timeout(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: Instant = Instant::from_nanos(1_000_000);

    fn rp() -> ReactionPoint {
        ReactionPoint::new(RpParams::default(), BitRate::gbps(10))
    }

    #[test]
    fn a_cnm_cuts_the_rate_by_gd_times_the_feedback_and_at_most_by_half() {
        let mut rp = rp();
        assert_eq!(rp.phase(), RpPhase::Idle);
        rp.on_cnm(T0, 63);
        // 10 Gbit/s · (1 − 63/128) = 5.078125 Gbit/s; TR keeps the rate before the cut.
        assert_eq!(rp.rate().bps(), 5_078_125_000);
        assert_eq!(rp.target().bps(), 10_000_000_000);
        assert_eq!(rp.phase(), RpPhase::FastRecovery);
        rp.on_cnm(T0, 8);
        // 5.078125 · (1 − 8/128) = 4.7607421875 Gbit/s.
        assert_eq!(rp.rate().bps(), 4_760_742_188);
        assert_eq!(rp.target().bps(), 5_078_125_000);
        // Never below the minimum rate.
        for _ in 0..40 {
            rp.on_cnm(T0, 63);
        }
        assert_eq!(rp.rate().bps(), 5_000_000);
    }

    #[test]
    fn fast_recovery_halves_the_distance_to_the_target_each_150_kb() {
        let mut rp = rp();
        rp.on_cnm(T0, 63);
        rp.on_sent(149_999);
        assert_eq!(rp.rate().bps(), 5_078_125_000, "not yet a cycle");
        rp.on_sent(1);
        // (5.078125 + 10) / 2 = 7.5390625 Gbit/s.
        assert_eq!(rp.rate().bps(), 7_539_062_500);
        rp.on_sent(150_000 * 3);
        // Three more halvings towards 10 Gbit/s: 8.76953125, 9.384765625, 9.6923828125.
        assert_eq!(rp.rate().bps(), 9_692_382_813);
        assert_eq!(rp.phase(), RpPhase::FastRecovery, "four cycles of five");
    }

    #[test]
    fn active_increase_raises_the_target_after_five_cycles() {
        let mut rp = ReactionPoint::new(RpParams::default(), BitRate::gbps(10));
        rp.on_cnm(T0, 63);
        rp.on_cnm(T0, 63); // TR = 5.078125 G, CR ≈ 2.58 G: a target below line rate.
        let target = rp.target().bps();
        rp.on_sent(150_000 * 5);
        assert_eq!(rp.phase(), RpPhase::ActiveIncrease);
        assert_eq!(rp.target().bps(), target + 5_000_000, "the fifth cycle adds R_AI");
        // Active increase counts bytes in half cycles: 75 KB adds another R_AI.
        rp.on_sent(75_000);
        assert_eq!(rp.target().bps(), target + 10_000_000);
    }

    #[test]
    fn the_timer_raises_the_rate_too_and_both_stages_past_five_is_hyper_active() {
        let mut rp = ReactionPoint::new(RpParams::default(), BitRate::gbps(10));
        rp.on_cnm(T0, 63);
        rp.on_cnm(T0, 63);
        let target = rp.target().bps();
        assert_eq!(rp.poll_timeout(), Some(T0 + Duration::from_millis(15)));
        // Five timer cycles of 15 ms (fast recovery), then active increase at 7.5 ms.
        rp.handle_timeout(T0 + Duration::from_millis(75));
        assert_eq!(rp.phase(), RpPhase::ActiveIncrease);
        assert_eq!(rp.target().bps(), target + 5_000_000);
        assert_eq!(rp.poll_timeout(), Some(T0 + Duration::from_micros(82_500)));
        // Ten byte cycles (past the threshold), then a sixth timer cycle: i = min(10, 6) − 5 = 1.
        rp.on_sent(150_000 + 75_000 * 9);
        let before = rp.target().bps();
        rp.handle_timeout(T0 + Duration::from_micros(82_500));
        assert_eq!(rp.phase(), RpPhase::HyperActiveIncrease);
        assert_eq!(rp.target().bps(), before + 50_000_000);
    }

    #[test]
    fn the_limiter_is_released_back_at_line_rate() {
        let mut rp = rp();
        rp.on_cnm(T0, 1);
        // 10 G · (1 − 1/128) = 9.921875 G; each cycle halves the gap, rounding it down.
        rp.on_sent(150_000 * 40);
        assert_eq!(rp.rate().bps(), 10_000_000_000);
        assert_eq!(rp.phase(), RpPhase::Idle);
        assert_eq!(rp.poll_timeout(), None);
        rp.on_sent(1_000_000);
        assert_eq!(rp.rate().bps(), 10_000_000_000);
    }
}
