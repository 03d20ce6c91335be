//! Figures for the experiment runner (`pfcswitch scenario run`): FCT CDFs per traffic class,
//! queue depth over time per switch port, per-flow throughput over time, FCT box plots, and a
//! sweep's means with their confidence intervals.
//!
//! [`draw`] lays a figure out once and renders that layout twice: as SVG, whose text the viewer
//! renders (so writing it needs no font file), and as a 1200×750 PNG whose text is rasterised
//! with DejaVu Sans, read at run time from Debian's `fonts-dejavu-core` ([`FONT_FILE`]). The PNG
//! is drawn at twice its size and scaled down, which anti-aliases the lines.
//!
//! The layout (margins, ticks, legend placement) is computed here rather than by plotters' chart
//! builder, because plotters measures text with the registered font even when it writes SVG.
//! Text is measured instead with DejaVu Sans's advance widths (`metrics`); viewers that
//! substitute a narrower sans-serif (Helvetica, Arial) only gain room.
//!
//! The modules, from the chart kinds down: `chart` (line charts and CDFs), `boxes` (box
//! plots) and `intervals` (means with error bars) describe a figure as a `layout::Layout`;
//! `layout` places it on the canvas, using `axis` (scales, data ranges, ticks), `metrics`
//! (text widths) and `style` (sizes, colours); `render` writes the placed figure as SVG and
//! PNG through `painter` (plotters drawing in canvas px), with `fonts` loading the PNG's font.
//! This module only declares and re-exports.

mod axis;
mod boxes;
mod chart;
mod fonts;
mod intervals;
mod layout;
mod metrics;
mod painter;
mod render;
mod style;
#[cfg(test)]
mod test_support;

pub use axis::Scale;
pub use boxes::{BoxChart, BoxSeries, BoxStats, draw_boxes};
pub use chart::{Chart, Series, cdf, draw};
pub use fonts::FONT_FILE;
pub use intervals::{Interval, IntervalChart, IntervalSeries, XValues, draw_intervals};
pub use style::{HEIGHT, WIDTH};
