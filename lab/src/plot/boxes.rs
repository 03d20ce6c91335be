//! Box plots, as OFC's Fig. 4 draws FCTs: per category (a flow group) one box per series (a
//! policy), the box from the 25th to the 75th percentile with a line at the median, whiskers
//! to the minimum and the maximum (not 1.5 IQR: the paper's whiskers are the extremes, and the
//! maximum FCT is the figure a lossless fabric is judged by).

use super::axis::{Axis, Scale, y_range};
use super::layout::{Figure, Layout, Line, corner_preference};
use super::render::write;
use super::style::series_style;
use anyhow::Result;
use std::path::{Path, PathBuf};

/// The five numbers one box shows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BoxStats {
    pub min: f64,
    pub p25: f64,
    pub median: f64,
    pub p75: f64,
    pub max: f64,
}

/// A series' box in each category (`None`: nothing to draw there).
#[derive(Debug, Clone, PartialEq)]
pub struct BoxSeries {
    pub label: String,
    pub boxes: Vec<Option<BoxStats>>,
}

#[derive(Debug, Clone, Copy)]
pub struct BoxChart<'a> {
    pub title: &'a str,
    /// Names what the categories are, e.g. "flows".
    pub x_label: &'a str,
    pub y_label: &'a str,
    pub categories: &'a [String],
    /// Side by side within each category, in this order and in the line charts' styles.
    pub series: &'a [BoxSeries],
}

/// Of a category's width, the share the boxes take (the rest separates categories).
const GROUP_WIDTH: f64 = 0.8;
/// Of each series' slot, the share its box takes.
const BOX_WIDTH: f64 = 0.7;

/// Writes `<stem>.svg` and `<stem>.png` as [`draw`](super::chart::draw) does.
pub fn draw_boxes(chart: &BoxChart, stem: &Path) -> Result<[PathBuf; 2]> {
    let values: Vec<Vec<(f64, f64)>> = chart
        .series
        .iter()
        .map(|s| s.boxes.iter().flatten().flat_map(|b| [(0.0, b.min), (0.0, b.max)]).collect())
        .collect();
    let n = chart.categories.len().max(1) as f64;
    let axis = Axis {
        scale: Scale::Linear,
        lo: 0.0,
        hi: n,
        major: chart.categories.iter().enumerate().map(|(i, c)| (i as f64 + 0.5, c.clone())).collect(),
        minor: (1..chart.categories.len()).map(|i| i as f64).collect(),
        major_grid: false,
    };
    let figure = Figure::arrange(Layout {
        title: chart.title,
        x_label: chart.x_label,
        y_label: chart.y_label,
        y_scale: Scale::Linear,
        y_range: y_range(&values),
        x_axis: &|_| axis.clone(),
        lines: &|figure| outlines(figure, chart),
        legend: chart.series.iter().enumerate().map(|(i, s)| (i, s.label.as_str())).collect(),
        // Upper corners first, as for time series; the legend moves off any box it would cover.
        corners: corner_preference(false),
        empty: values.iter().all(Vec::is_empty),
    });
    write(&figure, stem)
}

/// Every box as lines: its outline, the median, the whiskers and their caps.
fn outlines(figure: &Figure, chart: &BoxChart) -> Vec<Line> {
    let slot = GROUP_WIDTH / chart.series.len().max(1) as f64;
    let half = BOX_WIDTH * slot / 2.0;
    let mut lines = Vec::new();
    for (s, series) in chart.series.iter().enumerate() {
        let (color, dash) = series_style(s);
        for (c, b) in series.boxes.iter().enumerate() {
            let Some(b) = b else { continue };
            let centre = c as f64 + (1.0 - GROUP_WIDTH) / 2.0 + (s as f64 + 0.5) * slot;
            let (left, right) = (centre - half, centre + half);
            let shapes: [&[(f64, f64)]; 6] = [
                &[(left, b.p25), (right, b.p25), (right, b.p75), (left, b.p75), (left, b.p25)],
                &[(left, b.median), (right, b.median)],
                &[(centre, b.p75), (centre, b.max)],
                &[(centre, b.p25), (centre, b.min)],
                &[(centre - half / 2.0, b.max), (centre + half / 2.0, b.max)],
                &[(centre - half / 2.0, b.min), (centre + half / 2.0, b.min)],
            ];
            lines.extend(shapes.iter().map(|points| Line {
                points: points.iter().map(|&p| figure.to_px(p)).collect(),
                color,
                dash,
            }));
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plot::test_support::check_outputs;

    fn stats(min: f64, median: f64, max: f64) -> BoxStats {
        BoxStats { min, p25: (min + median) / 2.0, median, p75: (median + max) / 2.0, max }
    }

    #[test]
    fn draws_boxes_per_group_and_policy_with_labels() {
        let dir = tempfile::tempdir().unwrap();
        let categories = vec!["uncongested".to_string(), "congested".to_string()];
        let series = vec![
            BoxSeries { label: "pfc".into(), boxes: vec![Some(stats(1.0, 20.0, 44.0)), Some(stats(5.0, 27.0, 46.0))] },
            BoxSeries { label: "ofc".into(), boxes: vec![Some(stats(1.0, 3.0, 15.0)), None] },
        ];
        let chart = BoxChart {
            title: "ofc-incast-8: FCT",
            x_label: "flows",
            y_label: "FCT (ms)",
            categories: &categories,
            series: &series,
        };
        let paths = draw_boxes(&chart, &dir.path().join("box")).unwrap();
        let svg = check_outputs(&paths, &["uncongested", "congested", "pfc", "ofc", "FCT (ms)"]);
        // Three boxes, six lines each, plus the legend's two samples: each box is drawn.
        let lines = svg.matches("<polyline").count();
        assert!(lines >= 3 * 6 + 2, "{lines} polylines");
    }

    #[test]
    fn a_chart_without_boxes_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let categories = vec!["all".to_string()];
        let series = vec![BoxSeries { label: "pfc".into(), boxes: vec![None] }];
        let chart =
            BoxChart { title: "", x_label: "flows", y_label: "FCT (ms)", categories: &categories, series: &series };
        let paths = draw_boxes(&chart, &dir.path().join("box")).unwrap();
        check_outputs(&paths, &["no data", "all"]);
    }
}
