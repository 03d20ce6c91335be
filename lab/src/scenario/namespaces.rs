//! A scenario's topology on namespaces (`crate::netns`), brought up for a run and torn down
//! when dropped, and the description a scenario's `topology` names.

use super::faults::Fault;
use crate::netns::{self, UpOptions};
use crate::repository::{daemon_binary, topologies_dir};
use anyhow::{Context, Result};
use pfcswitch_link::units::BitRate;
use std::path::{Path, PathBuf};

/// A topology brought up for a run; `down` on drop.
pub(super) struct Topology {
    faults: FaultApplier,
    /// Where the daemons' logs go when the topology comes down (the run's directory).
    logs: PathBuf,
}

/// The description a scenario's `topology` names: a built-in or a file.
pub(super) fn find(name: &str) -> Result<pfcswitch_topology::Topology> {
    Ok(pfcswitch_topology::Topology::find(name, &topologies_dir())?)
}

/// `sw1:p1` of the link `sw1:p1-h1`.
fn first_end(link: &str) -> &str {
    link.split_once('-').map_or(link, |(a, _)| a)
}

impl Topology {
    /// Every link at `mtu` and, if given, at `speed`, switches configured from the run's
    /// `configs/`;
    /// `tapped` links (by name, `sw1:p1-h1`) go through a tap namespace, where
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
            scheduling: netns::Scheduling::default(),
            taps,
            machine: None,
        };
        netns::up(&description, &options).with_context(|| format!("topology up {name}"))?;
        let (daemon, scheduling) = (options.daemon.expect("set above"), options.scheduling);
        let faults =
            FaultApplier { description, prefix: prefix.into(), configs: out.join("configs"), daemon, scheduling };
        Ok(Topology { faults, logs: out.join("logs") })
    }

    /// What applies the run's faults, for a thread of its own.
    pub(super) fn fault_applier(&self) -> FaultApplier {
        self.faults.clone()
    }

    pub(super) fn namespace(&self, node: &str) -> String {
        format!("{}{node}", self.faults.prefix)
    }

    /// The namespace and interface where a tapped link's frames pass, both ways.
    pub(super) fn tap(&self, link: &str) -> (String, &'static str) {
        let link = self.faults.description.link_at(first_end(link)).expect("a link of this topology");
        (netns::tap_of(link, &self.faults.prefix), "end-a")
    }

    pub(super) fn socket(&self, switch: &str) -> PathBuf {
        netns::socket_path(&self.namespace(switch))
    }
}

impl Drop for Topology {
    fn drop(&mut self) {
        let FaultApplier { description, prefix, .. } = &self.faults;
        if let Err(error) = netns::down(description, prefix, None) {
            eprintln!("warning: topology down {} --prefix {prefix}: {error:#}", description.name);
        }
        // The daemons' logs belong with the run's results, not in /run.
        let _ = std::fs::create_dir_all(&self.logs);
        for switch in &self.faults.description.switches {
            let log = netns::log_path(&self.namespace(switch));
            if std::fs::copy(&log, self.logs.join(format!("{switch}.log"))).is_ok() {
                let _ = std::fs::remove_file(&log);
            }
        }
    }
}

/// Applies a run's faults to its namespaces: a link's interfaces set down or up, a switch's
/// pfcswitchd killed or started again with its config.
#[derive(Clone, Debug)]
pub(super) struct FaultApplier {
    description: pfcswitch_topology::Topology,
    prefix: String,
    /// The run's switch configs (`DIR/configs`).
    configs: PathBuf,
    daemon: PathBuf,
    /// As the daemons were started: a restarted one runs as its peers do.
    scheduling: netns::Scheduling,
}

impl FaultApplier {
    pub(super) fn apply(&self, fault: &Fault) -> Result<()> {
        match fault {
            Fault::Link { up, ends, .. } => {
                for end in ends {
                    let link = self.description.link_at(end).with_context(|| format!("no link at {end}"))?;
                    let end = if link.a.to_string() == *end { &link.a } else { &link.b };
                    netns::set_end(&self.prefix, end, *up)?;
                }
                Ok(())
            }
            Fault::Switch { restart: false, switch, .. } => netns::kill_daemon(&self.prefix, switch),
            Fault::Switch { restart: true, switch, .. } => {
                // A restart of a running daemon is a crash and a start.
                let _ = netns::kill_daemon(&self.prefix, switch);
                let config = self.configs.join(format!("{switch}.toml"));
                netns::start_daemon(&self.description, &self.prefix, switch, &self.daemon, &config, &self.scheduling)
            }
        }
    }
}
