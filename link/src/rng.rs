//! The one random number generator of the core: seeded, so that workloads and the QCN
//! congestion points' sampling reproduce run after run.

use std::time::Duration;

/// SplitMix64 (Steele, Lea, Flood 2014): tiny, fast, and stable across versions, so a seed
/// means the same flows forever.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in (0, 1].
    pub fn fraction(&mut self) -> f64 {
        ((self.next_u64() >> 11) + 1) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in 0..n.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// An exponential variate with mean `1/rate` seconds.
    pub fn exponential(&mut self, rate: f64) -> Duration {
        Duration::from_secs_f64(-self.fraction().ln() / rate)
    }
}
