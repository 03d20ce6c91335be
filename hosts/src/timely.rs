//! TIMELY's sender rate control (Mittal et al., "TIMELY: RTT-based Congestion Control for the
//! Datacenter", SIGCOMM 2015, §4 and its Algorithm 1; "the paper" below): one rate per
//! connection, driven by the RTT of each completion event.
//!
//! For each RTT sample `new_rtt` (after the first, which only seeds `prev_rtt`):
//!
//! - new_rtt_diff = new_rtt − prev_rtt; prev_rtt = new_rtt;
//!   rtt_diff = (1 − α)·rtt_diff + α·new_rtt_diff (an EWMA of the difference);
//!   normalized gradient = rtt_diff / minRTT.
//! - new_rtt < T_low: R += δ (low RTTs: the gradient is noise there).
//! - new_rtt > T_high: R ← R·(1 − β·(1 − T_high/new_rtt)) (high RTTs: a bound on queueing).
//! - gradient ≤ 0: R += N·δ, N = 5 once the gradient has been ≤ 0 for `hai_threshold` (5)
//!   completion events in a row, this one included (hyperactive increase, HAI), else N = 1.
//! - gradient > 0: R ← R·(1 − β·gradient), the factor floored at 0.
//!
//! R stays within [`min_rate`, line rate]. Deterministic: time comes in as a parameter and the
//! state is a handful of `f64`s updated in a fixed order.
//!
//! Two models, as for DCQCN (`timely.model`):
//!
//! - `mittal` (the default) is Algorithm 1 as written: every sample updates the rate and
//!   `prev_rtt`, and HAI counts completion events with a gradient ≤ 0 (the algorithm's "N = 5
//!   if gradient < 0 for five completion events"; ≤ 0 because that is the branch it selects).
//! - `hpcc` follows the TIMELY of HPCC's authors' ns-3 simulator (`rdma-hw.cc`,
//!   `HandleAckTimely`/`UpdateRateTimely`, `CC_MODE 7`), for runs whose numbers compare with
//!   that simulator's. It updates once per RTT: an ACK updates only if it acknowledges data
//!   sent after the last update (its `lastUpdateSeq`, `snd_nxt` at the last update); here,
//!   without sequence numbers, a sample updates only if it was sent (now − rtt) at or after
//!   the last update, which is the same test. Samples in between are ignored (its
//!   `FastReactTimely` is empty), and `prev_rtt` is the RTT of the last update, so
//!   new_rtt_diff spans one RTT. Its hyper step counts consecutive increases of either kind
//!   (below T_low too) and applies to both once five came before (`m_incStage < 5`): the
//!   sixth increase in a row is the first hyper one; any decrease resets the count. Its step
//!   is `RATE_HAI` (5 × `RATE_AI` in its `run.py`: the paper's N·δ), `hyper_increase` here.
//!
//! Where both depart from the paper, and why:
//!
//! - minRTT is a setting (`min_rtt`, 20 µs) as in HPCC's simulator (`TimelyMinRtt`), not a
//!   running minimum: the paper normalises by "the minimum RTT" without saying how it is
//!   obtained; a constant keeps the gradient's scale the same for every flow and independent
//!   of which samples came first.
//! - The first sample only seeds prev_rtt (HPCC's "not first RTT" test): Algorithm 1 leaves
//!   prev_rtt undefined before it.
//! - The rate is an `f64` of bit/s, reported rounded to whole bit/s; HPCC's `DataRate` keeps
//!   whole bit/s after each step.
//!
//! Defaults: δ = 10 Mbit/s, T_low = 50 µs, T_high = 500 µs, β = 0.8, α = 0.875 (the paper's
//! settings; HPCC's README says its simulator uses the paper's, and they are its `rdma-hw.cc`
//! attribute defaults `TimelyAlpha`, `TimelyBeta`, `TimelyTLow`, `TimelyTHigh` and its
//! `run.py`'s `RATE_AI` of 10 Mbit/s at 10 Gbit/s); N = 5 (Algorithm 1; `run.py`'s `RATE_HAI`
//! = 5 × `RATE_AI`, hard-coded `m_incStage < 5`); minRTT = 20 µs (HPCC's `TimelyMinRtt`; its
//! README takes settings absent from the paper from Zhu et al., CoNEXT 2016, footnote 4);
//! `min_rate` = 100 Mbit/s (HPCC's `MIN_RATE` in `third.cc` and `mix/config.txt`; the paper
//! gives none).

use pfcswitch_link::time::Instant;
use pfcswitch_link::units::{BitRate, duration, format_duration};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// A connection's TIMELY settings.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct TimelyParams {
    /// δ: the additive increment (10 Mbit/s).
    pub additive_increase: BitRate,
    /// N·δ: the hyperactive increment (50 Mbit/s: N = 5).
    pub hyper_increase: BitRate,
    /// Completion events with a gradient ≤ 0 in a row (`mittal`), or increases in a row before
    /// this one (`hpcc`), from which the increment is `hyper_increase` (5).
    pub hai_threshold: u32,
    /// T_low: below it the rate grows by δ whatever the gradient (50 µs).
    #[serde(with = "duration")]
    pub t_low: Duration,
    /// T_high: above it the rate is cut by β·(1 − T_high/RTT) whatever the gradient (500 µs).
    #[serde(with = "duration")]
    pub t_high: Duration,
    /// β: the multiplicative decrease factor, in (0, 1] (0.8).
    pub beta: f64,
    /// α: the EWMA weight of the newest RTT difference, in (0, 1] (0.875).
    pub alpha: f64,
    /// minRTT: the gradient's normaliser (20 µs).
    #[serde(with = "duration")]
    pub min_rtt: Duration,
    /// The lowest rate a decrease may set (100 Mbit/s).
    pub min_rate: BitRate,
    /// Algorithm 1 as written (`mittal`) or HPCC's ns-3 (`hpcc`).
    pub model: TimelyModel,
}

/// Whose TIMELY runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TimelyModel {
    /// Mittal et al. 2015, Algorithm 1: an update per completion event.
    #[default]
    Mittal,
    /// HPCC's ns-3 (`rdma-hw.cc`, `CC_MODE 7`): an update per RTT.
    Hpcc,
}

impl Default for TimelyParams {
    fn default() -> Self {
        TimelyParams {
            additive_increase: BitRate::mbps(10),
            hyper_increase: BitRate::mbps(50),
            hai_threshold: 5,
            t_low: Duration::from_micros(50),
            t_high: Duration::from_micros(500),
            beta: 0.8,
            alpha: 0.875,
            min_rtt: Duration::from_micros(20),
            min_rate: BitRate::mbps(100),
            model: TimelyModel::Mittal,
        }
    }
}

impl TimelyParams {
    /// Each error names the key and why its value is rejected.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.beta > 0.0 && self.beta <= 1.0) {
            return Err(format!("beta {} must be in (0, 1]", self.beta));
        }
        if !(self.alpha > 0.0 && self.alpha <= 1.0) {
            return Err(format!("alpha {} must be in (0, 1]", self.alpha));
        }
        if self.t_low >= self.t_high {
            return Err(format!(
                "t_low {} must be below t_high {}",
                format_duration(self.t_low),
                format_duration(self.t_high)
            ));
        }
        if self.min_rtt.is_zero() {
            return Err("min_rtt must be at least 1ns".into());
        }
        if self.hai_threshold == 0 {
            return Err("hai_threshold must be at least 1".into());
        }
        Ok(())
    }

    /// [`validate`](Self::validate), and `min_rate` must not exceed `line_rate`.
    pub fn validate_for(&self, line_rate: BitRate) -> Result<(), String> {
        self.validate()?;
        crate::within_line::within_line("min_rate", self.min_rate, line_rate)
    }
}

/// One connection's TIMELY state.
#[derive(Clone, Debug, PartialEq)]
pub struct Timely {
    params: TimelyParams,
    line_rate: f64,
    min_rate: f64,
    /// R, in bit/s.
    rate: f64,
    /// prev_rtt, in ns; `None` before the first sample.
    prev_rtt: Option<f64>,
    /// rtt_diff, in ns.
    rtt_diff: f64,
    gradient: f64,
    /// `mittal`: completion events in a row with a gradient ≤ 0; `hpcc`: increases in a row.
    streak: u32,
    last_update: Option<Instant>,
    updates: u64,
}

impl Timely {
    /// At `line_rate`; `params` should have passed [`TimelyParams::validate`]. A `min_rate`
    /// above the line rate stops at the line rate.
    pub fn new(params: TimelyParams, line_rate: BitRate) -> Timely {
        debug_assert_eq!(params.validate(), Ok(()));
        let line = line_rate.bps() as f64;
        Timely {
            params,
            line_rate: line,
            min_rate: (params.min_rate.bps() as f64).min(line),
            rate: line,
            prev_rtt: None,
            rtt_diff: 0.0,
            gradient: 0.0,
            streak: 0,
            last_update: None,
            updates: 0,
        }
    }

    /// The rate the connection may send at, rounded to whole bit/s.
    pub fn rate(&self) -> BitRate {
        BitRate::from_bps((self.rate.round() as u64).max(1)).expect("at least 1 bit/s")
    }

    /// rtt_diff, the EWMA of successive RTT differences, in ns (negative while RTTs fall).
    pub fn rtt_diff(&self) -> f64 {
        self.rtt_diff
    }

    /// The normalized gradient of the last update (rtt_diff / minRTT).
    pub fn gradient(&self) -> f64 {
        self.gradient
    }

    /// `mittal`: completion events in a row whose gradient was ≤ 0; `hpcc`: increases in a row.
    pub fn hai_streak(&self) -> u32 {
        self.streak
    }

    /// Samples that updated the state (the first, seeding prev_rtt, included).
    pub fn updates(&self) -> u64 {
        self.updates
    }

    /// One completion event's RTT sample, taken at `now`.
    pub fn on_rtt(&mut self, now: Instant, rtt: Duration) {
        if self.params.model == TimelyModel::Hpcc
            && let Some(last) = self.last_update
        {
            let sent = now.as_nanos().saturating_sub(u64::try_from(rtt.as_nanos()).unwrap_or(u64::MAX));
            if sent < last.as_nanos() {
                return; // its data left before the last update: not a new RTT's feedback
            }
        }
        self.last_update = Some(now);
        self.updates += 1;
        let new_rtt = rtt.as_nanos() as f64;
        let Some(prev_rtt) = self.prev_rtt.replace(new_rtt) else {
            return;
        };
        let p = self.params;
        let new_rtt_diff = new_rtt - prev_rtt;
        self.rtt_diff = (1.0 - p.alpha) * self.rtt_diff + p.alpha * new_rtt_diff;
        self.gradient = self.rtt_diff / p.min_rtt.as_nanos() as f64;
        let t_low = p.t_low.as_nanos() as f64;
        let t_high = p.t_high.as_nanos() as f64;
        let delta = p.additive_increase.bps() as f64;
        let hyper = p.hyper_increase.bps() as f64;
        let factor = match p.model {
            TimelyModel::Mittal => {
                self.streak = if self.gradient <= 0.0 { self.streak.saturating_add(1) } else { 0 };
                if new_rtt < t_low {
                    self.rate += delta;
                    None
                } else if new_rtt > t_high {
                    Some(1.0 - p.beta * (1.0 - t_high / new_rtt))
                } else if self.gradient <= 0.0 {
                    self.rate += if self.streak >= p.hai_threshold { hyper } else { delta };
                    None
                } else {
                    Some(1.0 - p.beta * self.gradient)
                }
            }
            TimelyModel::Hpcc => {
                let factor = if new_rtt < t_low {
                    None
                } else if new_rtt > t_high {
                    Some(1.0 - p.beta * (1.0 - t_high / new_rtt))
                } else if self.gradient <= 0.0 {
                    None
                } else {
                    Some(1.0 - p.beta * self.gradient)
                };
                if factor.is_none() {
                    self.rate += if self.streak >= p.hai_threshold { hyper } else { delta };
                    self.streak = self.streak.saturating_add(1);
                } else {
                    self.streak = 0;
                }
                factor
            }
        };
        if let Some(factor) = factor {
            self.rate *= factor.max(0.0);
        }
        self.rate = self.rate.clamp(self.min_rate, self.line_rate);
    }
}

#[cfg(test)]
mod tests;
