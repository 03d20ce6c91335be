//! The schemes a run switches on beside its policy, in every switch and host at once: the
//! PFC watchdog (`--pfcwd`), QCN (`--qcn`, a scenario's `[qcn]`), DCQCN (`--dcqcn`) and FECN (`--fecn`, a
//! scenario's `[fecn]`): the scenario tables, the modes the options name, and the name of the
//! mode a switch config runs. The sections they overlay on switch configs, and what they ask
//! of the hosts, are `configs.rs`'s.

use anyhow::{Result, bail};
use pfcswitch_hosts::RpParams;
use pfcswitch_link::units::duration;
use pfcswitch_switch::config::{PfcwdAction, PfcwdConfig};
use pfcswitch_switch::fecn::{ControlKind, FecnConfig};
use pfcswitch_switch::qcn::{Placement, QcnConfig, Sampling};
use serde::Deserialize;
use std::time::Duration;

/// What `--pfcwd` sets in every switch's `[pfcwd]`: `off` disables the watchdog, the others
/// enable it with that action.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PfcwdMode {
    Off,
    On(PfcwdAction),
}

impl PfcwdMode {
    pub fn name(self) -> &'static str {
        match self {
            PfcwdMode::Off => "off",
            PfcwdMode::On(action) => action.name(),
        }
    }

    /// The mode a switch's `[pfcwd]` runs in.
    pub fn of(config: &PfcwdConfig) -> PfcwdMode {
        if config.enabled { PfcwdMode::On(config.action) } else { PfcwdMode::Off }
    }

    /// The `[pfcwd]` keys a switch config gets for this mode.
    pub fn config_keys(self) -> toml::Table {
        let mut table = toml::Table::new();
        table.insert("enabled".into(), toml::Value::Boolean(self != PfcwdMode::Off));
        if let PfcwdMode::On(action) = self {
            table.insert("action".into(), toml::Value::String(action.name().into()));
        }
        table
    }
}

pub fn parse_pfcwd(name: &str) -> Result<PfcwdMode> {
    Ok(match name {
        "off" => PfcwdMode::Off,
        "alert" => PfcwdMode::On(PfcwdAction::Alert),
        "drop" => PfcwdMode::On(PfcwdAction::Drop),
        "forward" => PfcwdMode::On(PfcwdAction::Forward),
        other => bail!("unknown PFC watchdog mode `{other}` (known: off, alert, drop, forward)"),
    })
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

/// How often FECN sources probe when a scenario's `[fecn]` does not say (the paper's T).
pub(super) const DEFAULT_PROBE_INTERVAL: Duration = Duration::from_millis(1);

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

/// The hosts' congestion control (`--cc`): one for every host of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CcMode {
    /// None: windows and PFC alone.
    None,
    Dctcp,
    Dcqcn,
    /// DCQCN with a window of the BDP scaled by its rate (HPCC's simulator's DCQCN+w).
    #[value(name = "dcqcn-w")]
    DcqcnW,
    Hpcc,
    Timely,
    /// TIMELY with a window of the BDP scaled by its rate (HPCC's simulator's TIMELY+w).
    #[value(name = "timely-w")]
    TimelyW,
    Swift,
}

impl CcMode {
    pub const ALL: [CcMode; 8] = [
        CcMode::None,
        CcMode::Dctcp,
        CcMode::Dcqcn,
        CcMode::DcqcnW,
        CcMode::Hpcc,
        CcMode::Timely,
        CcMode::TimelyW,
        CcMode::Swift,
    ];

    pub fn name(self) -> &'static str {
        match self {
            CcMode::None => "none",
            CcMode::Dctcp => "dctcp",
            CcMode::Dcqcn => "dcqcn",
            CcMode::DcqcnW => "dcqcn-w",
            CcMode::Hpcc => "hpcc",
            CcMode::Timely => "timely",
            CcMode::TimelyW => "timely-w",
            CcMode::Swift => "swift",
        }
    }

    pub fn from_name(name: &str) -> Option<CcMode> {
        CcMode::ALL.into_iter().find(|cc| cc.name() == name)
    }
}

/// Whether the hosts run DCQCN.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum DcqcnMode {
    Off,
    On,
}

impl DcqcnMode {
    pub fn name(self) -> &'static str {
        match self {
            DcqcnMode::Off => "off",
            DcqcnMode::On => "on",
        }
    }
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
