//! ECN marking at egress with the RED-style profile switches expose (SONiC's WRED/ECN
//! profile: a minimum and a maximum threshold and a marking probability per queue). An
//! ECN-capable frame joining an egress queue of a marked priority that then holds q bytes is
//! marked CE with probability 0 up to `min`, rising linearly to `probability` at `max`, and 1
//! above `max` (RED, Floyd and Jacobson 1993, with ECN in place of the drop: RFC 3168 §5).
//!
//! The queue is the instantaneous one, not RED's moving average: DCTCP needs marks that
//! follow the queue within a round trip (Alizadeh et al. 2010, §3.1), and `min = max = K`
//! is its step at K. Frames that are not ECN-capable pass unmarked and are never dropped
//! here: what happens to them stays the pause policy's (SONiC's lossless queues run the
//! same way, ECN without WRED drops).

use crate::config_error::ConfigError;
use pfcswitch_link::rng::Rng;
use pfcswitch_link::units::ByteSize;
use pfcswitch_wire::Pcp;
use serde::{Deserialize, Serialize};

/// `[ecn]`.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct EcnConfig {
    /// Priorities whose egress queues mark; empty: ECN marking off.
    pub priorities: Vec<u8>,
    /// No mark at or below this queue.
    pub min: ByteSize,
    /// Every ECN-capable frame is marked above this queue.
    pub max: ByteSize,
    /// The marking probability at `max`.
    pub probability: f64,
    /// Seeds the marking draws, so a run reproduces.
    pub seed: u64,
}

impl Default for EcnConfig {
    /// DCTCP's step at the CaPFC paper's 20 KB (Table II).
    fn default() -> Self {
        EcnConfig { priorities: Vec::new(), min: ByteSize(20_000), max: ByteSize(20_000), probability: 1.0, seed: 1 }
    }
}

impl EcnConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        let error = |key: &str, reason: String| Err(ConfigError { key: format!("ecn.{key}"), reason });
        if let Some(p) = self.priorities.iter().find(|&&p| Pcp::new(p).is_none()) {
            return error("priorities", format!("{p} is not a priority 0-7"));
        }
        if self.max.0 < self.min.0 {
            return error("max", format!("{} is below min ({})", self.max, self.min));
        }
        if !(self.probability > 0.0 && self.probability <= 1.0) {
            return error("probability", format!("{} must be in (0, 1]", self.probability));
        }
        Ok(())
    }

    /// Marked priorities as a bitmask.
    pub fn mask(&self) -> u8 {
        self.priorities.iter().filter_map(|&p| Pcp::new(p)).fold(0, |mask, p| mask | p.mask())
    }
}

/// The switch's marker: the profile, and the draws.
#[derive(Clone, Debug)]
pub struct EcnMarker {
    mask: u8,
    min: u64,
    max: u64,
    probability: f64,
    rng: Rng,
}

impl EcnMarker {
    /// None when no priority marks.
    pub fn new(config: &EcnConfig) -> Option<EcnMarker> {
        let mask = config.mask();
        (mask != 0).then(|| EcnMarker {
            mask,
            min: config.min.0,
            max: config.max.0,
            probability: config.probability,
            rng: Rng::new(config.seed),
        })
    }

    pub fn monitors(&self, priority: Pcp) -> bool {
        self.mask & priority.mask() != 0
    }

    /// Whether an ECN-capable frame that leaves the queue holding `queue_bytes` is marked.
    pub fn marks(&mut self, queue_bytes: u64) -> bool {
        if queue_bytes <= self.min {
            return false;
        }
        if queue_bytes > self.max {
            return true;
        }
        let share = (queue_bytes - self.min) as f64 / (self.max - self.min) as f64;
        self.rng.fraction() <= self.probability * share
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marker(min: u64, max: u64, probability: f64) -> EcnMarker {
        let config = EcnConfig { priorities: vec![3], min: ByteSize(min), max: ByteSize(max), probability, seed: 7 };
        config.validate().unwrap();
        EcnMarker::new(&config).unwrap()
    }

    #[test]
    fn a_step_profile_marks_above_k_only() {
        let mut dctcp = marker(20_000, 20_000, 1.0);
        assert!(!dctcp.marks(20_000));
        assert!(dctcp.marks(20_001));
        assert!(dctcp.monitors(Pcp::new(3).unwrap()) && !dctcp.monitors(Pcp::new(0).unwrap()));
    }

    #[test]
    fn between_the_thresholds_the_marking_probability_rises_linearly_to_the_configured_one() {
        let mut red = marker(10_000, 30_000, 0.5);
        let share = |red: &mut EcnMarker, q| (0..20_000).filter(|_| red.marks(q)).count() as f64 / 20_000.0;
        assert_eq!(share(&mut red, 10_000), 0.0);
        assert!((share(&mut red, 20_000) - 0.25).abs() < 0.02, "halfway: half of 0.5");
        assert!((share(&mut red, 30_000) - 0.5).abs() < 0.02, "at max: the probability");
        assert_eq!(share(&mut red, 30_001), 1.0, "above max: every frame");
    }

    #[test]
    fn a_profile_that_cannot_work_is_rejected_by_key() {
        let bad = |config: EcnConfig| config.validate().unwrap_err().key;
        assert_eq!(bad(EcnConfig { min: ByteSize(30), max: ByteSize(20), ..EcnConfig::default() }), "ecn.max");
        assert_eq!(bad(EcnConfig { probability: 0.0, ..EcnConfig::default() }), "ecn.probability");
        assert_eq!(bad(EcnConfig { priorities: vec![8], ..EcnConfig::default() }), "ecn.priorities");
        assert!(EcnMarker::new(&EcnConfig::default()).is_none(), "no priority: off");
    }
}
