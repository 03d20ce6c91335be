//! A [`Topology`] on the datapath: one network namespace per switch and host, a veth pair per
//! link, one pfcswitchd per switch (`pfcswitch topology up|down|relink`). Namespaces are
//! `PREFIX` + the node's name, so several topologies (and test runs) share a machine; `down`
//! removes exactly what `up` created, and `up` removes what it made when it fails half-way.
//!
//! Hosts get eth0 with [`Topology::host_addresses`] and VLAN, checksum and segmentation
//! offloads off: frames leave as on a real wire (tag inline, checksums done, no
//! super-frames), because the switch forwards bytes and does not finish them. Each switch runs
//! `pfcswitchd --config CONFIG --spin SPIN --nice=-20 [--cable ...] --control-socket
//! /run/pfcswitch/PREFIXswK.sock` ([`Scheduling`]; `--cable` for links with delay or loss), logging to
//! `/run/pfcswitch/PREFIXswK.log`.

mod daemons;
mod existing;
mod ip;
mod links;
mod machines;
mod reap;

pub use daemons::{RUN_DIR, Scheduling, log_path, socket_path};
pub use links::tap_of;
pub use reap::reap_orphans;

use anyhow::{Context, Result, anyhow, bail};
use pfcswitch_switch::config::SwitchConfig;
use pfcswitch_topology::{NAMESPACE_HOSTS, Topology};
use std::path::{Path, PathBuf};

/// How `up` builds a topology.
#[derive(Clone, Debug, Default)]
pub struct UpOptions {
    /// Prepended to every namespace name.
    pub prefix: String,
    /// Each switch's config (a file for all, or a directory of SWITCH.toml) instead of the
    /// description's.
    pub configs: Option<PathBuf>,
    /// The pfcswitchd to run; `None` builds the namespaces and links only.
    pub daemon: Option<PathBuf>,
    /// How the daemons run on the machine's cores.
    pub scheduling: Scheduling,
    /// Link ends (`sw1:p3`, or a host) whose links go through a tap namespace ([`tap_of`]).
    pub taps: Vec<String>,
    /// The machine of the description's `[machines]` whose part to build here, its links to
    /// the other machines as VXLAN tunnels; `None` builds all of it here, on veths.
    pub machine: Option<String>,
}

/// Builds `topology`; on any failure removes what it built and returns the error.
pub fn up(topology: &Topology, options: &UpOptions) -> Result<()> {
    if topology.hosts.len() > NAMESPACE_HOSTS {
        bail!(
            "{}: {} hosts; on namespaces hosts share 10.0.0.0/24 (at most {NAMESPACE_HOSTS}): run it in the simulator",
            topology.file.display(),
            topology.hosts.len()
        );
    }
    let here = options.machine.as_deref();
    machines::check_here(topology, here)?;
    let tapped = tapped_links(topology, &options.taps, here)?;
    let configs = match options.daemon {
        Some(_) => switch_configs(topology, options)?,
        None => Vec::new(),
    };
    let built = build(topology, options, &tapped, &configs);
    if built.is_err() {
        let _ = down(topology, &options.prefix, here);
    }
    built
}

fn build(topology: &Topology, options: &UpOptions, tapped: &[bool], configs: &[PathBuf]) -> Result<()> {
    let (prefix, here) = (&options.prefix, options.machine.as_deref());
    std::fs::create_dir_all(RUN_DIR).with_context(|| format!("cannot create {RUN_DIR}"))?;
    for node in topology.switches.iter().chain(&topology.hosts).filter(|node| topology.runs_on(node, here)) {
        ip::namespace_add(&format!("{prefix}{node}"))?;
    }
    for (link, &tap) in topology.links.iter().zip(tapped) {
        match topology.tunnel(link, here) {
            Some(tunnel) => machines::add_tunnel(link, prefix, here, &tunnel, topology)?,
            None if topology.runs_on(link.a.node(), here) => links::add(topology, link, prefix, tap)?,
            None => {}
        }
    }
    for interface in topology.interfaces.iter().filter(|i| topology.runs_on(i.end.node(), here)) {
        existing::bind(topology, prefix, interface)?;
    }
    if let Some(daemon) = &options.daemon {
        let local = topology.switches.iter().zip(configs).filter(|(switch, _)| topology.runs_on(switch, here));
        for (switch, config) in local {
            daemons::start(
                &format!("{prefix}{switch}"),
                daemon,
                config,
                &options.scheduling,
                &cables(topology, switch),
            )?;
        }
        for switch in topology.switches.iter().filter(|switch| topology.runs_on(switch, here)) {
            daemons::wait_ready(&format!("{prefix}{switch}"))?;
        }
    }
    Ok(())
}

/// Stops the daemons, moves the bound existing interfaces back, and removes every namespace
/// `up` creates for `topology` under `prefix` (taps included) on machine `here` (`None`: all
/// of it); nothing else. Errors only if a namespace or an interface stays.
pub fn down(topology: &Topology, prefix: &str, here: Option<&str>) -> Result<()> {
    machines::check_here(topology, here)?;
    let local = |node: &str| topology.runs_on(node, here);
    for switch in topology.switches.iter().filter(|switch| local(switch)) {
        daemons::stop(&format!("{prefix}{switch}"));
    }
    let namespaces = (topology.switches.iter().chain(&topology.hosts))
        .filter(|node| local(node))
        .map(|node| format!("{prefix}{node}"))
        .chain(topology.links.iter().filter(|link| local(link.a.node())).map(|link| tap_of(link, prefix)));
    let mut left = Vec::new();
    for interface in topology.interfaces.iter().filter(|i| local(i.end.node())) {
        if let Err(error) = existing::release(prefix, interface) {
            left.push(format!("{}: {error:#}", interface.iface));
        }
    }
    let existing = ip::namespaces()?;
    for namespace in namespaces.filter(|ns| existing.contains(ns)) {
        if let Err(error) = ip::namespace_del(&namespace) {
            left.push(format!("{namespace}: {error:#}"));
        }
    }
    if !left.is_empty() {
        bail!("left behind: {}", left.join("; "));
    }
    Ok(())
}

/// Deletes the veth pair (or this machine's end of the tunnel) at `end` (`sw1:p2`) if it
/// exists and creates it again as `up` did: a cable, or a NIC with its driver, replaced.
/// Tapped links are not relinked.
pub fn relink(topology: &Topology, prefix: &str, here: Option<&str>, end: &str) -> Result<()> {
    machines::check_here(topology, here)?;
    let link = topology.link_at(end).with_context(|| format!("no link at {end} in {}", topology.name))?;
    let Some(tunnel) = topology.tunnel(link, here) else {
        if !topology.runs_on(link.a.node(), here) {
            bail!("{end}: its link is on another machine");
        }
        let _ = ip::run(&["-n", &format!("{prefix}{}", link.a.node()), "link", "del", link.a.interface()]);
        return links::add(topology, link, prefix, false);
    };
    let local = machines::local_end(link, topology, here);
    let _ = ip::run(&["-n", &format!("{prefix}{}", local.node()), "link", "del", local.interface()]);
    machines::add_tunnel(link, prefix, here, &tunnel, topology)
}

/// Sets the interface at `end` down or up (`ip link set`): a veth pair's carrier goes at
/// both ends when either end is down, as a cut cable's does.
pub fn set_end(prefix: &str, end: &pfcswitch_topology::End, up: bool) -> Result<()> {
    let namespace = format!("{prefix}{}", end.node());
    ip::run(&["-n", &namespace, "link", "set", "dev", end.interface(), if up { "up" } else { "down" }])
}

/// Kills `switch`'s pfcswitchd with SIGKILL, as a crash: it cleans nothing up itself.
pub fn kill_daemon(prefix: &str, switch: &str) -> Result<()> {
    daemons::kill(&format!("{prefix}{switch}"))
}

/// Starts `switch`'s pfcswitchd as `up` does (after a kill: it replaces the XDP programs its
/// predecessor left) and waits for its control socket.
pub fn start_daemon(
    topology: &Topology,
    prefix: &str,
    switch: &str,
    daemon: &Path,
    config: &Path,
    scheduling: &Scheduling,
) -> Result<()> {
    let namespace = format!("{prefix}{switch}");
    daemons::start(&namespace, daemon, config, scheduling, &cables(topology, switch))?;
    daemons::wait_ready(&namespace)
}

fn tapped_links(topology: &Topology, taps: &[String], here: Option<&str>) -> Result<Vec<bool>> {
    for end in taps {
        let link =
            topology.link_at(end).with_context(|| format!("--tap {end}: no link at {end} in {}", topology.name))?;
        if topology.tunnel(link, here).is_some() {
            bail!(
                "--tap {end}: its link is a tunnel between machines; capture it on their network (UDP port {})",
                topology.vxlan.port
            );
        }
    }
    Ok(topology.links.iter().map(|link| taps.iter().any(|end| link.has_end(end))).collect())
}

/// pfcswitchd's `--cable` for each port of `switch` whose link has a delay or a loss: a port
/// facing a host emulates both ways, one facing a switch what it sends (the other switch's
/// port emulates the other way), so every link is delayed once each way.
fn cables(topology: &Topology, switch: &str) -> Vec<String> {
    let emulated = topology.ports_of(switch).filter(|(_, link)| !link.delay.is_zero() || link.loss > 0.0);
    emulated
        .map(|(port, link)| {
            let ways = if link.is_trunk() { "out" } else { "both" };
            let delay = pfcswitch_link::units::format_duration(link.delay);
            format!("--cable={port}:{delay}:{}:{ways}", link.loss)
        })
        .collect()
}

/// Each switch's config file, checked as pfcswitchd checks it before anything is built; port
/// speeds that differ from the links', and link delays its headroom does not cover, are
/// warned about (the daemon shapes each port at its config's speed).
fn switch_configs(topology: &Topology, options: &UpOptions) -> Result<Vec<PathBuf>> {
    let (paths, loaded): (Vec<PathBuf>, Vec<SwitchConfig>) = load_configs(topology, options)?.into_iter().unzip();
    check_flooding(topology, &loaded)?;
    Ok(paths)
}

/// Refuses `topology` if, with `configs` (one per switch, in order), frames flooded by a
/// switch come back to it ([`Topology::check_flooding`]).
pub fn check_flooding(topology: &Topology, configs: &[SwitchConfig]) -> Result<()> {
    let floods = |switch: &str, port: &str| {
        let index = topology.switches.iter().position(|s| s == switch);
        index.is_some_and(|i| configs[i].ports.iter().any(|p| p.name == port && p.flooding))
    };
    Ok(topology.check_flooding(floods)?)
}

/// Each switch's config file, loaded and checked as the daemon will, in switch order.
fn load_configs(topology: &Topology, options: &UpOptions) -> Result<Vec<(PathBuf, SwitchConfig)>> {
    let from = options.configs.as_ref().or(topology.configs.as_ref()).with_context(|| {
        format!("{}: names no `configs`; give the switches' configs (--config-dir)", topology.file.display())
    })?;
    topology
        .switches
        .iter()
        .map(|switch| {
            let config = if from.is_dir() { from.join(format!("{switch}.toml")) } else { from.clone() };
            if !config.is_file() {
                bail!("no config for {switch}: {} is not a file", config.display());
            }
            // The daemon's own check, before anything is built.
            let (switch_config, _) = pfcswitchd::config::load(&config).map_err(|error| anyhow!("{switch}: {error}"))?;
            daemons::warn_link_mismatch(topology, switch, &config, &switch_config);
            Ok((config, switch_config))
        })
        .collect()
}
