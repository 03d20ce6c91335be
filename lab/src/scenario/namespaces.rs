//! A scenario's topology on namespaces (`crate::netns`), brought up for a run and torn down
//! when dropped, and the nodes and links of a topology description.

use super::topology::TopologyDescription;
use crate::netns::{self, UpOptions};
use crate::repository::{daemon_binary, topologies_dir};
use anyhow::{Context, Result};
use pfcswitch_link::units::BitRate;
use std::path::{Path, PathBuf};

/// A topology brought up for a run; `down` on drop.
pub(super) struct Topology {
    description: pfcswitch_topology::Topology,
    prefix: String,
    /// Where the daemons' logs go when the topology comes down (the run's directory).
    logs: PathBuf,
}

/// The description a scenario's `topology` names: a built-in or a file.
fn find(name: &str) -> Result<pfcswitch_topology::Topology> {
    Ok(pfcswitch_topology::Topology::find(name, &topologies_dir())?)
}

/// `sw1:p1` of the link `sw1:p1-h1`.
fn first_end(link: &str) -> &str {
    link.split_once('-').map_or(link, |(a, _)| a)
}

impl Topology {
    /// Every link at `mtu` and, if given, at `speed`, switches configured from the run's
    /// `configs/`;
    /// `tapped` links (names of `describe`'s list) go through a tap namespace, where
    /// [`Topology::tap`] captures them.
    pub(super) fn up(
        name: &str,
        prefix: &str,
        out: &Path,
        speed: Option<BitRate>,
        mtu: u32,
        tapped: &[String],
    ) -> Result<Topology> {
        let mut description = find(name)?;
        speed.inspect(|&speed| description.set_speed(speed));
        description.set_mtu(mtu);
        let daemon = daemon_binary().context("pfcswitchd not found (build it, or set PFCSWITCHD)")?;
        let taps = tapped.iter().map(|link| first_end(link).to_string()).collect();
        let options = UpOptions {
            prefix: prefix.into(),
            configs: Some(out.join("configs")),
            daemon: Some(daemon),
            spin: None,
            taps,
        };
        netns::up(&description, &options).with_context(|| format!("topology up {name}"))?;
        Ok(Topology { description, prefix: prefix.into(), logs: out.join("logs") })
    }

    pub(super) fn namespace(&self, node: &str) -> String {
        format!("{}{node}", self.prefix)
    }

    /// The namespace and interface where a tapped link's frames pass, both ways.
    pub(super) fn tap(&self, link: &str) -> (String, &'static str) {
        let link = self.description.link_at(first_end(link)).expect("a link of this topology");
        (netns::tap_of(link, &self.prefix), "end-a")
    }

    pub(super) fn socket(&self, switch: &str) -> PathBuf {
        netns::socket_path(&self.namespace(switch))
    }
}

impl Drop for Topology {
    fn drop(&mut self) {
        if let Err(error) = netns::down(&self.description, &self.prefix) {
            eprintln!("warning: topology down {} --prefix {}: {error:#}", self.description.name, self.prefix);
        }
        // The daemons' logs belong with the run's results, not in /run.
        let _ = std::fs::create_dir_all(&self.logs);
        for switch in &self.description.switches {
            let log = netns::log_path(&self.namespace(switch));
            if std::fs::copy(&log, self.logs.join(format!("{switch}.log"))).is_ok() {
                let _ = std::fs::remove_file(&log);
            }
        }
    }
}

/// The nodes and links of topology `name` (a built-in or a file).
pub(super) fn describe(name: &str) -> Result<TopologyDescription> {
    Ok(TopologyDescription::from(&find(name)?))
}
