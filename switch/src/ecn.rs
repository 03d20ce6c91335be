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
//!
//! Where the queue is read (`mark_at`): as the frame joins it (`"enqueue"`, the default, as
//! RED and the DCTCP paper describe), or as the frame leaves it, against the bytes it leaves
//! behind (`"dequeue"`, as HPCC's simulator marks in `SwitchNotifyDequeue` and as many switch
//! ASICs can). Marking at dequeue tells the sender about the queue a frame's successors meet,
//! a queueing delay sooner.
//!
//! Ports may mark by their speed (`[[ecn.by_speed]]`): HPCC's simulator sets KMIN, KMAX
//! and PMAX per port from maps keyed by the port's rate (its `KMIN_MAP`, `KMAX_MAP` and
//! `PMAX_MAP`), so that a 400 Gbit/s up-link marks at four times a 100 Gbit/s port's queue.

use crate::config_error::ConfigError;
use pfcswitch_link::rng::Rng;
use pfcswitch_link::units::{BitRate, ByteSize};
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
    /// Profiles for the ports of a speed; other ports mark with `min`, `max` and
    /// `probability`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub by_speed: Vec<SpeedProfile>,
    /// Where the queue is read: as a frame joins it, or as it leaves.
    #[serde(skip_serializing_if = "MarkAt::is_enqueue")]
    pub mark_at: MarkAt,
}

/// `ecn.mark_at`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MarkAt {
    /// Against the queue the frame joins, itself included.
    #[default]
    Enqueue,
    /// Against the queue the frame leaves behind as it is sent.
    Dequeue,
}

impl MarkAt {
    fn is_enqueue(&self) -> bool {
        *self == MarkAt::Enqueue
    }
}

/// `[[ecn.by_speed]]`: the marking profile of every port of this speed.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SpeedProfile {
    pub speed: BitRate,
    pub min: ByteSize,
    pub max: ByteSize,
    pub probability: f64,
}

/// What a port marks with.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Profile {
    min: u64,
    max: u64,
    probability: f64,
}

impl Profile {
    fn validate(&self, key: &str) -> Result<(), ConfigError> {
        let error = |field: &str, reason: String| Err(ConfigError { key: format!("{key}{field}"), reason });
        if self.max < self.min {
            return error("max", format!("{} is below min ({})", ByteSize(self.max), ByteSize(self.min)));
        }
        if !(self.probability > 0.0 && self.probability <= 1.0) {
            return error("probability", format!("{} must be in (0, 1]", self.probability));
        }
        Ok(())
    }
}

impl Default for EcnConfig {
    /// DCTCP's step at the CaPFC paper's 20 KB (Table II).
    fn default() -> Self {
        EcnConfig {
            priorities: Vec::new(),
            min: ByteSize(20_000),
            max: ByteSize(20_000),
            probability: 1.0,
            seed: 1,
            by_speed: Vec::new(),
            mark_at: MarkAt::Enqueue,
        }
    }
}

impl EcnConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        let error = |key: &str, reason: String| Err(ConfigError { key: format!("ecn.{key}"), reason });
        if let Some(p) = self.priorities.iter().find(|&&p| Pcp::new(p).is_none()) {
            return error("priorities", format!("{p} is not a priority 0-7"));
        }
        self.default_profile().validate("ecn.")?;
        for (i, profile) in self.by_speed.iter().enumerate() {
            let key = format!("ecn.by_speed[{i}].");
            if self.by_speed[..i].iter().any(|earlier| earlier.speed == profile.speed) {
                return error(&format!("by_speed[{i}].speed"), format!("{} has a profile already", profile.speed));
            }
            Profile { min: profile.min.0, max: profile.max.0, probability: profile.probability }.validate(&key)?;
        }
        Ok(())
    }

    fn default_profile(&self) -> Profile {
        Profile { min: self.min.0, max: self.max.0, probability: self.probability }
    }

    /// The profile of a port of this speed.
    fn profile(&self, speed: BitRate) -> Profile {
        self.by_speed.iter().find(|p| p.speed == speed).map_or(self.default_profile(), |p| Profile {
            min: p.min.0,
            max: p.max.0,
            probability: p.probability,
        })
    }

    /// Marked priorities as a bitmask.
    pub fn mask(&self) -> u8 {
        self.priorities.iter().filter_map(|&p| Pcp::new(p)).fold(0, |mask, p| mask | p.mask())
    }
}

/// The switch's marker: each port's profile, and the draws.
#[derive(Clone, Debug)]
pub struct EcnMarker {
    mask: u8,
    profiles: Vec<Profile>,
    rng: Rng,
    at: MarkAt,
}

impl EcnMarker {
    /// None when no priority marks; `speeds` are the ports', by index.
    pub fn new(config: &EcnConfig, speeds: &[BitRate]) -> Option<EcnMarker> {
        let mask = config.mask();
        (mask != 0).then(|| EcnMarker {
            mask,
            profiles: speeds.iter().map(|&speed| config.profile(speed)).collect(),
            rng: Rng::new(config.seed),
            at: config.mark_at,
        })
    }

    pub fn monitors(&self, priority: Pcp) -> bool {
        self.mask & priority.mask() != 0
    }

    /// Where a frame of a priority it [monitors](Self::monitors) is marked.
    pub fn mark_at(&self) -> MarkAt {
        self.at
    }

    /// Whether an ECN-capable frame is marked at `port`'s queue, which holds `queue_bytes`
    /// (with the frame as it joins, without it as it leaves).
    pub fn marks(&mut self, port: usize, queue_bytes: u64) -> bool {
        let Profile { min, max, probability } = self.profiles[port];
        if queue_bytes <= min {
            return false;
        }
        if queue_bytes > max {
            return true;
        }
        let share = (queue_bytes - min) as f64 / (max - min) as f64;
        self.rng.fraction() <= probability * share
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marker(min: u64, max: u64, probability: f64) -> EcnMarker {
        let config = EcnConfig {
            priorities: vec![3],
            min: ByteSize(min),
            max: ByteSize(max),
            probability,
            seed: 7,
            by_speed: Vec::new(),
            mark_at: MarkAt::Enqueue,
        };
        config.validate().unwrap();
        EcnMarker::new(&config, &[BitRate::gbps(100)]).unwrap()
    }

    #[test]
    fn a_step_profile_marks_above_k_only() {
        let mut dctcp = marker(20_000, 20_000, 1.0);
        assert!(!dctcp.marks(0, 20_000));
        assert!(dctcp.marks(0, 20_001));
        assert!(dctcp.monitors(Pcp::new(3).unwrap()) && !dctcp.monitors(Pcp::new(0).unwrap()));
    }

    #[test]
    fn between_the_thresholds_the_marking_probability_rises_linearly_to_the_configured_one() {
        let mut red = marker(10_000, 30_000, 0.5);
        let share = |red: &mut EcnMarker, q| (0..20_000).filter(|_| red.marks(0, q)).count() as f64 / 20_000.0;
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
        assert!(EcnMarker::new(&EcnConfig::default(), &[]).is_none(), "no priority: off");
        let profile = |speed, max| SpeedProfile { speed, min: ByteSize(100), max: ByteSize(max), probability: 0.2 };
        let twice = vec![profile(BitRate::gbps(100), 400), profile(BitRate::gbps(100), 400)];
        let error = EcnConfig { by_speed: twice, ..EcnConfig::default() }.validate().unwrap_err();
        assert_eq!(
            (error.key.as_str(), error.reason.as_str()),
            ("ecn.by_speed[1].speed", "100Gbps has a profile already")
        );
        let inverted = vec![profile(BitRate::gbps(400), 50)];
        assert_eq!(bad(EcnConfig { by_speed: inverted, ..EcnConfig::default() }), "ecn.by_speed[0].max");
    }

    #[test]
    fn each_port_marks_with_the_profile_of_its_speed() {
        let toml = r#"
            priorities = [3]
            min = "400KB"
            max = "1600KB"
            probability = 0.2
            [[by_speed]]
            speed = "400Gbps"
            min = "1600KB"
            max = "6400KB"
            probability = 1
        "#;
        let config: EcnConfig = toml::from_str(toml).unwrap();
        config.validate().unwrap();
        let mut marker = EcnMarker::new(&config, &[BitRate::gbps(100), BitRate::gbps(400)]).unwrap();
        assert!(marker.marks(0, 1_600_001), "a 100 Gbit/s port: above its 1600 KB");
        assert!(!marker.marks(1, 1_600_000), "a 400 Gbit/s port: at its min");
        assert!(marker.marks(1, 6_400_001), "a 400 Gbit/s port: above its 6400 KB");
        let share = (0..10_000).filter(|_| marker.marks(1, 4_000_000)).count() as f64 / 10_000.0;
        assert!((share - 0.5).abs() < 0.03, "halfway up its ramp to 1: {share}");
    }
}
