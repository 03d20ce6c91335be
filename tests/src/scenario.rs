//! Running `pfcswitch scenario` from tests and reading what it wrote.

use crate::topology::{binary, repo};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// Runs `pfcswitch scenario ARGS --out OUT`, failing the test with its output if it fails;
/// returns its stdout. `run` needs root (namespaces), `simulate` and `compare --sim` do not.
pub fn pfcswitch_scenario(args: &[&str], out: &Path) -> String {
    if args.first() == Some(&"run") {
        crate::require_root();
    }
    let output = Command::new(binary("pfcswitch"))
        .arg("scenario")
        .args(args)
        .arg("--out")
        .arg(out)
        .output()
        .expect("pfcswitch runs");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "pfcswitch scenario {args:?}: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

/// The results.json of a run written into `dir`.
pub fn results(dir: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(dir.join("results.json")).expect("results.json written"))
        .expect("results.json is JSON")
}

/// Writes a scenario file `scenario.toml` into `dir` from `text`, with `@CONFIGS@` standing for
/// the repository's `configs/`; returns its path.
pub fn scenario_file(dir: &Path, text: &str) -> String {
    let path = dir.join("scenario.toml");
    std::fs::write(&path, text.replace("@CONFIGS@", &repo().join("configs").display().to_string())).unwrap();
    path.display().to_string()
}
