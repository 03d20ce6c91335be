//! A description as a file of the format `file.rs` reads: what a generated fabric writes
//! beside its run, so that `pfcswitch topology up` can build it again.

use super::description::{Link, Topology, VxlanSettings};
use super::file::DEFAULT_MTU;
use pfcswitch_link::units::{BitRate, format_duration};
use std::collections::HashMap;
use std::fmt::Write;

impl Topology {
    /// The description as TOML: the most common link speed under `[defaults]`, each link as
    /// `"A B"` or, where it differs from the defaults, a table; `configs` as an absolute path.
    pub fn to_toml(&self) -> String {
        let speed = common_speed(&self.links);
        let quoted = |names: &[String]| names.iter().map(|n| format!("{n:?}")).collect::<Vec<_>>().join(", ");
        let mut text = String::new();
        let _ = writeln!(text, "description = {:?}", self.description);
        if let Some(configs) = &self.configs {
            let _ = writeln!(text, "configs = {:?}", configs.display().to_string());
        }
        let _ = writeln!(text, "switches = [{}]", quoted(&self.switches));
        let _ = writeln!(text, "hosts = [{}]", quoted(&self.hosts));
        text.push_str("links = [\n");
        for link in &self.links {
            let _ = writeln!(text, "  {},", link_entry(link, speed));
        }
        text.push_str("]\n");
        if let Some(speed) = speed {
            let _ = write!(text, "\n[defaults]\nspeed = \"{speed}\"\n");
        }
        if !self.interfaces.is_empty() {
            text.push_str("\n[interfaces]\n");
            for interface in &self.interfaces {
                let _ = writeln!(text, "\"{}\" = {:?}", interface.end, interface.iface);
            }
        }
        if !self.machines.is_empty() {
            text.push_str("\n[machines]\n");
            for machine in &self.machines {
                let address = machine.address.to_string();
                let _ = writeln!(
                    text,
                    "{} = {{ address = {address:?}, switches = [{}] }}",
                    machine.name,
                    quoted(&machine.switches)
                );
            }
            if self.vxlan != VxlanSettings::default() {
                let _ = write!(text, "\n[vxlan]\nport = {}\nvni = {}\n", self.vxlan.port, self.vxlan.first_vni);
            }
        }
        text
    }
}

fn common_speed(links: &[Link]) -> Option<BitRate> {
    let mut counts: HashMap<BitRate, usize> = HashMap::new();
    links.iter().for_each(|link| *counts.entry(link.speed).or_default() += 1);
    counts.into_iter().max_by_key(|&(speed, count)| (count, speed)).map(|(speed, _)| speed)
}

fn link_entry(link: &Link, default_speed: Option<BitRate>) -> String {
    let mut attributes = Vec::new();
    if Some(link.speed) != default_speed {
        attributes.push(format!("speed = \"{}\"", link.speed));
    }
    if !link.delay.is_zero() {
        attributes.push(format!("delay = \"{}\"", format_duration(link.delay)));
    }
    if link.loss > 0.0 {
        attributes.push(format!("loss = {}", link.loss));
    }
    if link.mtu != DEFAULT_MTU {
        attributes.push(format!("mtu = {}", link.mtu));
    }
    match attributes.is_empty() {
        true => format!("\"{} {}\"", link.a, link.b),
        false => format!("{{ a = \"{}\", b = \"{}\", {} }}", link.a, link.b, attributes.join(", ")),
    }
}
