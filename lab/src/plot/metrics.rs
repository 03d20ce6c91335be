//! Text metrics of DejaVu Sans (regular and bold), so that text is measured the same for the SVG
//! and the PNG without loading the font: the layout sizes margins and spaces ticks with them,
//! and the painter places the PNG's glyphs one by one with them.

// DejaVu Sans's vertical metrics, in em (its font units are 1/2048 em).

pub(super) const ASCENT: f64 = 1901.0 / 2048.0;
pub(super) const DESCENT: f64 = 483.0 / 2048.0;
pub(super) const CAP_HEIGHT: f64 = 1493.0 / 2048.0;
pub(super) const X_HEIGHT: f64 = 1120.0 / 2048.0;

/// A face's advance widths and left side bearings of ' ' to '~' (from its hmtx table).
#[derive(Debug)]
pub(super) struct Metrics {
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
    pub(super) fn of(bold: bool) -> &'static Metrics {
        if bold { &BOLD } else { &REGULAR }
    }

    /// Advance width and left side bearing of `c` in 1/2048 em, if it is printable ASCII.
    pub(super) fn glyph(&self, c: char) -> Option<(f64, f64)> {
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
pub(super) fn text_width(text: &str, em: f64) -> f64 {
    REGULAR.width(text, em)
}

/// `em`, shrunk so that `text` fits in `room` px (down to half size).
pub(super) fn fit_em(text: &str, em: f64, room: f64, bold: bool) -> f64 {
    let width = Metrics::of(bold).width(text, em);
    if width <= room { em } else { (em * room / width).max(em / 2.0) }
}
