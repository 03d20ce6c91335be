//! ns-3's rate and time strings as HPCC's files write them (`100Gbps`, `0.001ms`, `1000ns`).
//!
//! The units are exactly those of the ns-3 that HPCC's simulator is built on
//! (`DataRate::DoParse`, `Time(const std::string&)`): a rate is `bps`, `b/s`, `Bps`, `B/s`
//! with the prefixes `k`/`K`, `M`, `G` (decimal) or `Ki`, `Mi`, `Gi` (binary, `b/s` and
//! `B/s` only), a bare number being bits per second; a time is `s`, `ms`, `us`, `ns`, `ps`,
//! `fs`, a bare number being seconds. Unlike ns-3, which converts through a `double`, the
//! numbers are read exactly: a rate must come to whole bits per second and a time to whole
//! nanoseconds (the resolution HPCC runs at and pfcswitch's clock has), else it is refused.

/// A decimal number `mantissa / 10^scale`, read exactly.
fn decimal(number: &str) -> Option<(u128, u32)> {
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if whole.is_empty() && fraction.is_empty() {
        return None;
    }
    let digits = format!("{whole}{fraction}");
    if !digits.bytes().all(|b| b.is_ascii_digit()) || digits.len() > 30 {
        return None;
    }
    Some((if digits.is_empty() { 0 } else { digits.parse().ok()? }, fraction.len() as u32))
}

/// `number` × `multiplier` / `divisor` if it is a whole number.
fn exact(number: &str, multiplier: u128, divisor: u128) -> Result<u64, String> {
    let (mantissa, scale) = decimal(number).ok_or_else(|| format!("`{number}` is not a number"))?;
    let denominator = 10u128.pow(scale) * divisor;
    let numerator = mantissa.checked_mul(multiplier).ok_or_else(|| format!("`{number}` is too large"))?;
    if numerator % denominator != 0 {
        return Err("finer than the unit allows".into());
    }
    u64::try_from(numerator / denominator).map_err(|_| format!("`{number}` is too large"))
}

/// Splits `text` where its number ends.
fn split_unit(text: &str) -> (&str, &str) {
    text.split_at(text.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(text.len()))
}

/// Bits per second of an ns-3 `DataRate` string; the reason it is not one.
pub fn parse_rate(text: &str) -> Result<u64, String> {
    let (number, unit) = split_unit(text);
    let multiplier: u128 = match unit {
        "" | "bps" | "b/s" => 1,
        "Bps" | "B/s" => 8,
        "kbps" | "kb/s" | "Kbps" | "Kb/s" => 1_000,
        "kBps" | "kB/s" | "KBps" | "KB/s" => 8_000,
        "Kib/s" => 1 << 10,
        "KiB/s" => 8 << 10,
        "Mbps" | "Mb/s" => 1_000_000,
        "MBps" | "MB/s" => 8_000_000,
        "Mib/s" => 1 << 20,
        "MiB/s" => 8 << 20,
        "Gbps" | "Gb/s" => 1_000_000_000,
        "GBps" | "GB/s" => 8_000_000_000,
        "Gib/s" => 1 << 30,
        "GiB/s" => 8 << 30,
        _ => {
            return Err(format!(
                "`{text}`: unknown rate unit `{unit}` (ns-3 knows bps, Kbps, Mbps, Gbps, b/s, B/s, Kib/s, …)"
            ));
        }
    };
    match exact(number, multiplier, 1) {
        Ok(0) => Err(format!("`{text}`: a link rate must be above 0")),
        Ok(bps) => Ok(bps),
        Err(reason) => Err(format!("`{text}`: {reason}")),
    }
}

/// Nanoseconds of an ns-3 `Time` string; the reason it is not one.
pub fn parse_time(text: &str) -> Result<u64, String> {
    let (number, unit) = split_unit(text);
    // (multiplier, divisor) to nanoseconds.
    let (multiplier, divisor): (u128, u128) = match unit {
        "" | "s" => (1_000_000_000, 1),
        "ms" => (1_000_000, 1),
        "us" => (1_000, 1),
        "ns" => (1, 1),
        "ps" => (1, 1_000),
        "fs" => (1, 1_000_000),
        _ => return Err(format!("`{text}`: unknown time unit `{unit}` (ns-3 knows s, ms, us, ns, ps, fs)")),
    };
    exact(number, multiplier, divisor).map_err(|reason| match reason.as_str() {
        "finer than the unit allows" => format!("`{text}` is not a whole number of nanoseconds"),
        _ => format!("`{text}`: {reason}"),
    })
}

/// `bps` as ns-3 reads it back, in the largest unit that keeps it whole (`100Gbps`).
pub fn format_rate(bps: u64) -> String {
    match bps {
        b if b.is_multiple_of(1_000_000_000) => format!("{}Gbps", b / 1_000_000_000),
        b if b.is_multiple_of(1_000_000) => format!("{}Mbps", b / 1_000_000),
        b if b.is_multiple_of(1_000) => format!("{}Kbps", b / 1_000),
        b => format!("{b}bps"),
    }
}

/// `ns` as ns-3 reads it back (`1000ns`).
pub fn format_time(ns: u64) -> String {
    format!("{ns}ns")
}

/// Nanoseconds of a start time in seconds as `flow.txt` writes it (`2.000001234`).
pub fn parse_seconds(text: &str) -> Result<u64, String> {
    exact(text, 1_000_000_000, 1).map_err(|reason| match reason.as_str() {
        "finer than the unit allows" => format!("`{text}` s is not a whole number of nanoseconds"),
        _ => reason,
    })
}

/// Seconds with nine decimals, as `traffic_gen.py` writes a start (`%.9f`).
pub fn format_seconds(ns: u64) -> String {
    format!("{}.{:09}", ns / 1_000_000_000, ns % 1_000_000_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_in_every_unit_hpcc_and_ns3_write() {
        assert_eq!(parse_rate("100Gbps"), Ok(100_000_000_000));
        assert_eq!(parse_rate("400Gb/s"), Ok(400_000_000_000));
        assert_eq!(parse_rate("50Mb/s"), Ok(50_000_000));
        assert_eq!(parse_rate("2.5Gbps"), Ok(2_500_000_000));
        assert_eq!(parse_rate("1KiB/s"), Ok(8192));
        assert_eq!(parse_rate("1000"), Ok(1000));
        assert_eq!(parse_rate("10GBps"), Ok(80_000_000_000));
    }

    #[test]
    fn rates_refused_with_the_reason() {
        assert!(parse_rate("100Tbps").unwrap_err().contains("unknown rate unit `Tbps`"));
        assert!(parse_rate("0Gbps").unwrap_err().contains("above 0"));
        assert!(parse_rate("1.5bps").unwrap_err().contains("finer"));
        assert!(parse_rate("Gbps").unwrap_err().contains("not a number"));
        assert!(parse_rate("1.2.3Gbps").unwrap_err().contains("not a number"));
    }

    #[test]
    fn times_exact_to_the_nanosecond() {
        assert_eq!(parse_time("0.001ms"), Ok(1000));
        assert_eq!(parse_time("1000ns"), Ok(1000));
        assert_eq!(parse_time("1us"), Ok(1000));
        assert_eq!(parse_time("2000ps"), Ok(2));
        assert_eq!(parse_time("0.000001"), Ok(1000));
        assert!(parse_time("1500ps").unwrap_err().contains("whole number of nanoseconds"));
        assert!(parse_time("1min").unwrap_err().contains("unknown time unit `min`"));
        assert!(parse_time("-1ns").unwrap_err().contains("unknown time unit"));
    }

    #[test]
    fn written_forms_read_back() {
        for bps in [1, 999, 25_000_000_000, 100_000_000_000, 1_500_000, 400_000] {
            assert_eq!(parse_rate(&format_rate(bps)), Ok(bps));
        }
        for ns in [0, 1, 1_000, 2_000_000_123] {
            assert_eq!(parse_time(&format_time(ns)), Ok(ns));
            assert_eq!(parse_seconds(&format_seconds(ns)), Ok(ns));
        }
        assert_eq!(format_seconds(2_000_000_123), "2.000000123");
    }
}
