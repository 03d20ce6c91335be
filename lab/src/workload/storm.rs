//! A host that storms: a `[[storm]]` of a scenario makes its NIC send PFC XOFF frames for one
//! priority, as a broken NIC does, keeping its switch port paused for a while.

use super::error::WorkloadError;
use pfcswitch_link::time::Instant;
use pfcswitch_link::units::{BitRate, duration};
use pfcswitch_wire::{MacControlRepr, Pcp, PfcRepr};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// One `[[storm]]` of a scenario: from `start` (from the run's start) for `duration`, `host`
/// sends PFC XOFF frames for `priority` as a broken NIC does (see [`Storm`]).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct StormSpec {
    pub host: String,
    pub priority: u8,
    #[serde(with = "duration")]
    pub start: Duration,
    #[serde(with = "duration")]
    pub duration: Duration,
    /// Pause time of each frame (default 65535, the most a frame can ask for).
    #[serde(default = "max_quanta")]
    pub quanta: u16,
}

fn max_quanta() -> u16 {
    u16::MAX
}

impl StormSpec {
    /// Checks the storm against the run's hosts and link speed; returns the host's index and
    /// the storm its NIC makes.
    pub fn resolve(&self, hosts: &[String], speed: BitRate) -> Result<(usize, Storm), WorkloadError> {
        let invalid = |reason: String| WorkloadError::Storm { host: self.host.clone(), reason };
        let index = hosts
            .iter()
            .position(|h| *h == self.host)
            .ok_or_else(|| invalid(format!("no such host (hosts: {})", hosts.join(", "))))?;
        let storm = Storm::new(self.priority, self.quanta, speed).map_err(|e| invalid(e.to_string()))?;
        if self.duration.is_zero() {
            return Err(invalid("`duration` must be greater than zero".into()));
        }
        Ok((index, storm))
    }
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StormError {
    #[error("priority {0} is not a PCP (0..=7)")]
    Priority(u8),
    #[error("quanta must be at least 1 (0 would be an XON, which a storm never sends)")]
    ZeroQuanta,
}

/// A PFC storm as a broken NIC makes one: XOFF for one priority, re-sent well before the
/// pause expires, never an XON. The peer's queue stays paused as long as the storm lasts.
/// [`Storm::of_frame`] repeats any PAUSE or PFC frame (SONiC's pfc_gen: a class bitmap, or
/// 802.3x PAUSE) at the same pace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Storm {
    frame: MacControlRepr,
    interval: Duration,
    /// The longest pause the frame asks for.
    pause: Duration,
}

impl Storm {
    /// Frames are never closer than this: a storm must not cost its sender a core.
    pub const MIN_INTERVAL: Duration = Duration::from_micros(100);

    /// A storm of `quanta` on `priority` towards a link of `speed`: one frame every quarter of
    /// the pause it asks for, so a late or lost frame never lets the pause lapse.
    pub fn new(priority: u8, quanta: u16, speed: BitRate) -> Result<Storm, StormError> {
        let pcp = Pcp::new(priority).ok_or(StormError::Priority(priority))?;
        if quanta == 0 {
            return Err(StormError::ZeroQuanta);
        }
        Ok(Storm::of_frame(MacControlRepr::Pfc(PfcRepr::default().with_class(pcp, quanta)), speed))
    }

    /// `frame` repeated every quarter of the longest pause it asks for at `speed` (every
    /// [`Storm::MIN_INTERVAL`] at least: an all-XON frame, as pfc_gen sends with `-t 0`, too).
    pub fn of_frame(frame: MacControlRepr, speed: BitRate) -> Storm {
        let longest = match frame {
            MacControlRepr::Pause { quanta } => quanta,
            MacControlRepr::Pfc(pfc) => pfc.classes().map(|(_, quanta)| quanta).max().unwrap_or(0),
        };
        let pause = speed.pause_duration(longest);
        Storm { frame, interval: (pause / 4).max(Self::MIN_INTERVAL), pause }
    }

    /// The longest pause one frame asks for: a storm with a gap this long lets the port resume.
    pub fn pause(&self) -> Duration {
        self.pause
    }

    /// The PAUSE or PFC frame the storm repeats.
    pub fn frame(&self) -> MacControlRepr {
        self.frame
    }

    pub fn interval(&self) -> Duration {
        self.interval
    }

    /// When the storm sends its frames if it starts at `start` and lasts `length`.
    pub fn times(&self, start: Instant, length: Duration) -> impl Iterator<Item = Instant> + use<> {
        let (interval, end) = (self.interval, start + length);
        (0u32..).map(move |k| start + interval * k).take_while(move |&at| at < end)
    }

    /// The first send time at or after `now` (a sender that woke late skips the frames it
    /// missed rather than bursting them).
    pub fn next_after(&self, start: Instant, now: Instant) -> Instant {
        let elapsed = now.saturating_duration_since(start).as_nanos();
        let interval = self.interval.as_nanos();
        start + Duration::from_nanos(u64::try_from(elapsed.div_ceil(interval) * interval).unwrap_or(u64::MAX))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts() -> Vec<String> {
        (1..=9).map(|i| format!("h{i}")).collect()
    }

    #[test]
    fn a_storm_repeats_xoff_at_a_quarter_of_its_pause_and_never_resumes() {
        let storm = Storm::new(3, u16::MAX, BitRate::mbps(100)).unwrap();
        // 65535 quanta × 512 bit at 100 Mbit/s = 335.5 ms.
        assert_eq!(storm.interval(), BitRate::mbps(100).pause_duration(u16::MAX) / 4);
        let MacControlRepr::Pfc(frame) = storm.frame() else { panic!("a PFC frame") };
        assert_eq!(frame.classes().collect::<Vec<_>>(), [(Pcp::new(3).unwrap(), u16::MAX)]);
        let start = Instant::ZERO + Duration::from_secs(1);
        let times: Vec<Instant> = storm.times(start, Duration::from_secs(2)).collect();
        assert_eq!(times.len(), 24, "2 s / 83.9 ms");
        assert_eq!(times[0], start);
        assert!(times.windows(2).all(|w| w[1] - w[0] == storm.interval()));
        assert!(*times.last().unwrap() < start + Duration::from_secs(2));
        assert_eq!(storm.next_after(start, start), start);
        assert_eq!(storm.next_after(start, start + Duration::from_nanos(1)), times[1]);
        assert_eq!(storm.next_after(start, times[5]), times[5]);
        let fast = Storm::new(0, 1, BitRate::gbps(100)).unwrap();
        assert_eq!(fast.interval(), Storm::MIN_INTERVAL);
        assert_eq!(Storm::new(3, 0, BitRate::gbps(1)), Err(StormError::ZeroQuanta));
        assert_eq!(Storm::new(8, 1, BitRate::gbps(1)), Err(StormError::Priority(8)));
        let spec: StormSpec = toml::from_str("host = \"h4\"\npriority = 3\nstart = \"1s\"\nduration = \"2s\"").unwrap();
        assert_eq!(spec.quanta, u16::MAX);
        assert_eq!(spec.resolve(&hosts(), BitRate::mbps(100)), Ok((3, storm)));
        let error = |spec: StormSpec| spec.resolve(&hosts(), BitRate::mbps(100)).unwrap_err().to_string();
        let stranger = StormSpec { host: "h99".into(), ..spec.clone() };
        assert!(error(stranger).starts_with("storm of host `h99`: no such host"));
        assert!(error(StormSpec { quanta: 0, ..spec.clone() }).contains("quanta must be at least 1"));
        assert!(error(StormSpec { duration: Duration::ZERO, ..spec }).contains("`duration` must be greater than zero"));
    }
}
