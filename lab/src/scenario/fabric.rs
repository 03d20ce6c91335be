//! `topology = "fabric"`: a scenario on a generated fabric (`[fabric]`: a fat-tree, a
//! leaf-spine or a dumbbell, with failed links) instead of a topology file. The fabric is
//! written as a topology file beside the run's configs, which `scenario run` builds on
//! namespaces (CaPFC's 80 switches and 128 servers are for the simulator: two cores do not
//! hold them as processes). Every switch gets the scenario's `switch` config with the
//! fabric's ports, ECMP routes and flooding tree (`pfcswitch_sim::fabric`); switches
//! are `sw1`, `sw2`, … and hosts `h1`, `h2`, … in the generator's order.

use super::hpcc_nodes::HpccNodes;
use super::topology::nth_host;
use anyhow::{Context, Result, bail};
use pfcswitch_link::units::BitRate;
use pfcswitch_sim::fabric::{Fabric, Peer};
use pfcswitch_topology::{End, Link, Topology};
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The `topology` of a scenario whose topology is its `[fabric]`.
pub const FABRIC: &str = "fabric";

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FabricKind {
    FatTree,
    LeafSpine,
    Dumbbell,
    /// HPCC's `topology.txt` (`file`), for the simulator.
    Hpcc,
}

/// `[fabric]` of a scenario.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FabricSpec {
    pub kind: FabricKind,
    /// Fat-tree: switch ports (k³/4 hosts, 5k²/4 switches).
    pub k: Option<usize>,
    /// Fat-tree: total oversubscription, split evenly over the two tiers of up-links.
    #[serde(default = "one")]
    pub oversubscription: u32,
    /// Leaf-spine.
    pub spines: Option<usize>,
    pub leaves: Option<usize>,
    /// Hosts per leaf (leaf-spine) or per side (dumbbell).
    pub hosts: Option<usize>,
    /// The config every switch starts from, relative to the scenario file; its first
    /// `[[port]]`, if any, is the template of every port.
    pub switch: PathBuf,
    /// Hpcc: the `topology.txt`, relative to the scenario file ([HPCC's ns-3 files](docs/hpcc.md)).
    pub file: Option<PathBuf>,
    /// Links that are down, as pairs of switch names: `[["sw1", "sw5"]]`.
    #[serde(default)]
    pub failed: Vec<[String; 2]>,
}

fn one() -> u32 {
    1
}

/// A fabric and, read from HPCC's `topology.txt`, its nodes' ids there.
#[derive(Debug)]
pub struct Built {
    pub fabric: Fabric,
    pub hpcc_nodes: Option<HpccNodes>,
}

impl FabricSpec {
    /// The fabric, with the scenario's host speed (and, for a file, its cable delay),
    /// checked; a file is relative to `base`.
    pub fn build(&self, speed: BitRate, cable: Duration, base: &Path) -> Result<Built> {
        let mut hpcc_nodes = None;
        let need = |value: Option<usize>, key: &str, at_least: usize| match value {
            None => bail!("fabric.{key} is required for a {:?} fabric", self.kind),
            Some(n) if n < at_least => bail!("fabric.{key} = {n} must be at least {at_least}"),
            Some(n) => Ok(n),
        };
        let mut fabric = match self.kind {
            FabricKind::FatTree => {
                let k = need(self.k, "k", 2)?;
                if !k.is_multiple_of(2) || k > 64 {
                    bail!("fabric.k = {k} must be even and at most 64 (switch ports)");
                }
                if self.oversubscription == 0 {
                    bail!("fabric.oversubscription must be at least 1");
                }
                Fabric::fat_tree(k, speed, self.oversubscription)
            }
            FabricKind::LeafSpine => Fabric::leaf_spine(
                need(self.spines, "spines", 1)?,
                need(self.leaves, "leaves", 1)?,
                need(self.hosts, "hosts", 1)?,
                speed,
            ),
            FabricKind::Dumbbell => Fabric::dumbbell(need(self.hosts, "hosts", 1)?, speed),
            FabricKind::Hpcc => {
                let file = base.join(self.file.as_ref().context("fabric.file is required for an hpcc fabric")?);
                let topology = pfcswitch_hpcc::topology::Topology::read(&file)?;
                hpcc_nodes = Some(HpccNodes { hosts: topology.hosts(), switches: topology.switches.clone() });
                super::hpcc_fabric::fabric(&topology, speed, cable).with_context(|| format!("{}", file.display()))?
            }
        };
        if fabric.hosts.len() >= usize::from(u16::MAX) {
            bail!("the fabric has {} hosts; host addresses end in two bytes (at most 65534)", fabric.hosts.len());
        }
        if fabric.ports.iter().any(|ports| ports.len() > 64) {
            bail!("a switch of the fabric has more than 64 ports");
        }
        for [a, b] in &self.failed {
            let index = |name: &str| {
                name.strip_prefix("sw")
                    .and_then(|n| n.parse::<usize>().ok())
                    .filter(|&n| (1..=fabric.switch_count()).contains(&n))
                    .map(|n| n - 1)
                    .with_context(|| format!("fabric.failed: no switch `{name}` (sw1 … sw{})", fabric.switch_count()))
            };
            if !fabric.fail_link(index(a)?, index(b)?) {
                bail!("fabric.failed: no link between {a} and {b} (or it failed already)");
            }
        }
        Ok(Built { fabric, hpcc_nodes })
    }

    /// A line for listings: `fat-tree k=8 o=4`.
    pub fn label(&self) -> String {
        let n = |v: Option<usize>| v.map_or("?".into(), |v| v.to_string());
        let mut label = match self.kind {
            FabricKind::FatTree => format!("fat-tree k={} o={}", n(self.k), self.oversubscription),
            FabricKind::LeafSpine => {
                format!("leaf-spine {}x{}x{}", n(self.spines), n(self.leaves), n(self.hosts))
            }
            FabricKind::Dumbbell => format!("dumbbell {}x2", n(self.hosts)),
            FabricKind::Hpcc => format!("hpcc {}", self.file.as_ref().map_or("?".into(), |f| f.display().to_string())),
        };
        if !self.failed.is_empty() {
            label += &format!(", {} failed", self.failed.len());
        }
        label
    }
}

/// The fabric as a topology file, `file`, named as the built-in topologies name their nodes,
/// with its switches' configs in `configs` (written by [`write_configs`]): what `scenario run`
/// builds on namespaces, and what `pfcswitch topology up FILE` builds again.
pub fn write_description(fabric: &Fabric, label: &str, mtu: u32, configs: &Path, file: &Path) -> Result<Topology> {
    let port = |s: usize, p: usize| End::Port { switch: format!("sw{}", s + 1), port: format!("p{}", p + 1) };
    let mut links = Vec::new();
    for (s, ports) in fabric.ports.iter().enumerate() {
        for (p, &(peer, speed)) in ports.iter().enumerate() {
            let b = match peer {
                Peer::Host(h) => End::Host(format!("h{}", h + 1)),
                Peer::Switch((t, q)) if (s, p) < (t, q) => port(t, q),
                Peer::Switch(_) | Peer::None => continue,
            };
            links.push(Link { a: port(s, p), b, speed, delay: Duration::ZERO, loss: 0.0, mtu, line: 0 });
        }
    }
    let generated = Topology {
        name: "fabric".into(),
        file: file.into(),
        description: format!("generated: {label}"),
        switches: (1..=fabric.switch_count()).map(|s| format!("sw{s}")).collect(),
        hosts: (1..=fabric.hosts.len()).map(|h| format!("h{h}")).collect(),
        links,
        interfaces: Vec::new(),
        machines: Vec::new(),
        vxlan: Default::default(),
        configs: Some(configs.into()),
    };
    std::fs::write(file, generated.to_toml()).with_context(|| format!("cannot write {}", file.display()))?;
    // Read back: checked as a user's file is, with the lines of the file.
    Ok(Topology::load(file)?)
}

/// Writes `base` (the merged `switch` config) and every switch's config into `dir`.
pub fn write_configs(fabric: &Fabric, base: &toml::Table, dir: &Path) -> Result<()> {
    let base_file = dir.join("fabric-base.toml");
    std::fs::write(&base_file, toml::to_string(base)?)?;
    let (base, _) = pfcswitchd::config::load(&base_file)?;
    let host_mac = |h: usize| nth_host(h).expect("checked: at most 65534 hosts").0;
    for config in fabric.switch_configs(&base, host_mac) {
        let path = dir.join(format!("{}.toml", config.switch.name));
        std::fs::write(&path, toml::to_string(&config).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?)?;
    }
    Ok(())
}
