//! Means with confidence intervals, as a sweep draws one metric against one setting: per
//! series a line through its means, a diamond at each mean and an error bar from the
//! interval's low to its high end, over a numeric or a categorical x axis. Series are moved
//! apart by a few px so that bars at the same x stay apart.

use super::axis::{Axis, Scale, x_range, y_range};
use super::layout::{Figure, Layout, Line, corner_preference};
use super::render::write;
use super::style::series_style;
use anyhow::Result;
use std::path::{Path, PathBuf};

/// The x positions the series' points are at.
#[derive(Debug, Clone, Copy)]
pub enum XValues<'a> {
    /// Numbers on a linear axis.
    Numbers(&'a [f64]),
    /// Names, equally spaced in this order.
    Categories(&'a [String]),
}

/// A mean and its interval; without one, `low` and `high` are the mean.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    pub mean: f64,
    pub low: f64,
    pub high: f64,
}

/// A series' interval at each x position (`None`: nothing there).
#[derive(Debug, Clone, PartialEq)]
pub struct IntervalSeries {
    pub label: String,
    pub points: Vec<Option<Interval>>,
}

#[derive(Debug, Clone, Copy)]
pub struct IntervalChart<'a> {
    pub title: &'a str,
    pub x_label: &'a str,
    pub y_label: &'a str,
    pub x: XValues<'a>,
    /// In this order and in the line charts' styles.
    pub series: &'a [IntervalSeries],
}

/// Half the width of an error bar's caps and of a mean's diamond, in px.
const CAP: f64 = 7.0;
/// The most the series are moved apart, in px.
const DODGE: f64 = 8.0;

/// Writes `<stem>.svg` and `<stem>.png` as [`draw`](super::chart::draw) does.
pub fn draw_intervals(chart: &IntervalChart, stem: &Path) -> Result<[PathBuf; 2]> {
    let positions = positions(chart.x);
    let values: Vec<Vec<(f64, f64)>> = (chart.series.iter())
        .map(|s| {
            let at = s.points.iter().zip(&positions).filter_map(|(p, &x)| p.map(|p| (x, p)));
            at.flat_map(|(x, p)| [(x, p.low), (x, p.high)]).filter(|(_, y)| y.is_finite()).collect()
        })
        .collect();
    let x_axis = |length: f64| match chart.x {
        XValues::Numbers(_) => Axis::new(Scale::Linear, x_range(&values, Scale::Linear), length, true),
        XValues::Categories(names) => Axis {
            scale: Scale::Linear,
            lo: 0.0,
            hi: names.len().max(1) as f64,
            major: names.iter().enumerate().map(|(i, c)| (i as f64 + 0.5, c.clone())).collect(),
            minor: (1..names.len()).map(|i| i as f64).collect(),
            major_grid: false,
        },
    };
    let figure = Figure::arrange(Layout {
        title: chart.title,
        x_label: chart.x_label,
        y_label: chart.y_label,
        y_scale: Scale::Linear,
        y_range: y_range(&values),
        x_axis: &x_axis,
        lines: &|figure| lines(figure, chart, &positions),
        legend: chart.series.iter().enumerate().map(|(i, s)| (i, s.label.as_str())).collect(),
        corners: corner_preference(false),
        empty: values.iter().all(Vec::is_empty),
    });
    write(&figure, stem)
}

/// Each x position in data units.
fn positions(x: XValues) -> Vec<f64> {
    match x {
        XValues::Numbers(values) => values.to_vec(),
        XValues::Categories(names) => (0..names.len()).map(|i| i as f64 + 0.5).collect(),
    }
}

/// Per series its line through the means (in its style), then per mean a diamond and an
/// error bar with caps (solid).
fn lines(figure: &Figure, chart: &IntervalChart, positions: &[f64]) -> Vec<Line> {
    let count = chart.series.len();
    let step = DODGE.min(40.0 / count.max(1) as f64);
    let mut lines = Vec::new();
    for (s, series) in chart.series.iter().enumerate() {
        let (color, dash) = series_style(s);
        let shift = (s as f64 - (count as f64 - 1.0) / 2.0) * step;
        let px = |x: f64, y: f64| {
            let (px, py) = figure.to_px((x, y));
            (px + shift, py)
        };
        let mut present: Vec<(f64, Interval)> = (series.points.iter().zip(positions))
            .filter_map(|(p, &x)| p.filter(|p| p.mean.is_finite()).map(|p| (x, p)))
            .collect();
        present.sort_by(|a, b| a.0.total_cmp(&b.0));
        lines.push(Line { points: present.iter().map(|&(x, p)| px(x, p.mean)).collect(), color, dash });
        for &(x, p) in &present {
            let (cx, cy) = px(x, p.mean);
            let diamond = [(cx - CAP, cy), (cx, cy - CAP), (cx + CAP, cy), (cx, cy + CAP), (cx - CAP, cy)];
            lines.push(Line { points: diamond.to_vec(), color, dash: &[] });
            if p.high > p.low && p.low.is_finite() && p.high.is_finite() {
                let ((bx, low), (_, high)) = (px(x, p.low), px(x, p.high));
                for points in
                    [[(bx, low), (bx, high)], [(bx - CAP, low), (bx + CAP, low)], [(bx - CAP, high), (bx + CAP, high)]]
                {
                    lines.push(Line { points: points.to_vec(), color, dash: &[] });
                }
            }
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plot::test_support::check_outputs;

    fn interval(mean: f64, half: f64) -> Option<Interval> {
        Some(Interval { mean, low: mean - half, high: mean + half })
    }

    #[test]
    fn draws_means_with_error_bars_over_numbers() {
        let dir = tempfile::tempdir().unwrap();
        let series = vec![
            IntervalSeries { label: "pfc".into(), points: vec![interval(2.0, 0.5), interval(3.0, 0.4), None] },
            IntervalSeries {
                label: "ofc".into(),
                points: vec![interval(1.5, 0.0), interval(2.0, 0.2), interval(2.5, 0.3)],
            },
        ];
        let chart = IntervalChart {
            title: "incast: slowdown-p99",
            x_label: "load",
            y_label: "slowdown-p99",
            x: XValues::Numbers(&[0.3, 0.5, 0.7]),
            series: &series,
        };
        let paths = draw_intervals(&chart, &dir.path().join("sweep")).unwrap();
        let svg = check_outputs(&paths, &["incast: slowdown-p99", "load", "pfc", "ofc"]);
        // Two mean lines, five diamonds, four bars of three lines (a zero-width interval has
        // none), two legend samples.
        let lines = svg.matches("<polyline").count();
        assert!(lines >= 2 + 5 + 4 * 3 + 2, "{lines} polylines");
    }

    #[test]
    fn draws_categories_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let names = vec!["websearch".to_string(), "datamining".to_string()];
        let series = vec![IntervalSeries { label: "pfc".into(), points: vec![interval(4.0, 1.0), interval(9.0, 2.0)] }];
        let chart = IntervalChart {
            title: "sizes",
            x_label: "sizes",
            y_label: "FCT (ms)",
            x: XValues::Categories(&names),
            series: &series,
        };
        let paths = draw_intervals(&chart, &dir.path().join("sweep")).unwrap();
        let svg = check_outputs(&paths, &["websearch", "datamining", "pfc"]);
        assert!(svg.find("websearch").unwrap() < svg.find("datamining").unwrap());
    }

    #[test]
    fn a_chart_without_means_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let series = vec![IntervalSeries { label: "pfc".into(), points: vec![None] }];
        let chart =
            IntervalChart { title: "", x_label: "load", y_label: "y", x: XValues::Numbers(&[0.5]), series: &series };
        let paths = draw_intervals(&chart, &dir.path().join("sweep")).unwrap();
        check_outputs(&paths, &["no data"]);
    }
}
