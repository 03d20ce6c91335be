//! The PNG's font: DejaVu Sans (and Bold for the title, if installed), read from Debian's
//! `fonts-dejavu-core` and registered with plotters once per process. The SVG needs no font.

use anyhow::{Context, Result, anyhow};
use plotters::style::{FontFamily, FontStyle, register_font};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

/// The font the PNG's text is drawn with (Debian's `fonts-dejavu-core`).
pub const FONT_FILE: &str = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";
/// The title's font; optional: without it the PNG's title is drawn in [`FONT_FILE`].
const BOLD_FONT_FILE: &str = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf";
const FONT_PACKAGE: &str = "fonts-dejavu-core";

static FONTS_LOADED: Mutex<bool> = Mutex::new(false);
/// Whether DejaVu Sans Bold was registered; if not, the PNG's title is set in the regular face.
static BOLD_LOADED: AtomicBool = AtomicBool::new(false);

/// Whether [`load_fonts`] registered DejaVu Sans Bold.
pub(super) fn bold_loaded() -> bool {
    BOLD_LOADED.load(Ordering::Relaxed)
}

/// Registers DejaVu Sans (and Bold, if present) for the PNG's text, once per process; the font
/// bytes stay in memory for the process's life, as plotters requires.
pub(super) fn load_fonts() -> Result<()> {
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

    #[test]
    fn missing_font_is_named_with_its_package() {
        let error = read_font(Path::new("/nonexistent/DejaVuSans.ttf")).unwrap_err().to_string();
        assert!(error.contains("/nonexistent/DejaVuSans.ttf"), "{error}");
        assert!(error.contains("fonts-dejavu-core"), "{error}");
        assert!(error.contains("scripts/setup.sh installs it"), "{error}");
    }
}
