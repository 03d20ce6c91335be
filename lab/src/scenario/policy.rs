//! The flow-control policy a run gives every switch, named as experiments name it, and the
//! `[policy]` keys it puts in a switch config.

use super::schemes::CcMode;
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

/// A policy as `--policy` and sweeps' `--policies` take it: `NAME`, or `NAME+CC` for the
/// policy with the hosts on congestion control CC (as `--cc CC` does: `pfc+dcqcn`,
/// `pfc+hpcc`), so that one sweep can set each policy beside its variants.
pub fn split_transport(name: &str) -> (&str, Option<CcMode>) {
    match name.rsplit_once('+').and_then(|(policy, cc)| Some((policy, CcMode::from_name(cc)?))) {
        Some((policy, cc)) => (policy, Some(cc)),
        None => (name, None),
    }
}

/// A policy by name, without `+dcqcn` (see `split_transport`).
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dcqcn_suffix_names_the_policy_with_dcqcn_in_the_hosts() {
        assert_eq!(split_transport("capfc-max+dcqcn"), ("capfc-max", Some(CcMode::Dcqcn)));
        assert_eq!(split_transport("pfc+timely-w"), ("pfc", Some(CcMode::TimelyW)));
        assert_eq!(split_transport("pfc+dcqcn-w"), ("pfc", Some(CcMode::DcqcnW)));
        assert_eq!(split_transport("ofc"), ("ofc", None));
        assert!(parse_policy("pfc+dcqcn").is_err(), "parse_policy takes the name alone");
        assert_eq!(parse_policy(split_transport("pfc+dcqcn").0).unwrap().name(), "pfc");
    }
}
