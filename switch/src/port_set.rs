//! Sets of ports as 64-bit masks (bit i: port i), which the switch keeps for the ports that
//! have work so that a poll visits those only.

/// The ports in `mask`, lowest first.
pub(crate) fn ports_in(mut mask: u64) -> impl Iterator<Item = usize> + Clone {
    std::iter::from_fn(move || {
        let port = (mask != 0).then(|| mask.trailing_zeros() as usize)?;
        mask &= mask - 1;
        Some(port)
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn lists_the_set_bits_lowest_first() {
        assert_eq!(super::ports_in(0).count(), 0);
        assert_eq!(super::ports_in(1 << 63 | 0b1010).collect::<Vec<_>>(), [1, 3, 63]);
    }
}
