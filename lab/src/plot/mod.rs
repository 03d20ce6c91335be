//! Figures for the experiment runner (`pfcswitch scenario run`): FCT CDFs per traffic class,
//! queue depth over time per switch port, per-flow throughput over time.
//!
//! [`draw`] lays a figure out once and renders that layout twice: as SVG, whose text the viewer
//! renders (so writing it needs no font file), and as a 1200×750 PNG whose text is rasterised
//! with DejaVu Sans, read at run time from Debian's `fonts-dejavu-core` ([`FONT_FILE`]). The PNG
//! is drawn at twice its size and scaled down, which anti-aliases the lines.
//!
//! The layout (margins, ticks, legend placement) is computed here rather than by plotters' chart
//! builder, because plotters measures text with the registered font even when it writes SVG.
//! Text is measured instead with DejaVu Sans's advance widths ([`Metrics`]); viewers that
//! substitute a narrower sans-serif (Helvetica, Arial) only gain room.

use anyhow::{Context, Result, anyhow};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{FontDesc, FontFamily, FontStyle, FontTransform, register_font};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

mod boxes;

pub use boxes::{BoxChart, BoxSeries, BoxStats, draw_boxes};

/// The font the PNG's text is drawn with (Debian's `fonts-dejavu-core`).
pub const FONT_FILE: &str = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";
/// The title's font; optional: without it the PNG's title is drawn in [`FONT_FILE`].
const BOLD_FONT_FILE: &str = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf";
const FONT_PACKAGE: &str = "fonts-dejavu-core";

/// The PNG's size in pixels, and the SVG's in user units.
pub const WIDTH: u32 = 1200;
pub const HEIGHT: u32 = 750;
/// The PNG is rendered at this multiple of its size, then box-filtered down.
const SUPERSAMPLE: u32 = 2;

/// A named line: a traffic class, a switch port, a flow.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub label: String,
    pub points: Vec<(f64, f64)>,
}

/// How the x axis maps values to positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    Linear,
    /// Decades equally spaced; for FCTs that span several. Values ≤ 0 are drawn at the chart's
    /// smallest positive x; a chart with no positive x at all is drawn linear.
    Log10,
}

/// One figure. The y axis is linear and includes 0.
#[derive(Debug, Clone, Copy)]
pub struct Chart<'a> {
    pub title: &'a str,
    /// With its unit, e.g. "FCT (ms)".
    pub x_label: &'a str,
    pub y_label: &'a str,
    pub x_scale: Scale,
    /// Drawn in this order, each in its own style (see [`series_style`]): pass series in the
    /// same order in every figure to keep a class's colour from one figure to the next.
    /// Non-finite points are skipped; a series with an empty label gets no legend entry.
    pub series: &'a [Series],
    /// Draw as a step function (CDFs, queue samples): a value holds until the next point.
    pub step: bool,
}

/// Writes `<stem>.svg` and `<stem>.png` (1200x750 px PNG; same drawing) and returns both paths.
///
/// The SVG is written first and does not need the font; the PNG fails with an error naming
/// [`FONT_FILE`] and its package when the font is missing. `stem`'s directory is created if needed.
pub fn draw(chart: &Chart, stem: &Path) -> Result<[PathBuf; 2]> {
    write(&Figure::layout(chart), stem)
}

/// Renders `figure` as [`draw`] describes.
fn write(figure: &Figure, stem: &Path) -> Result<[PathBuf; 2]> {
    let svg = with_suffix(stem, "svg");
    let png = with_suffix(stem, "png");
    if let Some(dir) = stem.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    {
        let root = SVGBackend::new(&svg, (WIDTH, HEIGHT)).into_drawing_area();
        figure.render(&root, Target::Svg).with_context(|| format!("cannot draw {}", svg.display()))?;
        root.present().map_err(|e| anyhow!("cannot write {}: {e}", svg.display()))?;
    }

    load_fonts()?;
    let (w, h) = (WIDTH * SUPERSAMPLE, HEIGHT * SUPERSAMPLE);
    let mut big = vec![0u8; w as usize * h as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut big, (w, h)).into_drawing_area();
        figure.render(&root, Target::Png).with_context(|| format!("cannot draw {}", png.display()))?;
        root.present().map_err(|e| anyhow!("cannot draw {}: {e}", png.display()))?;
    }
    let small = downsample(&big, WIDTH, HEIGHT, SUPERSAMPLE);
    {
        let mut backend = BitMapBackend::new(&png, (WIDTH, HEIGHT));
        backend
            .blit_bitmap((0, 0), (WIDTH, HEIGHT), &small)
            .map_err(|e| anyhow!("cannot draw {}: {e}", png.display()))?;
        backend.present().map_err(|e| anyhow!("cannot write {}: {e}", png.display()))?;
    }
    Ok([svg, png])
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

fn with_suffix(stem: &Path, extension: &str) -> PathBuf {
    let mut path = stem.as_os_str().to_owned();
    path.push(".");
    path.push(extension);
    PathBuf::from(path)
}

// ---------------------------------------------------------------------------------------------
// Style

/// Matplotlib's "tab10", the ten hues readers of networking papers know. Told apart by hue only:
/// in greyscale print the lines need their labels.
const PALETTE: [RGBColor; 10] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x8c, 0x56, 0x4b),
    RGBColor(0xe3, 0x77, 0xc2),
    RGBColor(0x7f, 0x7f, 0x7f),
    RGBColor(0xbc, 0xbd, 0x22),
    RGBColor(0x17, 0xbe, 0xcf),
];

/// On/off lengths in px: solid, dashed, dotted, dash-dot.
const DASHES: [&[f64]; 4] = [&[], &[12.0, 6.0], &[2.5, 5.0], &[14.0, 5.0, 2.5, 5.0]];

/// The colour and dash pattern of the `index`th series: the ten colours solid, then dashed,
/// dotted and dash-dotted (40 distinct styles; the 41st repeats the first).
fn series_style(index: usize) -> (RGBColor, &'static [f64]) {
    (PALETTE[index % PALETTE.len()], DASHES[(index / PALETTE.len()) % DASHES.len()])
}

const TEXT: RGBColor = RGBColor(0x20, 0x20, 0x20);
const FRAME: RGBColor = RGBColor(0x40, 0x40, 0x40);
const GRID: RGBColor = RGBColor(0xdc, 0xdc, 0xdc);
const MINOR_GRID: RGBColor = RGBColor(0xee, 0xee, 0xee);
const LEGEND_BORDER: RGBColor = RGBColor(0xaa, 0xaa, 0xaa);
const NOTE: RGBColor = RGBColor(0x80, 0x80, 0x80);

// Sizes in px of the 1200×750 canvas. An em is the font size; text sizes are chosen to stay
// legible when the figure is shrunk to a two-column paper's full width.
const MARGIN: f64 = 16.0;
const TITLE_EM: f64 = 32.0;
const LABEL_EM: f64 = 29.0;
const TICK_EM: f64 = 26.0;
const LEGEND_EM: f64 = 25.0;
const NOTE_EM: f64 = 30.0;
const TICK_LEN: f64 = 8.0;
const TICK_GAP: f64 = 8.0;
const LINE_WIDTH: f64 = 3.0;
const FRAME_WIDTH: f64 = 2.0;
const LEGEND_PAD: f64 = 12.0;
const LEGEND_SAMPLE: f64 = 48.0;
const LEGEND_INSET: f64 = 10.0;

// ---------------------------------------------------------------------------------------------
// Text metrics: DejaVu Sans, in units of 1/2048 em.

const ASCENT: f64 = 1901.0 / 2048.0;
const DESCENT: f64 = 483.0 / 2048.0;
const CAP_HEIGHT: f64 = 1493.0 / 2048.0;
const X_HEIGHT: f64 = 1120.0 / 2048.0;

/// A face's advance widths and left side bearings of ' ' to '~' (from its hmtx table).
#[derive(Debug)]
struct Metrics {
    advance: [u16; 95],
    bearing: [i16; 95],
}

#[rustfmt::skip]
const REGULAR: Metrics = Metrics {
    advance: [
        651, 821, 942, 1716, 1303, 1946, 1597, 563, 799, 799, 1024, 1716, 651, 739, 651, 690, 1303, 1303, 1303, 1303,
        1303, 1303, 1303, 1303, 1303, 1303, 690, 690, 1716, 1716, 1716, 1087, 2048, 1401, 1405, 1430, 1577, 1294, 1178,
        1587, 1540, 604, 604, 1343, 1141, 1767, 1532, 1612, 1235, 1612, 1423, 1300, 1251, 1499, 1401, 2025, 1403, 1251,
        1403, 799, 690, 799, 1716, 1024, 1024, 1255, 1300, 1126, 1300, 1260, 721, 1300, 1298, 569, 569, 1186, 569, 1995,
        1298, 1253, 1300, 1300, 842, 1067, 803, 1298, 1212, 1675, 1212, 1212, 1075, 1303, 690, 1303, 1716,
    ],
    bearing: [
        0, 309, 197, 158, 170, 113, 129, 197, 176, 164, 61, 217, 158, 100, 219, 0, 135, 225, 150, 156, 100, 158, 143, 168,
        139, 129, 240, 158, 217, 217, 217, 147, 135, 16, 201, 115, 201, 201, 201, 115, 201, 201, -106, 201, 201, 201, 201,
        115, 201, 115, 201, 135, -6, 178, 16, 68, 61, -4, 92, 176, 0, 199, 217, -20, 170, 123, 186, 113, 113, 113, 47, 113,
        186, 193, -37, 186, 193, 186, 186, 113, 186, 113, 186, 111, 55, 174, 61, 86, 59, 61, 88, 256, 260, 256, 217,
    ],
};

#[rustfmt::skip]
const BOLD: Metrics = Metrics {
    advance: [
        713, 934, 1067, 1716, 1425, 2052, 1786, 627, 936, 936, 1071, 1716, 778, 850, 778, 748, 1425, 1425, 1425, 1425,
        1425, 1425, 1425, 1425, 1425, 1425, 819, 819, 1716, 1716, 1716, 1188, 2048, 1585, 1561, 1503, 1700, 1399, 1399,
        1681, 1714, 762, 762, 1587, 1305, 2038, 1714, 1741, 1501, 1741, 1577, 1475, 1397, 1663, 1585, 2259, 1579, 1483,
        1485, 936, 748, 936, 1716, 1024, 1024, 1382, 1466, 1214, 1466, 1389, 891, 1466, 1458, 702, 702, 1362, 702, 2134,
        1458, 1407, 1466, 1466, 1010, 1219, 979, 1458, 1335, 1892, 1321, 1335, 1192, 1458, 748, 1458, 1716,
    ],
    bearing: [
        0, 287, 195, 139, 160, 66, 123, 195, 176, 164, 41, 217, 109, 111, 209, 0, 98, 231, 162, 137, 92, 158, 127, 137, 125,
        106, 229, 129, 217, 217, 217, 141, 135, 10, 188, 102, 188, 188, 188, 102, 188, 188, -115, 188, 188, 188, 188, 102,
        188, 102, 188, 147, 10, 188, 10, 61, 39, -20, 92, 176, 0, 139, 207, 0, 94, 88, 172, 88, 92, 88, 39, 92, 172, 172,
        -68, 172, 172, 170, 172, 88, 172, 92, 172, 106, 27, 160, 31, 72, 31, 25, 92, 256, 260, 256, 217,
    ],
};

impl Metrics {
    fn of(bold: bool) -> &'static Metrics {
        if bold { &BOLD } else { &REGULAR }
    }

    /// Advance width and left side bearing of `c` in 1/2048 em, if it is printable ASCII.
    fn glyph(&self, c: char) -> Option<(f64, f64)> {
        let i = (c as usize).checked_sub(' ' as usize).filter(|&i| i < self.advance.len())?;
        Some((f64::from(self.advance[i]), f64::from(self.bearing[i])))
    }

    /// The width in px of `text` set at `em` px.
    fn width(&self, text: &str, em: f64) -> f64 {
        let units: f64 = text
            .chars()
            .map(|c| match (self.glyph(c), c) {
                (Some((advance, _)), _) => advance,
                (None, 'µ') => 1303.0,
                (None, '°' | '–') => 1024.0,
                (None, '—') => 2048.0,
                (None, '·') => 651.0,
                (None, '×' | '±' | '≤' | '≥') => 1716.0,
                _ => 1400.0,
            })
            .sum();
        units / 2048.0 * em
    }
}

/// The width in px of `text` set at `em` px in DejaVu Sans.
fn text_width(text: &str, em: f64) -> f64 {
    REGULAR.width(text, em)
}

/// `em`, shrunk so that `text` fits in `room` px (down to half size).
fn fit_em(text: &str, em: f64, room: f64, bold: bool) -> f64 {
    let width = Metrics::of(bold).width(text, em);
    if width <= room { em } else { (em * room / width).max(em / 2.0) }
}

// ---------------------------------------------------------------------------------------------
// Axes and ticks

#[derive(Debug, Clone, Copy, PartialEq)]
struct Rect {
    left: f64,
    top: f64,
    right: f64,
    bottom: f64,
}

impl Rect {
    fn width(&self) -> f64 {
        self.right - self.left
    }
    fn height(&self) -> f64 {
        self.bottom - self.top
    }
}

#[derive(Debug, Clone)]
struct Axis {
    scale: Scale,
    lo: f64,
    hi: f64,
    /// Labelled ticks, with a gridline.
    major: Vec<(f64, String)>,
    /// Unlabelled short ticks, with a lighter gridline (log axes; category boundaries).
    minor: Vec<f64>,
    /// Gridlines at the labelled ticks; not through the boxes of a category axis.
    major_grid: bool,
}

impl Axis {
    /// Where `v` falls between `lo` (0) and `hi` (1).
    fn fraction(&self, v: f64) -> f64 {
        match self.scale {
            Scale::Linear => (v - self.lo) / (self.hi - self.lo),
            Scale::Log10 => (v.log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10()),
        }
    }

    /// Ticks for an axis `length` px long; horizontal labels must not touch, stacked ones need a
    /// line and a half each.
    fn new(scale: Scale, (lo, hi): (f64, f64), length: f64, horizontal: bool) -> Axis {
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

// ---------------------------------------------------------------------------------------------
// Layout

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Corner {
    UpperLeft,
    UpperRight,
    LowerLeft,
    LowerRight,
}

/// Where the legend goes, in order of preference when several places leave the data clear.
///
/// The legend is drawn inside the plot, in the corner its box overlaps the least line of; if every
/// corner would hide data it moves outside, right of the plot (which narrows the plot), unless it
/// is too wide for that, when it goes in the least-covered corner on a translucent background.
///
/// For CDFs the first choice is the lower right: flow-completion-time distributions are
/// heavy-tailed, so the curves climb early and then creep towards 1, which leaves the area under
/// them at the right empty; the upper left, the other conventional place, is empty only while
/// every curve stays low for a while, and the tail (upper right) is what readers study. For time
/// series (queue depths that sit at zero, throughputs that fill the plot) the upper corners come
/// first, as the lower ones are where idle lines run.
fn corner_preference(cdf_like: bool) -> [Corner; 4] {
    use Corner::*;
    if cdf_like {
        [LowerRight, UpperLeft, UpperRight, LowerLeft]
    } else {
        [UpperRight, UpperLeft, LowerRight, LowerLeft]
    }
}

#[derive(Debug, Clone)]
struct Legend {
    rect: Rect,
    entries: Vec<Entry>,
    /// Opaque unless it had to cover data.
    background_alpha: f64,
}

#[derive(Debug, Clone)]
struct Entry {
    series: usize,
    label: String,
    /// The left end of its sample line, centred vertically on the row.
    at: (f64, f64),
}

/// A series' line, in canvas px.
#[derive(Debug, Clone)]
struct Line {
    points: Vec<(f64, f64)>,
    color: RGBColor,
    dash: &'static [f64],
}

/// Everything to draw, in px of the 1200×750 canvas.
#[derive(Debug, Clone)]
struct Figure {
    title: String,
    title_em: f64,
    x_label: String,
    x_label_em: f64,
    y_label: String,
    y_label_em: f64,
    plot: Rect,
    x: Axis,
    y: Axis,
    lines: Vec<Line>,
    legend: Option<Legend>,
    empty: bool,
}

/// What [`Figure::arrange`] needs from a chart of any kind.
struct Layout<'a> {
    title: &'a str,
    x_label: &'a str,
    y_label: &'a str,
    y_range: (f64, f64),
    /// The x axis for a plot this many px wide.
    x_axis: &'a dyn Fn(f64) -> Axis,
    /// The lines to draw once the plot's place is known.
    lines: &'a dyn Fn(&Figure) -> Vec<Line>,
    /// (series, label) of each legend entry.
    legend: Vec<(usize, &'a str)>,
    corners: [Corner; 4],
    empty: bool,
}

impl Figure {
    fn layout(chart: &Chart) -> Figure {
        let (data, x_scale) = prepare(chart);
        let x_range = x_range(&data, x_scale);
        let cdf_like = chart.step
            && chart.series.iter().all(|s| {
                s.points.iter().all(|p| (0.0..=1.0).contains(&p.1)) && s.points.windows(2).all(|w| w[0].1 <= w[1].1)
            });
        Figure::arrange(Layout {
            title: chart.title,
            x_label: chart.x_label,
            y_label: chart.y_label,
            y_range: y_range(&data),
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

    /// Places title, axes, plot and legend on the canvas.
    fn arrange(layout: Layout) -> Figure {
        let (w, h) = (f64::from(WIDTH), f64::from(HEIGHT));
        let title_em = fit_em(layout.title, TITLE_EM, w - 2.0 * MARGIN, true);
        let top = if layout.title.is_empty() { MARGIN + 12.0 } else { MARGIN + (ASCENT + DESCENT) * title_em + 16.0 };
        let bottom =
            h - MARGIN - (ASCENT + DESCENT) * LABEL_EM - 10.0 - (CAP_HEIGHT + DESCENT) * TICK_EM - TICK_GAP - TICK_LEN;
        let y = Axis::new(Scale::Linear, layout.y_range, bottom - top, false);
        let y_label_em = fit_em(layout.y_label, LABEL_EM, bottom - top, false);
        let widest = y.major.iter().map(|(_, l)| text_width(l, TICK_EM)).fold(0.0, f64::max);
        let left = MARGIN + (ASCENT + DESCENT) * y_label_em + 10.0 + widest + TICK_GAP + TICK_LEN;

        // The last x label may stick out right of the plot by half its width.
        let plot_for = |right_room: f64| -> (Rect, Axis) {
            let mut right = w - MARGIN - right_room.max(8.0);
            let mut x = (layout.x_axis)(right - left);
            for _ in 0..2 {
                let overhang = x
                    .major
                    .last()
                    .map(|(v, label)| text_width(label, TICK_EM) / 2.0 - (1.0 - x.fraction(*v)) * (right - left))
                    .unwrap_or(0.0);
                let new_right = w - MARGIN - right_room.max(overhang).max(8.0);
                if (new_right - right).abs() < 0.5 {
                    break;
                }
                right = new_right;
                x = (layout.x_axis)(right - left);
            }
            (Rect { left, top, right, bottom }, x)
        };

        let (plot, x) = plot_for(0.0);
        let x_label_em = fit_em(layout.x_label, LABEL_EM, plot.width(), false);
        let mut figure = Figure {
            title: layout.title.to_string(),
            title_em,
            x_label: layout.x_label.to_string(),
            x_label_em,
            y_label: layout.y_label.to_string(),
            y_label_em,
            plot,
            x,
            y,
            lines: Vec::new(),
            legend: None,
            empty: layout.empty,
        };
        figure.lines = (layout.lines)(&figure);

        if layout.legend.is_empty() {
            return figure;
        }
        let (legend_w, legend_h, placed) = legend_shape(&layout.legend, plot.height() - 2.0 * LEGEND_INSET);
        let fits_inside =
            legend_w <= plot.width() - 2.0 * LEGEND_INSET && legend_h <= plot.height() - 2.0 * LEGEND_INSET;
        let best = layout
            .corners
            .into_iter()
            .filter(|_| fits_inside)
            .map(|corner| {
                let rect = corner_rect(&plot, corner, legend_w, legend_h);
                (figure.covered(&rect), rect)
            })
            .reduce(|best, next| if next.0 < best.0 - 0.5 { next } else { best });
        let legend_at = |rect: Rect, background_alpha: f64| Legend {
            rect,
            entries: placed
                .iter()
                .map(|e| Entry { at: (rect.left + e.at.0, rect.top + e.at.1), ..e.clone() })
                .collect(),
            background_alpha,
        };
        let translucent = 0.85;
        figure.legend = Some(match best {
            Some((covered, rect)) if covered <= 0.5 => legend_at(rect, 1.0),
            _ if legend_w <= 0.4 * w => {
                let gap = 16.0;
                let (plot, x) = plot_for(legend_w + gap);
                figure.plot = plot;
                figure.x = x;
                figure.x_label_em = fit_em(layout.x_label, LABEL_EM, plot.width(), false);
                figure.lines = (layout.lines)(&figure);
                let left = plot.right + gap;
                legend_at(Rect { left, top: plot.top, right: left + legend_w, bottom: plot.top + legend_h }, 1.0)
            }
            Some((_, rect)) => legend_at(rect, translucent),
            // Too big for anywhere: over the plot from its upper left.
            None => legend_at(corner_rect(&plot, Corner::UpperLeft, legend_w, legend_h), translucent),
        });
        figure
    }

    fn to_px(&self, (x, y): (f64, f64)) -> (f64, f64) {
        let p = &self.plot;
        (p.left + self.x.fraction(x) * p.width(), p.bottom - self.y.fraction(y) * p.height())
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

    /// How many px of line `rect` (grown by a few px) would cover.
    fn covered(&self, rect: &Rect) -> f64 {
        let room = 8.0;
        let grown =
            Rect { left: rect.left - room, top: rect.top - room, right: rect.right + room, bottom: rect.bottom + room };
        let mut total = 0.0;
        for line in &self.lines {
            if let [only] = line.points.as_slice() {
                total += if inside(*only, &grown) { LINE_WIDTH } else { 0.0 };
            }
            for pair in line.points.windows(2) {
                total += clipped_length(pair[0], pair[1], &grown);
            }
        }
        total
    }
}

fn inside((x, y): (f64, f64), r: &Rect) -> bool {
    (r.left..=r.right).contains(&x) && (r.top..=r.bottom).contains(&y)
}

/// The length of segment a–b inside `r` (Liang–Barsky).
fn clipped_length(a: (f64, f64), b: (f64, f64), r: &Rect) -> f64 {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let (mut t0, mut t1) = (0.0f64, 1.0f64);
    for (p, q) in [(-dx, a.0 - r.left), (dx, r.right - a.0), (-dy, a.1 - r.top), (dy, r.bottom - a.1)] {
        if p == 0.0 {
            if q < 0.0 {
                return 0.0;
            }
        } else {
            let t = q / p;
            if p < 0.0 {
                t0 = t0.max(t);
            } else {
                t1 = t1.min(t);
            }
        }
    }
    if t0 > t1 { 0.0 } else { (t1 - t0) * dx.hypot(dy) }
}

fn corner_rect(plot: &Rect, corner: Corner, w: f64, h: f64) -> Rect {
    let left = match corner {
        Corner::UpperLeft | Corner::LowerLeft => plot.left + LEGEND_INSET,
        Corner::UpperRight | Corner::LowerRight => plot.right - LEGEND_INSET - w,
    };
    let top = match corner {
        Corner::UpperLeft | Corner::UpperRight => plot.top + LEGEND_INSET,
        Corner::LowerLeft | Corner::LowerRight => plot.bottom - LEGEND_INSET - h,
    };
    Rect { left, top, right: left + w, bottom: top + h }
}

/// The legend box's size for `entries`, in as many columns as it takes to stay within
/// `max_height`, and where each entry goes relative to the box's top left corner.
fn legend_shape(entries: &[(usize, &str)], max_height: f64) -> (f64, f64, Vec<Entry>) {
    let row = 1.4 * LEGEND_EM;
    let column_gap = 24.0;
    let max_rows = (((max_height - 2.0 * LEGEND_PAD) / row).floor() as usize).max(1);
    let columns = entries.len().div_ceil(max_rows);
    let rows = entries.len().div_ceil(columns);
    let mut placed = Vec::with_capacity(entries.len());
    let mut x = LEGEND_PAD;
    for column in entries.chunks(rows) {
        for (r, &(index, label)) in column.iter().enumerate() {
            placed.push(Entry {
                series: index,
                label: label.to_string(),
                at: (x, LEGEND_PAD + (r as f64 + 0.5) * row),
            });
        }
        let widest = column.iter().map(|(_, label)| text_width(label, LEGEND_EM)).fold(0.0, f64::max);
        x += LEGEND_SAMPLE + 10.0 + widest + column_gap;
    }
    let width = x - column_gap + LEGEND_PAD;
    let height = 2.0 * LEGEND_PAD + rows as f64 * row;
    (width, height, placed)
}

/// The series' points to draw, in data units: finite, x clamped for a log axis, expanded into
/// steps if asked; and the x scale to use.
fn prepare(chart: &Chart) -> (Vec<Vec<(f64, f64)>>, Scale) {
    let finite: Vec<Vec<(f64, f64)>> = chart
        .series
        .iter()
        .map(|s| s.points.iter().copied().filter(|(x, y)| x.is_finite() && y.is_finite()).collect())
        .collect();
    let any_point = finite.iter().any(|s| !s.is_empty());
    let smallest_positive = finite.iter().flatten().map(|p| p.0).filter(|&x| x > 0.0).reduce(f64::min);
    let scale = match (chart.x_scale, smallest_positive) {
        (Scale::Log10, None) if any_point => Scale::Linear,
        (scale, _) => scale,
    };
    let data = finite
        .into_iter()
        .map(|points| {
            let points: Vec<(f64, f64)> = match (scale, smallest_positive) {
                (Scale::Log10, Some(min)) => points.into_iter().map(|(x, y)| (x.max(min), y)).collect(),
                _ => points,
            };
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
    (data, scale)
}

/// The data's x extent with a small margin; a log axis snaps out to whole decades when that
/// adds little, a linear one does not cross 0 for data on one side of it.
fn x_range(data: &[Vec<(f64, f64)>], scale: Scale) -> (f64, f64) {
    let (lo, hi) = extent(data.iter().flatten().map(|p| p.0));
    match scale {
        Scale::Log10 => {
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
        Scale::Linear => {
            let Some((lo, hi)) = lo.zip(hi) else { return (0.0, 1.0) };
            padded(lo, hi)
        }
    }
}

/// The y extent: from 0 (or below, for negative data) to the data's top, plus a margin.
fn y_range(data: &[Vec<(f64, f64)>]) -> (f64, f64) {
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

// ---------------------------------------------------------------------------------------------
// Rendering

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    Svg,
    Png,
}

impl Target {
    fn scale(self) -> f64 {
        match self {
            Target::Svg => 1.0,
            Target::Png => f64::from(SUPERSAMPLE),
        }
    }
}

/// Draws on a backend in canvas px, scaled to the backend's pixels.
struct Painter<'a, DB: DrawingBackend> {
    area: &'a DrawingArea<DB, Shift>,
    target: Target,
    scale: f64,
}

impl<DB: DrawingBackend> Painter<'_, DB> {
    fn px(&self, (x, y): (f64, f64)) -> (i32, i32) {
        ((x * self.scale).round() as i32, (y * self.scale).round() as i32)
    }

    fn stroke(&self, color: RGBAColor, width: f64) -> ShapeStyle {
        ShapeStyle { color, filled: false, stroke_width: (width * self.scale).round().max(1.0) as u32 }
    }

    fn path(&self, points: Vec<(i32, i32)>, style: ShapeStyle) -> Result<()> {
        self.area.draw(&PathElement::new(points, style)).map_err(|e| anyhow!("{e}"))
    }

    fn segment(&self, a: (f64, f64), b: (f64, f64), color: RGBColor, width: f64) -> Result<()> {
        self.path(vec![self.px(a), self.px(b)], self.stroke(color.to_rgba(), width))
    }

    /// A polyline, dashed if `dash` is not empty.
    fn line(&self, points: &[(f64, f64)], color: RGBColor, width: f64, dash: &[f64]) -> Result<()> {
        let device = simplify(points.iter().map(|&p| self.px(p)).collect());
        let style = self.stroke(color.to_rgba(), width);
        if let [only] = device.as_slice() {
            let r = (width * self.scale / 2.0).round().max(1.0) as i32;
            return self
                .area
                .draw(&Circle::new(*only, r, ShapeStyle { filled: true, ..style }))
                .map_err(|e| anyhow!("{e}"));
        }
        if dash.is_empty() {
            return self.path(device, style);
        }
        let pattern: Vec<f64> = dash.iter().map(|d| d * self.scale).collect();
        for piece in dashes(&device, &pattern) {
            self.path(piece, style)?;
        }
        Ok(())
    }

    fn rect(&self, r: &Rect, color: RGBAColor, filled: bool, width: f64) -> Result<()> {
        let style = ShapeStyle { filled, ..self.stroke(color, width) };
        self.area
            .draw(&Rectangle::new([self.px((r.left, r.top)), self.px((r.right, r.bottom))], style))
            .map_err(|e| anyhow!("{e}"))
    }

    /// Horizontal text with its baseline at `baseline`, aligned on `x` by `h`.
    #[allow(clippy::too_many_arguments)]
    fn text(&self, text: &str, x: f64, baseline: f64, em: f64, h: HPos, color: RGBColor, bold: bool) -> Result<()> {
        self.draw_text(text, (x, baseline), em, h, color, bold, false)
    }

    /// Text reading upwards, its baseline the vertical line at `baseline`, centred on `y`.
    fn text_up(&self, text: &str, baseline: f64, y: f64, em: f64, color: RGBColor) -> Result<()> {
        self.draw_text(text, (baseline, y), em, HPos::Center, color, false, true)
    }

    /// Draws `text` set at `em` px, its baseline through `at`, aligned on `at` by `h` along the
    /// text, which reads upwards if `up`.
    ///
    /// plotters anchors text by its top: its SVG text sets font-size to size / 1.24 and puts the
    /// baseline 0.76 em below the anchor; its ab_glyph text scales the font to size px from
    /// ascender to descender and puts the baseline size / 2 below the anchor. Its ab_glyph text
    /// also starts each glyph's outline at the pen, dropping the glyph's left side bearing, which
    /// jams letters together ("ti", "ffi"): in the PNG, ASCII text is therefore drawn one glyph at
    /// a time, each placed by its advance and bearing from [`Metrics`] (without kerning).
    #[allow(clippy::too_many_arguments)]
    fn draw_text(
        &self,
        text: &str,
        at: (f64, f64),
        em: f64,
        h: HPos,
        color: RGBColor,
        bold: bool,
        up: bool,
    ) -> Result<()> {
        if text.is_empty() {
            return Ok(());
        }
        let bold = bold && (self.target == Target::Svg || BOLD_LOADED.load(Ordering::Relaxed));
        let (size, down) = match self.target {
            Target::Svg => (em * 1.24, 0.76 * em),
            Target::Png => (em * (ASCENT + DESCENT), em * (ASCENT + DESCENT) / 2.0),
        };
        // Unit vectors along the text and down its glyphs, in canvas px.
        let (along, below) = if up { ((0.0, -1.0), (1.0, 0.0)) } else { ((1.0, 0.0), (0.0, 1.0)) };
        let anchor = (at.0 - below.0 * down, at.1 - below.1 * down);
        let style = |h| TextStyle {
            font: FontDesc::new(
                FontFamily::SansSerif,
                size * self.scale,
                if bold { FontStyle::Bold } else { FontStyle::Normal },
            )
            .transform(if up { FontTransform::Rotate270 } else { FontTransform::None }),
            color: color.to_backend_color(),
            pos: Pos::new(h, VPos::Top),
        };
        let metrics = Metrics::of(bold);
        let glyphs: Option<Vec<(f64, f64)>> = text.chars().map(|c| metrics.glyph(c)).collect();
        let (Target::Png, Some(glyphs)) = (self.target, glyphs) else {
            return self.area.draw_text(text, &style(h), self.px(anchor)).map_err(|e| anyhow!("{e}"));
        };
        let unit = em * self.scale / 2048.0;
        let width: f64 = glyphs.iter().map(|g| g.0).sum::<f64>() * unit;
        let mut pen = match h {
            HPos::Left => 0.0,
            HPos::Center => -width / 2.0,
            HPos::Right => -width,
        };
        let origin = (anchor.0 * self.scale, anchor.1 * self.scale);
        let left = style(HPos::Left);
        let mut buffer = [0u8; 4];
        for (c, (advance, bearing)) in text.chars().zip(glyphs) {
            if c != ' ' {
                // ab_glyph's pixel bounds start at the floor of the bearing.
                let offset = pen + (bearing * unit).floor();
                let at = ((origin.0 + along.0 * offset).round() as i32, (origin.1 + along.1 * offset).round() as i32);
                self.area.draw_text(c.encode_utf8(&mut buffer), &left, at).map_err(|e| anyhow!("{e}"))?;
            }
            pen += advance * unit;
        }
        Ok(())
    }
}

impl Figure {
    fn render<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>, target: Target) -> Result<()> {
        let p = Painter { area, target, scale: target.scale() };
        let plot = self.plot;
        area.fill(&WHITE).map_err(|e| anyhow!("{e}"))?;

        // Gridlines, light, under everything.
        let vertical = |v: f64, color: RGBColor| {
            let x = plot.left + self.x.fraction(v) * plot.width();
            p.segment((x, plot.top), (x, plot.bottom), color, 1.0)
        };
        let horizontal = |v: f64, color: RGBColor| {
            let y = plot.bottom - self.y.fraction(v) * plot.height();
            p.segment((plot.left, y), (plot.right, y), color, 1.0)
        };
        for &v in &self.x.minor {
            vertical(v, MINOR_GRID)?;
        }
        for &v in &self.y.minor {
            horizontal(v, MINOR_GRID)?;
        }
        for (v, _) in self.x.major.iter().filter(|_| self.x.major_grid) {
            vertical(*v, GRID)?;
        }
        for (v, _) in &self.y.major {
            horizontal(*v, GRID)?;
        }

        // The frame under the lines, so that a line along an axis (an idle queue at 0) shows.
        let corners =
            [(plot.left, plot.top), (plot.right, plot.top), (plot.right, plot.bottom), (plot.left, plot.bottom)];
        let frame: Vec<(i32, i32)> = corners.iter().chain(&corners[..1]).map(|&c| p.px(c)).collect();
        p.path(frame, p.stroke(FRAME.to_rgba(), FRAME_WIDTH))?;
        for line in &self.lines {
            p.line(&line.points, line.color, LINE_WIDTH, line.dash)?;
        }
        if self.empty {
            let centre = ((plot.left + plot.right) / 2.0, (plot.top + plot.bottom) / 2.0);
            p.text("no data", centre.0, centre.1 + CAP_HEIGHT * NOTE_EM / 2.0, NOTE_EM, HPos::Center, NOTE, false)?;
        }

        // Ticks outside the frame, labels beyond them.
        let label_baseline = plot.bottom + TICK_LEN + TICK_GAP + CAP_HEIGHT * TICK_EM;
        for (v, label) in &self.x.major {
            let x = plot.left + self.x.fraction(*v) * plot.width();
            p.segment((x, plot.bottom), (x, plot.bottom + TICK_LEN), FRAME, FRAME_WIDTH)?;
            p.text(label, x, label_baseline, TICK_EM, HPos::Center, TEXT, false)?;
        }
        for v in &self.x.minor {
            let x = plot.left + self.x.fraction(*v) * plot.width();
            p.segment((x, plot.bottom), (x, plot.bottom + TICK_LEN / 2.0), FRAME, FRAME_WIDTH / 2.0)?;
        }
        for (v, label) in &self.y.major {
            let y = plot.bottom - self.y.fraction(*v) * plot.height();
            p.segment((plot.left - TICK_LEN, y), (plot.left, y), FRAME, FRAME_WIDTH)?;
            let baseline = y + CAP_HEIGHT * TICK_EM / 2.0;
            p.text(label, plot.left - TICK_LEN - TICK_GAP, baseline, TICK_EM, HPos::Right, TEXT, false)?;
        }

        let x_label_baseline = label_baseline + DESCENT * TICK_EM + 10.0 + ASCENT * self.x_label_em;
        let centre_x = (plot.left + plot.right) / 2.0;
        p.text(&self.x_label, centre_x, x_label_baseline, self.x_label_em, HPos::Center, TEXT, false)?;
        let y_label_baseline = MARGIN + ASCENT * self.y_label_em;
        p.text_up(&self.y_label, y_label_baseline, (plot.top + plot.bottom) / 2.0, self.y_label_em, TEXT)?;
        let title_baseline = MARGIN + ASCENT * self.title_em;
        p.text(&self.title, f64::from(WIDTH) / 2.0, title_baseline, self.title_em, HPos::Center, TEXT, true)?;

        if let Some(legend) = &self.legend {
            p.rect(&legend.rect, WHITE.mix(legend.background_alpha), true, 1.0)?;
            p.rect(&legend.rect, LEGEND_BORDER.to_rgba(), false, 1.0)?;
            for Entry { series, label, at: (x, y) } in &legend.entries {
                let (color, dash) = series_style(*series);
                p.line(&[(*x, *y), (x + LEGEND_SAMPLE, *y)], color, LINE_WIDTH, dash)?;
                let baseline = y + X_HEIGHT * LEGEND_EM / 2.0;
                p.text(label, x + LEGEND_SAMPLE + 10.0, baseline, LEGEND_EM, HPos::Left, TEXT, false)?;
            }
        }
        Ok(())
    }
}

/// Drops points that cannot change the drawing at pixel resolution: of each run of points in one
/// pixel column (or row) only the first, last, lowest and highest (leftmost and rightmost) stay.
/// Keeps SVGs of CDFs over 10⁵ flows small.
fn simplify(points: Vec<(i32, i32)>) -> Vec<(i32, i32)> {
    fn runs(points: Vec<(i32, i32)>, key: fn(&(i32, i32)) -> i32, across: fn(&(i32, i32)) -> i32) -> Vec<(i32, i32)> {
        let mut out = Vec::with_capacity(points.len());
        for run in points.chunk_by(|a, b| key(a) == key(b)) {
            let last = run.len() - 1;
            let lowest = (0..run.len()).min_by_key(|&i| across(&run[i])).unwrap_or(0);
            let highest = (0..run.len()).max_by_key(|&i| across(&run[i])).unwrap_or(0);
            let mut keep = [0, lowest, highest, last];
            keep.sort_unstable();
            for (n, &i) in keep.iter().enumerate() {
                if n == 0 || keep[n - 1] != i {
                    out.push(run[i]);
                }
            }
        }
        out
    }
    let points = runs(points, |p| p.0, |p| p.1);
    let mut points = runs(points, |p| p.1, |p| p.0);
    points.dedup();
    points
}

/// Cuts a polyline into the "on" pieces of a repeating on/off `pattern` (lengths in px), the
/// pattern running on across vertices.
fn dashes(points: &[(i32, i32)], pattern: &[f64]) -> Vec<Vec<(i32, i32)>> {
    let to_f = |p: (i32, i32)| (f64::from(p.0), f64::from(p.1));
    let to_i = |p: (f64, f64)| (p.0.round() as i32, p.1.round() as i32);
    let mut pieces = Vec::new();
    let mut current: Vec<(i32, i32)> = Vec::new();
    let (mut phase, mut left) = (0, pattern[0]);
    for pair in points.windows(2) {
        let (mut a, b) = (to_f(pair[0]), to_f(pair[1]));
        if phase % 2 == 0 && current.is_empty() {
            current.push(to_i(a));
        }
        let mut length = (b.0 - a.0).hypot(b.1 - a.1);
        while length > left {
            let t = left / length;
            a = (a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t);
            length -= left;
            if phase % 2 == 0 {
                current.push(to_i(a));
                pieces.push(std::mem::take(&mut current));
            } else {
                current.push(to_i(a));
            }
            phase = (phase + 1) % pattern.len();
            left = pattern[phase];
        }
        left -= length;
        if phase % 2 == 0 {
            current.push(to_i(b));
        }
    }
    if current.len() >= 2 {
        pieces.push(current);
    }
    pieces
}

/// Averages each `factor`×`factor` block of an RGB image `factor` times `width`×`height`.
fn downsample(big: &[u8], width: u32, height: u32, factor: u32) -> Vec<u8> {
    let (w, h, f) = (width as usize, height as usize, factor as usize);
    let mut small = vec![0u8; w * h * 3];
    for y in 0..h {
        for x in 0..w {
            for c in 0..3 {
                let mut sum = 0u32;
                for dy in 0..f {
                    for dx in 0..f {
                        sum += u32::from(big[((y * f + dy) * w * f + x * f + dx) * 3 + c]);
                    }
                }
                small[(y * w + x) * 3 + c] = ((sum + (f * f / 2) as u32) / (f * f) as u32) as u8;
            }
        }
    }
    small
}

// ---------------------------------------------------------------------------------------------
// Fonts

static FONTS_LOADED: Mutex<bool> = Mutex::new(false);
/// Whether DejaVu Sans Bold was registered; if not, the PNG's title is set in the regular face.
static BOLD_LOADED: AtomicBool = AtomicBool::new(false);

/// Registers DejaVu Sans (and Bold, if present) for the PNG's text, once per process; the font
/// bytes stay in memory for the process's life, as plotters requires.
fn load_fonts() -> Result<()> {
    let mut loaded = FONTS_LOADED.lock().unwrap_or_else(PoisonError::into_inner);
    if *loaded {
        return Ok(());
    }
    let regular = read_font(Path::new(FONT_FILE))?;
    register_font(FontFamily::SansSerif.as_str(), FontStyle::Normal, regular)
        .map_err(|_| anyhow!("{FONT_FILE} is not a TrueType font; reinstall {FONT_PACKAGE}"))?;
    if let Ok(bold) = read_font(Path::new(BOLD_FONT_FILE)) {
        // Without it the title is drawn in the regular face.
        let registered = register_font(FontFamily::SansSerif.as_str(), FontStyle::Bold, bold).is_ok();
        BOLD_LOADED.store(registered, Ordering::Relaxed);
    }
    *loaded = true;
    Ok(())
}

fn read_font(path: &Path) -> Result<&'static [u8]> {
    let bytes = std::fs::read(path).with_context(|| {
        format!(
            "cannot read the font {} that PNG figures are drawn with: install Debian's {FONT_PACKAGE} package \
             (scripts/setup.sh installs it)",
            path.display()
        )
    })?;
    Ok(Box::leak(bytes.into_boxed_slice()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_png_size(path: &Path) -> (u32, u32) {
        let bytes = std::fs::read(path).unwrap();
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "PNG signature");
        assert_eq!(&bytes[12..16], b"IHDR");
        let be = |b: &[u8]| u32::from_be_bytes(b.try_into().unwrap());
        (be(&bytes[16..20]), be(&bytes[20..24]))
    }

    pub(super) fn check_outputs(paths: &[PathBuf; 2], texts: &[&str]) -> String {
        let [svg, png] = paths;
        assert_eq!(svg.extension().unwrap(), "svg");
        assert_eq!(png.extension().unwrap(), "png");
        assert!(std::fs::metadata(svg).unwrap().len() > 0);
        assert!(std::fs::metadata(png).unwrap().len() > 0);
        assert_eq!(read_png_size(png), (WIDTH, HEIGHT));
        let svg = std::fs::read_to_string(svg).unwrap();
        for text in texts {
            assert!(svg.contains(&format!(">\n{text}\n<")), "the SVG lacks the text {text:?}");
        }
        svg
    }

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
                series,
                step: false,
            };
            let paths = draw(&chart, &dir.path().join(format!("case{i}"))).unwrap();
            let svg = check_outputs(&paths, &["Throughput", "time (s)", "Gb/s"]);
            assert_eq!(svg.contains("no data"), series.iter().all(|s| s.points.is_empty()), "case {i}");
        }
    }

    #[test]
    fn missing_font_is_named_with_its_package() {
        let error = read_font(Path::new("/nonexistent/DejaVuSans.ttf")).unwrap_err().to_string();
        assert!(error.contains("/nonexistent/DejaVuSans.ttf"), "{error}");
        assert!(error.contains("fonts-dejavu-core"), "{error}");
        assert!(error.contains("scripts/setup.sh installs it"), "{error}");
    }

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

    #[test]
    fn simplify_keeps_the_extremes_of_each_column() {
        let points = vec![(0, 0), (1, 5), (1, 9), (1, 2), (1, 4), (2, 4), (3, 4), (4, 4), (5, 1)];
        assert_eq!(simplify(points), vec![(0, 0), (1, 5), (1, 9), (1, 2), (1, 4), (4, 4), (5, 1)]);
    }

    /// Renders one figure of each kind into `$TMPDIR/plot-examples/` to look at:
    /// `cargo test -p pfcswitch plot::tests::examples -- --ignored`.
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
            series: &many,
            step: false,
        };
        println!("{:?}", draw(&chart, &dir.join("many-series")).unwrap());

        let chart = Chart {
            title: "Flow completion time by traffic class",
            x_label: "FCT (ms)",
            y_label: "CDF",
            x_scale: Scale::Log10,
            series: &[],
            step: true,
        };
        println!("{:?}", draw(&chart, &dir.join("empty")).unwrap());
    }

    #[test]
    fn dashes_run_on_across_vertices() {
        let pieces = dashes(&[(0, 0), (5, 0), (20, 0)], &[10.0, 5.0]);
        assert_eq!(pieces, vec![vec![(0, 0), (5, 0), (10, 0)], vec![(15, 0), (20, 0)]]);
    }
}
