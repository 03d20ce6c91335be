//! The switch configs of a run: each switch's file with the scenario's overrides, port speed
//! and MTU, the run's policy and the sections its scheme modes overlay, written into the
//! run's `configs/` (a fabric's generated from its one config); and what the switches, once
//! configured, ask of the hosts ([`InForce`]).

use super::args::Modes;
use super::plan::Scenario;
use super::policy::RunPolicy;
use super::schemes::{CcMode, DEFAULT_PROBE_INTERVAL, DcqcnMode, FecnMode, PfcwdMode, QcnMode};
use anyhow::{Context, Result};
use pfcswitch_hosts::{FecnReaction, QcnReaction};
use pfcswitch_sim::fabric::Fabric;
use pfcswitch_switch::config::SwitchConfig;
use std::path::Path;
use std::time::Duration;

/// Merges `overrides` into `table`, table by table.
fn merge(table: &mut toml::Table, overrides: &toml::Table) {
    for (key, value) in overrides {
        match (table.get_mut(key), value) {
            (Some(toml::Value::Table(inner)), toml::Value::Table(more)) => merge(inner, more),
            _ => {
                table.insert(key.clone(), value.clone());
            }
        }
    }
}

/// Merges `keys` into `table`'s `[section]`.
pub(super) fn merge_section(table: &mut toml::Table, section: &str, keys: toml::Table) {
    merge(table, &toml::Table::from_iter([(section.to_string(), toml::Value::Table(keys))]));
}

/// A switch config file with the scenario's overrides, port speed and MTU, the run's policy
/// and, if given, its PFC watchdog, QCN and FECN modes. With `cable` (the simulator's cable
/// delay) `pfc.cable_delay` is that delay unless the file or the overrides set it: the
/// headroom a switch computes, or checks `pfc.max` against, is that of the links it has.
fn merged_config(
    scenario: &Scenario,
    path: &Path,
    policy: &RunPolicy,
    modes: &Modes,
    cable: Option<Duration>,
) -> Result<toml::Table> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut table: toml::Table = text.parse().with_context(|| format!("{}", path.display()))?;
    merge(&mut table, &scenario.overrides);
    let sets_cable =
        table.get("pfc").and_then(toml::Value::as_table).is_some_and(|pfc| pfc.contains_key("cable_delay"));
    if let Some(cable) = cable.filter(|_| !sets_cable) {
        let delay = toml::Value::String(pfcswitch_link::units::format_duration(cable));
        merge_section(&mut table, "pfc", toml::Table::from_iter([("cable_delay".to_string(), delay)]));
    }
    merge_section(&mut table, "policy", policy.config_keys());
    for (section, keys) in modes.config_keys(scenario) {
        merge_section(&mut table, section, keys);
    }
    if let Some(ports) = table.get_mut("port").and_then(toml::Value::as_array_mut) {
        for port in ports.iter_mut().filter_map(toml::Value::as_table_mut) {
            port.insert("speed".into(), toml::Value::String(scenario.speed.to_string()));
            port.insert("mtu".into(), toml::Value::Integer(scenario.mtu.into()));
        }
    }
    Ok(table)
}

/// Writes each switch's config (see [`merged_config`]) into `dir`; a fabric's are generated
/// from its one `switch` config.
pub(super) fn write_configs(
    scenario: &Scenario,
    file: &Path,
    policy: &RunPolicy,
    modes: &Modes,
    fabric: Option<&Fabric>,
    cable: Option<Duration>,
    dir: &Path,
) -> Result<()> {
    let base = file.parent().unwrap_or(Path::new("."));
    if let (Some(fabric), Some(spec)) = (fabric, &scenario.fabric) {
        let table = merged_config(scenario, &base.join(&spec.switch), policy, modes, cable)?;
        return super::fabric::write_configs(fabric, &table, dir);
    }
    for (switch, config) in &scenario.switches {
        let table = merged_config(scenario, &base.join(config), policy, modes, cable)
            .with_context(|| format!("switch {switch}"))?;
        std::fs::write(dir.join(format!("{switch}.toml")), toml::to_string(&table)?)?;
    }
    Ok(())
}

impl Modes {
    /// The sections this run overlays on every switch config (name, keys).
    pub fn config_keys(&self, scenario: &Scenario) -> Vec<(&'static str, toml::Table)> {
        let mut sections = Vec::new();
        sections.extend(self.pfcwd.map(|mode| ("pfcwd", mode.config_keys())));
        let qcn_spec = scenario.qcn.as_ref().map(|s| &s.switch);
        let qcn_mode = self.qcn.map(|mode| match mode {
            QcnMode::Off => None,
            QcnMode::On { cp, sampling } => {
                let mut keys = toml::Table::from_iter([("cp".into(), toml::Value::String(cp.name().into()))]);
                if let Some(sampling) = sampling {
                    keys.insert("sampling".into(), toml::Value::String(sampling.name().into()));
                }
                Some(keys)
            }
        });
        sections.extend(scheme_keys(scenario, qcn_mode, qcn_spec).map(|keys| ("qcn", keys)));
        let fecn_spec = scenario.fecn.as_ref().map(|s| &s.switch);
        let fecn_mode = self.fecn.or(scenario.fecn.as_ref().and_then(|s| s.mode)).map(|mode| match mode {
            FecnMode::Off => None,
            FecnMode::On { control, stages, gamma } => {
                let mut keys = toml::Table::from_iter([("control".into(), toml::Value::String(control.name().into()))]);
                keys.extend(stages.map(|n| ("stages".into(), toml::Value::Integer(n.into()))));
                keys.extend(gamma.map(|g| ("gamma".into(), toml::Value::Float(g))));
                Some(keys)
            }
        });
        sections.extend(scheme_keys(scenario, fecn_mode, fecn_spec).map(|keys| ("fecn", keys)));
        // Only for a flag: a scenario's own control keeps the marking its switch configs have.
        let dcqcn = self.dcqcn == Some(DcqcnMode::On) || matches!(self.cc, Some(CcMode::Dcqcn | CcMode::DcqcnW));
        if dcqcn && !scenario.overrides.contains_key("ecn") {
            sections.push(("ecn", dcqcn_marking(scenario)));
        }
        if self.cc == Some(CcMode::Dctcp) && !scenario.overrides.contains_key("ecn") {
            sections.push(("ecn", on_the_classes(scenario)));
        }
        if scenario.transport.hpcc.is_some() && !scenario.overrides.contains_key("int") {
            sections.push(("int", on_the_classes(scenario)));
        }
        sections
    }
}

/// A scheme's section for every switch: `mode` is `Some(None)` for off (no priorities),
/// `Some(Some(keys))` for on with `keys`, `None` for the scenario's `spec` as written (or
/// nothing without one). `priorities` defaults to the classes' priorities.
fn scheme_keys(
    scenario: &Scenario,
    mode: Option<Option<toml::Table>>,
    spec: Option<&toml::Table>,
) -> Option<toml::Table> {
    let mut keys = match (&mode, spec) {
        (Some(None), _) => {
            return Some(toml::Table::from_iter([("priorities".to_string(), toml::Value::Array(Vec::new()))]));
        }
        (None, None) => return None,
        (_, spec) => spec.cloned().unwrap_or_default(),
    };
    if !keys.contains_key("priorities") {
        let priorities = scenario.priorities().into_iter().map(|p| toml::Value::Integer(p.into())).collect();
        keys.insert("priorities".into(), toml::Value::Array(priorities));
    }
    keys.extend(mode.flatten().unwrap_or_default());
    Some(keys)
}

/// What the switches of a run, once configured, ask of its hosts.
#[derive(Clone, Debug)]
pub struct InForce {
    /// `off`, a mode, or `mixed` when switches differ.
    pub pfcwd: &'static str,
    pub qcn: String,
    pub fecn: String,
    pub qcn_reaction: Option<QcnReaction>,
    pub fecn_reaction: Option<FecnReaction>,
}

impl InForce {
    pub fn of(scenario: &Scenario, configs: &[SwitchConfig]) -> InForce {
        fn common<T: Ord + Clone + From<&'static str>>(names: impl Iterator<Item = T>) -> T {
            let set: std::collections::BTreeSet<T> = names.collect();
            if set.len() == 1 { set.into_iter().next().expect("one") } else { T::from("mixed") }
        }
        let any = |on: fn(&SwitchConfig) -> bool| configs.iter().any(on);
        InForce {
            pfcwd: common(configs.iter().map(|c| PfcwdMode::of(&c.pfcwd).name())),
            qcn: common(configs.iter().map(|c| QcnMode::of(&c.qcn))),
            fecn: common(configs.iter().map(|c| FecnMode::of(&c.fecn))),
            // Hosts react when any switch may send them feedback.
            qcn_reaction: any(|c| !c.qcn.priorities.is_empty()).then(|| QcnReaction {
                params: scenario.qcn.as_ref().map(|q| q.reaction).unwrap_or_default(),
                line_rate: scenario.speed,
            }),
            fecn_reaction: any(|c| !c.fecn.priorities.is_empty()).then(|| FecnReaction {
                probe_interval: scenario.fecn.as_ref().map_or(DEFAULT_PROBE_INTERVAL, |f| f.probe_interval),
                line_rate: scenario.speed,
            }),
        }
    }
}

/// A section on the classes' priorities with its other keys at their defaults: DCTCP's step
/// at K = 20 KB for `--cc dctcp` (`[ecn]`'s defaults, the CaPFC paper's Table II), INT
/// records at every egress for HPCC.
fn on_the_classes(scenario: &Scenario) -> toml::Table {
    let priorities = scenario.priorities().into_iter().map(|p| toml::Value::Integer(p.into())).collect();
    toml::Table::from_iter([("priorities".to_string(), toml::Value::Array(priorities))])
}

/// DCQCN's congestion point as its paper sets it (Zhu et al. 2015, §5: Kmin = 5 KB, Kmax =
/// 200 KB, Pmax = 1 %), on the classes' priorities: what `--dcqcn on` marks with when the
/// scenario's `overrides` have no `[ecn]` of their own.
fn dcqcn_marking(scenario: &Scenario) -> toml::Table {
    let mut section = on_the_classes(scenario);
    section.extend([
        ("min".to_string(), toml::Value::String("5KB".into())),
        ("max".to_string(), toml::Value::String("200KB".into())),
        ("probability".to_string(), toml::Value::Float(0.01)),
    ]);
    section
}
