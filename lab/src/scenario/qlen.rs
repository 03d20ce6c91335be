//! `qlen.txt` as HPCC's simulator writes it (`monitor_buffer` in its `scratch/third.cc`):
//! every switch port's egress bytes over all priorities, sampled at a fixed period, counted
//! in a histogram of 1 KB (1,000-byte) buckets per port; the histograms, cumulative, are
//! dumped as
//!
//! ```text
//! time: T
//! node port n0 n1 n2 …
//! ```
//!
//! (`n_k` samples at k KB; nodes numbered as [`HpccNodes`] says, ports from 1, lines by node
//! then port). HPCC samples every 100 ns and dumps when the time is a multiple of 100 ms; so
//! does this, on HPCC's clock (2 s plus the time from the workload's start), and it dumps
//! once more at the last sample, so that a run shorter than 100 ms has its histograms.

use super::hpcc_nodes::HpccNodes;
use super::progress::Check;
use pfcswitch_hpcc::generate::BASE_NS;
use pfcswitch_link::time::Instant;
use pfcswitch_sim::Network;
use std::fmt::Write as _;
use std::time::Duration;

/// HPCC's `qlen_dump_interval`.
const DUMP_NS: u64 = 100_000_000;

/// Samples a simulated network's queues while it runs.
pub(super) struct QlenMonitor {
    interval: Duration,
    /// None once a sample at or past the window's end was taken.
    next: Option<Instant>,
    end: Option<Instant>,
    epoch: Instant,
    /// Per switch, per port: samples per KB of egress bytes.
    counts: Vec<Vec<Vec<u64>>>,
    last_sample: Option<Instant>,
    dumped: String,
}

impl QlenMonitor {
    /// Sampling `net`'s switches every `interval` from `start` after `epoch` (the workload's
    /// start) to the first sample at or past `end` after it, as HPCC's `monitor_buffer`
    /// reschedules itself while the time is before `QLEN_MON_END`.
    pub(super) fn new(
        net: &Network,
        interval: Duration,
        epoch: Instant,
        start: Duration,
        end: Option<Duration>,
    ) -> QlenMonitor {
        let counts = net.switches.iter().map(|s| vec![Vec::new(); s.port_count()]).collect();
        QlenMonitor {
            interval,
            next: Some(epoch + start),
            end: end.map(|end| epoch + end),
            epoch,
            counts,
            last_sample: None,
            dumped: String::new(),
        }
    }

    /// Runs `net` until `until`, sampling at every period on the way; false if `check` stopped
    /// it (see [`Network::run_until_or`]). Sampling does not disturb the run: the network is
    /// polled once, as a plain run's would be, then only advanced from sample to sample.
    pub(super) fn run_until(
        &mut self,
        net: &mut Network,
        until: Instant,
        nodes: &HpccNodes,
        check: &mut Check,
    ) -> bool {
        net.touch_all();
        while let Some(at) = self.next.filter(|&at| at <= until) {
            if !net.advance_until_or(at, &mut *check) {
                return false;
            }
            self.sample(net, nodes);
            self.next = self.end.is_none_or(|end| at < end).then(|| at + self.interval);
        }
        net.advance_until_or(until, check)
    }

    fn sample(&mut self, net: &Network, nodes: &HpccNodes) {
        for (switch, ports) in net.switches.iter().zip(&mut self.counts) {
            for (port, histogram) in ports.iter_mut().enumerate() {
                let bytes: u64 = (0..8).map(|p| switch.buffers().egress(port, p).bytes).sum();
                let kb = (bytes / 1000) as usize;
                if histogram.len() <= kb {
                    histogram.resize(kb + 1, 0);
                }
                histogram[kb] += 1;
            }
        }
        let at = self.next.expect("sampled at a due time");
        self.last_sample = Some(at);
        if self.hpcc_time(at).is_multiple_of(DUMP_NS) {
            self.dump(at, nodes);
        }
    }

    fn hpcc_time(&self, at: Instant) -> u64 {
        BASE_NS + (at.as_nanos() - self.epoch.as_nanos())
    }

    fn dump(&mut self, at: Instant, nodes: &HpccNodes) {
        writeln!(self.dumped, "time: {}", self.hpcc_time(at)).expect("a String takes it");
        let mut order: Vec<usize> = (0..self.counts.len()).collect();
        order.sort_by_key(|&s| nodes.switches[s]);
        for s in order {
            for (port, histogram) in self.counts[s].iter().enumerate() {
                let counts: String = histogram.iter().map(|n| format!(" {n}")).collect();
                writeln!(self.dumped, "{} {}{counts}", nodes.switches[s], port + 1).expect("a String takes it");
            }
        }
    }

    /// The file: every dump, and one at the last sample if it was not one.
    pub(super) fn finish(mut self, nodes: &HpccNodes) -> String {
        if let Some(last) = self.last_sample.filter(|&last| !self.hpcc_time(last).is_multiple_of(DUMP_NS)) {
            self.dump(last, nodes);
        }
        self.dumped
    }
}
