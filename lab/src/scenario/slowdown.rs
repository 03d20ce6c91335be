//! FCT slowdown by flow size, the standard report of the congestion-control literature (HPCC,
//! DCQCN, Homa, pFabric): each finished message's FCT divided by its ideal FCT (`ideal.rs`),
//! and the flows sorted by size into bins of 5 % of their number, as HPCC's `fct_analysis.py`
//! does, with the median, 95th and 99th percentile slowdown of each bin. Unlike HPCC's, a bin
//! never splits flows of one size (an incast's answers are all alike): it runs on to the last
//! flow of its largest size, so bins can hold more than 5 % and be fewer than 20, and every
//! size appears in one bin only. A "flow" of the literature is a message here.

use super::endpoint::MessageResult;
use super::ideal::IdealFct;
use super::record::RunRecord;
use crate::plot::{self, Chart, Scale, Series};
use crate::stats::quantile;
use crate::table::Table;
use anyhow::Result;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Bins of 5 % of the flows, as HPCC's analysis by default.
pub const BINS: usize = 20;

/// Slowdown statistics of some flows.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SlowdownStats {
    pub flows: usize,
    pub mean: f64,
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
    pub max: f64,
}

impl SlowdownStats {
    /// Of `values`, sorted ascending and not empty.
    fn of(values: &[f64]) -> SlowdownStats {
        let at = |q| quantile(values, q).expect("not empty");
        SlowdownStats {
            flows: values.len(),
            mean: values.iter().sum::<f64>() / values.len() as f64,
            p50: at(0.5),
            p95: at(0.95),
            p99: at(0.99),
            max: values[values.len() - 1],
        }
    }
}

/// The flows of one size bin.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SlowdownBin {
    /// The bin's share of the flows sorted by size, in percent (rounded down): [from, to).
    pub from_percent: usize,
    pub to_percent: usize,
    pub min_bytes: u64,
    pub max_bytes: u64,
    #[serde(flatten)]
    pub slowdown: SlowdownStats,
}

/// Every finished message's slowdown, over all and by size.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SlowdownSummary {
    #[serde(flatten)]
    pub all: SlowdownStats,
    /// Flows faster than alone on the network: 0 in the simulator (else the ideal is wrong);
    /// on the datapath, what the emulated links' catch-up credit allowed.
    pub below_one: usize,
    pub bins: Vec<SlowdownBin>,
}

/// A finished message's size, FCT and ideal FCT.
#[derive(Clone, Copy, Debug)]
pub(super) struct FlowTime {
    pub size: u64,
    pub fct: Duration,
    pub ideal: Duration,
}

impl FlowTime {
    pub fn slowdown(&self) -> f64 {
        self.fct.as_secs_f64() / self.ideal.as_secs_f64()
    }

    /// Of a message of the run, if it has a size (not a long-lived flow) and an ideal FCT.
    pub fn of(record: &RunRecord, ideal: &IdealFct, m: &MessageResult) -> Option<(u64, Duration)> {
        let size = u64::from(m.size?);
        let connection = &record.connections[m.connection as usize];
        Some((size, ideal.of(connection.sender, connection.receiver, size)?))
    }
}

/// The finished sized messages of the run with their ideal FCTs.
pub(super) fn flow_times(record: &RunRecord, ideal: &IdealFct) -> Vec<FlowTime> {
    let messages = record.endpoints.iter().flat_map(|e| &e.messages);
    messages
        .filter_map(|m| {
            let (size, ideal) = FlowTime::of(record, ideal, m)?;
            Some(FlowTime { size, fct: Duration::from_nanos(m.finish_ns? - m.start_ns), ideal })
        })
        .collect()
}

impl SlowdownSummary {
    /// Of `flows`; `None` if no sized message finished.
    pub(super) fn of(flows: &[FlowTime]) -> Option<SlowdownSummary> {
        if flows.is_empty() {
            return None;
        }
        let sorted = |mut values: Vec<f64>| {
            values.sort_by(f64::total_cmp);
            values
        };
        let all = sorted(flows.iter().map(FlowTime::slowdown).collect());
        let mut by_size: Vec<&FlowTime> = flows.iter().collect();
        by_size.sort_by_key(|f| f.size);
        let n = by_size.len();
        let mut bins = Vec::new();
        let mut from = 0;
        for i in 0..BINS {
            let mut to = ((i + 1) * n / BINS).max(from);
            // Flows of one size are never split: a bin runs to the last flow of its largest size.
            while to > from && to < n && by_size[to].size == by_size[to - 1].size {
                to += 1;
            }
            let bin = &by_size[from..to];
            if let (Some(first), Some(last)) = (bin.first(), bin.last()) {
                bins.push(SlowdownBin {
                    from_percent: from * 100 / n,
                    to_percent: to * 100 / n,
                    min_bytes: first.size,
                    max_bytes: last.size,
                    slowdown: SlowdownStats::of(&sorted(bin.iter().map(|f| f.slowdown()).collect())),
                });
            }
            from = to;
        }
        Some(SlowdownSummary {
            below_one: all.iter().filter(|&&s| s < 1.0).count(),
            all: SlowdownStats::of(&all),
            bins,
        })
    }

    /// The slowdown-by-size table.
    pub(super) fn print(&self) {
        println!(
            "FCT slowdown by flow size ({} flows sorted by size, in bins of {} %, one size in one bin): mean {:.2}, p50 {:.2}, p95 {:.2}, p99 {:.2}",
            self.all.flows,
            100 / BINS,
            self.all.mean,
            self.all.p50,
            self.all.p95,
            self.all.p99
        );
        let mut table = Table::new(&["FLOWS-%", "SIZE-FROM", "SIZE-TO", "FLOWS", "MEAN", "P50", "P95", "P99"]);
        for bin in &self.bins {
            let s = &bin.slowdown;
            table.row(vec![
                format!("{}-{}", bin.from_percent, bin.to_percent),
                bytes(bin.min_bytes),
                bytes(bin.max_bytes),
                s.flows.to_string(),
                format!("{:.2}", s.mean),
                format!("{:.2}", s.p50),
                format!("{:.2}", s.p95),
                format!("{:.2}", s.p99),
            ]);
        }
        table.print();
        if self.below_one > 0 {
            println!("{} flows finished faster than alone on the network (slowdown below 1)", self.below_one);
        }
    }

    /// (largest size of the bin, percentile) of every bin: one line of the plot.
    fn line(&self, pick: fn(&SlowdownStats) -> f64) -> Vec<(f64, f64)> {
        self.bins.iter().map(|b| (b.max_bytes as f64, pick(&b.slowdown))).collect()
    }
}

/// Sizes as the literature's tables print them: B, KB, MB (powers of 1000).
fn bytes(n: u64) -> String {
    match n {
        0..1_000 => format!("{n}B"),
        1_000..1_000_000 => format!("{:.1}KB", n as f64 / 1e3),
        _ => format!("{:.1}MB", n as f64 / 1e6),
    }
}

/// The slowdown-by-size plot of several runs (log size against log slowdown; p50 solid and
/// p99 per run, in the run's colour order), written to `<stem>.svg` and `.png`.
pub(super) fn plot(title: &str, runs: &[(String, &SlowdownSummary)], stem: &Path) -> Result<[PathBuf; 2]> {
    let mut series = Vec::new();
    for (label, summary) in runs {
        let prefix = if label.is_empty() { String::new() } else { format!("{label} ") };
        series.push(Series { label: format!("{prefix}p50"), points: summary.line(|s| s.p50) });
        series.push(Series { label: format!("{prefix}p99"), points: summary.line(|s| s.p99) });
    }
    let chart = Chart {
        title,
        x_label: "flow size (bytes, largest of each 5 % bin)",
        y_label: "FCT slowdown",
        x_scale: Scale::Log10,
        y_scale: Scale::Log10,
        series: &series,
        step: false,
    };
    plot::draw(&chart, stem)
}
