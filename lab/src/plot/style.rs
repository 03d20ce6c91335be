//! The canvas and the look of every figure: its size, the series' colours and dash patterns,
//! the frame's and text's colours, and the sizes (margins, font sizes, tick lengths) in canvas px.

use plotters::style::RGBColor;

/// The PNG's size in pixels, and the SVG's in user units.
pub const WIDTH: u32 = 1200;
pub const HEIGHT: u32 = 750;

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
pub(super) fn series_style(index: usize) -> (RGBColor, &'static [f64]) {
    (PALETTE[index % PALETTE.len()], DASHES[(index / PALETTE.len()) % DASHES.len()])
}

pub(super) const TEXT: RGBColor = RGBColor(0x20, 0x20, 0x20);
pub(super) const FRAME: RGBColor = RGBColor(0x40, 0x40, 0x40);
pub(super) const GRID: RGBColor = RGBColor(0xdc, 0xdc, 0xdc);
pub(super) const MINOR_GRID: RGBColor = RGBColor(0xee, 0xee, 0xee);
pub(super) const LEGEND_BORDER: RGBColor = RGBColor(0xaa, 0xaa, 0xaa);
pub(super) const NOTE: RGBColor = RGBColor(0x80, 0x80, 0x80);

// Sizes in px of the 1200×750 canvas. An em is the font size; text sizes are chosen to stay
// legible when the figure is shrunk to a two-column paper's full width.
pub(super) const MARGIN: f64 = 16.0;
pub(super) const TITLE_EM: f64 = 32.0;
pub(super) const LABEL_EM: f64 = 29.0;
pub(super) const TICK_EM: f64 = 26.0;
pub(super) const LEGEND_EM: f64 = 25.0;
pub(super) const NOTE_EM: f64 = 30.0;
pub(super) const TICK_LEN: f64 = 8.0;
pub(super) const TICK_GAP: f64 = 8.0;
pub(super) const LINE_WIDTH: f64 = 3.0;
pub(super) const FRAME_WIDTH: f64 = 2.0;
pub(super) const LEGEND_PAD: f64 = 12.0;
pub(super) const LEGEND_SAMPLE: f64 = 48.0;
pub(super) const LEGEND_INSET: f64 = 10.0;
