//! DCTCP as HPCC's authors' ns-3 simulator runs it (`rdma-hw.cc`, `HandleAckDctcp`, `CC_MODE
//! 8`; what their `run.py --cc dctcp` and the HPCC paper's DCTCP curves use): DCTCP's α
//! (Alizadeh et al., SIGCOMM 2010, §3.1) steering a queue pair's *rate*, not a window.
//!
//! On every acknowledgement (ACK or NAK), each echoing whether the segment that drew it
//! arrived CE:
//!
//! - a marked one counts toward the current batch;
//! - if it acknowledges past the batch's end (`snd_nxt` when the batch began), the batch
//!   closes: α ← (1 − g)·α + g·min(1, marked ÷ segments in the batch), and a new batch of
//!   the segments now in flight (plus one) begins at `snd_nxt`. The first acknowledgement
//!   only opens the first batch (and leaves its marks counted in the second, as ns-3 does);
//! - a marked acknowledgement outside congestion-window reduction (CWR) cuts the rate,
//!   R ← max(min_rate, R·(1 − α/2)), and enters CWR until an acknowledgement passes
//!   `snd_nxt` at the cut: at most one cut per window of data;
//! - a batch that closes outside CWR adds `additive_increase` (`DCTCP_RATE_AI`), up to line
//!   rate.
//!
//! R starts at line rate and α at 1 (ns-3's `RdmaQueuePair`), so the first mark halves R.
//! With `HAS_WIN 1, VAR_WIN 1` (`run.py`'s preset) the transport also caps bytes in flight
//! at the BDP scaled by R ÷ line rate (`base_rtt`, as for DCQCN+w).
//!
//! Where this is not the paper's DCTCP, and why it is built: the paper and Linux cut a
//! window and start from a small one (`DctcpModel::Window`, the crate's `Dctcp`); HPCC's
//! simulator starts every flow at line rate and cuts a rate, so its DCTCP's flows of 45 KB
//! and more finish about twice as fast as a windowed DCTCP's on its fat-tree
//! (docs/simulator.md). This model exists to compare with that simulator like for like.
//! Sequence numbers are segments here, bytes of 1,000-byte packets there: ns-3's batch of
//! `bytes ÷ MTU + 1` packets is `segments + 1` here.

use crate::DctcpParams;
use pfcswitch_link::units::BitRate;

/// One queue pair's rate-based DCTCP state.
#[derive(Clone, Debug, PartialEq)]
pub struct DctcpRate {
    g: f64,
    line_rate: f64,
    min_rate: f64,
    additive_increase: f64,
    /// R, in bit/s.
    rate: f64,
    alpha: f64,
    /// The current batch ends when an acknowledgement passes this; `None` before the first.
    batch_end: Option<u32>,
    batch_segments: u32,
    marked_acks: u32,
    /// In CWR until an acknowledgement passes this.
    cwr_until: Option<u32>,
}

impl DctcpRate {
    pub fn new(params: DctcpParams, line_rate: BitRate) -> DctcpRate {
        let line = line_rate.bps() as f64;
        DctcpRate {
            g: params.g(),
            line_rate: line,
            min_rate: (params.min_rate.bps() as f64).min(line),
            additive_increase: params.additive_increase.bps() as f64,
            rate: line,
            alpha: 1.0,
            batch_end: None,
            batch_segments: 0,
            marked_acks: 0,
            cwr_until: None,
        }
    }

    /// R, rounded to whole bit/s.
    pub fn rate(&self) -> BitRate {
        BitRate::from_bps((self.rate.round() as u64).max(1)).expect("at least 1 bit/s")
    }

    /// α: the estimated share of marked acknowledgements.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// An acknowledgement up to segment `acked` (cumulative), `marked` if the segment that
    /// drew it arrived CE; `next` is the next segment to send (`snd_nxt`).
    pub fn on_ack(&mut self, acked: u32, next: u32, marked: bool) {
        self.marked_acks += u32::from(marked);
        let new_batch = self.batch_end.is_none_or(|end| acked > end);
        if new_batch {
            if self.batch_end.is_some() {
                let fraction = (f64::from(self.marked_acks) / f64::from(self.batch_segments)).min(1.0);
                self.alpha = (1.0 - self.g) * self.alpha + self.g * fraction;
                self.marked_acks = 0;
                self.batch_segments = next.saturating_sub(acked) + 1;
            } else {
                self.batch_segments = next + 1;
            }
            self.batch_end = Some(next);
        }
        if self.cwr_until.is_some_and(|until| acked > until) {
            self.cwr_until = None;
        }
        if marked && self.cwr_until.is_none() {
            self.rate = (self.rate * (1.0 - self.alpha / 2.0)).max(self.min_rate);
            self.cwr_until = Some(next);
        }
        if self.cwr_until.is_none() && new_batch {
            self.rate = (self.rate + self.additive_increase).min(self.line_rate);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DctcpModel;

    fn params() -> DctcpParams {
        DctcpParams { model: DctcpModel::Hpcc, ..DctcpParams::default() }
    }

    #[test]
    fn the_rate_starts_at_line_rate_and_the_first_mark_halves_it_once_per_window() {
        let mut dctcp = DctcpRate::new(params(), BitRate::gbps(100));
        assert_eq!(dctcp.rate(), BitRate::gbps(100));
        // The first ACK opens the first batch (segments 0..10 in flight).
        dctcp.on_ack(1, 10, true);
        assert_eq!(dctcp.rate(), BitRate::gbps(50), "α = 1: R·(1 − 1/2)");
        // More marks before the ACK passes snd_nxt at the cut (10): no second cut.
        for acked in 2..=10 {
            dctcp.on_ack(acked, 12, true);
        }
        assert_eq!(dctcp.rate(), BitRate::gbps(50));
        // Past 10: out of CWR, and this mark cuts again, by the α its batch closed with.
        dctcp.on_ack(11, 14, true);
        // The first batch's marks stay counted (ns-3 resets them only when a batch closes):
        // 11 marked of 11 segments, so α stays 1.
        assert_eq!(dctcp.alpha(), 1.0);
        assert_eq!(dctcp.rate(), BitRate::gbps(25));
    }

    #[test]
    fn alpha_follows_the_marked_share_and_clean_batches_add_the_increment() {
        let mut dctcp = DctcpRate::new(params(), BitRate::gbps(100));
        dctcp.on_ack(1, 4, false); // opens a batch ending at 4, of 5 segments
        assert_eq!(dctcp.rate(), BitRate::gbps(100), "the increase stops at line rate");
        dctcp.on_ack(3, 8, true); // a cut: CWR until past 8
        assert_eq!(dctcp.rate(), BitRate::gbps(50));
        dctcp.on_ack(5, 9, false); // closes the batch: 1 marked of 5
        let alpha = 15.0 / 16.0 + (1.0 / 5.0) / 16.0;
        assert!((dctcp.alpha() - alpha).abs() < 1e-12);
        assert_eq!(dctcp.rate(), BitRate::gbps(50), "no increase while in CWR");
        dctcp.on_ack(10, 12, false); // out of CWR, and past 9: a batch closes clean
        assert!((dctcp.alpha() - alpha * 15.0 / 16.0).abs() < 1e-12);
        assert_eq!(dctcp.rate(), BitRate::from_bps(50_615_000_000).unwrap(), "+ DCTCP_RATE_AI");
        dctcp.on_ack(11, 13, false);
        assert_eq!(dctcp.rate(), BitRate::from_bps(50_615_000_000).unwrap(), "once per batch");
    }

    #[test]
    fn cuts_stop_at_the_minimum_rate() {
        let mut dctcp = DctcpRate::new(params(), BitRate::gbps(1));
        for acked in 1..200 {
            dctcp.on_ack(acked, acked, true);
        }
        assert_eq!(dctcp.rate(), BitRate::mbps(100));
    }
}
