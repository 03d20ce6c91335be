//! Writing a laid-out [`Figure`] as `<stem>.svg` and `<stem>.png`: what is drawn where (grid,
//! frame, lines, ticks, labels, legend), and the PNG's supersampling and downscaling.

use super::fonts::load_fonts;
use super::layout::{Entry, Figure};
use super::metrics::{ASCENT, CAP_HEIGHT, DESCENT, X_HEIGHT};
use super::painter::{Painter, SUPERSAMPLE, Target};
use super::style::{
    FRAME, FRAME_WIDTH, GRID, HEIGHT, LEGEND_BORDER, LEGEND_EM, LEGEND_SAMPLE, LINE_WIDTH, MARGIN, MINOR_GRID, NOTE,
    NOTE_EM, TEXT, TICK_EM, TICK_GAP, TICK_LEN, WIDTH, series_style,
};
use anyhow::{Context, Result, anyhow};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::HPos;
use std::path::{Path, PathBuf};

/// Renders `figure` as the public `draw` describes: the SVG, then the PNG (which needs the font).
pub(super) fn write(figure: &Figure, stem: &Path) -> Result<[PathBuf; 2]> {
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

fn with_suffix(stem: &Path, extension: &str) -> PathBuf {
    let mut path = stem.as_os_str().to_owned();
    path.push(".");
    path.push(extension);
    PathBuf::from(path)
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
