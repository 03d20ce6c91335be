//! RoCEv2 carries 24-bit PSNs (IBTA vol. 1 §9.7.1); connections number segments with 32-bit
//! sequence numbers that never wrap in an experiment. A received PSN names the sequence
//! number nearest to what its side expects: a sender and receiver are never more than a
//! window (≤ 2^23 segments, as RC requires) apart.

const PSN_SPAN: i64 = 1 << 24;

/// The sequence number congruent to `psn` modulo 2^24 that is nearest to `near`.
pub(super) fn unwrap(psn: u32, near: u32) -> u32 {
    let near = i64::from(near);
    let candidate = (near & !(PSN_SPAN - 1)) | i64::from(psn) & (PSN_SPAN - 1);
    let nearest = [candidate - PSN_SPAN, candidate, candidate + PSN_SPAN]
        .into_iter()
        .min_by_key(|c| (c - near).abs())
        .expect("three candidates");
    nearest.clamp(0, i64::from(u32::MAX)) as u32
}

#[cfg(test)]
mod tests {
    use super::unwrap;

    #[test]
    fn a_psn_names_the_sequence_number_nearest_the_expected_one() {
        assert_eq!(unwrap(5, 0), 5);
        assert_eq!(unwrap(5, 3), 5);
        // Past a wrap: PSN 2 after 0xFF_FFFE is sequence 2^24 + 2.
        assert_eq!(unwrap(2, 0xFF_FFFE), 0x100_0002);
        // Behind a wrap: a late PSN 0xFF_FFFF when 2^24 + 1 is expected.
        assert_eq!(unwrap(0xFF_FFFF, 0x100_0001), 0xFF_FFFF);
        assert_eq!(unwrap(7, 0x300_0000 + 10), 0x300_0007);
        // A PSN just behind the first is an old one: it maps to 0, never below, and never to
        // a sequence number 16 M segments ahead.
        assert_eq!(unwrap(0xFF_FFF0, 2), 0);
    }
}
