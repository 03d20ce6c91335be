//! Link speeds and byte sizes as users write them ("10Gbps", "48KiB"), and the exact
//! conversions between PAUSE quanta and time that the flow-control engines rely on.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// One PAUSE/PFC quantum is 512 bit times at the link speed (IEEE 802.3 Annex 31B).
pub const BITS_PER_QUANTUM: u64 = 512;

/// A link speed in bits per second; never zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BitRate(u64);

/// Why a speed or size string was rejected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UnitError {
    #[error("`{0}` is not a number followed by a unit")]
    Syntax(String),
    #[error("unknown unit `{unit}` in `{input}` (expected one of {expected})")]
    UnknownUnit { input: String, unit: String, expected: &'static str },
    #[error("`{0}` is too large")]
    Overflow(String),
    #[error("`{0}` has a fractional part finer than the unit allows")]
    Fraction(String),
    #[error("`{0}` must be greater than zero")]
    Zero(String),
}

impl BitRate {
    pub const fn from_bps(bits_per_second: u64) -> Option<BitRate> {
        if bits_per_second == 0 { None } else { Some(BitRate(bits_per_second)) }
    }

    pub const fn mbps(megabits: u64) -> BitRate {
        assert!(megabits > 0);
        BitRate(megabits * 1_000_000)
    }

    pub const fn gbps(gigabits: u64) -> BitRate {
        assert!(gigabits > 0);
        BitRate(gigabits * 1_000_000_000)
    }

    pub const fn bps(self) -> u64 {
        self.0
    }

    /// Time to serialise `bits` at this speed, rounded up to whole nanoseconds.
    pub fn bits_duration(self, bits: u64) -> Duration {
        let nanos = (u128::from(bits) * 1_000_000_000).div_ceil(u128::from(self.0));
        Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
    }

    /// How long `quanta` pause quanta last at this speed, rounded up so that a pause is
    /// never shorter than what the peer asked for.
    pub fn pause_duration(self, quanta: u16) -> Duration {
        self.bits_duration(u64::from(quanta) * BITS_PER_QUANTUM)
    }

    /// The smallest number of quanta whose [`BitRate::pause_duration`] covers `duration`,
    /// saturating at 65535. For speeds below 512 Gbit/s it is the exact inverse of
    /// `pause_duration`.
    pub fn pause_quanta(self, duration: Duration) -> u16 {
        let nanos = duration.as_nanos();
        if nanos == 0 {
            return 0;
        }
        // ceil(q·K/s) ≥ d  ⟺  q·K/s > d − 1  ⟺  q = ⌊(d − 1)·s/K⌋ + 1, with K = 512·10⁹.
        let quanta = (nanos - 1) * u128::from(self.0) / (u128::from(BITS_PER_QUANTUM) * 1_000_000_000) + 1;
        u16::try_from(quanta).unwrap_or(u16::MAX)
    }
}

impl fmt::Display for BitRate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_scaled(
            f,
            self.0,
            &[(1_000_000_000_000, "Tbps"), (1_000_000_000, "Gbps"), (1_000_000, "Mbps"), (1_000, "Kbps"), (1, "bps")],
        )
    }
}

impl FromStr for BitRate {
    type Err = UnitError;

    /// Accepts `100Mbps`, `2.5Gbps`, `1000bps` (unit prefix case-insensitive, `bps` required).
    fn from_str(input: &str) -> Result<Self, UnitError> {
        const UNITS: &[(&str, u64)] =
            &[("bps", 1), ("kbps", 1_000), ("mbps", 1_000_000), ("gbps", 1_000_000_000), ("tbps", 1_000_000_000_000)];
        let value = parse_scaled(input, UNITS, "bps, Kbps, Mbps, Gbps, Tbps", false)?;
        BitRate::from_bps(value).ok_or_else(|| UnitError::Zero(input.to_string()))
    }
}

/// A size in bytes, written with SI (`KB` = 1000) or IEC (`KiB` = 1024) units.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ByteSize(pub u64);

impl ByteSize {
    pub const fn bytes(self) -> u64 {
        self.0
    }

    pub const fn kib(kibibytes: u64) -> ByteSize {
        ByteSize(kibibytes * 1024)
    }
}

impl fmt::Display for ByteSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 != 0 && self.0.is_multiple_of(1024) {
            write_scaled(f, self.0, &[(1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")])
        } else {
            write_scaled(f, self.0, &[(1_000_000_000, "GB"), (1_000_000, "MB"), (1_000, "KB"), (1, "B")])
        }
    }
}

impl FromStr for ByteSize {
    type Err = UnitError;

    /// Accepts `60000`, `60000B`, `60KB`, `48KiB`, `1.5MiB` (units case-sensitive: `KB` ≠ `Kb`).
    fn from_str(input: &str) -> Result<Self, UnitError> {
        const UNITS: &[(&str, u64)] = &[
            ("", 1),
            ("B", 1),
            ("KB", 1_000),
            ("MB", 1_000_000),
            ("GB", 1_000_000_000),
            ("KiB", 1 << 10),
            ("MiB", 1 << 20),
            ("GiB", 1 << 30),
        ];
        parse_scaled(input, UNITS, "B, KB, MB, GB, KiB, MiB, GiB", true).map(ByteSize)
    }
}

/// Writes `value` with the largest unit that divides it exactly; `units` run from the
/// largest down, and the last one is used when none divides.
fn write_scaled(f: &mut fmt::Formatter<'_>, value: u64, units: &[(u64, &str)]) -> fmt::Result {
    let last = units[units.len() - 1];
    let (scale, unit) =
        units.iter().copied().find(|&(scale, _)| value >= scale && value.is_multiple_of(scale)).unwrap_or(last);
    write!(f, "{}{unit}", value / scale)
}

/// Parses `<digits>[.<digits>]<unit>` exactly in integer arithmetic.
fn parse_scaled(
    input: &str,
    units: &[(&str, u64)],
    expected: &'static str,
    case_sensitive: bool,
) -> Result<u64, UnitError> {
    let text = input.trim();
    let split = text.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let unit = unit.trim();
    if number.is_empty() || number.matches('.').count() > 1 || number.starts_with('.') || number.ends_with('.') {
        return Err(UnitError::Syntax(input.to_string()));
    }
    let scale = units
        .iter()
        .find(|(name, _)| if case_sensitive { *name == unit } else { name.eq_ignore_ascii_case(unit) })
        .map(|&(_, scale)| scale)
        .ok_or_else(|| UnitError::UnknownUnit { input: input.to_string(), unit: unit.to_string(), expected })?;
    let overflow = || UnitError::Overflow(input.to_string());
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    let whole: u64 = whole.parse().map_err(|_| overflow())?;
    let mut value = whole.checked_mul(scale).ok_or_else(overflow)?;
    if !fraction.is_empty() {
        let digits = u32::try_from(fraction.len()).map_err(|_| overflow())?;
        let denominator = 10u64.checked_pow(digits).ok_or_else(overflow)?;
        let numerator = fraction.parse::<u64>().map_err(|_| overflow())?.checked_mul(scale).ok_or_else(overflow)?;
        if !numerator.is_multiple_of(denominator) {
            return Err(UnitError::Fraction(input.to_string()));
        }
        value = value.checked_add(numerator / denominator).ok_or_else(overflow)?;
    }
    Ok(value)
}

/// A packet-processing rate in packets per second; never zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PacketRate(u64);

impl PacketRate {
    pub const fn from_pps(pps: u64) -> Option<PacketRate> {
        if pps == 0 { None } else { Some(PacketRate(pps)) }
    }

    pub const fn pps(self) -> u64 {
        self.0
    }

    /// Time per packet, rounded up to whole nanoseconds.
    pub fn interval(self) -> Duration {
        Duration::from_nanos(1_000_000_000u64.div_ceil(self.0))
    }
}

impl fmt::Display for PacketRate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_scaled(f, self.0, &[(1_000_000, "Mpps"), (1_000, "Kpps"), (1, "pps")])
    }
}

impl FromStr for PacketRate {
    type Err = UnitError;

    /// Accepts `500Kpps`, `1Mpps`, `0.5Mpps`, `250000pps`.
    fn from_str(input: &str) -> Result<Self, UnitError> {
        const UNITS: &[(&str, u64)] = &[("pps", 1), ("kpps", 1_000), ("mpps", 1_000_000)];
        let value = parse_scaled(input, UNITS, "pps, Kpps, Mpps", false)?;
        PacketRate::from_pps(value).ok_or_else(|| UnitError::Zero(input.to_string()))
    }
}

/// Parses a span as users write it: `500ns`, `1us` (or `1µs`), `25ms`, `1.5s`.
pub fn parse_duration(input: &str) -> Result<Duration, UnitError> {
    const UNITS: &[(&str, u64)] = &[("ns", 1), ("us", 1_000), ("µs", 1_000), ("ms", 1_000_000), ("s", 1_000_000_000)];
    parse_scaled(input, UNITS, "ns, us, ms, s", true).map(Duration::from_nanos)
}

/// Formats a span the way [`parse_duration`] reads it, in the largest exact unit.
pub fn format_duration(duration: Duration) -> String {
    struct Exact(u64);
    impl fmt::Display for Exact {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write_scaled(f, self.0, &[(1_000_000_000, "s"), (1_000_000, "ms"), (1_000, "us"), (1, "ns")])
        }
    }
    Exact(crate::time::duration_nanos(duration)).to_string()
}

/// Serde for speeds, sizes and spans: strings with units in configs ("10Gbps", "48KiB",
/// "1us"); plain integers are also accepted for sizes (bytes).
mod serde_impls {
    use super::*;
    use serde::de::{self, Deserializer, Visitor};
    use serde::{Deserialize, Serialize, Serializer};

    impl Serialize for BitRate {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            serializer.collect_str(self)
        }
    }

    impl<'de> Deserialize<'de> for BitRate {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            let text = String::deserialize(deserializer)?;
            text.parse().map_err(de::Error::custom)
        }
    }

    impl Serialize for PacketRate {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            serializer.collect_str(self)
        }
    }

    impl<'de> Deserialize<'de> for PacketRate {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            let text = String::deserialize(deserializer)?;
            text.parse().map_err(de::Error::custom)
        }
    }

    impl Serialize for ByteSize {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            serializer.collect_str(self)
        }
    }

    impl<'de> Deserialize<'de> for ByteSize {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            struct SizeVisitor;
            impl Visitor<'_> for SizeVisitor {
                type Value = ByteSize;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("a size such as \"48KiB\", \"60KB\" or a number of bytes")
                }
                fn visit_u64<E: de::Error>(self, bytes: u64) -> Result<ByteSize, E> {
                    Ok(ByteSize(bytes))
                }
                fn visit_i64<E: de::Error>(self, bytes: i64) -> Result<ByteSize, E> {
                    u64::try_from(bytes).map(ByteSize).map_err(|_| E::custom("a size cannot be negative"))
                }
                fn visit_str<E: de::Error>(self, text: &str) -> Result<ByteSize, E> {
                    text.parse().map_err(E::custom)
                }
            }
            deserializer.deserialize_any(SizeVisitor)
        }
    }

    /// `#[serde(with = "units::duration")]` for `std::time::Duration` fields.
    pub mod duration {
        use super::*;

        pub fn serialize<S: Serializer>(duration: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
            serializer.serialize_str(&format_duration(*duration))
        }

        pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Duration, D::Error> {
            let text = String::deserialize(deserializer)?;
            parse_duration(&text).map_err(de::Error::custom)
        }
    }
}

pub use serde_impls::duration;

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_speeds_users_write() {
        assert_eq!("100Mbps".parse::<BitRate>().unwrap().bps(), 100_000_000);
        assert_eq!("1Gbps".parse::<BitRate>().unwrap().bps(), 1_000_000_000);
        assert_eq!("10gbps".parse::<BitRate>().unwrap().bps(), 10_000_000_000);
        assert_eq!("2.5Gbps".parse::<BitRate>().unwrap().bps(), 2_500_000_000);
        assert_eq!(" 40 Gbps ".parse::<BitRate>().unwrap().bps(), 40_000_000_000);
        assert!(matches!("10GB".parse::<BitRate>(), Err(UnitError::UnknownUnit { .. })));
        assert!(matches!("0Mbps".parse::<BitRate>(), Err(UnitError::Zero(_))));
        assert!(matches!("1.5bps".parse::<BitRate>(), Err(UnitError::Fraction(_))));
        assert!(matches!("fast".parse::<BitRate>(), Err(UnitError::Syntax(_))));
        assert_eq!(BitRate::gbps(10).to_string(), "10Gbps");
        assert_eq!(BitRate::from_bps(2_500_000_000).unwrap().to_string(), "2500Mbps");
    }

    #[test]
    fn parses_sizes_users_write() {
        assert_eq!("48KiB".parse::<ByteSize>().unwrap().bytes(), 49_152);
        assert_eq!("60KB".parse::<ByteSize>().unwrap().bytes(), 60_000);
        assert_eq!("1500".parse::<ByteSize>().unwrap().bytes(), 1500);
        assert_eq!("1.5MiB".parse::<ByteSize>().unwrap().bytes(), 1_572_864);
        assert!(matches!("48kib".parse::<ByteSize>(), Err(UnitError::UnknownUnit { .. })));
        assert!(matches!("99999999999999GiB".parse::<ByteSize>(), Err(UnitError::Overflow(_))));
        assert_eq!(ByteSize::kib(48).to_string(), "48KiB");
        assert_eq!(ByteSize(60_000).to_string(), "60KB");
    }

    #[test]
    fn parses_packet_rates() {
        assert_eq!("0.5Mpps".parse::<PacketRate>().unwrap().pps(), 500_000);
        assert_eq!("1Mpps".parse::<PacketRate>().unwrap().interval(), Duration::from_micros(1));
        assert_eq!(PacketRate::from_pps(500_000).unwrap().to_string(), "500Kpps");
    }

    #[test]
    fn parses_durations_users_write() {
        assert_eq!(parse_duration("500ns").unwrap(), Duration::from_nanos(500));
        assert_eq!(parse_duration("1us").unwrap(), Duration::from_micros(1));
        assert_eq!(parse_duration("2.5µs").unwrap(), Duration::from_nanos(2500));
        assert_eq!(parse_duration("15ms").unwrap(), Duration::from_millis(15));
        assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
        assert!(matches!(parse_duration("5 minutes"), Err(UnitError::UnknownUnit { .. })));
        assert_eq!(format_duration(Duration::from_micros(25)), "25us");
        assert_eq!(format_duration(Duration::from_nanos(1500)), "1500ns");
    }

    #[test]
    fn one_quantum_is_512_bit_times() {
        // 512 bits at 1 Gbit/s = 512 ns; at 100 Mbit/s = 5.12 µs; at 10 Gbit/s = 51.2 ns (rounded up).
        assert_eq!(BitRate::gbps(1).pause_duration(1), Duration::from_nanos(512));
        assert_eq!(BitRate::mbps(100).pause_duration(1), Duration::from_nanos(5120));
        assert_eq!(BitRate::gbps(10).pause_duration(1), Duration::from_nanos(52));
        assert_eq!(BitRate::gbps(10).pause_duration(u16::MAX), Duration::from_nanos(3_355_392));
        assert_eq!(BitRate::gbps(1).pause_duration(0), Duration::ZERO);
    }

    #[test]
    fn quanta_saturate_at_65535() {
        assert_eq!(BitRate::gbps(1).pause_quanta(Duration::from_secs(1)), u16::MAX);
        assert_eq!(BitRate::gbps(1).pause_quanta(Duration::from_nanos(1)), 1);
        assert_eq!(BitRate::gbps(1).pause_quanta(Duration::ZERO), 0);
    }

    proptest! {
        #[test]
        fn quanta_round_trip_through_duration(quanta: u16, speed in 1_000_000u64..400_000_000_000) {
            let rate = BitRate::from_bps(speed).unwrap();
            prop_assert_eq!(rate.pause_quanta(rate.pause_duration(quanta)), quanta);
        }

        #[test]
        fn pause_never_shorter_than_requested(quanta: u16, speed in 1u64..1_000_000_000_000) {
            let rate = BitRate::from_bps(speed).unwrap();
            let exact_ns = u128::from(quanta) * 512 * 1_000_000_000 / u128::from(speed);
            prop_assert!(rate.pause_duration(quanta).as_nanos() >= exact_ns);
            prop_assert!(rate.pause_duration(quanta).as_nanos() <= exact_ns + 1);
        }

        #[test]
        fn sizes_and_speeds_display_and_parse_back(bytes in 0u64..1 << 40, bps in 1u64..1 << 40) {
            prop_assert_eq!(ByteSize(bytes).to_string().parse::<ByteSize>().unwrap(), ByteSize(bytes));
            let rate = BitRate::from_bps(bps).unwrap();
            prop_assert_eq!(rate.to_string().parse::<BitRate>().unwrap(), rate);
        }
    }
}
