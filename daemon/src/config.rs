//! Loading a switch configuration file: TOML syntax, then types, then values, each failure
//! reported with the file, the line, the key and the reason.

use pfcswitch_switch::config::{ConfigWarning, SwitchConfig};
use std::fmt;
use std::path::{Path, PathBuf};

/// A configuration that cannot be used, with everything a user needs to fix it.
#[derive(Debug, PartialEq, Eq)]
pub struct ConfigFileError {
    pub file: PathBuf,
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// Dotted key path such as `pfc.xon` or `port[1].speed`, when known.
    pub key: Option<String>,
    pub reason: String,
}

impl fmt::Display for ConfigFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if let Some(key) = &self.key {
            write!(f, ": key `{key}`")?;
        }
        write!(f, ": {}", self.reason)
    }
}

impl std::error::Error for ConfigFileError {}

/// Reads, parses and validates `file`; returns the configuration and its warnings.
pub fn load(file: &Path) -> Result<(SwitchConfig, Vec<ConfigWarning>), ConfigFileError> {
    let error = |line, key, reason: String| ConfigFileError { file: file.to_path_buf(), line, key, reason };
    let text = std::fs::read_to_string(file).map_err(|e| error(None, None, format!("cannot read: {e}")))?;
    let config = parse(&text).map_err(|(line, key, reason)| error(line, key, reason))?;
    let warnings = config.validate().map_err(|e| {
        let line = line_of_key(&text, &e.key);
        error(line, Some(e.key), e.reason)
    })?;
    if let Some((index, port)) = config.ports.iter().enumerate().find(|(_, p)| u64::from(p.mtu) > MAX_MTU) {
        let key = format!("port[{index}].mtu");
        let reason = format!(
            "{} does not fit the datapath: a frame lives in one {}-byte UMEM chunk after the kernel's \
             XDP headroom, so the largest MTU is {MAX_MTU}",
            port.mtu,
            crate::umem::FRAME_SIZE
        );
        return Err(error(line_of_key(&text, &key), Some(key), reason));
    }
    Ok((config, warnings))
}

/// The largest MTU whose frames (plus a VLAN-tagged L2 header) fit a UMEM chunk after the
/// 256-byte XDP headroom and the UMEM's own.
pub const MAX_MTU: u64 =
    (crate::umem::FRAME_SIZE - 256 - crate::umem::HEADROOM) as u64 - pfcswitch_switch::config::L2_HEADER_MAX;

type ParseError = (Option<usize>, Option<String>, String);

fn parse(text: &str) -> Result<SwitchConfig, ParseError> {
    let line_at = |offset: usize| text[..offset.min(text.len())].matches('\n').count() + 1;
    let deserializer = toml::de::Deserializer::parse(text)
        .map_err(|e| (e.span().map(|s| line_at(s.start)), None, e.message().trim().to_string()))?;
    serde_path_to_error::deserialize(deserializer).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        let key = (path != ".").then_some(path);
        (inner.span().map(|s| line_at(s.start)), key, inner.message().trim().to_string())
    })
}

/// The line defining the last component of `key` within its section, best effort: used to
/// point at values that parse but fail validation.
fn line_of_key(text: &str, key: &str) -> Option<usize> {
    let mut parts = key.split('.');
    let section = parts.next()?;
    let field = parts.next_back()?;
    let section = section.split('[').next()?;
    let mut in_section = false;
    for (index, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        if trimmed.starts_with('[') {
            in_section = trimmed.trim_matches(|c| c == '[' || c == ']') == section;
        } else if in_section && trimmed.split('=').next().map(str::trim) == Some(field) {
            return Some(index + 1);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(text: &str) -> (tempfile::NamedTempFile, PathBuf) {
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), text).unwrap();
        let path = file.path().to_path_buf();
        (file, path)
    }

    const GOOD: &str = "[switch]\nname = \"sw1\"\n\n[[port]]\nname = \"p1\"\nspeed = \"1Gbps\"\n\n[pfc]\nxoff = \"50KB\"\nxon = \"40KB\"\n";

    #[test]
    fn a_good_file_loads() {
        let (_guard, path) = write(GOOD);
        let (config, warnings) = load(&path).unwrap();
        assert_eq!(config.ports[0].name, "p1");
        assert!(warnings.is_empty());
    }

    #[test]
    fn an_mtu_whose_frames_do_not_fit_a_umem_chunk_is_rejected() {
        // Headroom for 9000-byte frames, so that the MTU is the only problem.
        let jumbo = GOOD.replace("xon = \"40KB\"", "xon = \"40KB\"\nmax = \"90KB\"");
        let (_guard, path) = write(&jumbo.replace("speed = \"1Gbps\"", "speed = \"1Gbps\"\nmtu = 9000"));
        let error = load(&path).unwrap_err();
        assert_eq!((error.key.as_deref(), error.line), (Some("port[0].mtu"), Some(7)), "{error}");
        assert!(error.reason.contains("the largest MTU is 3818"), "{error}");
        let (_guard, path) = write(&jumbo.replace("speed = \"1Gbps\"", "speed = \"1Gbps\"\nmtu = 3400"));
        assert!(load(&path).is_ok());
    }

    #[test]
    fn errors_name_file_line_key_and_reason() {
        let (_guard, path) = write(&GOOD.replace("xon = ", "x_on = "));
        let error = load(&path).unwrap_err();
        assert_eq!(error.key.as_deref(), Some("pfc.x_on"));
        assert_eq!(error.line, Some(10));
        assert!(error.reason.contains("unknown field `x_on`"), "{error}");
        assert!(
            error.to_string().starts_with(&format!("{}:10: key `pfc.x_on`: unknown field", path.display())),
            "{error}"
        );

        let (_guard, path) = write(&GOOD.replace("\"1Gbps\"", "\"1 gigabit\""));
        let error = load(&path).unwrap_err();
        assert_eq!((error.key.as_deref(), error.line), (Some("port[0].speed"), Some(6)), "{error}");
        assert!(error.reason.contains("unknown unit"), "{error}");

        let (_guard, path) = write(&GOOD.replace("\"40KB\"", "\"50KB\""));
        let error = load(&path).unwrap_err();
        assert_eq!((error.key.as_deref(), error.line), (Some("pfc.xon"), Some(10)), "{error}");
        assert!(error.reason.contains("must be below xoff"), "{error}");

        let (_guard, path) = write("[switch\nname = 1");
        let error = load(&path).unwrap_err();
        assert_eq!(error.line, Some(1), "{error}");

        let error = load(Path::new("/nonexistent/sw.toml")).unwrap_err();
        assert!(error.to_string().starts_with("/nonexistent/sw.toml: cannot read"), "{error}");
    }
}
