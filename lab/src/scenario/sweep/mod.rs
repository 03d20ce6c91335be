//! `pfcswitch scenario sweep` and `merge`: one scenario run at every point of a grid, every
//! combination of some keys' values (`--set KEY=V1,V2,…`, keys as `run --set` takes them) ×
//! policies × seeds, each point a child process of this binary (`scenario simulate|run`),
//! then summarised: per combination and policy, each metric's mean over the seeds with its
//! 95 % confidence interval (Student's t), as a table, `summary.json` and a plot.
//!
//! A sweep's directory (default `results/NAME/sweep`) holds `sweep.json` (the manifest:
//! scenario, keys and values, policies, seeds, engine, shard), one directory per point,
//! `points/KEY=V[,KEY=V]/POLICY-seedS[-sim]/` with the run's files and its `log.txt`, and the
//! summary (`summary.json`, `sweep-METRIC.svg` and `.png`). A point whose `results.json`
//! parses is done: a sweep run again with the same options skips it. `--shard I/N` runs
//! every N-th point, so that a job array spreads a sweep over machines; `merge` summarises
//! the shards' directories as one.
//!
//! The modules: `spec` (options, keys and values, seeds, shards, the manifest), `metrics`
//! (what is read from `results.json`), `points` (their order, directories and shards),
//! `progress` and `execute` (running the points), `stats` (means and intervals), `summary`
//! (table, `summary.json`, plot), and the commands, `command` (sweep) and `merge`. This file
//! only declares them and re-exports what the CLI uses.

mod command;
mod execute;
mod merge;
mod metrics;
mod points;
mod progress;
mod spec;
mod stats;
mod summary;

pub use command::sweep;
pub use merge::merge;
pub use metrics::{METRICS, Metric};
pub use spec::{Axis, MergeArgs, Seeds, Shard, SweepArgs};
