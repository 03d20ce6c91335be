//! Axes: how values map to positions ([`Scale`]), the data ranges an axis spans, and its ticks
//! (round linear steps; decades or 1-2-5 steps on a log axis), thinned until the labels fit.

use super::metrics::text_width;
use super::style::TICK_EM;

/// How an axis maps values to positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    Linear,
    /// Decades equally spaced; for FCTs that span several. Values ≤ 0 are drawn at the chart's
    /// smallest positive x; a chart with no positive x at all is drawn linear.
    Log10,
}

#[derive(Debug, Clone)]
pub(super) struct Axis {
    pub(super) scale: Scale,
    pub(super) lo: f64,
    pub(super) hi: f64,
    /// Labelled ticks, with a gridline.
    pub(super) major: Vec<(f64, String)>,
    /// Unlabelled short ticks, with a lighter gridline (log axes; category boundaries).
    pub(super) minor: Vec<f64>,
    /// Gridlines at the labelled ticks; not through the boxes of a category axis.
    pub(super) major_grid: bool,
}

impl Axis {
    /// Where `v` falls between `lo` (0) and `hi` (1).
    pub(super) fn fraction(&self, v: f64) -> f64 {
        match self.scale {
            Scale::Linear => (v - self.lo) / (self.hi - self.lo),
            Scale::Log10 => (v.log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10()),
        }
    }

    /// Ticks for an axis `length` px long; horizontal labels must not touch, stacked ones need a
    /// line and a half each.
    pub(super) fn new(scale: Scale, (lo, hi): (f64, f64), length: f64, horizontal: bool) -> Axis {
        let mut axis = Axis { scale, lo, hi, major: Vec::new(), minor: Vec::new(), major_grid: true };
        let fits = |axis: &Axis, ticks: &[(f64, String)]| {
            ticks.windows(2).all(|pair| {
                let gap = (axis.fraction(pair[1].0) - axis.fraction(pair[0].0)) * length;
                let need = if horizontal {
                    (text_width(&pair[0].1, TICK_EM) + text_width(&pair[1].1, TICK_EM)) / 2.0 + 0.8 * TICK_EM
                } else {
                    1.5 * TICK_EM
                };
                gap >= need
            })
        };
        match scale {
            Scale::Linear => {
                let per_tick = if horizontal { 140.0 } else { 85.0 };
                let mut target = ((length / per_tick) as usize).clamp(2, 10);
                loop {
                    axis.major = linear_ticks(lo, hi, target);
                    if target <= 2 || fits(&axis, &axis.major) {
                        break;
                    }
                    target -= 1;
                }
            }
            Scale::Log10 => {
                let (candidates, minor) = log_ticks(lo, hi);
                // Thin the labels to every k-th candidate until they fit; the rest become minor.
                let labelled = |k: usize| -> Vec<(f64, String)> {
                    candidates.iter().step_by(k).map(|&v| (v, format_log(v))).collect()
                };
                let mut k = 1;
                while k < candidates.len() && !fits(&axis, &labelled(k)) {
                    k += 1;
                }
                axis.major = labelled(k);
                axis.minor = minor;
                for (i, &v) in candidates.iter().enumerate() {
                    if i % k != 0 {
                        axis.minor.push(v);
                    }
                }
            }
        }
        axis
    }
}

/// Ticks at the multiples of 1, 2 or 5 × 10^k whose number is nearest `target` (the more
/// ticks on a tie).
fn linear_ticks(lo: f64, hi: f64, target: usize) -> Vec<(f64, String)> {
    let raw = (hi - lo) / target.max(1) as f64;
    let magnitude = 10f64.powf(raw.log10().floor());
    let count = |step: f64| (hi / step + 1e-9).floor() - (lo / step - 1e-9).ceil() + 1.0;
    let step = [0.5, 1.0, 2.0, 5.0, 10.0, 20.0]
        .iter()
        .map(|m| m * magnitude)
        .min_by(|a, b| {
            let off = |step: f64| (count(step) - target as f64).abs();
            off(*a).total_cmp(&off(*b)).then(a.total_cmp(b))
        })
        .unwrap_or(raw);
    let decimals = (0..=12).find(|&d| {
        let scaled = step * 10f64.powi(d);
        (scaled - scaled.round()).abs() < 1e-6 * scaled.max(1.0)
    });
    let scientific = lo.abs().max(hi.abs()) >= 1e6 || step < 1e-4 || decimals.is_none();
    let first = (lo / step - 1e-9).ceil() as i64;
    let last = (hi / step + 1e-9).floor() as i64;
    (first..=last)
        .map(|i| {
            let v = if i == 0 { 0.0 } else { i as f64 * step };
            let label = if i == 0 {
                "0".to_string()
            } else if scientific {
                format!("{:e}", significant(v))
            } else {
                format!("{:.*}", decimals.unwrap_or(0) as usize, v)
            };
            (v, label)
        })
        .collect()
}

/// Labelled-tick candidates and minor ticks of a log axis: decades if the range holds two or
/// more, else 1-2-5 steps, else every integer multiple of a power of ten.
fn log_ticks(lo: f64, hi: f64) -> (Vec<f64>, Vec<f64>) {
    let first = lo.log10().floor() as i32;
    let last = hi.log10().ceil() as i32;
    let within = |v: &f64| *v >= lo * (1.0 - 1e-9) && *v <= hi * (1.0 + 1e-9);
    let multiples = |ms: &[f64]| -> Vec<f64> {
        (first..=last).flat_map(|k| ms.iter().map(move |m| significant(m * 10f64.powi(k)))).filter(within).collect()
    };
    let all = multiples(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]);
    let mut major = multiples(&[1.0]);
    if major.len() < 2 {
        major = multiples(&[1.0, 2.0, 5.0]);
    }
    if major.len() < 2 {
        major = all.clone();
    }
    let minor = all.into_iter().filter(|v| !major.contains(v)).collect();
    (major, minor)
}

fn format_log(v: f64) -> String {
    if (1e-3..1e5).contains(&v) { format!("{}", significant(v)) } else { format!("{:e}", significant(v)) }
}

/// `v` rounded to 12 significant digits, so that 3 × 0.1 prints as 0.3.
fn significant(v: f64) -> f64 {
    format!("{v:.11e}").parse().unwrap_or(v)
}

/// The data's x extent with a small margin; a log axis snaps out to whole decades when that
/// adds little, a linear one does not cross 0 for data on one side of it.
pub(super) fn x_range(data: &[Vec<(f64, f64)>], scale: Scale) -> (f64, f64) {
    match scale {
        Scale::Log10 => log_range(data.iter().flatten().map(|p| p.0)),
        Scale::Linear => {
            let (lo, hi) = extent(data.iter().flatten().map(|p| p.0));
            let Some((lo, hi)) = lo.zip(hi) else { return (0.0, 1.0) };
            padded(lo, hi)
        }
    }
}

/// The span of a log axis over positive `values`: padded by 2 %, snapped to a decade nearby.
pub(super) fn log_range(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = extent(values);
    let Some((lo, hi)) = lo.zip(hi) else { return (1.0, 100.0) };
    let (mut l, mut h) = (lo.log10(), hi.log10());
    if h - l < 1e-9 {
        l -= 0.5;
        h += 0.5;
    } else {
        let span = h - l;
        l -= 0.02 * span;
        h += 0.02 * span;
        if l - l.floor() <= 0.15 * span {
            l = l.floor();
        }
        if h.ceil() - h <= 0.15 * span {
            h = h.ceil();
        }
    }
    (10f64.powf(l), 10f64.powf(h))
}

pub(super) fn y_range(data: &[Vec<(f64, f64)>]) -> (f64, f64) {
    let (lo, hi) = extent(data.iter().flatten().map(|p| p.1));
    let (lo, hi) = (lo.unwrap_or(0.0).min(0.0), hi.unwrap_or(1.0).max(0.0));
    if hi - lo <= 0.0 {
        return (0.0, 1.0);
    }
    let span = hi - lo;
    (if lo < 0.0 { lo - 0.05 * span } else { 0.0 }, if hi > 0.0 { hi + 0.05 * span } else { 0.0 })
}

fn padded(lo: f64, hi: f64) -> (f64, f64) {
    if hi - lo <= 0.0 {
        let pad = if lo == 0.0 { 1.0 } else { lo.abs() * 0.1 };
        return (lo - pad, hi + pad);
    }
    let span = hi - lo;
    let mut l = lo - 0.02 * span;
    let mut h = hi + 0.02 * span;
    if lo >= 0.0 && l < 0.0 {
        l = 0.0;
    }
    if hi <= 0.0 && h > 0.0 {
        h = 0.0;
    }
    (l, h)
}

fn extent(values: impl Iterator<Item = f64>) -> (Option<f64>, Option<f64>) {
    values.fold((None, None), |(lo, hi), v| {
        (Some(lo.map_or(v, |l: f64| l.min(v))), Some(hi.map_or(v, |h: f64| h.max(v))))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_numbers() {
        let labels = |ticks: Vec<(f64, String)>| ticks.into_iter().map(|t| t.1).collect::<Vec<_>>();
        assert_eq!(labels(linear_ticks(0.0, 1.05, 6)), ["0", "0.2", "0.4", "0.6", "0.8", "1.0"]);
        assert_eq!(labels(linear_ticks(0.0, 917.0, 5)), ["0", "200", "400", "600", "800"]);
        assert_eq!(labels(linear_ticks(0.0, 0.3, 3)), ["0", "0.1", "0.2", "0.3"]);
        let (major, minor) = log_ticks(0.01, 100.0);
        assert_eq!(major.iter().map(|&v| format_log(v)).collect::<Vec<_>>(), ["0.01", "0.1", "1", "10", "100"]);
        assert_eq!(minor.len(), 4 * 8);
        let (major, _) = log_ticks(1.5, 8.0);
        assert_eq!(major, [2.0, 5.0]);
        assert_eq!(format_log(1e6), "1e6");
    }
}
