//! Where the repository's data lives: built-in scenarios, switch configs, the topology
//! script and the flow-size distributions are read from the checkout at run time, so that a
//! user can edit them without rebuilding.

use std::path::{Path, PathBuf};

/// The repository: `PFCSWITCH_ROOT`, or where this binary was built from.
pub fn root() -> PathBuf {
    std::env::var_os("PFCSWITCH_ROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("lab/ is in the repository").into())
}

/// The built-in flow-size distributions (`workloads/*.cdf`).
pub fn workloads_dir() -> PathBuf {
    root().join("workloads")
}
