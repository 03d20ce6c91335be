//! Reading a description: the file, then the checks.

use super::description::{Topology, builtins};
use super::error::TopologyError;
use super::{file, machines, validate};
use std::path::Path;

impl Topology {
    /// Reads and checks a description.
    pub fn load(path: &Path) -> Result<Topology, TopologyError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| TopologyError::new(path, None, format!("cannot read the file: {e}")))?;
        Topology::parse(&text, path)
    }

    /// Checks a description read from `file`.
    pub fn parse(text: &str, file: &Path) -> Result<Topology, TopologyError> {
        let (topology, node_lines) = file::parse(text, file)?;
        validate::check(&topology, &node_lines)?;
        machines::check(&topology)?;
        Ok(topology)
    }

    /// The description `name_or_path` stands for: a file, or a built-in in `builtin_dir`.
    pub fn find(name_or_path: &str, builtin_dir: &Path) -> Result<Topology, TopologyError> {
        let path = Path::new(name_or_path);
        if path.extension().is_some_and(|e| e == "toml") || name_or_path.contains('/') {
            return Topology::load(path);
        }
        let builtin = builtin_dir.join(format!("{name_or_path}.toml"));
        if !builtin.is_file() {
            let known = builtins(builtin_dir).join(", ");
            return Err(TopologyError::new(
                path,
                None,
                format!("no such topology file, and no built-in of that name (built-ins: {known})"),
            ));
        }
        Topology::load(&builtin)
    }
}
