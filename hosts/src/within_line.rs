//! The check every rate-based law's settings share: a rate setting cannot exceed the NIC's.

use pfcswitch_link::units::BitRate;

/// Refuses `rate` (the setting `key`) above `line_rate`, naming both.
pub(crate) fn within_line(key: &str, rate: BitRate, line_rate: BitRate) -> Result<(), String> {
    if rate > line_rate {
        return Err(format!("{key} {rate} must not exceed the line rate {line_rate}"));
    }
    Ok(())
}
