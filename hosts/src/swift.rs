//! Swift's sender window (Kumar et al., "Swift: Delay is Simple and Effective for Congestion
//! Control in the Datacenter", SIGCOMM 2020, §3 and its Algorithm 1; "the paper" below): a
//! congestion window in segments, which may fall below one, driven by the delay of each ACK
//! against a target delay.
//!
//! - Target delay (§3, topology- and flow-based scaling): base_target + hops·h + fs, with
//!   the flow-scaling term fs = clamp(α/√cwnd + β, 0, fs_range),
//!   α = fs_range / (1/√fs_min_cwnd − 1/√fs_max_cwnd), β = −α/√fs_max_cwnd: fs_range at
//!   fs_min_cwnd and below, 0 at fs_max_cwnd and above.
//!   It is taken with the window before the ACK's update, and rounded to the nanosecond.
//! - An ACK (Algorithm 1) resets the retransmit counter. Below the target the window grows by
//!   ai/cwnd per acknowledged segment when cwnd ≥ 1, by ai per segment below 1. At or above it,
//!   if at least one RTT has passed since the last decrease, the window is cut to
//!   max(1 − β_md·(delay − target)/delay, 1 − max_mdf)·cwnd.
//! - A retransmit timeout counts one more retransmission; from `retransmit_reset_threshold` in
//!   a row the window drops to `min_cwnd`, before that it is cut by (1 − max_mdf) if one RTT
//!   has passed since the last decrease. Fast recovery (a loss found without a timeout: a
//!   NAK here) resets the counter and cuts by (1 − max_mdf) under the same guard.
//! - After each event the window is clamped to [`min_cwnd`, `max_cwnd`]; if it shrank, that
//!   was a decrease and its time is kept for the once-per-RTT guard. Below one segment the
//!   sender paces one segment per RTT/cwnd.
//!
//! Deterministic: time comes in as a parameter and the window is an `f64` updated in a fixed
//! order.
//!
//! Deviations, and why:
//!
//! - One delay serves as both Swift's delay and its RTT: the once-per-RTT guard (`now −
//!   t_last_decrease ≥ rtt`) compares with the latest ACK's `delay` (this ACK's, on an ACK),
//!   and a timeout before any ACK may always cut. The paper measures the RTT end to end and
//!   compares the fabric's delay with the target (§3.1): the RTT less the remote queuing
//!   delay the ACK echoes (from the data's arrival at the receiver's NIC to the ACK's
//!   departure). The transport passes that: its RTT sample ends when the sender's interface
//!   received the ACK (on the datapath, the endpoint XDP program's stamp), and the traffic
//!   framing's ACK carries its receiver's delay (RoCEv2's ACK has no field for it: there
//!   the delay is the whole RTT).
//! - One window: the paper's fabric window (fcwnd) and endpoint window (ecwnd, compared with
//!   an endpoint target) and their minimum are not separated; this is the fabric window's
//!   law, with the fabric's scaled target.
//!
//! Defaults, from Google's public Isekai simulator
//! (`isekai/host/falcon/rue/algorithm/swift.cc`, `DefaultConfiguration`, read in the
//! `testing-cla/downstreamIsekai` copy), whose Swift follows Algorithm 1: base_target 25 µs
//! (`fabric_base_delay`), h = 1 µs per hop (`topo_scaling_per_hop`), fs_range 100 µs
//! (`max_flow_scaling`), fs_min_cwnd 0.1 and fs_max_cwnd 256 (`min/max_flow_scaling_window`),
//! ai = 1 (`fabric_additive_increment_factor`), β_md = 0.8
//! (`fabric_multiplicative_decrease_factor`), max_mdf = 0.5
//! (`max_fabric_multiplicative_decrease`), min_cwnd 0.01 and max_cwnd 256
//! (`min/max_fabric_congestion_window`), retransmit_reset_threshold 3 (`retransmit_limit`).
//! initial_cwnd 32 is chosen, for want of a connection default in either source: Isekai's
//! `kInitialFlowFcwnd` (`swift.h`), a multipath flow's first window. The paper gives the
//! equations; these numbers were not checked against it. Where Isekai departs from Algorithm
//! 1 we follow the algorithm: its second timeout (below the limit) does not cut, and its drop
//! to `min_cwnd` waits for the once-per-RTT guard.

use pfcswitch_link::time::Instant;
use pfcswitch_link::units::duration;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// A connection's Swift settings; windows in segments.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct SwiftParams {
    /// The target delay of a one-hop path at a large window (25 µs).
    #[serde(with = "duration")]
    pub base_target: Duration,
    /// h: the target's allowance per hop (1 µs).
    #[serde(with = "duration")]
    pub per_hop: Duration,
    /// The flow-scaling term's largest value, reached at `fs_min_cwnd` (100 µs).
    #[serde(with = "duration")]
    pub fs_range: Duration,
    /// The window at and below which flow scaling adds all of `fs_range` (0.1).
    pub fs_min_cwnd: f64,
    /// The window at and above which flow scaling adds nothing (256).
    pub fs_max_cwnd: f64,
    /// ai: segments added per window of ACKs below the target (1).
    pub additive_increase: f64,
    /// β_md: the decrease's weight of (delay − target)/delay, in (0, 1] (0.8).
    pub beta: f64,
    /// max_mdf: the largest share a decrease removes, in (0, 1) (0.5).
    pub max_mdf: f64,
    /// The smallest window (0.01).
    pub min_cwnd: f64,
    /// The largest window (256).
    pub max_cwnd: f64,
    /// The window before the first ACK (32).
    pub initial_cwnd: f64,
    /// Timeouts in a row from which the window drops to `min_cwnd` (3).
    pub retransmit_reset_threshold: u32,
}

impl Default for SwiftParams {
    fn default() -> Self {
        SwiftParams {
            base_target: Duration::from_micros(25),
            per_hop: Duration::from_micros(1),
            fs_range: Duration::from_micros(100),
            fs_min_cwnd: 0.1,
            fs_max_cwnd: 256.0,
            additive_increase: 1.0,
            beta: 0.8,
            max_mdf: 0.5,
            min_cwnd: 0.01,
            max_cwnd: 256.0,
            initial_cwnd: 32.0,
            retransmit_reset_threshold: 3,
        }
    }
}

impl SwiftParams {
    /// Each error names the key and why its value is rejected.
    pub fn validate(&self) -> Result<(), String> {
        if self.base_target.is_zero() {
            return Err("base_target must be at least 1ns".into());
        }
        if !(self.fs_min_cwnd > 0.0 && self.fs_min_cwnd.is_finite()) {
            return Err(format!("fs_min_cwnd {} must be above 0", self.fs_min_cwnd));
        }
        if !(self.fs_max_cwnd > self.fs_min_cwnd && self.fs_max_cwnd.is_finite()) {
            return Err(format!("fs_max_cwnd {} must be above fs_min_cwnd {}", self.fs_max_cwnd, self.fs_min_cwnd));
        }
        if !(self.additive_increase > 0.0 && self.additive_increase.is_finite()) {
            return Err(format!("additive_increase {} must be above 0", self.additive_increase));
        }
        if !(self.beta > 0.0 && self.beta <= 1.0) {
            return Err(format!("beta {} must be in (0, 1]", self.beta));
        }
        if !(self.max_mdf > 0.0 && self.max_mdf < 1.0) {
            return Err(format!("max_mdf {} must be in (0, 1)", self.max_mdf));
        }
        if !(self.min_cwnd > 0.0 && self.min_cwnd.is_finite()) {
            return Err(format!("min_cwnd {} must be above 0", self.min_cwnd));
        }
        if !(self.max_cwnd >= self.min_cwnd && self.max_cwnd.is_finite()) {
            return Err(format!("max_cwnd {} must not be below min_cwnd {}", self.max_cwnd, self.min_cwnd));
        }
        if !(self.initial_cwnd >= self.min_cwnd && self.initial_cwnd <= self.max_cwnd) {
            return Err(format!(
                "initial_cwnd {} must be within [min_cwnd, max_cwnd] = [{}, {}]",
                self.initial_cwnd, self.min_cwnd, self.max_cwnd
            ));
        }
        if self.retransmit_reset_threshold == 0 {
            return Err("retransmit_reset_threshold must be at least 1".into());
        }
        Ok(())
    }
}

/// One connection's Swift state.
#[derive(Clone, Debug, PartialEq)]
pub struct Swift {
    params: SwiftParams,
    /// Flow scaling's α (ns·√segment) and β (ns).
    fs_alpha: f64,
    fs_beta: f64,
    cwnd: f64,
    /// The latest ACK's delay, the RTT of the once-per-RTT guard.
    rtt: Option<Duration>,
    last_decrease: Option<Instant>,
    retransmits: u32,
    decreases: u64,
}

impl Swift {
    /// At `initial_cwnd`; `params` should have passed [`SwiftParams::validate`].
    pub fn new(params: SwiftParams) -> Swift {
        debug_assert_eq!(params.validate(), Ok(()));
        let range = params.fs_range.as_nanos() as f64;
        let fs_alpha = range / (1.0 / params.fs_min_cwnd.sqrt() - 1.0 / params.fs_max_cwnd.sqrt());
        Swift {
            params,
            fs_alpha,
            fs_beta: -fs_alpha / params.fs_max_cwnd.sqrt(),
            cwnd: params.initial_cwnd.clamp(params.min_cwnd, params.max_cwnd),
            rtt: None,
            last_decrease: None,
            retransmits: 0,
            decreases: 0,
        }
    }

    /// The congestion window in segments; below 1 the sender paces.
    pub fn cwnd(&self) -> f64 {
        self.cwnd
    }

    /// Timeouts since the last ACK or fast recovery.
    pub fn retransmits(&self) -> u32 {
        self.retransmits
    }

    /// Decreases so far (cuts, drops to `min_cwnd`).
    pub fn decreases(&self) -> u64 {
        self.decreases
    }

    /// When the window last shrank.
    pub fn last_decrease(&self) -> Option<Instant> {
        self.last_decrease
    }

    /// The target delay over `hops` hops at the current window, to the nanosecond.
    pub fn target_delay(&self, hops: u32) -> Duration {
        let p = &self.params;
        let range = p.fs_range.as_nanos() as f64;
        let flow_scaling = (self.fs_alpha / self.cwnd.sqrt() + self.fs_beta).clamp(0.0, range);
        p.base_target
            .saturating_add(p.per_hop.saturating_mul(hops))
            .saturating_add(Duration::from_nanos(flow_scaling.round() as u64))
    }

    /// The gap between segments when the window is below one segment: RTT/cwnd.
    pub fn pacing_interval(&self, rtt: Duration) -> Option<Duration> {
        (self.cwnd < 1.0).then(|| Duration::from_nanos((rtt.as_nanos() as f64 / self.cwnd).round() as u64))
    }

    /// An ACK at `now` for `acked_segments` segments, whose delay was `delay` over `hops` hops.
    pub fn on_ack(&mut self, now: Instant, delay: Duration, hops: u32, acked_segments: u32) {
        let before = self.cwnd;
        let target = self.target_delay(hops);
        self.rtt = Some(delay);
        self.retransmits = 0;
        let p = self.params;
        if delay < target {
            let increase = p.additive_increase * f64::from(acked_segments);
            self.cwnd += if self.cwnd >= 1.0 { increase / self.cwnd } else { increase };
        } else if self.can_decrease(now) {
            let (delay, target) = (delay.as_nanos() as f64, target.as_nanos() as f64);
            self.cwnd *= (1.0 - p.beta * (delay - target) / delay).max(1.0 - p.max_mdf);
        }
        self.settle(now, before);
    }

    /// A retransmit timeout fired at `now`.
    pub fn on_retransmit_timeout(&mut self, now: Instant) {
        let before = self.cwnd;
        self.retransmits = self.retransmits.saturating_add(1);
        if self.retransmits >= self.params.retransmit_reset_threshold {
            self.cwnd = self.params.min_cwnd;
        } else if self.can_decrease(now) {
            self.cwnd *= 1.0 - self.params.max_mdf;
        }
        self.settle(now, before);
    }

    /// A loss found without a timeout (fast recovery; go-back-N's NAK) at `now`.
    pub fn on_fast_recovery(&mut self, now: Instant) {
        let before = self.cwnd;
        self.retransmits = 0;
        if self.can_decrease(now) {
            self.cwnd *= 1.0 - self.params.max_mdf;
        }
        self.settle(now, before);
    }

    /// At least one RTT since the last decrease (always, before any decrease or ACK).
    fn can_decrease(&self, now: Instant) -> bool {
        self.last_decrease.is_none_or(|last| now - last >= self.rtt.unwrap_or(Duration::ZERO))
    }

    fn settle(&mut self, now: Instant, before: f64) {
        self.cwnd = self.cwnd.clamp(self.params.min_cwnd, self.params.max_cwnd);
        if self.cwnd < before {
            self.last_decrease = Some(now);
            self.decreases += 1;
        }
    }
}

#[cfg(test)]
mod tests;
