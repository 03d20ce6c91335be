//! DCQCN's reaction point (RP), after Zhu et al., "Congestion Control for Large-Scale RDMA
//! Deployments" (SIGCOMM 2015), §3 ("the paper" below): one rate limiter per queue pair, with
//! a current rate RC, a target rate RT and the rate-reduction factor α.
//!
//! - A CNP sets RT = RC, RC = RC·(1 − α/2) (never below `min_rate`), then
//!   α = (1 − g)·α + g; the byte counter, the timer and both stage counts restart (fast
//!   recovery).
//! - Every `alpha_update_period` (K) without a CNP, α = (1 − g)·α. The α timer starts at the
//!   first CNP, restarts at each CNP, and keeps running after the limiter is released; it
//!   stops only once α has decayed to 0, where a decay changes nothing.
//! - The rate increases as in QCN (`rate_increase`, shared with the QCN RP): the timer (every
//!   `rate_increase_period`, T) and the byte counter (every `byte_counter` bytes sent, B)
//!   each advance their stage count, then fast recovery (both counts < F: RC = (RT + RC)/2),
//!   additive increase (either count ≥ F: RT += R_AI, RC = (RT + RC)/2) or hyper increase
//!   (both counts > F: RT += i·R_HAI with i = min(counts) − F, RC = (RT + RC)/2). Unlike QCN
//!   the cycles stay whole after fast recovery. RT is capped at the line rate; when RC is
//!   back at the line rate the limiter is released until the next CNP.
//!
//! Deterministic: time comes in as a parameter, and α is a fixed-point integer (units of
//! 2⁻³²) updated with integer arithmetic, g being an exact fraction. See docs/dcqcn.md.

use crate::rate_increase::{IncreaseParams, RateIncrease, RpPhase};
use pfcswitch_link::time::Instant;
use pfcswitch_link::units::{BitRate, ByteSize, duration};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// An exact fraction p/q, written "1/256" (or "1", "0" for whole numbers) in configs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fraction {
    numerator: u32,
    denominator: u32,
}

impl Fraction {
    pub const ONE: Fraction = Fraction::new(1, 1);

    /// Panics if `denominator` is 0.
    pub const fn new(numerator: u32, denominator: u32) -> Fraction {
        assert!(denominator > 0);
        Fraction { numerator, denominator }
    }

    pub const fn numerator(self) -> u32 {
        self.numerator
    }

    pub const fn denominator(self) -> u32 {
        self.denominator
    }

    pub fn to_f64(self) -> f64 {
        f64::from(self.numerator) / f64::from(self.denominator)
    }

    fn at_most_one(self) -> bool {
        self.numerator <= self.denominator
    }
}

impl fmt::Display for Fraction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.denominator == 1 {
            write!(f, "{}", self.numerator)
        } else {
            write!(f, "{}/{}", self.numerator, self.denominator)
        }
    }
}

impl FromStr for Fraction {
    type Err = String;

    /// Accepts `p/q` with integers p ≥ 0 and q ≥ 1, or a whole number `p`.
    fn from_str(input: &str) -> Result<Fraction, String> {
        let syntax = || format!("`{input}` is not a fraction such as \"1/256\"");
        let (numerator, denominator) = input.split_once('/').unwrap_or((input, "1"));
        let numerator: u32 = numerator.trim().parse().map_err(|_| syntax())?;
        let denominator: u32 = denominator.trim().parse().map_err(|_| syntax())?;
        if denominator == 0 {
            return Err(format!("`{input}` has a zero denominator"));
        }
        Ok(Fraction::new(numerator, denominator))
    }
}

impl Serialize for Fraction {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Fraction {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// The RP's settings; the defaults are the paper's (docs/dcqcn.md lists each one's source,
/// and the NIC's defaults beside them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct DcqcnParams {
    /// g, α's gain, as an exact fraction in (0, 1] ("1/256").
    pub g: Fraction,
    /// α before the first CNP, in [0, 1] ("1").
    pub initial_alpha: Fraction,
    /// K: α decays by (1 − g) after each such period without a CNP (55 µs).
    #[serde(with = "duration")]
    pub alpha_update_period: Duration,
    /// T: the rate-increase timer's period (55 µs).
    #[serde(with = "duration")]
    pub rate_increase_period: Duration,
    /// B: bytes sent per byte-counter cycle (10 MB).
    pub byte_counter: ByteSize,
    /// F: cycles of fast recovery (5).
    pub fast_recovery_threshold: u32,
    /// R_AI: RT's step in additive increase (40 Mbit/s).
    pub additive_increase: BitRate,
    /// R_HAI: RT's step per cycle past F in hyper increase (200 Mbit/s).
    pub hyper_increase: BitRate,
    /// The lowest RC a CNP may set (100 Mbit/s); the line rate if that is lower.
    pub min_rate: BitRate,
    /// Whose reaction point: Zhu et al.'s (`zhu`, the default) or HPCC's ns-3 model of a
    /// Mellanox NIC (`hpcc`, `dcqcn/hpcc_nic.rs`), which ignores `byte_counter` and
    /// `initial_alpha` and takes the next two settings.
    pub model: DcqcnModel,
    /// `hpcc`: a cut at most once per this period (its `RATE_DECREASE_INTERVAL`, 4 µs).
    #[serde(with = "duration")]
    pub rate_decrease_period: Duration,
    /// `hpcc`: every cut sets RT = RC; off, a cut before any increase event keeps RT (its
    /// `CLAMP_TARGET_RATE`).
    pub clamp_target_rate: bool,
}

/// Which DCQCN reaction point runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DcqcnModel {
    /// Zhu et al. 2015, §3.
    #[default]
    Zhu,
    /// HPCC's ns-3 (`rdma-hw.cc`, `CC_MODE 1`).
    Hpcc,
}

impl Default for DcqcnParams {
    fn default() -> Self {
        DcqcnParams {
            g: Fraction::new(1, 256),
            initial_alpha: Fraction::ONE,
            alpha_update_period: Duration::from_micros(55),
            rate_increase_period: Duration::from_micros(55),
            byte_counter: ByteSize(10_000_000),
            fast_recovery_threshold: 5,
            additive_increase: BitRate::mbps(40),
            hyper_increase: BitRate::mbps(200),
            min_rate: BitRate::mbps(100),
            model: DcqcnModel::Zhu,
            rate_decrease_period: Duration::from_micros(4),
            clamp_target_rate: false,
        }
    }
}

impl DcqcnParams {
    /// Each error names the key and why its value is rejected.
    pub fn validate(&self) -> Result<(), String> {
        if self.g.numerator == 0 || !self.g.at_most_one() {
            return Err(format!("g {} must be in (0, 1]", self.g));
        }
        if !self.initial_alpha.at_most_one() {
            return Err(format!("initial_alpha {} must be in [0, 1]", self.initial_alpha));
        }
        if self.alpha_update_period.is_zero() {
            return Err("alpha_update_period must be at least 1ns".into());
        }
        if self.rate_increase_period.is_zero() {
            return Err("rate_increase_period must be at least 1ns".into());
        }
        if self.rate_decrease_period.is_zero() {
            return Err("rate_decrease_period must be at least 1ns".into());
        }
        if self.byte_counter.0 == 0 {
            return Err("byte_counter must be at least 1 byte".into());
        }
        Ok(())
    }

    /// [`validate`](Self::validate), and `min_rate` must not exceed `line_rate`.
    pub fn validate_for(&self, line_rate: BitRate) -> Result<(), String> {
        self.validate()?;
        crate::within_line::within_line("min_rate", self.min_rate, line_rate)
    }
}

/// α = 1 in the fixed-point representation: α is held in units of 2⁻³².
const ALPHA_ONE: u64 = 1 << 32;

/// One queue pair's rate limiter.
#[derive(Clone, Debug, PartialEq)]
pub struct Dcqcn {
    params: DcqcnParams,
    cnps: u64,
    model: Model,
}

#[derive(Clone, Debug, PartialEq)]
enum Model {
    Zhu(Zhu),
    Hpcc(HpccNic),
}

impl Dcqcn {
    /// A released limiter at `line_rate`; `params` should have passed
    /// [`DcqcnParams::validate`].
    pub fn new(params: DcqcnParams, line_rate: BitRate) -> Dcqcn {
        debug_assert_eq!(params.validate(), Ok(()));
        let model = match params.model {
            DcqcnModel::Zhu => Model::Zhu(Zhu::new(params, line_rate)),
            DcqcnModel::Hpcc => Model::Hpcc(HpccNic::new(
                hpcc_nic::Settings {
                    g: params.g.to_f64(),
                    alpha_update_period: params.alpha_update_period,
                    rate_decrease_period: params.rate_decrease_period,
                    rate_increase_period: params.rate_increase_period,
                    fast_recovery_threshold: params.fast_recovery_threshold,
                    additive_increase: params.additive_increase.bps(),
                    hyper_increase: params.hyper_increase.bps(),
                    min_rate: params.min_rate.bps(),
                    clamp_target_rate: params.clamp_target_rate,
                },
                line_rate.bps(),
            )),
        };
        Dcqcn { params, cnps: 0, model }
    }

    /// The rate the queue pair may send at now: RC, or the line rate while released.
    pub fn rate(&self) -> BitRate {
        let current = match &self.model {
            Model::Zhu(zhu) => zhu.increase.current(),
            Model::Hpcc(nic) => nic.current(),
        };
        BitRate::from_bps(current).expect("the rate stays above zero")
    }

    /// RT.
    pub fn target(&self) -> BitRate {
        let target = match &self.model {
            Model::Zhu(zhu) => zhu.increase.target(),
            Model::Hpcc(nic) => nic.target(),
        };
        BitRate::from_bps(target).expect("the rate stays above zero")
    }

    /// α.
    pub fn alpha(&self) -> f64 {
        match &self.model {
            Model::Zhu(zhu) => zhu.alpha as f64 / ALPHA_ONE as f64,
            Model::Hpcc(nic) => nic.alpha(),
        }
    }

    pub fn cnps(&self) -> u64 {
        self.cnps
    }

    /// Whether it lives only as long as its queue pair has data: HPCC's ns-3 cancels the NIC
    /// model's timers when the queue pair completes (`QpComplete`), and starts a queue pair's
    /// with its first packet. Zhu et al.'s keeps its α decaying between messages.
    pub fn lives_with_its_messages(&self) -> bool {
        matches!(self.model, Model::Hpcc(_))
    }

    pub fn phase(&self) -> RpPhase {
        match &self.model {
            Model::Zhu(zhu) => zhu.increase.phase(),
            Model::Hpcc(nic) => nic.phase(),
        }
    }

    /// A CNP for this queue pair arrived.
    pub fn on_cnp(&mut self, now: Instant) {
        self.cnps += 1;
        match &mut self.model {
            Model::Zhu(zhu) => zhu.on_cnp(now),
            Model::Hpcc(nic) => nic.on_cnp(now),
        }
    }

    /// The queue pair sent `bytes`: the byte counter may fire.
    pub fn on_sent(&mut self, bytes: u64) {
        if let Model::Zhu(zhu) = &mut self.model {
            zhu.increase.on_sent(bytes);
        }
    }

    /// The earliest of the model's timers.
    pub fn poll_timeout(&self) -> Option<Instant> {
        match &self.model {
            Model::Zhu(zhu) => [zhu.alpha_at, zhu.increase.poll_timeout()].into_iter().flatten().min(),
            Model::Hpcc(nic) => nic.poll_timeout(),
        }
    }

    /// Fires every timer due at or before `now`.
    pub fn handle_timeout(&mut self, now: Instant) {
        match &mut self.model {
            Model::Zhu(zhu) => zhu.handle_timeout(now),
            Model::Hpcc(nic) => nic.handle_timeout(now),
        }
    }
}

/// Zhu et al.'s reaction point.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Zhu {
    params: DcqcnParams,
    increase: RateIncrease,
    /// α in units of 2⁻³² (`ALPHA_ONE` is 1).
    alpha: u64,
    alpha_at: Option<Instant>,
}

impl Zhu {
    fn new(params: DcqcnParams, line_rate: BitRate) -> Zhu {
        let increase = IncreaseParams {
            byte_reset: params.byte_counter.0,
            time_reset: params.rate_increase_period,
            threshold: params.fast_recovery_threshold,
            active_increase: params.additive_increase.bps(),
            hyper_increase: params.hyper_increase.bps(),
            halve_after_fast_recovery: false,
        };
        let initial = params.initial_alpha;
        let alpha = ALPHA_ONE * u64::from(initial.numerator) / u64::from(initial.denominator);
        Zhu {
            params,
            increase: RateIncrease::new(increase, line_rate.bps()),
            alpha: alpha.min(ALPHA_ONE),
            alpha_at: None,
        }
    }

    fn on_cnp(&mut self, now: Instant) {
        let current = self.increase.current();
        // RC·α/2, rounded down: RC·(1 − α/2) rounds up.
        let cut = u128::from(current) * u128::from(self.alpha) / (2 * u128::from(ALPHA_ONE));
        let floor = self.params.min_rate.bps().min(self.increase.line_rate());
        let reduced = current - u64::try_from(cut).expect("the cut is at most RC");
        self.increase.decrease(now, reduced.max(floor));
        let (p, q) = self.gain();
        self.alpha = (((q - p) * u128::from(self.alpha) + p * u128::from(ALPHA_ONE)) / q) as u64;
        self.alpha_at = Some(now + self.params.alpha_update_period);
    }

    /// Fires every α decay and rate increase due at or before `now`.
    fn handle_timeout(&mut self, now: Instant) {
        let (p, q) = self.gain();
        while let Some(at) = self.alpha_at.filter(|&at| at <= now) {
            self.alpha = ((q - p) * u128::from(self.alpha) / q) as u64;
            self.alpha_at = (self.alpha > 0).then(|| at + self.params.alpha_update_period);
        }
        self.increase.handle_timeout(now);
    }

    /// g as (p, q), with p clamped to q so that an unvalidated g cannot underflow.
    fn gain(&self) -> (u128, u128) {
        let g = self.params.g;
        (u128::from(g.numerator.min(g.denominator)), u128::from(g.denominator))
    }
}

mod hpcc_nic;
use hpcc_nic::HpccNic;

#[cfg(test)]
mod hpcc_tests;
#[cfg(test)]
mod tests;
