//! HPCC's sender control law, after Li et al., "HPCC: High Precision Congestion Control"
//! (SIGCOMM 2019), §3 ("the paper" below: Algorithm 1, §3.2–3.3), as the authors' ns-3
//! simulator runs it with one rate for the whole path (`MULTI_RATE 0`): `rdma-hw.cc`'s
//! `HandleAckHp`, `UpdateRateHp` and `FastReactHp`, `rdma-queue-pair.cc`'s `GetWin`.
//!
//! - Every ACK echoes one INT record per hop of its data packet: a timestamp, the egress
//!   port's transmitted-bytes counter, its queue length and its speed B ([`HopRecord`]).
//! - Against the previous ACK's record of the same hop: τ = Δts, txRate = Δbytes·8/τ and
//!   u = txRate/B + min(q, q_prev)·8/(B·T), T the base RTT (the simulator writes the queue's
//!   term q·R_line/B/W with W = R_line·T/8, the BDP). The hop with the largest u decides, with
//!   its τ capped at T: U ← (U·(T − τ) + u·τ)/T (the paper's `MeasureInflight`). As in the
//!   simulator, whose search starts at u = 0 with a strict >, only a hop with u > 0 can
//!   decide: an idle path (nothing sent, no queue) leaves U as it was, and U stays above 0.
//! - The rate law (`ComputeWind`, with the window W = R·T and W_AI = R_AI·T expressed as
//!   rates, as the simulator does): with max_c = U/η, if max_c ≥ 1 or the additive stage has
//!   reached maxStage, R = Rc/max_c + R_AI and the stage restarts at 0; else R = Rc + R_AI
//!   and the stage advances. R is then held between `min_rate` and the line rate.
//! - The reference rate Rc and the stage are committed once per RTT: by the first ACK past
//!   the `snd_nxt` of the previous commit, which then records the current `snd_nxt`. Every
//!   other ACK reacts at once (§3.3's fast reaction): it updates U and sets the sending rate
//!   from the committed Rc and stage, which it leaves alone. With `fast_react` off those ACKs
//!   are ignored, records included, so that each commit measures over a whole RTT.
//! - The first ACK only stores its records and starts the first RTT. Until then the queue pair
//!   sends at the line rate with U = 1, as the simulator's queue pair starts.
//! - The window follows the rate (`VAR_WIN 1`): BDP·R/R_line, at least one byte.
//!
//! Where it deviates from the simulator, and why:
//! - Records are exact: the simulator quantises them to its INT header's fields (24-bit ns
//!   timestamps, 20-bit counters of 128-byte units, queues in 80-byte units); here timestamps
//!   are u64 nanoseconds and `tx_bytes` a u32 byte counter that wraps (deltas use
//!   `wrapping_sub`), and the path has no five-hop limit.
//! - A path change (a record count unlike the stored one) replaces the stored records and
//!   skips the measurement: deltas between different switches' counters and clocks mean
//!   nothing, and the simulator, which keeps indexing its stored records, would compare them.
//!   A full-update ACK still starts the next RTT.
//! - A hop whose record has the same timestamp as before (τ = 0) is left out of the maximum:
//!   its weight in U would be zero anyway, where the simulator divides by zero for txRate.
//!
//! A property of the law, not of this code (issue 47): a flow's records carry the queue its
//! own packets waited behind, which at HPCC's near-zero queue holds the other flows' packets
//! but not its own, so U reads lower the larger the flow's share; the commit settles where
//! Rc·(1 − η/U) = R_AI, and with a W_AI small beside that bias (the default 40 Mbit/s at
//! 100 Gbit/s) a larger flow stays larger (`sim/tests/delay_cc_network.rs`, and
//! `bench/ns3/hpcc_fairness_model.py` for the authors' code on the same setting).
//!
//! Not modelled: per-hop rates (`MULTI_RATE 1`), feedback sampling (`SAMPLE_FEEDBACK 1`), and
//! PINT. Rescheduling the next packet when the rate changes (`ChangeRate`) is the pacer's.
//! Deterministic: no clock (the records carry the time), plain f64 arithmetic.

use pfcswitch_link::units::BitRate;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// HPCC's settings. The defaults are the authors' for HPCC at 100 Gbit/s: `run.py --cc hp`
/// and `mix/config.txt` (see each field).
#[derive(Clone, Copy, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct HpccParams {
    /// η, the target utilization, in (0, 1] (0.95: the paper; `U_TARGET 0.95`).
    pub target_utilization: f64,
    /// maxStage: additive steps below η before a multiplicative one (0: `MI_THRESH 0` in
    /// `mix/config.txt` and `run.py`, i.e. every update is multiplicative plus R_AI;
    /// `third.cc` and ns-3's `MiThresh` attribute default to 5 when unset).
    pub max_stage: u32,
    /// R_AI, the additive increase as a rate: W_AI = R_AI × base RTT (40 Mbit/s: `run.py`'s
    /// `10 * bw / 25` Mb/s for HPCC at 100 Gbit/s; `mix/config.txt` has 50 Mb/s).
    pub rate_ai: BitRate,
    /// Whether ACKs between the once-per-RTT updates set the rate too (true: `FAST_REACT 1`).
    pub fast_react: bool,
    /// The lowest rate the law may set (100 Mbit/s: `MIN_RATE` in `mix/config.txt`, ns-3's
    /// `MinRate` default; `run.py` writes 1000 Mb/s).
    pub min_rate: BitRate,
    /// Whether the window scales with the rate, BDP × rate / line rate, or stays the BDP
    /// (true: `VAR_WIN 1`).
    pub variable_window: bool,
}

impl Default for HpccParams {
    fn default() -> Self {
        HpccParams {
            target_utilization: 0.95,
            max_stage: 0,
            rate_ai: BitRate::mbps(40),
            fast_react: true,
            min_rate: BitRate::mbps(100),
            variable_window: true,
        }
    }
}

impl HpccParams {
    /// Each error names the key and why its value is rejected. Rates cannot be zero
    /// ([`BitRate`] refuses it when parsed).
    pub fn validate(&self) -> Result<(), String> {
        let eta = self.target_utilization;
        if !(eta > 0.0 && eta <= 1.0) {
            return Err(format!("target_utilization {eta} must be in (0, 1]"));
        }
        Ok(())
    }

    /// [`validate`](Self::validate), and neither `min_rate` nor `rate_ai` may exceed
    /// `line_rate`.
    pub fn validate_for(&self, line_rate: BitRate) -> Result<(), String> {
        self.validate()?;
        crate::within_line::within_line("min_rate", self.min_rate, line_rate)?;
        crate::within_line::within_line("rate_ai", self.rate_ai, line_rate)
    }
}

/// One hop's INT record as an ACK echoes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HopRecord {
    /// When the packet left the hop's egress port, in nanoseconds (the switch's clock).
    pub timestamp_ns: u64,
    /// Bytes the egress port has transmitted: a wrapping counter, compared by difference.
    pub tx_bytes: u32,
    /// The egress queue's length then, in bytes.
    pub queue_bytes: u32,
    /// The egress port's speed.
    pub link: BitRate,
}

/// One queue pair's HPCC state.
#[derive(Clone, Debug, PartialEq)]
pub struct Hpcc {
    params: HpccParams,
    line_rate: u64,
    base_rtt_ns: u64,
    bdp: u64,
    /// The sending rate R, bit/s.
    rate: u64,
    /// The committed reference rate Rc, bit/s.
    reference: u64,
    stage: u32,
    /// U.
    utilization: f64,
    /// `snd_nxt` at the last commit: the first ACK past it commits again.
    last_update_seq: u64,
    /// The last records taken into account; none before the first ACK.
    records: Option<Vec<HopRecord>>,
}

impl Hpcc {
    /// A queue pair at `line_rate` (its NIC's) with U = 1, whose window is the BDP,
    /// `line_rate` × `base_rtt` (at least one byte). `params` should have passed
    /// [`HpccParams::validate_for`] this line rate. Panics if `base_rtt` is under 1 ns.
    pub fn new(params: HpccParams, line_rate: BitRate, base_rtt: Duration) -> Hpcc {
        debug_assert_eq!(params.validate_for(line_rate), Ok(()));
        let base_rtt_ns = u64::try_from(base_rtt.as_nanos()).unwrap_or(u64::MAX);
        assert!(base_rtt_ns > 0, "HPCC needs a base RTT of at least 1ns");
        let bdp = u128::from(line_rate.bps()) * u128::from(base_rtt_ns) / 8_000_000_000;
        Hpcc {
            params,
            line_rate: line_rate.bps(),
            base_rtt_ns,
            bdp: u64::try_from(bdp).unwrap_or(u64::MAX).max(1),
            rate: line_rate.bps(),
            reference: line_rate.bps(),
            stage: 0,
            utilization: 1.0,
            last_update_seq: 0,
            records: None,
        }
    }

    /// The sending rate R.
    pub fn rate(&self) -> BitRate {
        BitRate::from_bps(self.rate).expect("the rate stays at or above min_rate")
    }

    /// The reference rate Rc, committed once per RTT.
    pub fn reference_rate(&self) -> BitRate {
        BitRate::from_bps(self.reference).expect("the rate stays at or above min_rate")
    }

    /// Bytes the queue pair may have in flight: the BDP, or with `variable_window` the BDP ×
    /// R / line rate, rounded down but at least one byte (as `GetWin`: with no window at all
    /// the queue pair could never send again to learn that the path has cleared).
    pub fn window_bytes(&self) -> u64 {
        if !self.params.variable_window {
            return self.bdp;
        }
        let window = u128::from(self.bdp) * u128::from(self.rate) / u128::from(self.line_rate);
        u64::try_from(window).unwrap_or(u64::MAX).max(1)
    }

    /// U, the normalized inflight bytes of the most loaded hop (1 before any measurement).
    pub fn utilization(&self) -> f64 {
        self.utilization
    }

    /// The committed count of additive steps since the last multiplicative one.
    pub fn stage(&self) -> u32 {
        self.stage
    }

    /// An ACK arrived: `acked` is the sequence it acknowledges (cumulative bytes), and
    /// `next_to_send` the queue pair's `snd_nxt` now; `hops` are its INT records, in path
    /// order.
    pub fn on_ack(&mut self, acked: u64, next_to_send: u64, hops: &[HopRecord]) {
        let Some(previous) = &mut self.records else {
            // The first ACK: nothing to compare with yet.
            self.records = Some(hops.to_vec());
            self.last_update_seq = next_to_send;
            return;
        };
        let commit = acked > self.last_update_seq;
        if !commit && !self.params.fast_react {
            return;
        }
        if previous.len() != hops.len() {
            // The path changed: start measuring it afresh (see the module's deviations).
            previous.clear();
            previous.extend_from_slice(hops);
        } else if !hops.is_empty() {
            let (u, tau) = most_loaded(previous, hops, self.line_rate, self.bdp);
            previous.copy_from_slice(hops);
            let tau = tau.min(self.base_rtt_ns);
            let rtt = self.base_rtt_ns as f64;
            self.utilization = (self.utilization * (self.base_rtt_ns - tau) as f64 + u * tau as f64) / rtt;
            let (rate, stage) = self.rate_law();
            self.rate = rate;
            if commit {
                (self.reference, self.stage) = (rate, stage);
            }
        }
        if commit {
            self.last_update_seq = self.last_update_seq.max(next_to_send);
        }
    }

    /// The new rate and stage from U and the committed Rc and stage.
    fn rate_law(&self) -> (u64, u32) {
        let max_c = self.utilization / self.params.target_utilization;
        let rate_ai = self.params.rate_ai.bps();
        let (rate, stage) = if max_c >= 1.0 || self.stage >= self.params.max_stage {
            // Rc/max_c truncated to whole bit/s, as ns-3's DataRate (saturating, were U ever 0).
            (((self.reference as f64 / max_c) as u64).saturating_add(rate_ai), 0)
        } else {
            (self.reference.saturating_add(rate_ai), self.stage.saturating_add(1))
        };
        (rate.max(self.params.min_rate.bps()).min(self.line_rate), stage)
    }
}

/// The largest u among the hops, and its τ in ns; (0, 0) if no hop has a τ, as the
/// simulator's search starts (the first hop wins ties).
fn most_loaded(previous: &[HopRecord], hops: &[HopRecord], line_rate: u64, bdp: u64) -> (f64, u64) {
    let (mut max_u, mut max_tau) = (0.0, 0);
    for (old, new) in previous.iter().zip(hops) {
        let tau = new.timestamp_ns.wrapping_sub(old.timestamp_ns);
        if tau == 0 {
            continue;
        }
        let link = new.link.bps() as f64;
        let tx_rate = f64::from(new.tx_bytes.wrapping_sub(old.tx_bytes)) * 8.0 * 1e9 / tau as f64;
        let queue = f64::from(new.queue_bytes.min(old.queue_bytes));
        let u = tx_rate / link + queue * line_rate as f64 / link / bdp as f64;
        if u > max_u {
            (max_u, max_tau) = (u, tau);
        }
    }
    (max_u, max_tau)
}

#[cfg(test)]
mod tests;
