//! Checks shared by the figure tests: both files written, the PNG of the canvas's size, the
//! SVG holding the expected texts.

use super::style::{HEIGHT, WIDTH};
use std::path::{Path, PathBuf};

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
