//! Time as the core sees it: instants passed in by the caller, never read from a clock.
//!
//! The daemon maps `CLOCK_MONOTONIC` onto [`Instant`]; tests and the simulator advance a
//! virtual clock. Nanosecond integers keep every computation exact and reproducible.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};
use std::time::Duration;

/// A point in time, in nanoseconds since an epoch chosen by whoever drives the core.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant(u64);

impl Instant {
    /// The epoch itself.
    pub const ZERO: Instant = Instant(0);

    pub const fn from_nanos(nanos: u64) -> Self {
        Instant(nanos)
    }

    pub const fn as_nanos(self) -> u64 {
        self.0
    }

    /// Time elapsed since `earlier`, or zero if `earlier` is later.
    pub fn saturating_duration_since(self, earlier: Instant) -> Duration {
        Duration::from_nanos(self.0.saturating_sub(earlier.0))
    }
}

/// Converts a span to whole nanoseconds, saturating at `u64::MAX` (about 584 years).
pub fn duration_nanos(duration: Duration) -> u64 {
    u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX)
}

impl Add<Duration> for Instant {
    type Output = Instant;

    fn add(self, rhs: Duration) -> Instant {
        Instant(self.0.saturating_add(duration_nanos(rhs)))
    }
}

impl AddAssign<Duration> for Instant {
    fn add_assign(&mut self, rhs: Duration) {
        *self = *self + rhs;
    }
}

impl Sub<Instant> for Instant {
    type Output = Duration;

    /// Saturating: a span is never negative.
    fn sub(self, rhs: Instant) -> Duration {
        self.saturating_duration_since(rhs)
    }
}

impl fmt::Display for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:09}s", self.0 / 1_000_000_000, self.0 % 1_000_000_000)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_saturates_instead_of_wrapping() {
        let t = Instant::from_nanos(10);
        assert_eq!(t - Instant::from_nanos(20), Duration::ZERO);
        assert_eq!(Instant::from_nanos(u64::MAX - 1) + Duration::from_secs(1), Instant::from_nanos(u64::MAX));
        assert_eq!((t + Duration::from_nanos(5)).as_nanos(), 15);
        assert_eq!(Instant::from_nanos(1_500_000_001).to_string(), "1.500000001s");
    }
}
