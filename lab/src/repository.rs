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

/// The built-in topologies (`topologies/*.toml`).
pub fn topologies_dir() -> PathBuf {
    root().join("topologies")
}

/// The pfcswitchd a topology runs: `PFCSWITCHD`, else the one built beside this binary, else
/// the checkout's release build, else the first on `PATH`.
pub fn daemon_binary() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("PFCSWITCHD") {
        return Some(path.into());
    }
    let beside = std::env::current_exe().ok().and_then(|exe| Some(exe.parent()?.join("pfcswitchd")));
    let release = root().join("target/release/pfcswitchd");
    let on_path = std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).map(|dir| dir.join("pfcswitchd")).collect::<Vec<_>>());
    beside.into_iter().chain([release]).chain(on_path.into_iter().flatten()).find(|path| path.is_file())
}
