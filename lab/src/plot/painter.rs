//! Drawing on a plotters backend in canvas px: lines (simplified to what shows at pixel
//! resolution, dashed by hand), rectangles and text, placed the same way in the SVG and the
//! PNG. What goes where is `render`'s business.

use super::fonts::bold_loaded;
use super::layout::Rect;
use super::metrics::{ASCENT, DESCENT, Metrics};
use anyhow::{Result, anyhow};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{FontDesc, FontFamily, FontStyle, FontTransform};

/// The PNG is rendered at this multiple of its size, then box-filtered down.
pub(super) const SUPERSAMPLE: u32 = 2;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Target {
    Svg,
    Png,
}

impl Target {
    pub(super) fn scale(self) -> f64 {
        match self {
            Target::Svg => 1.0,
            Target::Png => f64::from(SUPERSAMPLE),
        }
    }
}

/// Draws on a backend in canvas px, scaled to the backend's pixels.
pub(super) struct Painter<'a, DB: DrawingBackend> {
    pub(super) area: &'a DrawingArea<DB, Shift>,
    pub(super) target: Target,
    pub(super) scale: f64,
}

impl<DB: DrawingBackend> Painter<'_, DB> {
    pub(super) fn px(&self, (x, y): (f64, f64)) -> (i32, i32) {
        ((x * self.scale).round() as i32, (y * self.scale).round() as i32)
    }

    pub(super) fn stroke(&self, color: RGBAColor, width: f64) -> ShapeStyle {
        ShapeStyle { color, filled: false, stroke_width: (width * self.scale).round().max(1.0) as u32 }
    }

    pub(super) fn path(&self, points: Vec<(i32, i32)>, style: ShapeStyle) -> Result<()> {
        self.area.draw(&PathElement::new(points, style)).map_err(|e| anyhow!("{e}"))
    }

    pub(super) fn segment(&self, a: (f64, f64), b: (f64, f64), color: RGBColor, width: f64) -> Result<()> {
        self.path(vec![self.px(a), self.px(b)], self.stroke(color.to_rgba(), width))
    }

    /// A polyline, dashed if `dash` is not empty.
    pub(super) fn line(&self, points: &[(f64, f64)], color: RGBColor, width: f64, dash: &[f64]) -> Result<()> {
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

    pub(super) fn rect(&self, r: &Rect, color: RGBAColor, filled: bool, width: f64) -> Result<()> {
        let style = ShapeStyle { filled, ..self.stroke(color, width) };
        self.area
            .draw(&Rectangle::new([self.px((r.left, r.top)), self.px((r.right, r.bottom))], style))
            .map_err(|e| anyhow!("{e}"))
    }

    /// Horizontal text with its baseline at `baseline`, aligned on `x` by `h`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn text(
        &self,
        text: &str,
        x: f64,
        baseline: f64,
        em: f64,
        h: HPos,
        color: RGBColor,
        bold: bool,
    ) -> Result<()> {
        self.draw_text(text, (x, baseline), em, h, color, bold, false)
    }

    /// Text reading upwards, its baseline the vertical line at `baseline`, centred on `y`.
    pub(super) fn text_up(&self, text: &str, baseline: f64, y: f64, em: f64, color: RGBColor) -> Result<()> {
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
        let bold = bold && (self.target == Target::Svg || bold_loaded());
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simplify_keeps_the_extremes_of_each_column() {
        let points = vec![(0, 0), (1, 5), (1, 9), (1, 2), (1, 4), (2, 4), (3, 4), (4, 4), (5, 1)];
        assert_eq!(simplify(points), vec![(0, 0), (1, 5), (1, 9), (1, 2), (1, 4), (4, 4), (5, 1)]);
    }

    #[test]
    fn dashes_run_on_across_vertices() {
        let pieces = dashes(&[(0, 0), (5, 0), (20, 0)], &[10.0, 5.0]);
        assert_eq!(pieces, vec![vec![(0, 0), (5, 0), (10, 0)], vec![(15, 0), (20, 0)]]);
    }
}
