//! FECN, forward explicit congestion notification (`../shared/papers/fecn-explicit-rate-control.txt`),
//! on the switch side: every egress (port, priority) of `fecn.priorities` computes an
//! advertised rate each measurement interval T and lowers the rate field of the probes that
//! leave through it (§IV):
//!
//! - initialization: r₀ = C / N₀;
//! - measurement at the end of interval i: the arrival rate Aᵢ (bytes queued at the egress
//!   during the interval) and the queue qᵢ (bytes at its end);
//! - effective load ρᵢ = Aᵢ / (f(qᵢ)·C), with γ·C in place of C while qᵢ > Qeq (§IV-B);
//! - bandwidth allocation rᵢ₊₁ = rᵢ / ρᵢ, at most C (an idle port advertises C);
//! - marking: a probe leaving with rate r > rᵢ₊₁ leaves with rᵢ₊₁.
//!
//! Time is the caller's: the interval runs on the switch's timers, so the simulator and the
//! datapath compute the same rates. Aᵢ is divided by the time the interval really lasted, so
//! a late timer on the datapath does not inflate the load. Per frame the switch only counts
//! bytes; the rate computation runs once per interval.
//!
//! The paper's FECN also smooths the advertised rate with a moving average (§IV-A: "in FECN,
//! a moving average process is done on advertised rate"; its weight is not given): `smoothing`
//! w makes rᵢ₊₁ = (1 − w)·rᵢ + w·rᵢ/ρᵢ. The default, 1, is §IV's update as written.

pub mod control;

pub use control::{ControlKind, QueueControl};

use crate::config_error::ConfigError;
use pfcswitch_link::time::Instant;
use pfcswitch_link::units::{BitRate, ByteSize, duration};
use pfcswitch_wire::{EthernetAddress, Pcp};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// `[fecn]`. Defaults: the paper's Fig. 4 constants (a = 1.002, b = 1.1, c = 0.1, Qeq = 16
/// packets of 1500 bytes), γ = 0.99, k = 0.002 and two stages for `multistage`, T = 1 ms.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct FecnConfig {
    /// Priorities whose egress queues advertise a rate and mark probes; empty: FECN off.
    pub priorities: Vec<u8>,
    /// The measurement interval T.
    #[serde(with = "duration")]
    pub interval: Duration,
    /// r₀ = C / N₀: the rate advertised before the first measurement.
    pub n0: u32,
    /// The queue's set point.
    pub qeq: ByteSize,
    pub control: ControlKind,
    /// Eq. 1's constants (`a` also shapes `multistage` below Qeq).
    pub a: f64,
    pub b: f64,
    pub c: f64,
    /// The share of C that counts as capacity while the queue is above Qeq (§IV-B).
    pub gamma: f64,
    /// `multistage`: stage m falls by k·m per packet of queue.
    pub k: f64,
    pub stages: u32,
    /// The packet Pm the multistage slopes are per.
    pub packet: ByteSize,
    /// Weight w of the new rate in the advertised rate's moving average:
    /// rᵢ₊₁ = (1 − w)·rᵢ + w·rᵢ/ρᵢ; 1 is §IV's update as written.
    pub smoothing: f64,
}

impl Default for FecnConfig {
    fn default() -> Self {
        FecnConfig {
            priorities: Vec::new(),
            interval: Duration::from_millis(1),
            n0: 10,
            qeq: ByteSize(24_000),
            control: ControlKind::Hyperbolic,
            a: 1.002,
            b: 1.1,
            c: 0.1,
            gamma: 0.99,
            k: 0.002,
            stages: 2,
            packet: ByteSize(1500),
            smoothing: 1.0,
        }
    }
}

impl FecnConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        let error = |key: &str, reason: String| Err(ConfigError { key: format!("fecn.{key}"), reason });
        if let Some(p) = self.priorities.iter().find(|&&p| Pcp::new(p).is_none()) {
            return error("priorities", format!("{p} is not a priority 0-7"));
        }
        if self.interval.is_zero() {
            return error("interval", "must be longer than 0".into());
        }
        if self.n0 == 0 {
            return error("n0", "must be at least 1 (r0 = C / n0)".into());
        }
        if self.qeq.0 == 0 || self.packet.0 == 0 {
            let key = if self.qeq.0 == 0 { "qeq" } else { "packet" };
            return error(key, "must be more than 0 bytes".into());
        }
        for (key, value, ok, what) in [
            ("a", self.a, self.a > 1.0, "above 1 (f > 1 below Qeq)"),
            ("b", self.b, self.b > 1.0, "above 1 (f < 1 above Qeq)"),
            ("c", self.c, self.c > 0.0 && self.c <= 1.0, "in (0, 1]"),
            ("gamma", self.gamma, self.gamma > 0.0 && self.gamma <= 1.0, "in (0, 1]"),
            ("k", self.k, self.k >= 0.0, "at least 0"),
            ("smoothing", self.smoothing, self.smoothing > 0.0 && self.smoothing <= 1.0, "in (0, 1]"),
        ] {
            if !ok || !value.is_finite() {
                return error(key, format!("{value} must be {what}"));
            }
        }
        if self.stages == 0 {
            return error("stages", "must be at least 1".into());
        }
        Ok(())
    }

    pub fn queue_control(&self) -> QueueControl {
        match self.control {
            ControlKind::Hyperbolic => QueueControl::Hyperbolic { a: self.a, b: self.b, c: self.c },
            ControlKind::Multistage => QueueControl::Multistage {
                a: self.a,
                c: self.c,
                k: self.k,
                stages: self.stages,
                packet: self.packet.0 as f64,
            },
        }
    }

    /// The monitored priorities as a bit mask (bit n = priority n).
    fn mask(&self) -> u8 {
        self.priorities.iter().filter_map(|&p| Pcp::new(p)).fold(0, |mask, p| mask | p.mask())
    }
}

/// What one interval measured at an egress (port, priority).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Measurement {
    /// Aᵢ, bit/s.
    pub arrival_bps: f64,
    /// qᵢ, bytes.
    pub queue_bytes: u64,
    pub f: f64,
    /// ρᵢ.
    pub load: f64,
}

/// One egress (port, priority)'s rate computation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct RatePoint {
    /// rᵢ, bit/s: what probes leaving now are lowered to.
    pub advertised_bps: f64,
    /// The last interval's measurement.
    pub last: Option<Measurement>,
    pub intervals: u64,
    pub probes_seen: u64,
    /// Probes whose rate this port lowered.
    pub probes_marked: u64,
    #[serde(skip)]
    arrived_bytes: u64,
}

/// How the caller marks a probe it sends: lower its rate to `rate_kbps`, naming `port`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProbeMark {
    pub rate_kbps: u32,
    pub port: EthernetAddress,
}

/// The rate points of a switch.
#[derive(Clone, Debug)]
pub struct Fecn {
    config: FecnConfig,
    control: QueueControl,
    speeds: Vec<f64>,
    /// The monitored priorities (bit n = priority n): checked per frame.
    mask: u8,
    /// Indexed by port × 8 + priority.
    points: Vec<RatePoint>,
    /// Where the current interval began; `None` until the first timeout starts the clock.
    interval_start: Option<Instant>,
}

impl Fecn {
    /// Rate points for ports of the given speeds; `None` when `config` monitors nothing.
    pub fn new(config: &FecnConfig, speeds: &[BitRate]) -> Option<Fecn> {
        if config.priorities.is_empty() {
            return None;
        }
        let speeds: Vec<f64> = speeds.iter().map(|s| s.bps() as f64).collect();
        let points = (0..speeds.len() * 8)
            .map(|i| RatePoint { advertised_bps: speeds[i / 8] / f64::from(config.n0), ..RatePoint::default() })
            .collect();
        Some(Fecn {
            config: config.clone(),
            control: config.queue_control(),
            mask: config.mask(),
            speeds,
            points,
            interval_start: None,
        })
    }

    pub fn config(&self) -> &FecnConfig {
        &self.config
    }

    pub fn monitors(&self, priority: Pcp) -> bool {
        self.mask & priority.mask() != 0
    }

    pub fn point(&self, port: usize, priority: Pcp) -> &RatePoint {
        &self.points[port * 8 + priority.index()]
    }

    /// A frame of `len` bytes was queued at egress (port, priority).
    pub fn arrival(&mut self, port: usize, priority: Pcp, len: u32) {
        if self.monitors(priority) {
            self.points[port * 8 + priority.index()].arrived_bytes += u64::from(len);
        }
    }

    /// When the current interval ends (now, before the first).
    pub fn next_timeout(&self) -> Instant {
        self.interval_start.map_or(Instant::ZERO, |start| start + self.config.interval)
    }

    /// Ends the interval if it is over: every rate point measures and computes rᵢ₊₁.
    /// `queue_bytes(port, priority)` is the egress queue now.
    pub fn handle_timeout(&mut self, now: Instant, queue_bytes: impl Fn(usize, Pcp) -> u64) {
        let Some(start) = self.interval_start else {
            self.interval_start = Some(now);
            self.points.iter_mut().for_each(|p| p.arrived_bytes = 0);
            return;
        };
        if now < start + self.config.interval {
            return;
        }
        let seconds = (now - start).as_secs_f64();
        let qeq = self.config.qeq.0 as f64;
        for (i, point) in self.points.iter_mut().enumerate() {
            let (port, priority) = (i / 8, Pcp::from_low_bits(i as u8 % 8));
            if self.mask & priority.mask() == 0 {
                continue;
            }
            let capacity = self.speeds[port];
            let q = queue_bytes(port, priority);
            let arrival_bps = point.arrived_bytes as f64 * 8.0 / seconds;
            let f = self.control.f(q as f64, qeq);
            let effective = if q as f64 > qeq { self.config.gamma * capacity } else { capacity };
            let load = arrival_bps / (f * effective);
            let target = if load > 0.0 { (point.advertised_bps / load).min(capacity) } else { capacity };
            let next = (1.0 - self.config.smoothing) * point.advertised_bps + self.config.smoothing * target;
            point.advertised_bps = next.clamp(MIN_RATE_BPS, capacity);
            point.last = Some(Measurement { arrival_bps, queue_bytes: q, f, load });
            point.intervals += 1;
            point.arrived_bytes = 0;
        }
        self.interval_start = Some(now);
    }

    /// A probe leaves egress (port, priority): the rate to lower it to.
    pub fn mark(&mut self, port: usize, priority: Pcp, port_mac: EthernetAddress, probe_rate_kbps: u32) -> ProbeMark {
        let point = &mut self.points[port * 8 + priority.index()];
        let rate_kbps = (point.advertised_bps / 1000.0).floor().min(f64::from(u32::MAX)) as u32;
        point.probes_seen += 1;
        point.probes_marked += u64::from(rate_kbps < probe_rate_kbps);
        ProbeMark { rate_kbps, port: port_mac }
    }

    pub fn reset_counters(&mut self) {
        for point in &mut self.points {
            point.probes_seen = 0;
            point.probes_marked = 0;
            point.intervals = 0;
        }
    }
}

/// Advertised rates never fall below 1 kbit/s, the probe's unit.
const MIN_RATE_BPS: f64 = 1000.0;

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);
    const T0: Instant = Instant::from_nanos(1_000_000_000);

    fn fecn(control: ControlKind) -> Fecn {
        let config = FecnConfig { priorities: vec![3], control, ..FecnConfig::default() };
        Fecn::new(&config, &[BitRate::gbps(10), BitRate::gbps(10)]).unwrap()
    }

    fn p3() -> Pcp {
        Pcp::new(3).unwrap()
    }

    /// Runs one interval of `ms` with `bytes` arriving at port 1 and `queue` bytes at its end.
    fn interval(f: &mut Fecn, at: Instant, bytes: u32, queue: u64) {
        f.arrival(1, p3(), bytes);
        f.handle_timeout(at, |port, _| if port == 1 { queue } else { 0 });
    }

    #[test]
    fn the_rate_starts_at_c_over_n0_and_follows_r_over_rho() {
        let mut f = fecn(ControlKind::Hyperbolic);
        assert_eq!(f.point(1, p3()).advertised_bps, 1e9, "r0 = 10 Gbit/s / 10");
        assert_eq!(f.next_timeout(), Instant::ZERO, "the first timeout starts the clock");
        f.handle_timeout(T0, |_, _| 0);
        assert_eq!(f.next_timeout(), T0 + MS);
        // 2.5 MB in 1 ms is 20 Gbit/s, with the queue at Qeq (f = 1): ρ = 2, r = 0.5 Gbit/s.
        interval(&mut f, T0 + MS, 2_500_000, 24_000);
        let point = f.point(1, p3());
        let last = point.last.unwrap();
        assert!((last.arrival_bps - 20e9).abs() < 1.0 && (last.f - 1.0).abs() < 1e-12);
        assert!((point.advertised_bps - 0.5e9).abs() < 1.0, "{}", point.advertised_bps);
        // Above Qeq γC counts: 10 Gbit/s arriving, q = 32 packets: ρ = 1 / (f(32)·0.99).
        interval(&mut f, T0 + 2 * MS, 1_250_000, 48_000);
        let rho = 1.0 / ((17.6 / 19.2) * 0.99);
        assert!((f.point(1, p3()).last.unwrap().load - rho).abs() < 1e-9);
        assert!((f.point(1, p3()).advertised_bps - 0.5e9 / rho).abs() < 1.0);
        // An idle port advertises its capacity.
        assert_eq!(f.point(0, p3()).advertised_bps, 10e9);
    }

    #[test]
    fn a_late_interval_measures_over_the_time_it_really_lasted() {
        let mut f = fecn(ControlKind::Hyperbolic);
        f.handle_timeout(T0, |_, _| 0);
        f.handle_timeout(T0 + MS / 2, |_, _| 0);
        assert_eq!(f.point(1, p3()).intervals, 0, "not over yet");
        // 2.5 MB over 2 ms is 10 Gbit/s, not 20.
        interval(&mut f, T0 + 2 * MS, 2_500_000, 24_000);
        assert!((f.point(1, p3()).last.unwrap().arrival_bps - 10e9).abs() < 1.0);
        assert_eq!(f.next_timeout(), T0 + 3 * MS);
    }

    #[test]
    fn marking_lowers_only_probes_above_the_advertised_rate() {
        let mut f = fecn(ControlKind::Hyperbolic);
        let mac = EthernetAddress([2, 0, 0, 0, 0, 7]);
        let mark = f.mark(1, p3(), mac, 10_000_000);
        assert_eq!(mark, ProbeMark { rate_kbps: 1_000_000, port: mac });
        f.mark(1, p3(), mac, 500_000);
        let point = f.point(1, p3());
        assert_eq!((point.probes_seen, point.probes_marked), (2, 1));
    }

    #[test]
    fn n_flows_at_the_advertised_rate_converge_on_a_fair_share_in_one_interval() {
        // ri+1 = C·f(q)/N when all N flows send at ri (§IV).
        let mut f = fecn(ControlKind::Multistage);
        f.handle_timeout(T0, |_, _| 0);
        let r = f.point(1, p3()).advertised_bps;
        let n = 40.0;
        interval(&mut f, T0 + MS, (n * r / 8.0 * 1e-3) as u32, 0);
        let expected = 10e9 * 1.002 / n;
        assert!((f.point(1, p3()).advertised_bps - expected).abs() < 1e3, "{}", f.point(1, p3()).advertised_bps);
    }

    #[test]
    fn smoothing_moves_the_rate_a_share_w_of_the_way_to_r_over_rho() {
        let config = FecnConfig { priorities: vec![3], smoothing: 0.25, ..FecnConfig::default() };
        let mut f = Fecn::new(&config, &[BitRate::gbps(10), BitRate::gbps(10)]).unwrap();
        f.handle_timeout(T0, |_, _| 0);
        // ρ = 2 as above: r/ρ = 0.5 Gbit/s, and r moves a quarter of the way from 1 Gbit/s.
        interval(&mut f, T0 + MS, 2_500_000, 24_000);
        assert!((f.point(1, p3()).advertised_bps - 0.875e9).abs() < 1.0, "{}", f.point(1, p3()).advertised_bps);
    }

    #[test]
    fn bad_constants_are_rejected_with_their_key() {
        let bad = |edit: fn(&mut FecnConfig)| {
            let mut config = FecnConfig::default();
            edit(&mut config);
            config.validate().unwrap_err().key
        };
        assert_eq!(bad(|c| c.gamma = 1.5), "fecn.gamma");
        assert_eq!(bad(|c| c.a = 1.0), "fecn.a");
        assert_eq!(bad(|c| c.interval = Duration::ZERO), "fecn.interval");
        assert_eq!(bad(|c| c.n0 = 0), "fecn.n0");
        assert_eq!(bad(|c| c.smoothing = 0.0), "fecn.smoothing");
        assert_eq!(bad(|c| c.priorities = vec![8]), "fecn.priorities");
        assert!(FecnConfig::default().validate().is_ok());
    }
}
