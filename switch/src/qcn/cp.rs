//! The congestion point (CP) of IEEE 802.1Qau (§32.8, the CP's per-frame procedure), as the
//! public QCN pseudo-code runs it: every so many bytes of arrivals, sample the monitored queue
//! Q, compute Qoff = Q − Qeq, Qδ = Q − Qold and the feedback Fb = −(Qoff + w·Qδ), and when
//! Fb < 0 ask for a congestion notification (CNM) carrying the 6-bit quantized |Fb|.
//!
//! Units: the CNM carries Qoff and Qδ as 16-bit signed fields in units of 64 octets
//! (cnmQOffset, cnmQDelta, 802.1Qau §33.4). Fb and QntzFb are computed from exactly those
//! field values, so that a receiver (or a test that reads the CNM with its own parser) can
//! recompute QntzFb from what the CNM carries.

use pfcswitch_link::rng::Rng;

/// The unit of cnmQOffset and cnmQDelta, octets.
pub const CNM_QUEUE_UNIT: u64 = 64;

/// A CP's settings (`[qcn]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpParams {
    /// Qeq, the queue the CP steers towards, in bytes (MIB default 26000).
    pub set_point: u64,
    /// w, the weight of Qδ (MIB default 2).
    pub weight: u32,
    /// Bytes between samples while Fb is near 0 (MIB cpMinSampleBase, 150000).
    pub sample_base: u64,
}

/// What one sample found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Feedback {
    /// Qoff = Q − Qeq in units of [`CNM_QUEUE_UNIT`], saturated (cnmQOffset).
    pub q_offset: i16,
    /// Qδ = Q − Qold in the same units (cnmQDelta).
    pub q_delta: i16,
    /// Fb = −(Qoff + w·Qδ), in the same units.
    pub fb: i32,
    /// QntzFb: |Fb| quantized to 6 bits when Fb < 0, else 0.
    pub quantized: u8,
}

impl Feedback {
    /// From the queue now and at the previous sample, in bytes.
    pub fn compute(q: u64, q_old: u64, params: &CpParams) -> Feedback {
        let units = |bytes: i128| (bytes / i128::from(CNM_QUEUE_UNIT)).clamp(i16::MIN.into(), i16::MAX.into()) as i16;
        let q_offset = units(i128::from(q) - i128::from(params.set_point));
        let q_delta = units(i128::from(q) - i128::from(q_old));
        let fb = -(i32::from(q_offset) + params.weight as i32 * i32::from(q_delta));
        Feedback { q_offset, q_delta, fb, quantized: quantize(fb, params) }
    }
}

/// QntzFb = min(63, ⌊−Fb · 63 / (Qeq · (2w + 1))⌋) for Fb < 0, else 0 (DESIGN.md), with Qeq in
/// the units of Fb: |Fb| reaches Qeq·(2w + 1) when the queue is at twice Qeq and grew by Qeq
/// since the last sample, and saturates there.
pub fn quantize(fb: i32, params: &CpParams) -> u8 {
    if fb >= 0 {
        return 0;
    }
    let set_point = (params.set_point / CNM_QUEUE_UNIT).max(1) as i64;
    let full_scale = set_point * (2 * i64::from(params.weight) + 1);
    (-i64::from(fb) * 63 / full_scale).min(63) as u8
}

/// Bytes to the next sample after one that found `quantized`: the base divided by
/// 1 + ⌊QntzFb / 8⌋ (eight steps, from 150 KB down to 18.75 KB at the largest |Fb|, as in the
/// QCN pseudo-code's sampling table), times a jitter uniform in [0.85, 1.15] so that periodic
/// traffic cannot stay between samples.
pub fn sample_interval(quantized: u8, base: u64, rng: &mut Rng) -> u64 {
    let step = base / (1 + u64::from(quantized / 8));
    let jitter = 0.85 + 0.3 * rng.fraction();
    ((step as f64 * jitter) as u64).max(1)
}

/// One CP: on a (port, priority), at an output or an input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CongestionPoint {
    q_old: u64,
    until_sample: u64,
    last: Option<Feedback>,
    samples: u64,
    cnms: u64,
}

impl CongestionPoint {
    pub fn new(params: &CpParams, rng: &mut Rng) -> CongestionPoint {
        CongestionPoint {
            q_old: 0,
            until_sample: sample_interval(0, params.sample_base, rng),
            last: None,
            samples: 0,
            cnms: 0,
        }
    }

    /// `len` bytes arrived and the monitored queue holds `q` bytes with them. When this
    /// arrival is sampled and the queue is congested (Fb < 0), returns the feedback the CNM
    /// carries; the caller picks the culprit and sends it.
    pub fn arrival(&mut self, len: u32, q: u64, params: &CpParams, rng: &mut Rng) -> Option<Feedback> {
        if u64::from(len) < self.until_sample {
            self.until_sample -= u64::from(len);
            return None;
        }
        let feedback = Feedback::compute(q, self.q_old, params);
        self.q_old = q;
        self.samples += 1;
        self.last = Some(feedback);
        self.until_sample = sample_interval(feedback.quantized, params.sample_base, rng);
        let congested = feedback.fb < 0;
        self.cnms += u64::from(congested);
        congested.then_some(feedback)
    }

    /// Q at the last sample.
    pub fn q_old(&self) -> u64 {
        self.q_old
    }

    /// Bytes of arrivals until the next sample.
    pub fn until_sample(&self) -> u64 {
        self.until_sample
    }

    pub fn last(&self) -> Option<Feedback> {
        self.last
    }

    pub fn samples(&self) -> u64 {
        self.samples
    }

    /// Samples that asked for a CNM.
    pub fn cnms(&self) -> u64 {
        self.cnms
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: CpParams = CpParams { set_point: 26_000, weight: 2, sample_base: 150_000 };

    #[test]
    fn feedback_is_the_weighted_offset_and_growth_in_64_octet_units() {
        // Q = 39 000 B, Qold = 32 600 B: Qoff = 13 000 B = 203 units, Qδ = 6 400 B = 100 units.
        let f = Feedback::compute(39_000, 32_600, &MIB);
        assert_eq!((f.q_offset, f.q_delta), (203, 100));
        assert_eq!(f.fb, -(203 + 2 * 100));
        // Qeq = 406 units, full scale 406 · 5 = 2030: ⌊403 · 63 / 2030⌋ = 12.
        assert_eq!(f.quantized, 12);
    }

    #[test]
    fn no_feedback_below_the_set_point_while_the_queue_shrinks() {
        let f = Feedback::compute(10_000, 20_000, &MIB);
        assert!(f.fb > 0, "{f:?}");
        assert_eq!(f.quantized, 0);
        // Above Qeq but draining fast enough: Qoff 64 units, Qδ −40 units, Fb = +16.
        let f = Feedback::compute(26_000 + 64 * 64, 26_000 + 64 * 104, &MIB);
        assert_eq!((f.q_offset, f.q_delta, f.fb, f.quantized), (64, -40, 16, 0));
    }

    #[test]
    fn quantized_feedback_saturates_at_63() {
        assert_eq!(quantize(-2030, &MIB), 63);
        assert_eq!(quantize(-2029, &MIB), 62);
        assert_eq!(quantize(-1_000_000, &MIB), 63);
        assert_eq!(quantize(-1, &MIB), 0, "a tiny |Fb| quantizes to 0");
        assert_eq!(quantize(0, &MIB), 0);
        // Saturated fields: a queue far beyond i16 units still gives the largest feedback.
        assert_eq!(Feedback::compute(10_000_000_000, 0, &MIB).quantized, 63);
    }

    #[test]
    fn the_sampling_interval_shrinks_as_the_feedback_grows() {
        let mut rng = Rng::new(7);
        for (quantized, step) in [(0u8, 150_000u64), (7, 150_000), (8, 75_000), (31, 37_500), (63, 18_750)] {
            for _ in 0..200 {
                let interval = sample_interval(quantized, 150_000, &mut rng);
                let (lo, hi) = ((step as f64 * 0.85) as u64, (step as f64 * 1.15) as u64);
                assert!((lo..=hi).contains(&interval), "QntzFb {quantized}: {interval} outside {lo}..={hi}");
            }
        }
    }

    #[test]
    fn samples_after_the_interval_and_asks_for_a_cnm_only_when_congested() {
        let mut rng = Rng::new(1);
        let mut cp = CongestionPoint::new(&MIB, &mut rng);
        let first = cp.until_sample();
        assert!((127_500..=172_500).contains(&first));
        // Arrivals of 1500 B with the queue at Qeq + 30 KB and growing: one CNM per sample.
        let mut q = 26_000 + 30_000;
        let mut arrived = 0u64;
        let mut cnms = Vec::new();
        while cnms.len() < 3 {
            q += 500;
            arrived += 1500;
            if let Some(f) = cp.arrival(1500, q, &MIB, &mut rng) {
                cnms.push((arrived, f));
            }
        }
        assert!(cnms[0].0 >= first && cnms[0].0 < first + 1500, "the first sample comes after {first} B");
        assert_eq!(cp.samples(), 3);
        assert_eq!(cp.cnms(), 3);
        assert!(cnms.iter().all(|(_, f)| f.fb < 0 && f.quantized > 0));
        // Then the queue is below Qeq: samples go on, CNMs stop.
        let before = (cp.samples(), cp.cnms());
        for _ in 0..400 {
            assert_eq!(cp.arrival(1500, 1000, &MIB, &mut rng), None);
        }
        assert!(cp.samples() > before.0);
        assert_eq!(cp.cnms(), before.1);
        assert_eq!(cp.last().map(|f| f.quantized), Some(0));
    }
}
