//! Why a description was refused: the file, the line where the fault is, and the reason.

use std::fmt;
use std::path::{Path, PathBuf};

/// A refused description.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct TopologyError {
    pub file: PathBuf,
    pub line: Option<usize>,
    pub reason: String,
}

impl TopologyError {
    pub fn new(file: &Path, line: Option<usize>, reason: impl Into<String>) -> TopologyError {
        TopologyError { file: file.to_path_buf(), line, reason: reason.into() }
    }
}

impl fmt::Display for TopologyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: {}", self.file.display(), self.reason),
            None => write!(f, "{}: {}", self.file.display(), self.reason),
        }
    }
}

/// The line (from 1) of byte `offset` in `text`.
pub(crate) fn line_at(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}
