//! `[[fault]]`: links taken down and brought up, switches' daemons killed and restarted, at
//! set times after the workload's start. On the datapath the link's interface is set down at
//! the named end (`ip link set dev IF down`: a veth pair's carrier goes at both ends, as a cut
//! cable's), or at both ends for a link's name, and pfcswitchd is sent SIGKILL and started
//! again with its config; in the simulator the same faults happen at their exact instants
//! (`Network::set_link`, `kill_switch`, `restart_switch`). Each applied fault is recorded in
//! results.json (`faults`) and marked on the time plots.

use super::plan::FaultSpec;
use super::record::{AppliedFault, QueueSample};
use crate::plot::Series;
use anyhow::{Result, bail};
use pfcswitch_topology::Topology;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

/// A fault resolved against the topology.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fault {
    /// `ends` (`sw1:p4`, `h1`) of `link` set down or up.
    Link { at: Duration, up: bool, link: String, ends: Vec<String> },
    /// A switch's daemon killed, or started again.
    Switch { at: Duration, restart: bool, switch: String },
}

impl Fault {
    pub fn at(&self) -> Duration {
        match self {
            Fault::Link { at, .. } | Fault::Switch { at, .. } => *at,
        }
    }

    pub fn what(&self) -> String {
        match self {
            Fault::Link { up, ends, link, .. } => {
                let target = if ends.len() == 2 { link } else { &ends[0] };
                format!("{} {target}", if *up { "up" } else { "down" })
            }
            Fault::Switch { restart, switch, .. } => format!("{} {switch}", if *restart { "restart" } else { "kill" }),
        }
    }
}

/// The scenario's faults against `topology`, in time order; each refused with its index
/// and the reason (unknown link or switch, not exactly one action).
pub fn resolve(specs: &[FaultSpec], topology: &Topology) -> Result<Vec<Fault>> {
    let mut faults = Vec::with_capacity(specs.len());
    for (index, spec) in specs.iter().enumerate() {
        let key = format!("fault[{index}]");
        let actions = [&spec.down, &spec.up, &spec.kill, &spec.restart];
        if actions.iter().filter(|a| a.is_some()).count() != 1 {
            bail!("{key}: give exactly one of down, up, kill, restart");
        }
        let at = spec.at;
        let fault = match (&spec.down, &spec.up, &spec.kill, &spec.restart) {
            (Some(target), None, None, None) | (None, Some(target), None, None) => {
                let (link, ends) = link_of(target, topology).ok_or_else(|| {
                    anyhow::anyhow!(
                        "{key}: no link `{target}` (an end as `sw1:p4` or a host, or a link as `sw1:p4-sw4:p1`)"
                    )
                })?;
                Fault::Link { at, up: spec.up.is_some(), link, ends }
            }
            (None, None, kill, restart) => {
                let switch = kill.as_ref().or(restart.as_ref()).expect("one action");
                if !topology.switches.contains(switch) {
                    bail!("{key}: no switch `{switch}` (the topology has {})", topology.switches.join(", "));
                }
                Fault::Switch { at, restart: restart.is_some(), switch: switch.clone() }
            }
            _ => unreachable!("exactly one action, checked above"),
        };
        faults.push(fault);
    }
    faults.sort_by_key(Fault::at);
    Ok(faults)
}

/// The link `target` names, and the ends it takes: both for a link's name, one for an end.
fn link_of(target: &str, topology: &Topology) -> Option<(String, Vec<String>)> {
    if let Some(link) = topology.links.iter().find(|link| link.name() == target) {
        return Some((link.name(), vec![link.a.to_string(), link.b.to_string()]));
    }
    let link = topology.link_at(target)?;
    Some((link.name(), vec![target.to_string()]))
}

/// For the time plots: each port's send rate (Mbit/s, all sampled priorities) on the
/// switches the faults touch, then each fault as a vertical line labelled with what happened.
pub fn port_rates(samples: &[QueueSample], faults: &[AppliedFault]) -> Vec<Series> {
    let touched: BTreeSet<&str> =
        faults.iter().filter_map(|f| f.what.split_whitespace().nth(1)).flat_map(switches_of).collect();
    let mut sent: BTreeMap<(&str, &str), BTreeMap<u64, u64>> = BTreeMap::new();
    for s in samples.iter().filter(|s| touched.contains(s.switch.as_str())) {
        *sent.entry((&s.switch, &s.port)).or_default().entry((s.seconds * 1e6) as u64).or_default() += s.tx_bytes;
    }
    let mut series: Vec<Series> = sent
        .into_iter()
        .map(|((switch, port), points)| {
            let points: Vec<(u64, u64)> = points.into_iter().collect();
            // A restarted switch counts from zero again: no negative rate.
            let rates = points.windows(2).map(|w| {
                let seconds = (w[1].0 - w[0].0) as f64 / 1e6;
                (w[1].0 as f64 / 1e6, w[1].1.saturating_sub(w[0].1) as f64 * 8.0 / seconds / 1e6)
            });
            Series { label: format!("{switch}:{port}"), points: rates.collect() }
        })
        .filter(|s| s.points.iter().any(|&(_, rate)| rate > 0.0))
        .collect();
    let top = series.iter().flat_map(|s| &s.points).map(|&(_, rate)| rate).fold(0.0, f64::max);
    for fault in faults {
        let points = vec![(fault.seconds, 0.0), (fault.seconds, top)];
        series.push(Series { label: format!("{} at {:.2} s", fault.what, fault.seconds), points });
    }
    series
}

/// The switches a fault's target names: `sw1` of `sw1:p4`, both of `sw1:p4-sw4:p1`, a
/// killed switch itself; none for a host.
fn switches_of(target: &str) -> impl Iterator<Item = &str> {
    target.split('-').map(|end| end.split(':').next().unwrap_or(end))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leaf_spine() -> Topology {
        let text = r#"
            switches = ["sw1", "sw2"]
            hosts = ["h1"]
            links = ["sw1:p1 h1", "sw1:p2 sw2:p1"]
            [defaults]
            speed = "10Gbps"
        "#;
        Topology::parse(text, std::path::Path::new("test.toml")).unwrap()
    }

    fn spec(at: u64, down: Option<&str>, kill: Option<&str>) -> FaultSpec {
        let owned = |s: Option<&str>| s.map(String::from);
        FaultSpec { at: Duration::from_secs(at), down: owned(down), up: None, kill: owned(kill), restart: None }
    }

    #[test]
    fn an_end_takes_one_side_a_link_both_and_faults_come_in_time_order() {
        let faults = resolve(
            &[spec(3, Some("sw1:p2-sw2:p1"), None), spec(1, Some("sw2:p1"), None), spec(2, None, Some("sw2"))],
            &leaf_spine(),
        )
        .unwrap();
        let what: Vec<_> = faults.iter().map(|f| (f.at().as_secs(), f.what())).collect();
        assert_eq!(what, [(1, "down sw2:p1".into()), (2, "kill sw2".into()), (3, "down sw1:p2-sw2:p1".into())]);
        assert!(matches!(&faults[2], Fault::Link { ends, .. } if ends == &["sw1:p2", "sw2:p1"]));
    }

    #[test]
    fn unknown_targets_and_several_actions_are_refused_with_the_fault() {
        let refusal = |s: FaultSpec| resolve(&[s], &leaf_spine()).unwrap_err().to_string();
        assert!(refusal(spec(1, Some("sw1:p9"), None)).contains("fault[0]: no link `sw1:p9`"));
        assert!(refusal(spec(1, None, Some("sw9"))).contains("no switch `sw9`"));
        assert!(refusal(spec(1, Some("h1"), Some("sw1"))).contains("exactly one of"));
        assert!(refusal(spec(1, None, None)).contains("exactly one of"));
    }
}
