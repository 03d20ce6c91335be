//! The file format (`docs/topology.md`): top-level `switches`, `hosts`, `links` and
//! `configs`, and a `[defaults]` table for what links leave out. A link is a string of its two
//! ends (`"sw1:p1 h1"`) or a table with its own attributes
//! (`{ a = "sw1:p6", b = "sw2:p1", speed = "40Gbps", delay = "2us", loss = 0.001 }`). An
//! `[interfaces]` table binds switch ports to interfaces that exist already
//! (`"sw1:p4" = "enp3s0"`).

use super::description::{End, Interface, Link, MAX_VNI, Machine, Topology, VxlanSettings};
use super::error::{TopologyError, line_at};

use pfcswitch_link::units::{BitRate, parse_duration};
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::path::Path;
use std::time::Duration;
use toml::Spanned;

/// The MTU of a link that says none, with no `[defaults] mtu`.
pub const DEFAULT_MTU: u32 = 1500;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileRepr {
    #[serde(default)]
    description: String,
    switches: Vec<Spanned<String>>,
    #[serde(default)]
    hosts: Vec<Spanned<String>>,
    links: Vec<Spanned<toml::Value>>,
    configs: Option<String>,
    #[serde(default)]
    defaults: Attributes,
    #[serde(default)]
    interfaces: BTreeMap<String, String>,
    #[serde(default)]
    machines: BTreeMap<String, MachineRepr>,
    vxlan: Option<VxlanRepr>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MachineRepr {
    address: IpAddr,
    switches: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct VxlanRepr {
    port: Option<u16>,
    vni: Option<u32>,
}

/// What a link may set, and `[defaults]` for every link.
#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Attributes {
    speed: Option<BitRate>,
    delay: Option<String>,
    loss: Option<f64>,
    mtu: Option<u32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LinkTable {
    a: String,
    b: String,
    speed: Option<BitRate>,
    delay: Option<String>,
    loss: Option<f64>,
    mtu: Option<u32>,
}

/// The line each switch and host is named on, for the checks that refuse a node.
pub(crate) type NodeLines = HashMap<String, usize>;

pub(crate) fn parse(text: &str, file: &Path) -> Result<(Topology, NodeLines), TopologyError> {
    let refuse = |line: Option<usize>, reason: String| TopologyError::new(file, line, reason);
    let repr: FileRepr = toml::from_str(text)
        .map_err(|e| refuse(e.span().map(|s| line_at(text, s.start)), e.message().trim().to_string()))?;
    let mut node_lines = NodeLines::new();
    for node in repr.switches.iter().chain(&repr.hosts) {
        node_lines.entry(node.get_ref().clone()).or_insert_with(|| line_at(text, node.span().start));
    }
    let defaults_line = text.lines().position(|l| l.trim() == "[defaults]").map(|i| i + 1);
    let default_delay = parse_delay(repr.defaults.delay.as_deref())
        .map_err(|reason| refuse(defaults_line, format!("defaults.delay: {reason}")))?;
    let mut links = Vec::with_capacity(repr.links.len());
    for entry in &repr.links {
        let line = line_at(text, entry.span().start);
        let table = link_table(entry.get_ref()).map_err(|reason| refuse(Some(line), reason))?;
        let speed = table.speed.or(repr.defaults.speed).ok_or_else(|| {
            refuse(Some(line), format!("link {} {} has no speed, and [defaults] sets none", table.a, table.b))
        })?;
        let delay = match table.delay.as_deref() {
            Some(delay) => parse_delay(Some(delay)).map_err(|reason| refuse(Some(line), format!("delay: {reason}")))?,
            None => default_delay,
        };
        let (a, b) = (parse_end(&table.a), parse_end(&table.b));
        // A host link is written switch end first, whichever order the file has.
        let (a, b) = if matches!(a, End::Host(_)) && matches!(b, End::Port { .. }) { (b, a) } else { (a, b) };
        links.push(Link {
            a,
            b,
            speed,
            delay,
            loss: table.loss.or(repr.defaults.loss).unwrap_or(0.0),
            mtu: table.mtu.or(repr.defaults.mtu).unwrap_or(DEFAULT_MTU),
            line,
        });
    }
    let interfaces = repr
        .interfaces
        .into_iter()
        .map(|(end, iface)| {
            let line = key_line(text, "[interfaces]", &end);
            Interface { end: parse_end(&end), iface, line }
        })
        .collect();
    let machines = repr
        .machines
        .into_iter()
        .map(|(name, m)| {
            let line = key_line(text, "[machines]", &name);
            Machine { name, address: m.address, switches: m.switches, line }
        })
        .collect();
    let defaults = VxlanSettings::default();
    let vxlan = repr.vxlan.map_or(defaults, |v| VxlanSettings {
        port: v.port.unwrap_or(defaults.port),
        first_vni: v.vni.unwrap_or(defaults.first_vni),
    });
    if vxlan.first_vni == 0 || u64::from(vxlan.first_vni) + links.len() as u64 > u64::from(MAX_VNI) {
        let line = text.lines().position(|l| l.trim() == "[vxlan]").map(|i| i + 1);
        let reason = format!("vxlan.vni = {}: the tunnels need VNIs 1..={MAX_VNI}, one per link", vxlan.first_vni);
        return Err(refuse(line, reason));
    }
    let base = file.parent().unwrap_or(Path::new("."));
    let topology = Topology {
        name: file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default(),
        file: file.to_path_buf(),
        description: repr.description,
        switches: repr.switches.into_iter().map(Spanned::into_inner).collect(),
        hosts: repr.hosts.into_iter().map(Spanned::into_inner).collect(),
        links,
        interfaces,
        machines,
        vxlan,
        configs: repr.configs.map(|c| base.join(&c).canonicalize().unwrap_or_else(|_| base.join(c))),
    };
    Ok((topology, node_lines))
}

/// A `links` entry as a table: `"A B"` is `{ a = "A", b = "B" }`.
fn link_table(value: &toml::Value) -> Result<LinkTable, String> {
    match value {
        toml::Value::String(ends) => match ends.split_whitespace().collect::<Vec<_>>()[..] {
            [a, b] => Ok(LinkTable { a: a.into(), b: b.into(), speed: None, delay: None, loss: None, mtu: None }),
            _ => Err(format!("link \"{ends}\" must be two ends separated by a space, as \"sw1:p1 h1\"")),
        },
        toml::Value::Table(table) => {
            toml::Value::Table(table.clone()).try_into().map_err(|e: toml::de::Error| e.message().trim().to_string())
        }
        other => Err(format!("a link is \"A B\" or a table {{ a = .., b = .. }}, not a {}", other.type_str())),
    }
}

fn parse_delay(delay: Option<&str>) -> Result<Duration, String> {
    delay.map_or(Ok(Duration::ZERO), |d| parse_duration(d).map_err(|e| e.to_string()))
}

/// `sw1:p1` is a switch port; a name without `:` is a host.
fn parse_end(end: &str) -> End {
    match end.split_once(':') {
        Some((switch, port)) => End::Port { switch: switch.into(), port: port.into() },
        None => End::Host(end.into()),
    }
}

/// The line of `key` (written `"key"` or `key =`) in the table `header`, or the header's
/// line: where a refusal of that entry points.
fn key_line(text: &str, header: &str, key: &str) -> usize {
    let Some(start) = text.lines().position(|l| l.trim() == header) else { return 0 };
    let quoted = format!("\"{key}\"");
    let names_key = |l: &str| {
        let l = l.trim_start();
        l.starts_with(&quoted) || l.strip_prefix(key).is_some_and(|rest| rest.trim_start().starts_with('='))
    };
    text.lines().enumerate().skip(start + 1).find(|(_, l)| names_key(l)).map_or(start + 1, |(i, _)| i + 1)
}
