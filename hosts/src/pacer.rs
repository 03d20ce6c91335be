//! Pacing of rate-limited connections: when each frame of a `constant` class may leave, by
//! one of three arrival processes with the same mean rate. The FECN paper's Table II
//! compares queue controls under "non-bursty Bernoulli UDP traffic" and "bursty UDP traffic
//! with Pareto ON/OFF bursts of 10 ms and shape parameter 1.5" (§IV-D); `constant` is its
//! Table I's CBR.
//!
//! - **Constant**: one frame every frame time at the rate.
//! - **Bernoulli**: time is cut into slots of one frame time at the NIC's line rate; a frame
//!   goes in each slot with probability p = rate / line rate (geometric gaps).
//! - **Pareto ON/OFF** (ns-2's `Traffic/Pareto`): ON periods at the peak rate rate·(on+off)/on,
//!   then OFF periods, both Pareto with the given means and shape.
//!
//! A pacer only says when the application offers its next frame; the connection's rate
//! limiters (QCN, FECN) may hold it longer. A frame held back keeps its place: the rest of
//! an ON period waits behind it, as an application blocked on a full socket buffer would,
//! and at most the pacer's credit of lateness is made up later.

use pfcswitch_link::rng::Rng;
use pfcswitch_link::shaper::{Shaper, wire_bytes};
use pfcswitch_link::time::Instant;
use pfcswitch_link::units::{BitRate, duration};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// `arrivals` of a `constant` class: the process its flows' frames follow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(tag = "process", rename_all = "lowercase", deny_unknown_fields)]
pub enum Arrivals {
    #[default]
    Constant,
    Bernoulli {
        /// Set per connection by the workload, from the scenario's seed.
        #[serde(skip)]
        seed: u64,
    },
    Pareto {
        /// Mean ON time (10 ms in the paper).
        #[serde(with = "duration", default = "ten_milliseconds")]
        on: Duration,
        /// Mean OFF time (default: the ON mean, so the peak is twice the mean rate).
        #[serde(with = "duration", default = "ten_milliseconds")]
        off: Duration,
        /// Pareto shape of both (1.5 in the paper); above 1 for a finite mean.
        #[serde(default = "pareto_shape")]
        shape: f64,
        #[serde(skip)]
        seed: u64,
    },
}

fn ten_milliseconds() -> Duration {
    Duration::from_millis(10)
}

fn pareto_shape() -> f64 {
    1.5
}

impl Arrivals {
    pub fn name(&self) -> &'static str {
        match self {
            Arrivals::Constant => "constant",
            Arrivals::Bernoulli { .. } => "bernoulli",
            Arrivals::Pareto { .. } => "pareto",
        }
    }

    /// The same process drawing from `seed`.
    pub fn with_seed(self, seed: u64) -> Arrivals {
        match self {
            Arrivals::Constant => Arrivals::Constant,
            Arrivals::Bernoulli { .. } => Arrivals::Bernoulli { seed },
            Arrivals::Pareto { on, off, shape, .. } => Arrivals::Pareto { on, off, shape, seed },
        }
    }

    /// The seed it draws from (0 for `constant`).
    pub fn seed(&self) -> u64 {
        match *self {
            Arrivals::Constant => 0,
            Arrivals::Bernoulli { seed } | Arrivals::Pareto { seed, .. } => seed,
        }
    }

    /// Why these parameters cannot pace a flow, if they cannot.
    pub fn invalid(&self) -> Option<String> {
        match *self {
            Arrivals::Pareto { on, off, shape, .. } => {
                if on.is_zero() || off.is_zero() {
                    Some("Pareto ON and OFF means must be longer than 0".into())
                } else if !(shape > 1.0 && shape.is_finite()) {
                    Some(format!("Pareto shape {shape} must be above 1 (a finite mean)"))
                } else {
                    None
                }
            }
            _ => None,
        }
    }
}

/// A Pareto variate with mean `mean` and shape `shape` (> 1): scale x_m = mean·(shape−1)/shape.
fn pareto(rng: &mut Rng, mean: Duration, shape: f64) -> Duration {
    let scale = mean.as_secs_f64() * (shape - 1.0) / shape;
    Duration::from_secs_f64(scale / rng.fraction().powf(1.0 / shape))
}

/// When a paced connection's application offers its next frame.
#[derive(Clone, Debug)]
pub struct Pacer {
    /// At the rate frames go while the source sends: the mean rate (constant), the line
    /// rate (Bernoulli slots), the peak (Pareto ON).
    shaper: Shaper,
    gaps: Gaps,
}

/// What the arrival process adds after each frame's own time, with its state.
#[derive(Clone, Debug)]
enum Gaps {
    None,
    /// Empty slots: failed trials, each a frame's `chance`.
    Bernoulli {
        chance: f64,
        rng: Rng,
    },
    /// An OFF period once the ON period's frames are out.
    Pareto {
        on: Duration,
        off: Duration,
        shape: f64,
        left_on: u64,
        rng: Rng,
    },
}

impl Pacer {
    /// Frames at mean `rate` by `arrivals` on a NIC of `line_rate`; at most `credit` of lateness
    /// (a userspace sender's late wake-up) is made up later.
    pub fn new(rate: BitRate, arrivals: Arrivals, line_rate: BitRate, credit: Duration) -> Pacer {
        let (peak, gaps) = match arrivals {
            Arrivals::Constant => (rate, Gaps::None),
            Arrivals::Bernoulli { seed } => {
                let chance = (rate.bps() as f64 / line_rate.bps() as f64).min(1.0);
                (line_rate, Gaps::Bernoulli { chance, rng: Rng::new(seed) })
            }
            Arrivals::Pareto { on, off, shape, seed } => {
                let peak = rate.bps() as f64 * (on + off).as_secs_f64() / on.as_secs_f64();
                let peak = BitRate::from_bps(peak.round() as u64).unwrap_or(rate);
                (peak, Gaps::Pareto { on, off, shape, left_on: 0, rng: Rng::new(seed) })
            }
        };
        Pacer { shaper: Shaper::new(peak, credit), gaps }
    }

    /// When the next frame is offered.
    pub fn ready_at(&self) -> Instant {
        self.shaper.ready_at()
    }

    /// The connection sent a frame of `len` bytes now.
    pub fn send(&mut self, now: Instant, len: usize) {
        self.shaper.send(now, len);
        let frame = || self.shaper.speed().bits_duration(wire_bytes(len) * 8);
        match &mut self.gaps {
            Gaps::None => {}
            Gaps::Bernoulli { chance, rng } => {
                // Failed trials before the next success: geometric, mean (1−p)/p.
                let empty = if *chance >= 1.0 { 0.0 } else { (rng.fraction().ln() / (1.0 - *chance).ln()).floor() };
                let gap = frame().mul_f64(empty);
                self.shaper.idle(gap);
            }
            Gaps::Pareto { on, off, shape, left_on, rng } => {
                if *left_on == 0 {
                    let burst = pareto(rng, *on, *shape);
                    *left_on = (burst.as_secs_f64() / frame().as_secs_f64()).round().max(1.0) as u64;
                }
                *left_on -= 1;
                if *left_on == 0 {
                    self.shaper.idle(pareto(rng, *off, *shape));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: BitRate = BitRate::gbps(10);
    const FRAME: usize = 1500;

    /// Frames `pacer` offers over `frames` sends, each sent the moment it is offered: the
    /// mean rate in bit/s and the gaps.
    fn run(mut pacer: Pacer, frames: usize) -> (f64, Vec<Duration>) {
        let mut gaps = Vec::with_capacity(frames);
        let mut last = Instant::ZERO;
        for _ in 0..frames {
            let at = pacer.ready_at();
            gaps.push(at - last);
            last = at;
            pacer.send(at, FRAME);
        }
        let bits = (frames as u64 * wire_bytes(FRAME) * 8) as f64;
        (bits / (last.as_nanos() as f64 / 1e9), gaps)
    }

    #[test]
    fn constant_sends_one_frame_per_frame_time() {
        let (rate, gaps) = run(Pacer::new(BitRate::mbps(200), Arrivals::Constant, LINE, Duration::ZERO), 1000);
        assert!((rate / 200e6 - 1.0).abs() < 0.01, "{rate}");
        assert!(gaps[1..].windows(2).all(|w| w[0] == w[1]), "evenly spaced");
    }

    #[test]
    fn bernoulli_keeps_the_mean_rate_with_gaps_in_whole_slots() {
        let pacer = Pacer::new(BitRate::mbps(200), Arrivals::Bernoulli { seed: 7 }, LINE, Duration::ZERO);
        let (rate, gaps) = run(pacer, 100_000);
        assert!((rate / 200e6 - 1.0).abs() < 0.02, "mean rate {rate}");
        let slot = LINE.bits_duration(wire_bytes(FRAME) * 8).as_nanos() as f64;
        let slots: Vec<f64> = gaps[1..].iter().map(|g| g.as_nanos() as f64 / slot).collect();
        assert!(slots.iter().all(|s| (s - s.round()).abs() < 0.01 && *s >= 0.99), "whole slots, at least one");
        // Geometric with p = 0.02: mean 50 slots, and about 2 % of gaps are a single slot.
        let single = slots.iter().filter(|s| s.round() == 1.0).count() as f64 / slots.len() as f64;
        assert!((single - 0.02).abs() < 0.005, "P(gap = 1 slot) = {single}");
    }

    #[test]
    fn pareto_alternates_peak_rate_bursts_and_silences_with_the_mean_rate() {
        let arrivals =
            Arrivals::Pareto { on: Duration::from_millis(10), off: Duration::from_millis(10), shape: 1.5, seed: 3 };
        let (rate, gaps) = run(Pacer::new(BitRate::mbps(200), arrivals, LINE, Duration::ZERO), 400_000);
        // Heavy tails (infinite variance) converge slowly: a loose bound on the mean.
        assert!((rate / 200e6 - 1.0).abs() < 0.25, "mean rate {rate}");
        let peak_gap = BitRate::mbps(400).bits_duration(wire_bytes(FRAME) * 8);
        let within = gaps[1..].iter().filter(|&&g| g == peak_gap).count();
        let silences = gaps[1..].iter().filter(|&&g| g > Duration::from_millis(1)).count();
        assert!(within > 390_000 && silences > 100, "{within} frames at the 400 Mbit/s peak, {silences} OFF periods");
    }

    #[test]
    fn a_held_back_frame_keeps_its_place_up_to_the_credit() {
        let mut pacer = Pacer::new(BitRate::mbps(100), Arrivals::Constant, LINE, Duration::from_millis(1));
        pacer.send(Instant::ZERO, FRAME);
        // A limiter held the next frame 5 ms: one millisecond of lateness is made up.
        let late = Instant::from_nanos(5_000_000);
        pacer.send(late, FRAME);
        let frame = BitRate::mbps(100).bits_duration(wire_bytes(FRAME) * 8);
        assert_eq!(pacer.ready_at(), Instant::from_nanos(4_000_000) + frame);
    }

    #[test]
    fn pareto_needs_a_finite_mean() {
        let arrivals =
            Arrivals::Pareto { on: Duration::from_millis(10), off: Duration::from_millis(10), shape: 1.0, seed: 0 };
        assert!(arrivals.invalid().is_some_and(|e| e.contains("shape")));
        assert_eq!(Arrivals::Bernoulli { seed: 0 }.invalid(), None);
    }
}
