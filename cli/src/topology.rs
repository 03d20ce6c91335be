//! `pfcswitch topology`: topology descriptions (`docs/topology.md`) listed, described, built
//! on namespaces and torn down, by `pfcswitch_lab::netns`.

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use pfcswitch_lab::netns::{self, Scheduling, UpOptions};
use pfcswitch_lab::repository::{daemon_binary, topologies_dir};
use pfcswitch_link::units::BitRate;
use pfcswitch_topology::{Topology, builtins};
use serde_json::json;
use std::path::PathBuf;

#[derive(Debug, Subcommand)]
pub enum TopologyCommand {
    /// The built-in topologies (topologies/*.toml in the checkout).
    List,
    /// A topology's switches, hosts and links (a built-in name or a file).
    Describe { topology: String },
    /// Build it: a namespace per node, a veth pair per link, one pfcswitchd per switch.
    Up(UpArgs),
    /// Stop its daemons and remove every namespace `up` made under the prefix.
    Down(Named),
    /// Delete and create again the veth pair at END (`sw1:p2`): a cable or NIC replaced.
    Relink {
        #[command(flatten)]
        named: Named,
        end: String,
    },
}

#[derive(Debug, Args)]
pub struct Named {
    /// A built-in name or a file.
    topology: String,
    /// Prepended to every namespace name.
    #[arg(long, default_value = "pfc-")]
    prefix: String,
    /// The machine (of the description's `[machines]`) whose part this is; its links to the
    /// other machines are VXLAN tunnels (default: all of it, here).
    #[arg(long)]
    machine: Option<String>,
}

#[derive(Debug, Args)]
pub struct UpArgs {
    #[command(flatten)]
    named: Named,
    /// The switches' configs: one file for all, or a directory of SWITCH.toml (default: the
    /// description's `configs`).
    #[arg(long = "config-dir", alias = "config", value_name = "PATH")]
    configs: Option<PathBuf>,
    /// Namespaces and links only, no pfcswitchd.
    #[arg(long)]
    no_daemon: bool,
    /// Every link's MTU, instead of the description's.
    #[arg(long)]
    mtu: Option<u32>,
    /// Every link's speed, instead of the description's.
    #[arg(long)]
    speed: Option<BitRate>,
    /// Build the link at END (`sw1:p3`, or a host) through a tap namespace PREFIXtap-SW-PORT,
    /// where tcpdump on end-a sees both directions. Repeatable.
    #[arg(long = "tap", value_name = "END")]
    taps: Vec<String>,
    /// pfcswitchd's --spin.
    #[arg(long, default_value = "0us")]
    spin: String,
    /// pfcswitchd's --nice: the forwarding loops' nice value.
    #[arg(long, value_name = "NICE", default_value_t = -20, allow_negative_numbers = true,
          value_parser = clap::value_parser!(i8).range(-20..=19))]
    nice: i8,
    /// pfcswitchd's --realtime: the forwarding loops under SCHED_FIFO at this priority (off
    /// unless given; see docs/pfcswitchd.md for what it costs on veth).
    #[arg(long, value_name = "PRIORITY", value_parser = clap::value_parser!(u8).range(1..=99))]
    realtime: Option<u8>,
}

pub fn run(command: TopologyCommand, json: bool) -> Result<()> {
    let dir = topologies_dir();
    let find = |name: &str| Topology::find(name, &dir).map_err(anyhow::Error::from);
    match command {
        TopologyCommand::List => {
            let names = builtins(&dir);
            if json {
                println!("{}", json!(names));
            }
            for name in names.iter().filter(|_| !json) {
                let description = find(name).map(|t| t.description).unwrap_or_else(|e| format!("{e:#}"));
                println!("{name:<16} {description}");
            }
            Ok(())
        }
        TopologyCommand::Describe { topology } => {
            describe(&find(&topology)?, json);
            Ok(())
        }
        TopologyCommand::Up(args) => {
            let mut topology = find(&args.named.topology)?;
            args.speed.inspect(|&speed| topology.set_speed(speed));
            args.mtu.inspect(|&mtu| topology.set_mtu(mtu));
            let daemon = match args.no_daemon {
                true => None,
                false => Some(daemon_binary().context("pfcswitchd not found (build it, or set PFCSWITCHD)")?),
            };
            let options = UpOptions {
                prefix: args.named.prefix,
                configs: args.configs,
                daemon,
                scheduling: Scheduling { spin: args.spin, nice: args.nice, realtime: args.realtime },
                taps: args.taps,
                machine: args.named.machine,
            };
            netns::up(&topology, &options).with_context(|| format!("topology up {}", topology.name))
        }
        TopologyCommand::Down(named) => netns::down(&find(&named.topology)?, &named.prefix, named.machine.as_deref()),
        TopologyCommand::Relink { named, end } => {
            netns::relink(&find(&named.topology)?, &named.prefix, named.machine.as_deref(), &end)
        }
    }
}

/// The first three lines (`switches …`, `hosts …`, `links sw1:p1-h1 …`) are for scripts; then
/// each link's attributes, the existing interfaces and the machines with their tunnels.
fn describe(topology: &Topology, json: bool) {
    if json {
        let hosts: Vec<_> = topology
            .hosts
            .iter()
            .map(|host| {
                let a = topology.host_addresses(host).expect("a described host");
                json!({"name": host, "mac": a.mac.to_string(), "ipv4": a.ipv4.to_string(), "ipv6": a.ipv6.to_string()})
            })
            .collect();
        let links: Vec<_> = topology
            .links
            .iter()
            .map(|l| {
                json!({"a": l.a.to_string(), "b": l.b.to_string(), "speed": l.speed.to_string(),
                    "delay_ns": l.delay.as_nanos() as u64, "loss": l.loss, "mtu": l.mtu})
            })
            .collect();
        let configs = topology.configs.as_ref().map(|c| c.display().to_string());
        let interfaces: Vec<_> =
            topology.interfaces.iter().map(|i| json!({"port": i.end.to_string(), "iface": i.iface})).collect();
        let machines: Vec<_> = topology
            .machines
            .iter()
            .map(|m| json!({"name": m.name, "address": m.address.to_string(), "switches": m.switches}))
            .collect();
        println!(
            "{}",
            json!({"name": topology.name, "file": topology.file.display().to_string(), "description": topology.description,
                "configs": configs, "switches": topology.switches, "hosts": hosts, "links": links,
                "interfaces": interfaces, "machines": machines,
                "vxlan": {"port": topology.vxlan.port, "first_vni": topology.vxlan.first_vni}})
        );
        return;
    }
    println!("switches {}", topology.switches.join(" "));
    println!("hosts {}", topology.hosts.join(" "));
    println!("links {}", topology.links.iter().map(|l| l.name()).collect::<Vec<_>>().join(" "));
    println!();
    println!("{:<12} {:<12} {:>12} {:>10} {:>8} {:>6}", "a", "b", "speed", "delay", "loss", "mtu");
    for link in &topology.links {
        let delay = pfcswitch_link::units::format_duration(link.delay);
        let (a, b) = (link.a.to_string(), link.b.to_string());
        println!("{a:<12} {b:<12} {:>12} {delay:>10} {:>8} {:>6}", link.speed.to_string(), link.loss, link.mtu);
    }
    if !topology.interfaces.is_empty() {
        println!();
        println!("{:<12} interface", "port");
        for interface in &topology.interfaces {
            println!("{:<12} {}", interface.end.to_string(), interface.iface);
        }
    }
    if !topology.machines.is_empty() {
        println!();
        println!("{:<12} {:<24} switches", "machine", "address");
        for machine in &topology.machines {
            println!("{:<12} {:<24} {}", machine.name, machine.address.to_string(), machine.switches.join(" "));
        }
        for link in &topology.links {
            let machine = topology.machine_of(link.a.node()).map(|m| m.name.as_str());
            if let Some(tunnel) = topology.tunnel(link, machine) {
                println!("tunnel {} vni {} udp {}", link.name(), tunnel.vni, tunnel.port);
            }
        }
    }
}
