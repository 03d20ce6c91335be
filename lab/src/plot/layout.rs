//! Placing a figure on the canvas: title, axes, plot area, the lines in canvas px and the
//! legend, put in the corner whose data it hides least (or beside the plot). The chart kinds
//! (`chart`, `boxes`) describe a figure as a [`Layout`]; `render` draws the resulting
//! [`Figure`].

use super::axis::{Axis, Scale};
use super::metrics::{ASCENT, CAP_HEIGHT, DESCENT, fit_em, text_width};
use super::style::{
    HEIGHT, LABEL_EM, LEGEND_EM, LEGEND_INSET, LEGEND_PAD, LEGEND_SAMPLE, LINE_WIDTH, MARGIN, TICK_EM, TICK_GAP,
    TICK_LEN, TITLE_EM, WIDTH,
};
use plotters::style::RGBColor;

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Rect {
    pub(super) left: f64,
    pub(super) top: f64,
    pub(super) right: f64,
    pub(super) bottom: f64,
}

impl Rect {
    pub(super) fn width(&self) -> f64 {
        self.right - self.left
    }
    pub(super) fn height(&self) -> f64 {
        self.bottom - self.top
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Corner {
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
pub(super) fn corner_preference(cdf_like: bool) -> [Corner; 4] {
    use Corner::*;
    if cdf_like {
        [LowerRight, UpperLeft, UpperRight, LowerLeft]
    } else {
        [UpperRight, UpperLeft, LowerRight, LowerLeft]
    }
}

#[derive(Debug, Clone)]
pub(super) struct Legend {
    pub(super) rect: Rect,
    pub(super) entries: Vec<Entry>,
    /// Opaque unless it had to cover data.
    pub(super) background_alpha: f64,
}

#[derive(Debug, Clone)]
pub(super) struct Entry {
    pub(super) series: usize,
    pub(super) label: String,
    /// The left end of its sample line, centred vertically on the row.
    pub(super) at: (f64, f64),
}

/// A series' line, in canvas px.
#[derive(Debug, Clone)]
pub(super) struct Line {
    pub(super) points: Vec<(f64, f64)>,
    pub(super) color: RGBColor,
    pub(super) dash: &'static [f64],
}

/// Everything to draw, in px of the 1200×750 canvas.
#[derive(Debug, Clone)]
pub(super) struct Figure {
    pub(super) title: String,
    pub(super) title_em: f64,
    pub(super) x_label: String,
    pub(super) x_label_em: f64,
    pub(super) y_label: String,
    pub(super) y_label_em: f64,
    pub(super) plot: Rect,
    pub(super) x: Axis,
    pub(super) y: Axis,
    pub(super) lines: Vec<Line>,
    pub(super) legend: Option<Legend>,
    pub(super) empty: bool,
}

/// What [`Figure::arrange`] needs from a chart of any kind.
pub(super) struct Layout<'a> {
    pub(super) title: &'a str,
    pub(super) x_label: &'a str,
    pub(super) y_label: &'a str,
    pub(super) y_scale: Scale,
    pub(super) y_range: (f64, f64),
    /// The x axis for a plot this many px wide.
    pub(super) x_axis: &'a dyn Fn(f64) -> Axis,
    /// The lines to draw once the plot's place is known.
    pub(super) lines: &'a dyn Fn(&Figure) -> Vec<Line>,
    /// (series, label) of each legend entry.
    pub(super) legend: Vec<(usize, &'a str)>,
    pub(super) corners: [Corner; 4],
    pub(super) empty: bool,
}

impl Figure {
    /// Places title, axes, plot and legend on the canvas.
    pub(super) fn arrange(layout: Layout) -> Figure {
        let (w, h) = (f64::from(WIDTH), f64::from(HEIGHT));
        let title_em = fit_em(layout.title, TITLE_EM, w - 2.0 * MARGIN, true);
        let top = if layout.title.is_empty() { MARGIN + 12.0 } else { MARGIN + (ASCENT + DESCENT) * title_em + 16.0 };
        let bottom =
            h - MARGIN - (ASCENT + DESCENT) * LABEL_EM - 10.0 - (CAP_HEIGHT + DESCENT) * TICK_EM - TICK_GAP - TICK_LEN;
        let y = Axis::new(layout.y_scale, layout.y_range, bottom - top, false);
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

    pub(super) fn to_px(&self, (x, y): (f64, f64)) -> (f64, f64) {
        let p = &self.plot;
        (p.left + self.x.fraction(x) * p.width(), p.bottom - self.y.fraction(y) * p.height())
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
