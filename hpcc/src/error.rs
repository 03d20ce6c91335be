use std::path::PathBuf;

/// A file refused: which, where, and why.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{}:{line}: {reason}", file.display())]
pub struct FileError {
    pub file: PathBuf,
    /// From 1; 0 when the reason is about the whole file.
    pub line: usize,
    pub reason: String,
}

impl FileError {
    pub(crate) fn at(file: &std::path::Path, line: usize, reason: impl Into<String>) -> FileError {
        FileError { file: file.to_path_buf(), line, reason: reason.into() }
    }
}

/// The non-blank lines of `text` with their numbers from 1, split into tokens.
pub(crate) fn token_lines(text: &str) -> impl Iterator<Item = (usize, Vec<&str>)> {
    text.lines()
        .enumerate()
        .map(|(i, line)| (i + 1, line.split_whitespace().collect::<Vec<_>>()))
        .filter(|(_, tokens)| !tokens.is_empty())
}

/// Parses `token` as a `T`, or says which `what` it failed to be.
pub(crate) fn parse_token<T: std::str::FromStr>(
    file: &std::path::Path,
    line: usize,
    token: &str,
    what: &str,
) -> Result<T, FileError> {
    token.parse().map_err(|_| FileError::at(file, line, format!("{what} `{token}` is not a valid number")))
}
