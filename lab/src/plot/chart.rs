//! Line charts: the public [`Chart`] of named [`Series`] (FCT CDFs, queue depths, throughputs
//! over time), how its points become lines (finite, clamped for a log axis, stepped), and
//! [`cdf`] to turn samples into a CDF series.

use super::axis::{Axis, Scale, log_range, x_range, y_range};
use super::layout::{Figure, Layout, Line, corner_preference};
use super::render::write;
use super::style::series_style;
use anyhow::Result;
use std::path::{Path, PathBuf};

/// A named line: a traffic class, a switch port, a flow.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub label: String,
    pub points: Vec<(f64, f64)>,
}

/// One figure. A linear y axis includes 0; a log one spans the data's decades.
#[derive(Debug, Clone, Copy)]
pub struct Chart<'a> {
    pub title: &'a str,
    /// With its unit, e.g. "FCT (ms)".
    pub x_label: &'a str,
    pub y_label: &'a str,
    pub x_scale: Scale,
    pub y_scale: Scale,
    /// Drawn in this order, each in its own style (see `style::series_style`): pass series in the
    /// same order in every figure to keep a class's colour from one figure to the next.
    /// Non-finite points are skipped; a series with an empty label gets no legend entry.
    pub series: &'a [Series],
    /// Draw as a step function (CDFs, queue samples): a value holds until the next point.
    pub step: bool,
}

/// Writes `<stem>.svg` and `<stem>.png` (1200x750 px PNG; same drawing) and returns both paths.
///
/// The SVG is written first and does not need the font; the PNG fails with an error naming
/// [`FONT_FILE`](super::fonts::FONT_FILE) and its package when the font is missing. `stem`'s directory
/// is created if needed.
pub fn draw(chart: &Chart, stem: &Path) -> Result<[PathBuf; 2]> {
    write(&Figure::layout(chart), stem)
}

/// Empirical CDF of `values` (any order; NaN-free): points (value, fraction ≤ value) in ascending
/// order, y from 1/n to 1. Equal values give one point, at the fraction up to and including them.
pub fn cdf(values: &[f64]) -> Vec<(f64, f64)> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len() as f64;
    let mut points: Vec<(f64, f64)> = Vec::with_capacity(sorted.len());
    for (i, &v) in sorted.iter().enumerate() {
        let fraction = (i + 1) as f64 / n;
        match points.last_mut() {
            Some(last) if last.0 == v => last.1 = fraction,
            _ => points.push((v, fraction)),
        }
    }
    points
}

impl Figure {
    fn layout(chart: &Chart) -> Figure {
        let (data, x_scale, y_scale) = prepare(chart);
        let x_range = x_range(&data, x_scale);
        let cdf_like = chart.step
            && chart.series.iter().all(|s| {
                s.points.iter().all(|p| (0.0..=1.0).contains(&p.1)) && s.points.windows(2).all(|w| w[0].1 <= w[1].1)
            });
        Figure::arrange(Layout {
            title: chart.title,
            x_label: chart.x_label,
            y_label: chart.y_label,
            y_scale,
            y_range: match y_scale {
                Scale::Log10 => log_range(data.iter().flatten().map(|p| p.1)),
                Scale::Linear => y_range(&data),
            },
            x_axis: &|length| Axis::new(x_scale, x_range, length, true),
            lines: &|figure| figure.lines_for(&data),
            legend: chart
                .series
                .iter()
                .enumerate()
                .filter(|(_, s)| !s.label.is_empty())
                .map(|(i, s)| (i, &*s.label))
                .collect(),
            corners: corner_preference(cdf_like),
            empty: data.iter().all(Vec::is_empty),
        })
    }

    fn lines_for(&self, data: &[Vec<(f64, f64)>]) -> Vec<Line> {
        data.iter()
            .enumerate()
            .map(|(i, points)| {
                let (color, dash) = series_style(i);
                Line { points: points.iter().map(|&p| self.to_px(p)).collect(), color, dash }
            })
            .collect()
    }
}

/// The series' points to draw, in data units: finite, clamped to the smallest positive value
/// on a log axis, expanded into steps if asked; and the x and y scales to use (linear where a
/// log axis would have no positive value).
fn prepare(chart: &Chart) -> (Vec<Vec<(f64, f64)>>, Scale, Scale) {
    let finite: Vec<Vec<(f64, f64)>> = chart
        .series
        .iter()
        .map(|s| s.points.iter().copied().filter(|(x, y)| x.is_finite() && y.is_finite()).collect())
        .collect();
    let any_point = finite.iter().any(|s| !s.is_empty());
    let smallest_positive =
        |pick: fn(&(f64, f64)) -> f64| finite.iter().flatten().map(pick).filter(|&v| v > 0.0).reduce(f64::min);
    let (x_min, y_min) = (smallest_positive(|p| p.0), smallest_positive(|p| p.1));
    let usable = |scale: Scale, min: Option<f64>| match (scale, min) {
        (Scale::Log10, None) if any_point => Scale::Linear,
        (scale, _) => scale,
    };
    let (x_scale, y_scale) = (usable(chart.x_scale, x_min), usable(chart.y_scale, y_min));
    let clamp = |scale: Scale, min: Option<f64>, v: f64| match (scale, min) {
        (Scale::Log10, Some(min)) => v.max(min),
        _ => v,
    };
    let data = finite
        .into_iter()
        .map(|points| {
            let points: Vec<(f64, f64)> =
                points.into_iter().map(|(x, y)| (clamp(x_scale, x_min, x), clamp(y_scale, y_min, y))).collect();
            if !chart.step {
                return points;
            }
            let mut stepped = Vec::with_capacity(points.len() * 2);
            for (i, &p) in points.iter().enumerate() {
                if i > 0 {
                    stepped.push((p.0, points[i - 1].1));
                }
                stepped.push(p);
            }
            stepped
        })
        .collect();
    (data, x_scale, y_scale)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plot::test_support::check_outputs;

    #[test]
    fn cdf_of_known_inputs() {
        assert_eq!(cdf(&[3.0, 1.0, 2.0]), vec![(1.0, 1.0 / 3.0), (2.0, 2.0 / 3.0), (3.0, 1.0)]);
        assert_eq!(cdf(&[2.0, 1.0, 2.0, 3.0]), vec![(1.0, 0.25), (2.0, 0.75), (3.0, 1.0)]);
        assert_eq!(cdf(&[5.0, 5.0]), vec![(5.0, 1.0)]);
        assert_eq!(cdf(&[-1.0]), vec![(-1.0, 1.0)]);
        assert!(cdf(&[]).is_empty());
    }

    #[test]
    fn draws_a_log_cdf_with_three_classes() {
        let dir = tempfile::tempdir().unwrap();
        let values = |scale: f64| (1..=200).map(|i| scale * (f64::from(i) / 20.0).exp()).collect::<Vec<_>>();
        let series = vec![
            Series { label: "class 0 (lossless)".into(), points: cdf(&values(0.01)) },
            Series { label: "class 3".into(), points: cdf(&values(0.05)) },
            Series { label: "best effort".into(), points: cdf(&values(0.2)) },
        ];
        let chart = Chart {
            title: "FCT by traffic class",
            x_label: "FCT (ms)",
            y_label: "CDF",
            x_scale: Scale::Log10,
            y_scale: Scale::Linear,
            series: &series,
            step: true,
        };
        let paths = draw(&chart, &dir.path().join("fct-cdf")).unwrap();
        assert_eq!(paths[0], dir.path().join("fct-cdf.svg"));
        assert_eq!(paths[1], dir.path().join("fct-cdf.png"));
        check_outputs(
            &paths,
            &["FCT by traffic class", "FCT (ms)", "CDF", "class 0 (lossless)", "class 3", "best effort"],
        );
    }

    #[test]
    fn draws_a_time_series() {
        let dir = tempfile::tempdir().unwrap();
        let series: Vec<Series> = (0..12)
            .map(|port| Series {
                label: format!("port {port}"),
                points: (0..500).map(|t| (f64::from(t) * 0.01, f64::from((t * (port + 3)) % 97))).collect(),
            })
            .collect();
        let chart = Chart {
            title: "Queue depth",
            x_label: "time (s)",
            y_label: "queue depth (KB)",
            x_scale: Scale::Linear,
            y_scale: Scale::Linear,
            series: &series,
            step: true,
        };
        let paths = draw(&chart, &dir.path().join("nested/queues")).unwrap();
        let labels: Vec<String> = series.iter().map(|s| s.label.clone()).collect();
        let mut texts = vec!["Queue depth", "time (s)", "queue depth (KB)"];
        texts.extend(labels.iter().map(String::as_str));
        check_outputs(&paths, &texts);
    }

    #[test]
    fn empty_and_degenerate_charts_render() {
        let dir = tempfile::tempdir().unwrap();
        let cases: Vec<(Vec<Series>, Scale)> = vec![
            (vec![], Scale::Linear),
            (vec![Series { label: "flow 1".into(), points: vec![] }], Scale::Log10),
            (vec![Series { label: "flow 1".into(), points: vec![(2.0, 3.0)] }], Scale::Linear),
            (vec![Series { label: "flow 1".into(), points: vec![(0.0, 0.5), (-1.0, 1.0)] }], Scale::Log10),
            (vec![Series { label: "".into(), points: vec![(f64::NAN, 1.0), (1.0, 0.0), (2.0, 0.0)] }], Scale::Log10),
        ];
        for (i, (series, x_scale)) in cases.iter().enumerate() {
            let chart = Chart {
                title: "Throughput",
                x_label: "time (s)",
                y_label: "Gb/s",
                x_scale: *x_scale,
                y_scale: Scale::Linear,
                series,
                step: false,
            };
            let paths = draw(&chart, &dir.path().join(format!("case{i}"))).unwrap();
            let svg = check_outputs(&paths, &["Throughput", "time (s)", "Gb/s"]);
            assert_eq!(svg.contains("no data"), series.iter().all(|s| s.points.is_empty()), "case {i}");
        }
    }

    /// Renders one figure of each kind into `$TMPDIR/plot-examples/` to look at:
    /// `cargo test -p pfcswitch-lab plot::chart::tests::examples -- --ignored`.
    #[test]
    #[ignore = "writes example figures for a person to look at"]
    fn examples() {
        let dir = std::env::temp_dir().join("plot-examples");
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut uniform = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };

        // FCTs: Pareto-tailed, per class, in ms.
        let classes =
            [("class 3 (lossless, PFC)", 0.02), ("class 4 (lossless, PFC)", 0.035), ("class 0 (lossy)", 0.09)];
        let fct: Vec<Series> = classes
            .iter()
            .map(|&(label, scale)| {
                let values: Vec<f64> = (0..5000).map(|_| scale / (1.0 - uniform()).powf(1.0 / 1.1)).collect();
                Series { label: label.into(), points: cdf(&values) }
            })
            .collect();
        let chart = Chart {
            title: "Flow completion time by traffic class",
            x_label: "FCT (ms)",
            y_label: "CDF",
            x_scale: Scale::Log10,
            y_scale: Scale::Linear,
            series: &fct,
            step: true,
        };
        println!("{:?}", draw(&chart, &dir.join("fct-cdf")).unwrap());

        // Queue depth per port, sampled every 100 µs, in KB.
        let queues: Vec<Series> = (1..=4)
            .map(|port| {
                let mut depth: f64 = 0.0;
                let points = (0..500)
                    .map(|i| {
                        let t = f64::from(i) * 0.1;
                        let burst = (t > 10.0 * f64::from(port) && t < 10.0 * f64::from(port) + 8.0) as u8;
                        depth = (depth + f64::from(burst) * 40.0 * uniform() - 12.0 * uniform()).clamp(0.0, 300.0);
                        (t, depth)
                    })
                    .collect();
                Series { label: format!("Ethernet{}", port * 4), points }
            })
            .collect();
        let chart = Chart {
            title: "Egress queue depth per port",
            x_label: "time (ms)",
            y_label: "queue depth (KB)",
            x_scale: Scale::Linear,
            y_scale: Scale::Linear,
            series: &queues,
            step: true,
        };
        println!("{:?}", draw(&chart, &dir.join("queue-depth")).unwrap());

        // Sixteen flows sharing 100 Gb/s, joining one by one.
        let flows: Vec<Series> = (0..16)
            .map(|flow| {
                let points = (0..=240)
                    .filter_map(|i| {
                        let t = f64::from(i) * 0.005;
                        let active = ((t / 0.1).floor() as i32 + 1).min(12);
                        (flow < active || flow >= 12 && t > 0.6).then(|| {
                            (t, 100.0 / f64::from(active) * (0.9 + 0.2 * uniform()) * (1.0 + f64::from(flow % 4)))
                        })
                    })
                    .collect();
                Series { label: format!("flow {}", flow + 1), points }
            })
            .collect();
        let chart = Chart {
            title: "Per-flow throughput",
            x_label: "time (s)",
            y_label: "throughput (Gb/s)",
            x_scale: Scale::Linear,
            y_scale: Scale::Linear,
            series: &flows,
            step: false,
        };
        println!("{:?}", draw(&chart, &dir.join("throughput")).unwrap());

        // Many series with long labels: a legend in columns, outside the plot.
        let many: Vec<Series> = (0..30)
            .map(|i| Series {
                label: format!("spine{} → leaf{} (prio {})", i / 8, i % 8, i % 3),
                points: (0..100).map(|t| (f64::from(t), f64::from(i) + 10.0 * (f64::from(t) / 10.0).sin())).collect(),
            })
            .collect();
        let chart = Chart {
            title: "Thirty series",
            x_label: "time (µs)",
            y_label: "offset (packets)",
            x_scale: Scale::Linear,
            y_scale: Scale::Linear,
            series: &many,
            step: false,
        };
        println!("{:?}", draw(&chart, &dir.join("many-series")).unwrap());

        let chart = Chart {
            title: "Flow completion time by traffic class",
            x_label: "FCT (ms)",
            y_label: "CDF",
            x_scale: Scale::Log10,
            y_scale: Scale::Linear,
            series: &[],
            step: true,
        };
        println!("{:?}", draw(&chart, &dir.join("empty")).unwrap());
    }
}
