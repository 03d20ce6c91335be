//! Long-lived flows phase by phase: the workload splits where a class starts or stops (the
//! QCN paper's Fig. 2: f5 joins for the middle third), and each phase gets every active
//! flow's goodput, the CNMs it received, and Jain's fairness index of the flows that share a
//! receiver (whose access link is a fan-in's bottleneck).

use super::endpoint::{ReceiverResult, SenderResult};
use super::plan::Scenario;
use crate::workload::PlannedConnection;
use serde::Serialize;
use std::time::Duration;

#[derive(Clone, Debug, Serialize)]
pub struct Phase {
    pub from_seconds: f64,
    pub to_seconds: f64,
    pub flows: Vec<PhaseFlow>,
    pub fairness: Vec<Fairness>,
}

#[derive(Clone, Debug, Serialize)]
pub struct PhaseFlow {
    pub flow: u32,
    /// `CLASS SENDER→RECEIVER`.
    pub label: String,
    pub receiver: String,
    pub goodput_mbps: f64,
    /// CNMs its reaction point received in the phase (QCN runs only).
    pub cnms: Option<u64>,
}

/// Jain's index (Σx)² / (n·Σx²) of the goodputs of the `flows` active flows into `receiver`;
/// `None` when none of them got anything through. `converged_after_seconds`: from the
/// phase's start, how long until every bin to its end has each flow's goodput within 5 % of
/// the flows' mean (`None` if the last bin has not).
#[derive(Clone, Debug, Serialize)]
pub struct Fairness {
    pub receiver: String,
    pub flows: usize,
    pub jain: Option<f64>,
    pub converged_after_seconds: Option<f64>,
}

/// One long-lived flow's results, as the report has them.
pub struct FlowBins<'a> {
    pub connection: &'a PlannedConnection,
    pub label: String,
    pub receiver_host: &'a str,
    pub sender: Option<&'a SenderResult>,
    pub receiver: Option<&'a ReceiverResult>,
}

pub fn jain(values: &[f64]) -> Option<f64> {
    let sum: f64 = values.iter().sum();
    let squares: f64 = values.iter().map(|x| x * x).sum();
    (squares > 0.0).then(|| sum * sum / (values.len() as f64 * squares))
}

/// The phases of `scenario`'s workload with the long-lived `flows` active in each; empty
/// when it has no long-lived flows.
pub fn phases(scenario: &Scenario, flows: &[FlowBins]) -> Vec<Phase> {
    let length = scenario.duration;
    let span = |c: usize| {
        let class = &scenario.classes[c];
        (class.start.min(length), class.stop.unwrap_or(length).min(length))
    };
    let mut bounds = vec![Duration::ZERO, length];
    for flow in flows {
        let (start, stop) = span(flow.connection.class);
        bounds.extend([start, stop]);
    }
    bounds.sort();
    bounds.dedup();
    let bin = scenario.transport.bin;
    bounds
        .windows(2)
        .map(|w| {
            let (from, to) = (w[0], w[1]);
            let active = flows.iter().filter(|f| {
                let (start, stop) = span(f.connection.class);
                start <= from && to <= stop
            });
            let phase_flows: Vec<PhaseFlow> = active
                .map(|f| PhaseFlow {
                    flow: f.connection.id,
                    label: f.label.clone(),
                    receiver: f.receiver_host.to_string(),
                    goodput_mbps: f.receiver.map_or(0.0, |r| {
                        let bytes: u64 = in_phase(&r.goodput_bins, bin, from, to).sum();
                        bytes as f64 * 8.0 / (to - from).as_secs_f64() / 1e6
                    }),
                    cnms: f
                        .sender
                        .and_then(|s| s.qcn.as_ref())
                        .map(|q| in_phase(&q.cnm_bins, bin, from, to).map(u64::from).sum()),
                })
                .collect();
            let mut receivers: Vec<&str> = phase_flows.iter().map(|f| f.receiver.as_str()).collect();
            receivers.sort_unstable();
            receivers.dedup();
            let fairness = receivers
                .into_iter()
                .filter_map(|receiver| {
                    let values: Vec<f64> =
                        phase_flows.iter().filter(|f| f.receiver == receiver).map(|f| f.goodput_mbps).collect();
                    let bins: Vec<Vec<u64>> = (flows.iter())
                        .filter(|f| {
                            f.receiver_host == receiver && phase_flows.iter().any(|p| p.flow == f.connection.id)
                        })
                        .map(|f| f.receiver.map_or(Vec::new(), |r| in_phase(&r.goodput_bins, bin, from, to).collect()))
                        .collect();
                    (values.len() > 1).then(|| Fairness {
                        receiver: receiver.into(),
                        flows: values.len(),
                        jain: jain(&values),
                        converged_after_seconds: converged_after(&bins, (to - from).as_nanos() / bin.as_nanos())
                            .map(|b| b as f64 * bin.as_secs_f64()),
                    })
                })
                .collect();
            Phase { from_seconds: from.as_secs_f64(), to_seconds: to.as_secs_f64(), flows: phase_flows, fairness }
        })
        .collect()
}

/// The first of `bins_in_phase` bins from which every later bin has each flow within 5 % of
/// the flows' mean; `None` if the last one has not. A flow's missing bins count as 0.
fn converged_after(bins: &[Vec<u64>], bins_in_phase: u128) -> Option<usize> {
    let n = bins_in_phase as usize;
    let fair = |i: usize| {
        let values: Vec<f64> = bins.iter().map(|b| b.get(i).copied().unwrap_or(0) as f64).collect();
        let mean = values.iter().sum::<f64>() / values.len() as f64;
        mean > 0.0 && values.iter().all(|v| (v - mean).abs() <= 0.05 * mean)
    };
    match (0..n).rev().find(|&i| !fair(i)) {
        None => Some(0),
        Some(i) if i + 1 < n => Some(i + 1),
        Some(_) => None,
    }
}

/// The values of the bins (of width `bin` from the workload's start) that lie in [from, to).
fn in_phase<T: Copy>(bins: &[T], bin: Duration, from: Duration, to: Duration) -> impl Iterator<Item = T> + '_ {
    let first = (from.as_nanos() / bin.as_nanos()) as usize;
    let last = (to.as_nanos() / bin.as_nanos()) as usize;
    bins.iter().copied().skip(first).take(last.saturating_sub(first))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_is_one_for_equal_shares_and_one_over_n_for_one_taker() {
        assert_eq!(jain(&[25.0, 25.0, 25.0, 25.0]), Some(1.0));
        assert!((jain(&[100.0, 0.0, 0.0, 0.0]).unwrap() - 0.25).abs() < 1e-12);
        // (30 + 10)² / (2 · (900 + 100)) = 0.8.
        assert!((jain(&[30.0, 10.0]).unwrap() - 0.8).abs() < 1e-12);
        assert_eq!(jain(&[0.0, 0.0]), None, "nothing got through: no index");
    }

    #[test]
    fn convergence_is_the_first_bin_from_which_every_flow_stays_within_5_percent() {
        // Bin 1 is unfair, bins 2-3 fair: converged after 2 bins.
        let bins = vec![vec![10, 20, 100, 100], vec![10, 80, 104, 96]];
        assert_eq!(converged_after(&bins, 4), Some(2));
        assert_eq!(converged_after(&[vec![5, 5], vec![5, 5]], 2), Some(0));
        assert_eq!(converged_after(&[vec![5, 5], vec![5, 9]], 2), None, "unfair at the end");
    }

    #[test]
    fn a_phase_takes_the_bins_it_covers() {
        let bins = [1u64, 2, 3, 4, 5, 6];
        let ms = Duration::from_millis;
        assert_eq!(in_phase(&bins, ms(10), ms(20), ms(50)).collect::<Vec<_>>(), vec![3, 4, 5]);
        assert_eq!(in_phase(&bins, ms(10), ms(50), ms(90)).collect::<Vec<_>>(), vec![6]);
    }
}
