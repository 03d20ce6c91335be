//! A metric's mean over the seeds with its 95 % confidence interval: Student's t, two-sided,
//! n − 1 degrees of freedom, mean ± t · s / √n with s the sample standard deviation.

/// The confidence level of every interval.
pub const CONFIDENCE: f64 = 0.95;

/// A mean over `n` samples and, from two samples on, its interval's half-width.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    pub mean: f64,
    pub half_width: Option<f64>,
    pub n: usize,
}

/// The mean of `samples` (summed in order, so the same samples give the same bits) with its
/// confidence interval; `None` without samples.
pub fn estimate(samples: &[f64]) -> Option<Estimate> {
    let n = samples.len();
    if n == 0 {
        return None;
    }
    let mean = samples.iter().sum::<f64>() / n as f64;
    let half_width = (n >= 2).then(|| {
        let variance = samples.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        t_quantile(n - 1) * variance.sqrt() / (n as f64).sqrt()
    });
    Some(Estimate { mean, half_width, n })
}

/// The t with P(|T| ≤ t) = [`CONFIDENCE`] for Student's T with `df` degrees of freedom (≥ 1),
/// by bisection on [`within`].
pub fn t_quantile(df: usize) -> f64 {
    let (mut low, mut high) = (0.0, 1.0);
    while within(high, df) < CONFIDENCE {
        high *= 2.0;
    }
    for _ in 0..200 {
        let middle = (low + high) / 2.0;
        if within(middle, df) < CONFIDENCE {
            low = middle;
        } else {
            high = middle;
        }
        if high - low < 1e-12 {
            break;
        }
    }
    (low + high) / 2.0
}

/// P(|T| ≤ t) for Student's T with `df` degrees of freedom, in closed form for an integer df
/// (Abramowitz and Stegun 26.7.3 and 26.7.4): with θ = atan(t / √df),
/// odd df: (2/π)(θ + sin θ cos θ (1 + 2/3 cos²θ + 2·4/(3·5) cos⁴θ + …)), up to cos^(df−3);
/// even df: sin θ (1 + 1/2 cos²θ + 1·3/(2·4) cos⁴θ + …), up to cos^(df−2).
fn within(t: f64, df: usize) -> f64 {
    let theta = (t / (df as f64).sqrt()).atan();
    let (sin, cos) = theta.sin_cos();
    let c2 = cos * cos;
    let (mut term, mut sum) = (1.0, 1.0);
    if df % 2 == 1 {
        for k in 1..=(df.saturating_sub(3) / 2) {
            term *= 2.0 * k as f64 / (2.0 * k as f64 + 1.0) * c2;
            sum += term;
        }
        let series = if df == 1 { 0.0 } else { sin * cos * sum };
        2.0 / std::f64::consts::PI * (theta + series)
    } else {
        for k in 1..=((df - 2) / 2) {
            term *= (2.0 * k as f64 - 1.0) / (2.0 * k as f64) * c2;
            sum += term;
        }
        sin * sum
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_quantiles_match_the_tables() {
        // Two-sided 95 %, from any table of Student's t.
        for (df, t) in [(1, 12.7062), (2, 4.3027), (3, 3.1824), (4, 2.7764), (9, 2.2622), (29, 2.0452), (120, 1.9799)] {
            assert!((t_quantile(df) - t).abs() < 1e-4, "df {df}: {} vs {t}", t_quantile(df));
        }
        assert!((t_quantile(100_000) - 1.95998).abs() < 1e-4);
    }

    #[test]
    fn five_samples() {
        // Mean 3, s² = 2.5: half-width t(4) · √2.5 / √5 = 2.7764 · 0.7071 = 1.9632.
        let e = estimate(&[1.0, 2.0, 3.0, 4.0, 5.0]).unwrap();
        assert_eq!((e.mean, e.n), (3.0, 5));
        let expected = 2.776_445_105 * 2.5f64.sqrt() / 5f64.sqrt();
        assert!((e.half_width.unwrap() - expected).abs() < 1e-6, "{:?}", e.half_width);
        assert!((e.half_width.unwrap() - 1.963).abs() < 1e-3);
    }

    #[test]
    fn one_sample_has_no_interval_and_none_has_no_mean() {
        assert_eq!(estimate(&[7.0]), Some(Estimate { mean: 7.0, half_width: None, n: 1 }));
        assert_eq!(estimate(&[]), None);
        // Equal samples: no spread.
        assert_eq!(estimate(&[2.0, 2.0]).unwrap().half_width, Some(0.0));
    }
}
