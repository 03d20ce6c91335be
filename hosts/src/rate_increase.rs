//! The rate-increase half of a reaction point, shared by QCN's RP (`reaction_point`) and
//! DCQCN's (`dcqcn`): a current rate CR, a target rate TR, a byte counter and a timer, each
//! with a stage count, and the three phases of 802.1Qau §32.14 that DCQCN's RP reuses
//! ("in a manner identical to QCN", Zhu et al. 2015 §3).
//!
//! - After a decrease (TR = the rate before it, CR = the cut rate), both stage counts restart
//!   at zero, the byte counter at `byte_reset` bytes and the timer at `time_reset`.
//! - Each time the byte counter or the timer fires, its stage count advances, then:
//!   - fast recovery, while both counts are below the threshold F: CR = (CR + TR) / 2;
//!   - active (additive) increase, once either reaches F: TR += R_AI, then CR = (CR + TR) / 2;
//!   - hyper-active increase, once both exceed F: TR += i·R_HAI with i = min(counts) − F,
//!     then CR = (CR + TR) / 2.
//! - QCN halves both cycles once fast recovery is over; DCQCN keeps them whole
//!   (`halve_after_fast_recovery`).
//! - TR never exceeds the line rate; CR = (CR + TR) / 2 rounds up so that CR reaches TR.
//!   When CR is back at the line rate the limiter is released: the counters stop and the
//!   flow is no longer rate limited until the next decrease.

use pfcswitch_link::time::Instant;
use std::time::Duration;

/// Where a reaction point is in its increase cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RpPhase {
    /// No congestion notification since the limiter was last released: line rate.
    Idle,
    FastRecovery,
    /// Active increase (QCN), additive increase (DCQCN).
    ActiveIncrease,
    /// Hyper-active increase (QCN), hyper increase (DCQCN).
    HyperActiveIncrease,
}

/// The increase machinery's settings, in bits per second, bytes and time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct IncreaseParams {
    /// Bytes per byte-counter cycle (in fast recovery, and after it unless halved).
    pub byte_reset: u64,
    /// The timer's period (in fast recovery, and after it unless halved).
    pub time_reset: Duration,
    /// F: cycles of fast recovery.
    pub threshold: u32,
    /// R_AI, TR's step in active increase.
    pub active_increase: u64,
    /// R_HAI, TR's step per cycle past F in hyper-active increase.
    pub hyper_increase: u64,
    /// QCN's byte counter and timer fire twice as often once fast recovery is over.
    pub halve_after_fast_recovery: bool,
}

/// One flow's CR and TR, byte counter and timer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RateIncrease {
    params: IncreaseParams,
    line_rate: u64,
    current: u64,
    target: u64,
    active: bool,
    byte_stage: u32,
    timer_stage: u32,
    bytes_left: u64,
    timer_at: Option<Instant>,
}

impl RateIncrease {
    /// A released limiter: CR = TR = the line rate.
    pub fn new(params: IncreaseParams, line_rate: u64) -> RateIncrease {
        RateIncrease {
            params,
            line_rate,
            current: line_rate,
            target: line_rate,
            active: false,
            byte_stage: 0,
            timer_stage: 0,
            bytes_left: 0,
            timer_at: None,
        }
    }

    pub fn line_rate(&self) -> u64 {
        self.line_rate
    }

    /// CR in bits per second (the line rate while released).
    pub fn current(&self) -> u64 {
        self.current
    }

    /// TR in bits per second.
    pub fn target(&self) -> u64 {
        self.target
    }

    pub fn phase(&self) -> RpPhase {
        let threshold = self.params.threshold;
        match (self.active, self.byte_stage.max(self.timer_stage), self.byte_stage.min(self.timer_stage)) {
            (false, _, _) => RpPhase::Idle,
            (true, most, _) if most < threshold => RpPhase::FastRecovery,
            (true, _, least) if least > threshold => RpPhase::HyperActiveIncrease,
            _ => RpPhase::ActiveIncrease,
        }
    }

    /// A decrease: TR = the rate before it, CR = `cut` (at most that rate), and fast
    /// recovery starts afresh with full cycles from `now`.
    pub fn decrease(&mut self, now: Instant, cut: u64) {
        debug_assert!(cut <= self.current && cut > 0);
        self.active = true;
        self.target = self.current;
        self.current = cut;
        self.byte_stage = 0;
        self.timer_stage = 0;
        self.bytes_left = self.params.byte_reset;
        self.timer_at = Some(now + self.params.time_reset);
    }

    /// The flow sent `bytes`: the byte counter may fire, once per cycle the bytes complete.
    pub fn on_sent(&mut self, bytes: u64) {
        if !self.active {
            return;
        }
        let mut bytes = bytes;
        while self.active && bytes >= self.bytes_left {
            bytes -= self.bytes_left;
            self.byte_stage += 1;
            self.increase();
            self.bytes_left = self.byte_cycle();
        }
        if self.active {
            self.bytes_left -= bytes;
        }
    }

    /// When the timer fires next (none while released).
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.timer_at
    }

    /// Fires the timer for every period that ended at or before `now`.
    pub fn handle_timeout(&mut self, now: Instant) {
        while let Some(at) = self.timer_at.filter(|&at| at <= now) {
            self.timer_stage += 1;
            self.increase();
            self.timer_at = self.active.then(|| at + self.timer_cycle());
        }
    }

    fn in_fast_recovery(&self) -> bool {
        self.byte_stage.max(self.timer_stage) < self.params.threshold
    }

    fn halved(&self) -> bool {
        self.params.halve_after_fast_recovery && !self.in_fast_recovery()
    }

    fn byte_cycle(&self) -> u64 {
        if self.halved() { self.params.byte_reset / 2 } else { self.params.byte_reset }
    }

    fn timer_cycle(&self) -> Duration {
        if self.halved() { self.params.time_reset / 2 } else { self.params.time_reset }
    }

    /// One increase event: move TR by the phase's step, then CR halfway to TR.
    fn increase(&mut self) {
        let threshold = self.params.threshold;
        match self.phase() {
            RpPhase::Idle | RpPhase::FastRecovery => {}
            RpPhase::ActiveIncrease => self.target += self.params.active_increase,
            RpPhase::HyperActiveIncrease => {
                let i = u64::from(self.byte_stage.min(self.timer_stage) - threshold);
                self.target += i * self.params.hyper_increase;
            }
        }
        self.target = self.target.min(self.line_rate);
        // Rounded up, so that CR reaches TR instead of stopping a bit short.
        self.current = (self.current + self.target).div_ceil(2);
        if self.current == self.line_rate {
            // Back at line rate: release the limiter.
            self.active = false;
            self.timer_at = None;
        }
    }
}
