//! `ip` and the other commands that build namespaces, with their stderr in the error.

use anyhow::{Context, Result, bail};
use std::process::Command;

/// Runs `program args`; fails with the command line and its stderr.
pub(super) fn command(program: &str, args: &[&str]) -> Result<()> {
    let output = Command::new(program).args(args).output().with_context(|| format!("cannot run {program}"))?;
    if !output.status.success() {
        bail!("{program} {}: {}", args.join(" "), String::from_utf8_lossy(&output.stderr).trim());
    }
    Ok(())
}

pub(super) fn run(args: &[&str]) -> Result<()> {
    command("ip", args)
}

/// `args` run inside `namespace` (`ip netns exec`).
pub(super) fn exec(namespace: &str, args: &[&str]) -> Result<()> {
    command("ip", &[&["netns", "exec", namespace], args].concat())
}

pub(super) fn namespace_add(namespace: &str) -> Result<()> {
    run(&["netns", "add", namespace])?;
    run(&["-n", namespace, "link", "set", "lo", "up"])
}

pub(super) fn namespace_del(namespace: &str) -> Result<()> {
    run(&["netns", "del", namespace])
}

/// The machine's named namespaces.
pub(super) fn namespaces() -> Result<Vec<String>> {
    let output = Command::new("ip").args(["netns", "list"]).output().context("cannot run ip netns list")?;
    let text = String::from_utf8_lossy(&output.stdout);
    Ok(text.lines().filter_map(|line| line.split_whitespace().next()).map(String::from).collect())
}
