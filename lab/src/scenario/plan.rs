//! A scenario file (TOML): its topology, the switches' configs, a policy, the hosts' NIC
//! speed and transport, and a workload (`[[class]]` tables, see `crate::workload`); where
//! built-in ones live and how one is read. What a run makes of it is the run files'.

use super::fabric::FabricSpec;
use super::policy::RunPolicy;
use super::schemes::{FecnSpec, QcnSpec};
use super::sets::{Applied, apply, blame, struct_fields};
use crate::workload::{ClassSpec, StormSpec};
use anyhow::{Context, Result, bail};
use pfcswitch_hosts::{DctcpParams, TransportConfig};
use pfcswitch_link::time::Instant;
use pfcswitch_link::units::{BitRate, duration};
use pfcswitch_wire::{EthernetAddress, Ipv4Addr};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

pub use crate::repository::root;
use std::time::Duration;

/// A scenario file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub name: String,
    pub description: String,
    /// A topology of netns-scripts/topology.sh, or `fabric`: the one `[fabric]` generates
    /// (simulator only).
    pub topology: String,
    /// Switch name → config file, relative to the scenario file (not for a fabric).
    #[serde(default)]
    pub switches: BTreeMap<String, PathBuf>,
    #[serde(default)]
    pub fabric: Option<FabricSpec>,
    #[serde(default)]
    pub policy: RunPolicy,
    /// The hosts' emulated NIC speed.
    pub speed: BitRate,
    /// IP MTU of every link and switch port (default 1500). Larger frames cost the copy-mode
    /// datapath less per byte: the 1 Gbit/s scenarios use RoCE's 4096-class MTU of 3000.
    #[serde(default = "default_mtu")]
    pub mtu: u32,
    /// How long the workload generates traffic; long-lived flows stop at its end.
    #[serde(with = "duration")]
    pub duration: Duration,
    /// How long sized messages may take to finish after that before the run gives up.
    #[serde(with = "duration", default = "default_drain")]
    pub drain: Duration,
    /// Period of the queue-depth samples.
    #[serde(with = "duration", default = "default_sample")]
    pub sample: Duration,
    /// One-way delay of every cable in the simulator (default 1 µs); namespaces have veths.
    #[serde(with = "duration", default = "default_cable")]
    pub cable: Duration,
    #[serde(default)]
    pub transport: TransportSpec,
    /// QCN in the switches and hosts, unless `--qcn off`.
    #[serde(default)]
    pub qcn: Option<QcnSpec>,
    /// FECN in the switches and hosts, unless `--fecn off`.
    #[serde(default)]
    pub fecn: Option<FecnSpec>,
    /// Merged into every switch's config (e.g. `pfc = { xoff = "100KB" }`); every port's
    /// `speed` and `mtu` are the scenario's.
    #[serde(default)]
    pub overrides: toml::Table,
    #[serde(rename = "class")]
    pub classes: Vec<ClassSpec>,
    /// Hosts that storm: PFC XOFF towards their switch for a while, as a broken NIC sends.
    #[serde(rename = "storm", default)]
    pub storms: Vec<StormSpec>,
    /// The `--set KEY=VALUE`s applied to the file before it was read (see `sets`), for
    /// `results.json`.
    #[serde(skip)]
    pub sets: Vec<String>,
}

impl Scenario {
    /// Its topology as listings show it: a topology.sh name, or the fabric's parameters.
    pub fn topology_label(&self) -> String {
        self.fabric.as_ref().map_or_else(|| self.topology.clone(), FabricSpec::label)
    }

    /// The priorities its classes use, each once, ascending: what the queue sampler records.
    pub fn priorities(&self) -> Vec<u8> {
        let set: std::collections::BTreeSet<u8> = self.classes.iter().map(|c| c.priority).collect();
        set.into_iter().collect()
    }
}

fn default_mtu() -> u32 {
    1500
}

fn default_drain() -> Duration {
    Duration::from_secs(20)
}

fn default_cable() -> Duration {
    Duration::from_micros(1)
}

fn default_sample() -> Duration {
    Duration::from_millis(10)
}

/// `[transport]`: the endpoints' go-back-N transport (defaults: `TransportConfig::new`). The
/// runner hands it to each endpoint in its plan; the simulator uses it directly.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct TransportSpec {
    /// Frame length of a full segment, without FCS (default: the MTU plus a tagged header).
    pub frame_len: Option<usize>,
    pub window: u32,
    #[serde(with = "duration")]
    pub rto: Duration,
    pub ack_every: u32,
    /// Width of the goodput bins of the throughput plot.
    #[serde(with = "duration")]
    pub bin: Duration,
    /// The hosts' NICs obey OFC PAUSE frames per flow (OFC-aware NICs) instead of as the
    /// PFC pause of the priority (RoCE NICs, the default).
    pub ofc_per_flow: bool,
    /// DCTCP senders (`dctcp = {}` for the defaults: g = 1/16, 10 segments to start): data
    /// goes out ECT(0) and windows follow the switches' CE marks (`[ecn]` in `overrides`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dctcp: Option<DctcpParams>,
}

impl Default for TransportSpec {
    fn default() -> Self {
        let defaults = TransportConfig::new(EthernetAddress([2, 0, 0, 0, 0, 1]), Ipv4Addr::LOCALHOST, BitRate::gbps(1));
        TransportSpec {
            frame_len: None,
            window: defaults.window,
            rto: defaults.rto,
            ack_every: defaults.ack_every,
            bin: defaults.bin,
            ofc_per_flow: false,
            dctcp: None,
        }
    }
}

impl TransportSpec {
    /// The core transport's settings for one host of a run: a full segment is an MTU-sized
    /// IPv4 packet in a tagged frame unless `frame_len` says otherwise.
    pub fn config(
        &self,
        mac: EthernetAddress,
        ip: Ipv4Addr,
        mtu: u32,
        speed: BitRate,
        epoch: Instant,
        end: Instant,
    ) -> TransportConfig {
        TransportConfig {
            frame_len: self.frame_len.unwrap_or(mtu as usize + pfcswitch_switch::config::L2_HEADER_MAX as usize),
            window: self.window,
            rto: self.rto,
            ack_every: self.ack_every,
            bin: self.bin,
            epoch,
            long_lived_until: end,
            dctcp: self.dctcp,
            ..TransportConfig::new(mac, ip, speed)
        }
    }
}

fn builtin_dir() -> PathBuf {
    root().join("scenarios")
}

/// Reads a scenario by built-in name or path; returns it with its file.
pub fn load(name_or_file: &str) -> Result<(Scenario, PathBuf)> {
    load_with(name_or_file, &[])
}

/// Reads a scenario by built-in name or path with `sets` (`KEY=VALUE`, see `sets`) applied
/// to its table first; returns it with its file.
pub fn load_with(name_or_file: &str, sets: &[String]) -> Result<(Scenario, PathBuf)> {
    let builtin = builtin_dir().join(format!("{name_or_file}.toml"));
    let path = if builtin.is_file() { builtin } else { PathBuf::from(name_or_file) };
    if !path.is_file() {
        bail!("no scenario `{name_or_file}`: not a built-in one (see `pfcswitch scenario list`) nor a file");
    }
    let text = std::fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
    let file = path.display();
    let mut scenario: Scenario = if sets.is_empty() {
        // From the text, so that an error points at its line.
        toml::from_str(&text).map_err(|e| anyhow::anyhow!("{file}: {e}"))?
    } else {
        let mut table: toml::Table = text.parse().map_err(|e| anyhow::anyhow!("{file}: {e}"))?;
        let keys = struct_fields::<Scenario>();
        let applied: Vec<Applied> = sets.iter().map(|set| apply(&mut table, set, keys)).collect::<Result<_>>()?;
        serde_path_to_error::deserialize(toml::Value::Table(table)).map_err(|e| {
            let culprits = blame(&applied, &e.path().to_string()).join(" --set ");
            anyhow::anyhow!("{file} with --set {culprits}: {}: {}", e.path(), e.inner().message().trim())
        })?
    };
    scenario.sets = sets.to_vec();
    Ok((scenario, path))
}

/// `pfcswitch scenario list`: the built-in scenarios as a table.
pub fn list() -> Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(builtin_dir())
        .with_context(|| format!("cannot list {}", builtin_dir().display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    entries.sort();
    let mut table = crate::table::Table::new(&["NAME", "TOPOLOGY", "POLICY", "DESCRIPTION"]);
    for path in entries {
        let (scenario, _) = load(&path.to_string_lossy())?;
        table.row(vec![
            scenario.name.clone(),
            scenario.topology_label(),
            scenario.policy.name().into(),
            scenario.description,
        ]);
    }
    table.print();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn sets_apply_to_the_file_before_it_is_read() {
        let sets =
            ["duration=50ms", "transport.window=32", "class.query.rate=10.0", "pfc.xoff=100KB"].map(String::from);
        let (scenario, file) = load_with("incast", &sets).unwrap();
        assert_eq!(scenario.duration, Duration::from_millis(50));
        assert_eq!(scenario.transport.window, 32);
        assert_eq!(scenario.classes[0].rate, Some(10.0));
        assert_eq!(scenario.overrides["pfc"]["xoff"].as_str(), Some("100KB"));
        assert_eq!(scenario.sets, sets);
        // Relative paths are still the file's.
        assert!(file.ends_with("scenarios/incast.toml"));
        assert_eq!(scenario.switches["sw1"], Path::new("../configs/default.toml"));
        assert!(load("incast").unwrap().0.sets.is_empty());
    }

    #[test]
    fn a_bad_nested_key_names_its_set() {
        let sets = ["duration=1s", "transport.windw=3"].map(String::from);
        let error = load_with("incast", &sets).unwrap_err().to_string();
        assert!(error.contains("with --set transport.windw=3: transport.windw: unknown field `windw`"), "{error}");
        assert!(!error.contains("duration=1s"), "{error}");
        let error = load_with("incast", &["duration=soon".into()]).unwrap_err().to_string();
        assert!(error.contains("with --set duration=soon: duration:"), "{error}");
    }

    #[test]
    fn sets_know_the_scenario_files_keys() {
        let keys = struct_fields::<Scenario>();
        for key in ["name", "duration", "transport", "overrides", "class", "storm"] {
            assert!(keys.contains(&key), "{key} missing from {keys:?}");
        }
        assert!(!keys.contains(&"sets") && !keys.contains(&"classes"));
    }
}
