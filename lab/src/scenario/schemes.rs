//! The schemes a run switches on beside its policy, in every switch and host at once: the
//! PFC watchdog (`--pfcwd`), QCN (`--qcn`, a scenario's `[qcn]`) and FECN (`--fecn`, a
//! scenario's `[fecn]`). Each overlays its section of every switch config; QCN and FECN
//! also set up the hosts' side (reaction points, FECN sources) when a switch runs them.

use super::{PfcwdMode, Scenario, parse_pfcwd};
use anyhow::{Result, bail};
use clap::Args;
use pfcswitch_hosts::{FecnReaction, QcnReaction, RpParams};
use pfcswitch_link::units::duration;
use pfcswitch_switch::config::SwitchConfig;
use pfcswitch_switch::fecn::{ControlKind, FecnConfig};
use pfcswitch_switch::qcn::{Placement, QcnConfig, Sampling};
use serde::Deserialize;
use std::time::Duration;

/// The modes of one run; `None` leaves the scenario's (or the switch configs') own.
#[derive(Clone, Copy, Debug, Default, Args)]
pub struct Modes {
    /// PFC watchdog of every switch: off, alert, drop, forward (default: the switch configs').
    #[arg(long, value_parser = parse_pfcwd)]
    pub pfcwd: Option<PfcwdMode>,
    /// QCN of every switch and host: off, output, input, or either with a sampling, e.g.
    /// input-occupancy-random (default: the scenario's `[qcn]`, else the switch configs').
    #[arg(long, value_parser = parse_qcn)]
    pub qcn: Option<QcnMode>,
    /// FECN of every switch and host: off, hyperbolic or multistage, optionally with
    /// -nSTAGES (multistage) and -gGAMMA, e.g. multistage-n3-g0.98 (default: the scenario's
    /// `[fecn]`, else the switch configs').
    #[arg(long, value_parser = parse_fecn)]
    pub fecn: Option<FecnMode>,
}

impl Modes {
    /// `-pfcwd-MODE-qcn-MODE-fecn-MODE` for the modes given, for the run's directory.
    pub fn suffix(&self) -> String {
        self.labels().iter().map(|(scheme, mode)| format!("-{scheme}-{mode}")).collect()
    }

    /// (scheme, mode) of each mode given.
    pub fn labels(&self) -> Vec<(&'static str, String)> {
        let mut labels = Vec::new();
        labels.extend(self.pfcwd.map(|m| ("pfcwd", m.name().to_string())));
        labels.extend(self.qcn.map(|m| ("qcn", m.name())));
        labels.extend(self.fecn.map(|m| ("fecn", m.name())));
        labels
    }

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

/// `[qcn]`: congestion points in every switch and reaction points in every host.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QcnSpec {
    /// Merged into every switch's `[qcn]`; `priorities` defaults to the classes' priorities.
    #[serde(default)]
    pub switch: toml::Table,
    /// The hosts' reaction points (default: 802.1Qau's MIB values).
    #[serde(default)]
    pub reaction: RpParams,
}

/// `[fecn]`: rate points in every switch and sources in every host.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FecnSpec {
    /// Merged into every switch's `[fecn]`; `priorities` defaults to the classes' priorities.
    #[serde(default)]
    pub switch: toml::Table,
    /// How often each active flow probes its path (default 1 ms, the paper's T).
    #[serde(with = "duration", default = "default_probe_interval")]
    pub probe_interval: Duration,
    /// The mode runs use unless `--fecn` names one, e.g. `off` for a scenario that is about
    /// another scheme (default: FECN on, as `switch` says).
    #[serde(default, deserialize_with = "fecn_mode")]
    pub mode: Option<FecnMode>,
}

fn fecn_mode<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<FecnMode>, D::Error> {
    let name = String::deserialize(deserializer)?;
    parse_fecn(&name).map(Some).map_err(serde::de::Error::custom)
}

const DEFAULT_PROBE_INTERVAL: Duration = Duration::from_millis(1);

fn default_probe_interval() -> Duration {
    DEFAULT_PROBE_INTERVAL
}

/// What `--qcn` sets in every switch's `[qcn]` (and so whether hosts run reaction points).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QcnMode {
    Off,
    /// CPs at `cp`, sampling as given or as the scenario's `[qcn]` says.
    On {
        cp: Placement,
        sampling: Option<Sampling>,
    },
}

impl QcnMode {
    pub fn name(self) -> String {
        match self {
            QcnMode::Off => "off".into(),
            QcnMode::On { cp, sampling: None } => cp.name().into(),
            QcnMode::On { cp, sampling: Some(sampling) } => format!("{}-{}", cp.name(), sampling.name()),
        }
    }

    /// The name of the QCN a switch config runs: `off`, or `CP-SAMPLING`.
    pub fn of(config: &QcnConfig) -> String {
        if config.priorities.is_empty() {
            return QcnMode::Off.name();
        }
        QcnMode::On { cp: config.cp, sampling: Some(config.sampling) }.name()
    }
}

pub fn parse_qcn(name: &str) -> Result<QcnMode> {
    if name == "off" {
        return Ok(QcnMode::Off);
    }
    for cp in Placement::ALL {
        let Some(rest) = name.strip_prefix(cp.name()) else { continue };
        if rest.is_empty() {
            return Ok(QcnMode::On { cp, sampling: None });
        }
        if let Some(sampling) = Sampling::ALL.into_iter().find(|s| rest.strip_prefix('-') == Some(s.name())) {
            return Ok(QcnMode::On { cp, sampling: Some(sampling) });
        }
    }
    bail!(
        "unknown QCN mode `{name}` (known: off, output, input, each optionally with -arrival, \
         -occupancy-deterministic or -occupancy-random)"
    )
}

/// What `--fecn` sets in every switch's `[fecn]` (and so whether hosts run FECN sources).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FecnMode {
    Off,
    /// Rate points with this queue control, and the stages and γ given (else the scenario's
    /// or the configs').
    On {
        control: ControlKind,
        stages: Option<u32>,
        gamma: Option<f64>,
    },
}

impl FecnMode {
    /// `off`, or `CONTROL[-nSTAGES][-gGAMMA]`.
    pub fn name(self) -> String {
        match self {
            FecnMode::Off => "off".into(),
            FecnMode::On { control, stages, gamma } => {
                let stages = stages.map(|n| format!("-n{n}")).unwrap_or_default();
                let gamma = gamma.map(|g| format!("-g{g}")).unwrap_or_default();
                format!("{}{stages}{gamma}", control.name())
            }
        }
    }

    /// The mode a switch config runs, naming stages and γ where they differ from the defaults.
    pub fn of(config: &FecnConfig) -> String {
        if config.priorities.is_empty() {
            return FecnMode::Off.name();
        }
        let defaults = FecnConfig::default();
        let multistage = config.control == ControlKind::Multistage;
        FecnMode::On {
            control: config.control,
            stages: (multistage && config.stages != defaults.stages).then_some(config.stages),
            gamma: (config.gamma != defaults.gamma).then_some(config.gamma),
        }
        .name()
    }
}

pub fn parse_fecn(name: &str) -> Result<FecnMode> {
    let unknown = || {
        anyhow::anyhow!(
            "unknown FECN mode `{name}` (known: off, hyperbolic, multistage, optionally with -nSTAGES \
             (multistage) and -gGAMMA, e.g. multistage-n3-g0.98)"
        )
    };
    if name == "off" {
        return Ok(FecnMode::Off);
    }
    let mut parts = name.split('-');
    let control = match parts.next() {
        Some("hyperbolic") => ControlKind::Hyperbolic,
        Some("multistage") => ControlKind::Multistage,
        _ => return Err(unknown()),
    };
    let (mut stages, mut gamma) = (None, None);
    for part in parts {
        if let Some(n) = part.strip_prefix('n').filter(|_| control == ControlKind::Multistage && stages.is_none()) {
            stages = Some(n.parse::<u32>().ok().filter(|&n| n > 0).ok_or_else(unknown)?);
        } else if let Some(g) = part.strip_prefix('g').filter(|_| gamma.is_none()) {
            gamma = Some(g.parse::<f64>().ok().filter(|g| *g > 0.0 && *g <= 1.0).ok_or_else(unknown)?);
        } else {
            return Err(unknown());
        }
    }
    Ok(FecnMode::On { control, stages, gamma })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fecn_modes_name_their_stages_and_gamma_and_read_back() {
        for name in ["off", "hyperbolic", "multistage", "multistage-n3", "hyperbolic-g0.98", "multistage-n2-g1"] {
            assert_eq!(parse_fecn(name).unwrap().name(), name);
        }
        for bad in ["hyperbolic-n2", "multistage-n0", "hyperbolic-g1.5", "hyperbolic-g0.9-g0.98", "linear"] {
            assert!(parse_fecn(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_config_s_mode_names_only_what_differs_from_the_defaults() {
        let on = FecnConfig { priorities: vec![3], ..FecnConfig::default() };
        assert_eq!(FecnMode::of(&on), "hyperbolic");
        let gamma = FecnConfig { gamma: 0.98, ..on.clone() };
        assert_eq!(FecnMode::of(&gamma), "hyperbolic-g0.98");
        let three = FecnConfig { control: ControlKind::Multistage, stages: 3, ..on };
        assert_eq!(FecnMode::of(&three), "multistage-n3");
    }
}
