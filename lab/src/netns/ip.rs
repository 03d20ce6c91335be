//! `ip` and the other commands that build namespaces, with their stderr in the error.

use anyhow::{Context, Result, bail};
use std::process::Command;

/// Runs `program args`; fails with the command line and its stderr.
pub(super) fn command(program: &str, args: &[&str]) -> Result<()> {
    command_output(program, args).map(drop)
}

fn command_output(program: &str, args: &[&str]) -> Result<String> {
    let output = Command::new(program).args(args).output().with_context(|| format!("cannot run {program}"))?;
    if !output.status.success() {
        bail!("{program} {}: {}", args.join(" "), String::from_utf8_lossy(&output.stderr).trim());
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// `ip args`' output.
pub(super) fn output(args: &[&str]) -> Result<String> {
    command_output("ip", args)
}

/// The word after `key` in `ip`'s one-line output (`dev` in `ip route get`, `mtu` in
/// `ip -o link show`).
pub(super) fn word_after<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    let words: Vec<_> = text.split_whitespace().collect();
    words.windows(2).find(|w| w[0] == key).map(|w| w[1])
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
