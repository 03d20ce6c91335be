//! The table HPCC's `analysis/fct_analysis.py` prints, for any number of `fct.txt` files
//! (its "CCs", one column group each), computed exactly as its pipeline does:
//!
//! 1. awk keeps the flows of the chosen kind (`-t 0`: `dport` 100, `-t 1`: 200) that end
//!    before `-T` (start + FCT < T, in ns), and prints `slowdown size` with the slowdown
//!    FCT / standalone FCT raised to at least 1 in awk's number format (`%.6g`, or a whole
//!    number as an integer): the slowdowns are rounded to 6 significant digits;
//! 2. `sort -n -k 2` orders the lines by size, equal sizes by the whole line's bytes (the
//!    C locale; in another locale `sort` may order those ties differently);
//! 3. Python drops the last line with the trailing empty one (`split('\n')[:-2]`): the
//!    largest flow is never counted;
//! 4. the n flows left are cut into bins of `step` percent by count, bin i from
//!    ⌊i·n/100⌋ to ⌊(i+step)·n/100⌋; each bin prints its largest size (its last flow's) and
//!    the slowdowns at p50, p95 and p99, the p-th being element ⌊len·p⌋ of the bin's sorted
//!    slowdowns.
//!
//! Where the script fails, this says why: an empty bin (too few flows for the step), and
//! `-t 2` (all flows), whose awk program has a syntax error there and works here.

use crate::fct::FctRecord;
use crate::flows::{DPORT_INCAST, DPORT_NORMAL};
use std::fmt::Write as _;

/// Which flows a table counts (`fct_analysis.py -t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowKind {
    /// `dport` 100: `traffic_gen.py`'s flows (`-t 0`).
    Normal,
    /// `dport` 200: the incast's (`-t 1`).
    Incast,
    /// Every flow (`-t 2`).
    All,
}

impl FlowKind {
    fn admits(self, dport: u16) -> bool {
        match self {
            FlowKind::Normal => dport == DPORT_NORMAL,
            FlowKind::Incast => dport == DPORT_INCAST,
            FlowKind::All => true,
        }
    }
}

/// `fct_analysis.py`'s options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// Bin width in percent of the flows (`-s`, default 5).
    pub step: usize,
    pub kind: FlowKind,
    /// Only flows that finish before this, in ns (`-T`, default 3 s).
    pub time_limit_ns: u64,
}

impl Default for Options {
    fn default() -> Options {
        Options { step: 5, kind: FlowKind::Normal, time_limit_ns: 3_000_000_000 }
    }
}

/// One bin of one file.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bin {
    /// The largest size in the bin.
    pub size: u64,
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
}

/// Per file, its bins, in order.
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    pub step: usize,
    pub columns: Vec<Vec<Bin>>,
}

/// A number as awk prints it with its default `OFMT` (`%.6g`), a whole one as an integer.
pub fn awk_number(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        return format!("{x:.0}");
    }
    let scientific = format!("{x:.5e}");
    let (mantissa, exponent) = scientific.split_once('e').expect("{:e} has an exponent");
    let exponent: i32 = exponent.parse().expect("{:e}'s exponent is a number");
    let trim = |s: &str| s.trim_end_matches('0').trim_end_matches('.').to_string();
    if !(-4..6).contains(&exponent) {
        let sign = if exponent < 0 { '-' } else { '+' };
        return format!("{}e{sign}{:02}", trim(mantissa), exponent.abs());
    }
    trim(&format!("{x:.*}", (5 - exponent) as usize))
}

/// The sorted `(slowdown, size)` pairs of one file that the bins are cut from.
fn sorted_flows(records: &[FctRecord], options: &Options) -> Vec<(f64, u64)> {
    let mut lines: Vec<(u64, String)> = records
        .iter()
        .filter(|r| {
            options.kind.admits(r.dport)
                && u128::from(r.start_ns) + u128::from(r.fct_ns) < u128::from(options.time_limit_ns)
        })
        .map(|r| {
            let slowdown = r.fct_ns as f64 / r.standalone_ns as f64;
            (r.size, format!("{} {}", awk_number(if slowdown < 1.0 { 1.0 } else { slowdown }), r.size))
        })
        .collect();
    lines.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.as_bytes().cmp(b.1.as_bytes())));
    lines.pop();
    lines
        .into_iter()
        .map(|(size, line)| (line.split(' ').next().and_then(|s| s.parse().ok()).expect("awk_number reads back"), size))
        .collect()
}

/// The bins of one file; the reason when a bin would be empty.
fn bins(records: &[FctRecord], options: &Options) -> Result<Vec<Bin>, String> {
    let flows = sorted_flows(records, options);
    let n = flows.len();
    let percentile = |sorted: &[f64], p: f64| sorted[(sorted.len() as f64 * p) as usize];
    (0..100)
        .step_by(options.step)
        .map(|i| {
            let (l, r) = (i * n / 100, ((i + options.step) * n / 100).min(n));
            let bin = &flows[l..r.max(l)];
            let Some(&(_, size)) = bin.last() else {
                return Err(format!(
                    "the bin from {i} % has no flow: {n} flows counted, too few for {} % bins",
                    options.step
                ));
            };
            let mut slowdowns: Vec<f64> = bin.iter().map(|&(s, _)| s).collect();
            slowdowns.sort_by(f64::total_cmp);
            Ok(Bin {
                size,
                p50: percentile(&slowdowns, 0.5),
                p95: percentile(&slowdowns, 0.95),
                p99: percentile(&slowdowns, 0.99),
            })
        })
        .collect()
}

impl Table {
    /// The table of `files` (each a file's records), as `fct_analysis.py` would print it.
    pub fn of(files: &[Vec<FctRecord>], options: &Options) -> Result<Table, String> {
        if options.step == 0 || options.step > 100 {
            return Err(format!("a step of {} % does not cut 100 % into bins", options.step));
        }
        let columns = files.iter().map(|records| bins(records, options)).collect::<Result<_, _>>()?;
        Ok(Table { step: options.step, columns })
    }

    /// `fct_analysis.py`'s output: a line per bin, `%.3f %d` (the bin's start as a
    /// fraction, the first file's largest size) then `\t%.3f %.3f %.3f` per file.
    pub fn emit(&self) -> String {
        let mut text = String::new();
        let rows = self.columns.first().map_or(0, Vec::len);
        for row in 0..rows {
            let start = (row * self.step) as f64 / 100.0;
            write!(text, "{start:.3} {}", self.columns[0][row].size).expect("a String takes it");
            for column in &self.columns {
                let b = column[row];
                write!(text, "\t{:.3} {:.3} {:.3}", b.p50, b.p95, b.p99).expect("a String takes it");
            }
            text.push('\n');
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(size: u64, fct_ns: u64, standalone_ns: u64, dport: u16) -> FctRecord {
        FctRecord { src: 0, dst: 1, sport: 10000, dport, size, start_ns: 2_000_000_000, fct_ns, standalone_ns }
    }

    #[test]
    fn awk_prints_numbers_with_six_significant_digits() {
        for (x, text) in [
            (1.0, "1"),
            (1.0625, "1.0625"),
            (1.234565, "1.23456"),
            (2.0 / 3.0, "0.666667"),
            (123456.5, "123456"),
            (1234567.5, "1.23457e+06"),
            (2.5e-5, "2.5e-05"),
            (10.0, "10"),
            (99999.95, "99999.9"),
            (999999.5, "1e+06"),
        ] {
            assert_eq!(awk_number(x), text, "{x}");
        }
    }

    /// Ten flows of sizes 1..=10 with slowdowns 1..=10 (FCT = size × standalone): the
    /// largest is dropped, nine remain; 50 % bins are flows [0, 4) and [4, 9).
    #[test]
    fn bins_by_count_drop_the_largest_flow_and_pick_percentiles_by_index() {
        let records: Vec<_> = (1..=10).map(|s| record(s, s * 1000, 1000, 100)).collect();
        let table = Table::of(&[records], &Options { step: 50, ..Options::default() }).unwrap();
        let bins = &table.columns[0];
        assert_eq!(bins[0], Bin { size: 4, p50: 3.0, p95: 4.0, p99: 4.0 });
        assert_eq!(bins[1], Bin { size: 9, p50: 7.0, p95: 9.0, p99: 9.0 });
        assert_eq!(table.emit(), "0.000 4\t3.000 4.000 4.000\n0.500 9\t7.000 9.000 9.000\n");
    }

    #[test]
    fn slowdowns_below_one_count_as_one_and_kinds_and_the_time_limit_filter() {
        let mut records = vec![record(1, 500, 1000, 100), record(2, 3000, 1000, 100), record(3, 1000, 1000, 100)];
        records.push(record(1, 9000, 1000, 200));
        let late = FctRecord { start_ns: 2_999_999_000, ..record(2, 1000, 1000, 100) };
        records.push(late);
        let table = Table::of(std::slice::from_ref(&records), &Options { step: 100, ..Options::default() }).unwrap();
        // Normal flows ending before 3 s: sizes 1, 2, 3; the largest dropped.
        assert_eq!(table.columns[0], vec![Bin { size: 2, p50: 3.0, p95: 3.0, p99: 3.0 }]);
        let incast = Options { step: 100, kind: FlowKind::Incast, ..Options::default() };
        assert!(Table::of(std::slice::from_ref(&records), &incast).unwrap_err().contains("0 flows counted"));
        let all = Options { step: 100, kind: FlowKind::All, time_limit_ns: u64::MAX };
        assert_eq!(Table::of(&[records], &all).unwrap().columns[0][0].size, 2);
    }

    /// Equal sizes are ordered by their lines' bytes, as `LC_ALL=C sort -n -k 2` does:
    /// "10 5" before "2 5", so the bin boundary falls between them.
    #[test]
    fn equal_sizes_are_ordered_as_sort_orders_their_lines() {
        let records = vec![
            record(5, 2000, 1000, 100),
            record(5, 10_000, 1000, 100),
            record(5, 3000, 1000, 100),
            record(9, 1000, 1000, 100),
        ];
        let flows = sorted_flows(&records, &Options::default());
        assert_eq!(flows, vec![(10.0, 5), (2.0, 5), (3.0, 5)]);
    }
}
