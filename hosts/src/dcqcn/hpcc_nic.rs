//! DCQCN's reaction point as HPCC's ns-3 models a Mellanox NIC (`rdma-hw.cc`, "Mellanox's
//! version of DCQCN", its `CC_MODE 1`), for runs whose numbers compare with that simulator's.
//! It differs from Zhu et al.'s (the parent module) in when things happen:
//!
//! - A CNP only sets two flags. The first CNP of a queue pair sets α = 1, starts the α timer
//!   (every `alpha_update_period`) and the decrease check (every `rate_decrease_period`, the
//!   first 1 ns after the α update that falls with it), and does not cut.
//! - The α timer: α = (1 − g)·α + g if a CNP came since the last update, else (1 − g)·α.
//! - The decrease check: if a CNP came since the last check, RT = RC (unless
//!   `clamp_target_rate` is off and no increase event came since the last cut), then
//!   RC = max(`min_rate`, RC·(1 − α/2)), and the increase timer restarts.
//! - The increase timer (every `rate_increase_period`, from the first cut on) has a stage
//!   count: below F fast recovery (RC = RC/2 + RT/2), at F one additive step
//!   (RT += R_AI), above F hyper steps of R_HAI each, RT capped at the line rate, then
//!   RC = RC/2 + RT/2. There is no byte counter.
//!
//! α is an `f64` and rates whole bits per second truncated as ns-3's `DataRate` arithmetic
//! truncates them, so that a run follows ns-3's numbers. The timers run on fixed grids from
//! the first CNP; while they can change nothing (α at 0, RC and RT at the line rate, no CNP
//! to act on) they are not armed, and rejoin their grid at the next CNP.

use crate::rate_increase::RpPhase;
use pfcswitch_link::time::Instant;
use std::time::Duration;

/// The model's settings (from `DcqcnParams`), rates in bit/s.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Settings {
    pub g: f64,
    pub alpha_update_period: Duration,
    pub rate_decrease_period: Duration,
    pub rate_increase_period: Duration,
    pub fast_recovery_threshold: u32,
    pub additive_increase: u64,
    pub hyper_increase: u64,
    pub min_rate: u64,
    pub clamp_target_rate: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub(super) struct HpccNic {
    settings: Settings,
    line_rate: u64,
    current: u64,
    target: u64,
    alpha: f64,
    /// None until the first CNP.
    grid: Option<Grids>,
    alpha_cnp: bool,
    decrease_cnp: bool,
    /// Increase events since the last cut; None before the first cut.
    stage: Option<u32>,
    alpha_at: Option<Instant>,
    decrease_at: Option<Instant>,
    increase_at: Option<Instant>,
}

/// Where the α and decrease timers' ticks fall: their first tick and period.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Grids {
    alpha: (Instant, Duration),
    decrease: (Instant, Duration),
}

impl Grids {
    /// The first tick of `(first, period)` after `now`.
    fn next((first, period): (Instant, Duration), now: Instant) -> Instant {
        if now < first {
            return first;
        }
        let ticks = (now - first).as_nanos() / period.as_nanos() + 1;
        first + period * u32::try_from(ticks).expect("fewer than 2^32 ticks in a run")
    }
}

impl HpccNic {
    pub(super) fn new(settings: Settings, line_rate: u64) -> HpccNic {
        HpccNic {
            settings,
            line_rate,
            current: line_rate,
            target: line_rate,
            alpha: 1.0,
            grid: None,
            alpha_cnp: false,
            decrease_cnp: false,
            stage: None,
            alpha_at: None,
            decrease_at: None,
            increase_at: None,
        }
    }

    pub(super) fn current(&self) -> u64 {
        self.current
    }

    pub(super) fn target(&self) -> u64 {
        self.target
    }

    pub(super) fn alpha(&self) -> f64 {
        self.alpha
    }

    pub(super) fn phase(&self) -> RpPhase {
        match self.stage {
            None => RpPhase::Idle,
            Some(stage) if stage < self.settings.fast_recovery_threshold => RpPhase::FastRecovery,
            Some(stage) if stage == self.settings.fast_recovery_threshold => RpPhase::ActiveIncrease,
            Some(_) => RpPhase::HyperActiveIncrease,
        }
    }

    pub(super) fn on_cnp(&mut self, now: Instant) {
        self.alpha_cnp = true;
        self.decrease_cnp = true;
        match self.grid {
            None => {
                let decrease_first = now + self.settings.rate_decrease_period + Duration::from_nanos(1);
                self.grid = Some(Grids {
                    alpha: (now + self.settings.alpha_update_period, self.settings.alpha_update_period),
                    decrease: (decrease_first, self.settings.rate_decrease_period),
                });
                self.alpha = 1.0;
                self.alpha_cnp = false;
                self.alpha_at = Some(now + self.settings.alpha_update_period);
                self.decrease_at = Some(decrease_first);
            }
            Some(grid) => {
                self.alpha_at.get_or_insert(Grids::next(grid.alpha, now));
                self.decrease_at.get_or_insert(Grids::next(grid.decrease, now));
            }
        }
    }

    pub(super) fn poll_timeout(&self) -> Option<Instant> {
        [self.alpha_at, self.decrease_at, self.increase_at].into_iter().flatten().min()
    }

    /// Fires every timer due at or before `now`, in time order (α before a decrease due at
    /// the same instant, as ns-3 schedules the decrease 1 ns later for that).
    pub(super) fn handle_timeout(&mut self, now: Instant) {
        while let Some(at) = self.poll_timeout().filter(|&at| at <= now) {
            if self.alpha_at == Some(at) {
                self.update_alpha(at);
            } else if self.decrease_at == Some(at) {
                self.check_decrease(at);
            } else {
                self.increase(at);
            }
        }
    }

    fn update_alpha(&mut self, at: Instant) {
        self.alpha = (1.0 - self.settings.g) * self.alpha + if self.alpha_cnp { self.settings.g } else { 0.0 };
        self.alpha_cnp = false;
        self.alpha_at = (self.alpha > 0.0).then(|| at + self.settings.alpha_update_period);
    }

    fn check_decrease(&mut self, at: Instant) {
        if !self.decrease_cnp {
            // Nothing to act on until the next CNP, which rearms the check on its grid.
            self.decrease_at = None;
            return;
        }
        self.decrease_at = Some(at + self.settings.rate_decrease_period);
        if self.settings.clamp_target_rate || self.stage.is_some_and(|stage| stage != 0) {
            self.target = self.current;
        }
        let cut = (self.current as f64 * (1.0 - self.alpha / 2.0)) as u64;
        self.current = cut.max(self.settings.min_rate.min(self.line_rate));
        self.stage = Some(0);
        self.decrease_cnp = false;
        self.increase_at = Some(at + self.settings.rate_increase_period);
    }

    fn increase(&mut self, at: Instant) {
        let stage = self.stage.expect("the increase timer starts at a cut");
        let threshold = self.settings.fast_recovery_threshold;
        if stage == threshold {
            self.target = (self.target + self.settings.additive_increase).min(self.line_rate);
        } else if stage > threshold {
            self.target = (self.target + self.settings.hyper_increase).min(self.line_rate);
        }
        self.current = self.current / 2 + self.target / 2;
        self.stage = Some(stage + 1);
        // RC/2 + RT/2 in whole bits can stop one short of the line rate, as in ns-3.
        let idle = self.current >= self.line_rate - 1 && self.target == self.line_rate;
        self.increase_at = (!idle).then(|| at + self.settings.rate_increase_period);
    }
}
