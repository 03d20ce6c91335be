//! Where the repository's data lives: built-in scenarios, switch configs, the topology
//! script and the flow-size distributions are read from the checkout at run time, so that a
//! user can edit them without rebuilding.

use std::path::{Path, PathBuf};

/// The repository: `PFCSWITCH_ROOT`; else, for an installed binary, the data beside it in
/// the file system's layout (`/usr/bin/pfcswitch` reads `/usr/share/pfcswitch`, as the Debian
/// package installs it); else the checkout this binary was built from.
pub fn root() -> PathBuf {
    if let Some(root) = std::env::var_os("PFCSWITCH_ROOT") {
        return root.into();
    }
    let installed = installed_beside_exe(&["..", "share", "pfcswitch"]).filter(|data| data.join("topologies").is_dir());
    installed
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("lab/ is in the repository").into())
}

/// `relative` from the directory of the running executable.
fn installed_beside_exe(relative: &[&str]) -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    Some(relative.iter().fold(exe.parent()?.to_path_buf(), |path, part| path.join(part)))
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
/// the one installed with it (`/usr/bin/pfcswitch`'s is `/usr/sbin/pfcswitchd`), else the
/// checkout's release build, else the first on `PATH`.
pub fn daemon_binary() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("PFCSWITCHD") {
        return Some(path.into());
    }
    let beside = installed_beside_exe(&["pfcswitchd"]);
    let installed = installed_beside_exe(&["..", "sbin", "pfcswitchd"]);
    let release = root().join("target/release/pfcswitchd");
    let on_path = std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).map(|dir| dir.join("pfcswitchd")).collect::<Vec<_>>());
    [beside, installed]
        .into_iter()
        .flatten()
        .chain([release])
        .chain(on_path.into_iter().flatten())
        .find(|path| path.is_file())
}
