//! The flow-control policy a run gives every switch, named as experiments name it, and the
//! `[policy]` keys it puts in a switch config.

use anyhow::{Result, bail};
use pfcswitch_switch::config::{CapfcAlgorithm, PolicyKind};
use serde::Deserialize;

/// A switch policy as experiments name it, after the CaPFC paper's PFC_wdrop, PFC_wstop,
/// CaPFC_max and CaPFC_cal.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub struct RunPolicy {
    pub kind: PolicyKind,
    pub algorithm: Option<CapfcAlgorithm>,
}

impl RunPolicy {
    pub fn name(&self) -> &'static str {
        match (self.kind, self.algorithm) {
            (PolicyKind::Capfc, Some(CapfcAlgorithm::Calibrate)) => "capfc-cal",
            (PolicyKind::Capfc, _) => "capfc-max",
            (kind, _) => kind.name(),
        }
    }

    /// The `[policy]` keys a switch config gets for this policy.
    pub fn config_keys(&self) -> toml::Table {
        let mut table = toml::Table::new();
        table.insert("kind".into(), toml::Value::String(self.kind.name().into()));
        if let Some(algorithm) = self.algorithm {
            let name = if algorithm == CapfcAlgorithm::Max { "max" } else { "calibrate" };
            table.insert("algorithm".into(), toml::Value::String(name.into()));
        }
        table
    }
}

impl TryFrom<String> for RunPolicy {
    type Error = anyhow::Error;

    fn try_from(name: String) -> Result<RunPolicy> {
        parse_policy(&name)
    }
}

pub fn parse_policy(name: &str) -> Result<RunPolicy> {
    let (kind, algorithm) = match name {
        "pfc" => (PolicyKind::Pfc, None),
        "pfc-wdrop" => (PolicyKind::PfcWdrop, None),
        "pfc-wstop" => (PolicyKind::PfcWstop, None),
        "capfc" | "capfc-max" => (PolicyKind::Capfc, Some(CapfcAlgorithm::Max)),
        "capfc-cal" => (PolicyKind::Capfc, Some(CapfcAlgorithm::Calibrate)),
        "ofc" => (PolicyKind::Ofc, None),
        "none" => (PolicyKind::None, None),
        other => bail!("unknown policy `{other}` (known: pfc, pfc-wdrop, pfc-wstop, capfc-max, capfc-cal, ofc, none)"),
    };
    Ok(RunPolicy { kind, algorithm })
}
