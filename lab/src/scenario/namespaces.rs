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

fn topology_script() -> PathBuf {
    root().join("netns-scripts/topology.sh")
}

impl Topology {
    pub(super) fn up(name: &str, prefix: &str, switches: &[String], out: &Path, mtu: u32) -> Result<Topology> {
        let topology =
            Topology { name: name.into(), prefix: prefix.into(), switches: switches.to_vec(), logs: out.join("logs") };
        let configs = out.join("configs");
        let output = Command::new(topology_script())
            .args(["up", name, "--prefix", prefix, "--mtu", &mtu.to_string(), "--config-dir"])
            .arg(&configs)
            .output()
            .context("cannot run topology.sh")?;
        if !output.status.success() {
            bail!("topology.sh up {name} failed: {}", String::from_utf8_lossy(&output.stderr).trim());
        }
        Ok(topology)
    }

    pub(super) fn namespace(&self, node: &str) -> String {
        format!("{}{node}", self.prefix)
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
