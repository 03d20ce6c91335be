//! topology.sh: a topology of namespaces brought up for a run and torn down when dropped,
//! and the nodes and links of a named one.

use super::plan::root;
use super::topology::TopologyDescription;
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A topology brought up by topology.sh; `down` on drop.
pub(super) struct Topology {
    name: String,
    prefix: String,
    switches: Vec<String>,
    /// Where the daemons' logs go when the topology comes down (the run's directory).
    logs: PathBuf,
}

/// `sw1:p1` of the link `sw1:p1-h1`.
fn first_end(link: &str) -> &str {
    link.split_once('-').map_or(link, |(a, _)| a)
}

fn topology_script() -> PathBuf {
    root().join("netns-scripts/topology.sh")
}

impl Topology {
    /// `tapped` links (entries of `describe`'s list) go through a tap namespace, where
    /// [`Topology::tap`] captures them.
    pub(super) fn up(
        name: &str,
        prefix: &str,
        switches: &[String],
        out: &Path,
        mtu: u32,
        tapped: &[String],
    ) -> Result<Topology> {
        let topology =
            Topology { name: name.into(), prefix: prefix.into(), switches: switches.to_vec(), logs: out.join("logs") };
        let configs = out.join("configs");
        let mut command = Command::new(topology_script());
        command.args(["up", name, "--prefix", prefix, "--mtu", &mtu.to_string(), "--config-dir"]).arg(&configs);
        for link in tapped {
            command.args(["--tap", first_end(link)]);
        }
        let output = command.output().context("cannot run topology.sh")?;
        if !output.status.success() {
            bail!("topology.sh up {name} failed: {}", String::from_utf8_lossy(&output.stderr).trim());
        }
        Ok(topology)
    }

    pub(super) fn namespace(&self, node: &str) -> String {
        format!("{}{node}", self.prefix)
    }

    /// The namespace and interface where a tapped link's frames pass, both ways.
    pub(super) fn tap(&self, link: &str) -> (String, &'static str) {
        (format!("{}tap-{}", self.prefix, first_end(link).replace(':', "-")), "end-a")
    }

    pub(super) fn socket(&self, switch: &str) -> PathBuf {
        pfcswitchd::control::default_socket_path(&self.namespace(switch))
    }
}

impl Drop for Topology {
    fn drop(&mut self) {
        let status = Command::new(topology_script()).args(["down", &self.name, "--prefix", &self.prefix]).status();
        if !status.is_ok_and(|s| s.success()) {
            eprintln!("warning: topology.sh down {} --prefix {} failed", self.name, self.prefix);
        }
        // The daemons' logs belong with the run's results, not in /run.
        let _ = std::fs::create_dir_all(&self.logs);
        for switch in &self.switches {
            let log = PathBuf::from(format!("/run/pfcswitch/{}.log", self.namespace(switch)));
            if std::fs::copy(&log, self.logs.join(format!("{switch}.log"))).is_ok() {
                let _ = std::fs::remove_file(&log);
            }
        }
    }
}

/// The nodes and links of topology.sh's topology `name`.
pub(super) fn describe(name: &str) -> Result<TopologyDescription> {
    let output = Command::new(topology_script()).args(["describe", name]).output().context("cannot run topology.sh")?;
    if !output.status.success() {
        bail!("{}", String::from_utf8_lossy(&output.stderr).trim());
    }
    let text = String::from_utf8_lossy(&output.stdout);
    let nodes = |kind: &str| -> Vec<String> {
        text.lines()
            .find_map(|line| line.strip_prefix(kind))
            .map(|rest| rest.split_whitespace().map(String::from).collect())
            .unwrap_or_default()
    };
    Ok(TopologyDescription { switches: nodes("switches "), hosts: nodes("hosts "), links: nodes("links ") })
}
