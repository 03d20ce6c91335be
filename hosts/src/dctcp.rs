//! DCTCP's sender (Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010, §3.1) on the
//! go-back-N transport's window.
//!
//! - The switches mark CE above K on the instantaneous queue (`[ecn]`).
//! - The receiver echoes, with each ACK or NAK, how many of the segments it acknowledges
//!   arrived marked: the exact count that §3.1's two-state delayed-ACK machine conveys, in
//!   the acknowledgement's `offset` field.
//! - Once per window of data the sender updates α ← (1 − g)·α + g·F, F the fraction of that
//!   window's segments that were marked, and if any were, cuts cwnd ← cwnd·(1 − α/2).
//!   Otherwise the window grows as TCP's: by one segment per acknowledged segment until the
//!   first cut (slow start), then by one segment per window.
//!
//! Loss is rare on a lossless fabric but handled as TCP does: a NAK (go-back-N's fast
//! retransmit) halves the window, a retransmission timeout restarts from one segment.
//! Deviation: the cut comes at the end of the window that saw marks, with that window's α,
//! where Linux cuts at the first echo with the previous window's α; both cut once per window.

use pfcswitch_link::units::BitRate;
use serde::{Deserialize, Serialize};

/// A connection's DCTCP settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct DctcpParams {
    /// g = 2^−shift_g, the weight of a window's marked fraction in α (§3.1's 1/16; Linux's
    /// `dctcp_shift_g`).
    pub shift_g: u8,
    /// Segments in flight before the first acknowledgement (RFC 6928's 10); `window` only.
    pub initial_window: u32,
    /// How a window with marks is cut; `window` only.
    pub reaction: EcnReaction,
    /// What α steers: the paper's congestion window, or HPCC's simulator's rate.
    pub model: DctcpModel,
    /// `hpcc` only: the rate's step per window of data without marks (`DCTCP_RATE_AI`:
    /// HPCC's `run.py` gives 615 Mbit/s, one 1,000-byte packet per 13 µs RTT).
    pub additive_increase: BitRate,
    /// `hpcc` only: the lowest rate a cut may set (`MIN_RATE`, 100 Mbit/s).
    pub min_rate: BitRate,
}

/// Whose DCTCP runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DctcpModel {
    /// Alizadeh et al. §3.1, as Linux runs it: α cuts a congestion window (this module).
    #[default]
    Window,
    /// HPCC's ns-3 (`rdma-hw.cc`, `CC_MODE 8`): α cuts the queue pair's rate, which starts
    /// at line rate ([`DctcpRate`](crate::DctcpRate)).
    Hpcc,
}

impl Default for DctcpParams {
    fn default() -> Self {
        DctcpParams {
            shift_g: 4,
            initial_window: 10,
            reaction: EcnReaction::Dctcp,
            model: DctcpModel::Window,
            additive_increase: BitRate::mbps(615),
            min_rate: BitRate::mbps(100),
        }
    }
}

impl DctcpParams {
    /// g = 2^−shift_g.
    pub fn g(&self) -> f64 {
        0.5f64.powi(i32::from(self.shift_g))
    }

    /// Each error names the key and why its value is rejected. The rates are `hpcc`'s only,
    /// so the window model's defaults hold on links slower than their 615 Mbit/s.
    pub fn validate_for(&self, line_rate: BitRate) -> Result<(), String> {
        if self.shift_g > 16 {
            return Err(format!("shift_g {} must be 0 to 16: g = 2^-shift_g", self.shift_g));
        }
        if self.model == DctcpModel::Window {
            return Ok(());
        }
        crate::within_line::within_line("additive_increase", self.additive_increase, line_rate)?;
        crate::within_line::within_line("min_rate", self.min_rate, line_rate)
    }
}

/// The sender's answer to CE marks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EcnReaction {
    /// By α/2, α the running share of marked segments (DCTCP).
    #[default]
    Dctcp,
    /// By half, whatever the share (RFC 3168 §6.1.2, classic ECN TCP: the CaPFC paper's NSC
    /// Linux senders); α stays 1.
    Rfc3168,
}

/// One connection's congestion state.
#[derive(Clone, Debug)]
pub struct Dctcp {
    g: f64,
    reaction: EcnReaction,
    alpha: f64,
    cwnd: f64,
    ssthresh: f64,
    max_window: f64,
    /// The current observation window ends when this sequence number is acknowledged.
    window_end: u32,
    acked: u32,
    marked: u32,
    cuts: u64,
}

impl Dctcp {
    /// `max_window`: the transport's own limit on segments in flight.
    pub fn new(params: DctcpParams, max_window: u32) -> Dctcp {
        let max_window = f64::from(max_window.max(1));
        Dctcp {
            g: params.g(),
            reaction: params.reaction,
            alpha: 1.0,
            cwnd: f64::from(params.initial_window.max(1)).min(max_window),
            ssthresh: f64::INFINITY,
            max_window,
            window_end: 0,
            acked: 0,
            marked: 0,
            cuts: 0,
        }
    }

    /// Segments the connection may have in flight.
    pub fn window(&self) -> u32 {
        self.cwnd as u32
    }

    /// α: the estimated share of marked segments.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// Window cuts so far.
    pub fn cuts(&self) -> u64 {
        self.cuts
    }

    /// An acknowledgement up to `ack` that newly covers `acked` segments, `marked` of which
    /// arrived CE; `next` is the next sequence number the sender will send.
    pub fn on_ack(&mut self, acked: u32, marked: u32, ack: u32, next: u32) {
        let marked = marked.min(acked);
        self.acked += acked;
        self.marked += marked;
        let clean = f64::from(acked - marked);
        if self.cwnd < self.ssthresh {
            self.cwnd += clean;
        } else {
            self.cwnd += clean / self.cwnd;
        }
        if ack >= self.window_end {
            if self.acked > 0 && self.reaction == EcnReaction::Dctcp {
                let fraction = f64::from(self.marked) / f64::from(self.acked);
                self.alpha = (1.0 - self.g) * self.alpha + self.g * fraction;
            }
            if self.marked > 0 {
                self.cwnd = (self.cwnd * (1.0 - self.alpha / 2.0)).max(1.0);
                self.ssthresh = self.cwnd;
                self.cuts += 1;
            }
            (self.acked, self.marked, self.window_end) = (0, 0, next);
        }
        self.cwnd = self.cwnd.min(self.max_window);
    }

    /// A NAK: go-back-N's fast retransmit, TCP's halving.
    pub fn on_nak(&mut self) {
        self.cwnd = (self.cwnd / 2.0).max(1.0);
        self.ssthresh = self.cwnd;
    }

    /// A retransmission timeout: from one segment, slow start to half the old window.
    pub fn on_timeout(&mut self) {
        self.ssthresh = (self.cwnd / 2.0).max(1.0);
        self.cwnd = 1.0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_grows_in_slow_start_until_marks_arrive() {
        let mut dctcp = Dctcp::new(DctcpParams::default(), 1000);
        assert_eq!(dctcp.window(), 10);
        dctcp.on_ack(10, 0, 10, 20);
        assert_eq!(dctcp.window(), 20, "one segment per acknowledged segment");
        assert_eq!(dctcp.cuts(), 0);
    }

    #[test]
    fn a_window_with_marks_cuts_by_alpha_over_two_and_alpha_follows_the_marked_fraction() {
        let mut dctcp = Dctcp::new(DctcpParams { shift_g: 4, initial_window: 100, ..DctcpParams::default() }, 1000);
        // α starts at 1 (as Linux does): the first marked window halves.
        dctcp.on_ack(100, 25, 100, 200);
        let alpha = 15.0 / 16.0 + 0.25 / 16.0;
        assert!((dctcp.alpha() - alpha).abs() < 1e-12);
        let expected = (100.0 + 75.0) * (1.0 - alpha / 2.0);
        assert_eq!(dctcp.window(), expected as u32, "cut once, at the window's end");
        // Windows without marks decay α by (1 − g) and grow by one segment per window.
        let before = dctcp.window();
        for round in 0..32 {
            let end = 200 + (round + 1) * 100;
            dctcp.on_ack(100, 0, end, end + 100);
        }
        assert!((dctcp.alpha() - alpha * (15.0f64 / 16.0).powi(32)).abs() < 1e-9);
        assert!(dctcp.window() > before && dctcp.window() < before + 40, "congestion avoidance");
        assert_eq!(dctcp.cuts(), 1);
    }

    #[test]
    fn losses_halve_and_a_timeout_restarts_from_one_segment() {
        let mut dctcp = Dctcp::new(DctcpParams { shift_g: 1, initial_window: 64, ..DctcpParams::default() }, 128);
        dctcp.on_nak();
        assert_eq!(dctcp.window(), 32);
        dctcp.on_timeout();
        assert_eq!(dctcp.window(), 1);
        dctcp.on_ack(1, 0, 1, 2);
        assert_eq!(dctcp.window(), 2, "slow start again, up to half the old window");
    }

    #[test]
    fn classic_ecn_halves_a_window_with_a_single_mark() {
        let params = DctcpParams { initial_window: 100, reaction: EcnReaction::Rfc3168, ..DctcpParams::default() };
        let mut classic = Dctcp::new(params, 1000);
        let mut dctcp = Dctcp::new(DctcpParams { reaction: EcnReaction::Dctcp, ..params }, 1000);
        for sender in [&mut classic, &mut dctcp] {
            sender.on_ack(100, 1, 100, 200);
            sender.on_ack(100, 1, 200, 300);
        }
        assert_eq!(classic.alpha(), 1.0);
        // Slow start to 199, halved to 99.5; then congestion avoidance to 100.5, halved again.
        assert_eq!(classic.window(), 50);
        assert!(dctcp.window() > classic.window(), "DCTCP cuts by α/2 < 1/2 once α decays");
    }
}
