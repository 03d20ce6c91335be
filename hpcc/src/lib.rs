//! The files of HPCC's ns-3 (github alibaba-edu/High-Precision-Congestion-Control, the
//! simulator most PFC and RDMA congestion-control papers use), so that an experiment moves
//! between it and pfcswitch as it is:
//!
//! - [`topology`]: `topology.txt` (nodes, switch ids, links with ns-3's rate and delay
//!   strings), read with every check ns-3 leaves to a crash, and written;
//! - [`flows`]: `flow.txt` (`src dst pg dport size start_s`), read counting the lines rather
//!   than trusting the header, and written;
//! - [`fct`]: `fct.txt` (HPCC's eight columns, hosts as hex IPv4 addresses) and the
//!   standalone-FCT rule of its `third.cc`;
//! - [`analysis`]: the table `analysis/fct_analysis.py` prints, computed as its awk, `sort`
//!   and Python 2 would;
//! - [`pfc`]: `pfc.txt` (a line per PAUSE or RESUME a device took) and the time paused;
//! - [`generate`]: `traffic_gen/traffic_gen.py`'s Poisson flows and the incast its authors
//!   describe, seeded.
//!
//! Every reader refuses a bad file with the file, the line and the reason ([`FileError`]).
//! The crate knows nothing of pfcswitch's switches: `lab` turns these into runs.

pub mod analysis;
pub mod config;
mod error;
pub mod fct;
pub mod flows;
pub mod generate;
pub mod pfc;
pub mod topology;
pub mod units;

pub use error::FileError;
