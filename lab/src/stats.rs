//! Statistics the reports share.

/// The `q` quantile of sorted values (nearest rank), `None` if there are none.
pub fn quantile(sorted: &[f64], q: f64) -> Option<f64> {
    let rank = ((sorted.len() as f64 * q).ceil() as usize).clamp(1, sorted.len().max(1));
    sorted.get(rank - 1).copied()
}
