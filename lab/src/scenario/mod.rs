//! `pfcswitch scenario`: reproducible experiments in network namespaces or on the simulator.
//! A scenario file (TOML) names a topology file (`topologies/`, or a generated
//! fabric), the switches' configs, a policy, the hosts' NIC speed and transport, and a
//! workload (`[[class]]` tables, see `crate::workload`). `run` brings the topology up with
//! one pfcswitchd per switch, starts an endpoint in every host, samples the switches'
//! queues, tears everything down (also on error or Ctrl-C) and writes `results.json`, a
//! table and plots; `simulate` does the same on virtual time.
//!
//! The files form layers, each importing only from the ones before it:
//! - plan: `sets` (`--set KEY=VALUE` on a scenario file's table), `plan` (scenario files,
//!   [`TransportSpec`], [`load`], [`load_with`], [`root`]), `policy`, `schemes` (PFC watchdog,
//!   QCN, FECN), `fabric` (`[fabric]`), `topology` (nodes, links, host addresses) and `args`
//!   (the commands' options);
//! - run: `configs` (each switch's config), `prepare`, `namespaces` (`crate::netns`),
//!   `runner` (the datapath), [`endpoint`] (a host's process), `simulate`, `deadlock`;
//! - results: `ideal` (a message's FCT alone on the network), `record` (what a run
//!   collected), `paths`, `phases`, `slowdown` (FCT slowdown by flow size), `summary` ([`Outcome`]);
//! - report: `report` (tables, plots, `results.json`) and `compare`;
//! - [`sweep`]: `sweep` and `merge`, grids of `--set` values × policies × seeds run as child
//!   processes and summarised with confidence intervals;
//! - HPCC's ns-3: [`hpcc_import`] (a `config.txt` as a scenario), `hpcc_fabric`,
//!   `hpcc_nodes`, `hpcc_out` (its files from a run) and [`hpcc_fig11`] (its Fig. 11, one
//!   imported and simulated run per congestion control).
//!
//! This file only declares them and re-exports what the CLI uses.

mod args;
mod capture;
mod compare;
mod configs;
mod deadlock;
pub mod endpoint;
mod fabric;
mod faults;
mod hpcc_fabric;
pub mod hpcc_fig11;
pub mod hpcc_import;
mod hpcc_nodes;
mod hpcc_out;
mod ideal;
mod interrupt;
mod namespaces;
mod paths;
mod phases;
mod plan;
mod policy;
mod prepare;
mod progress;
mod qlen;
mod record;
mod report;
mod runner;
mod schemes;
mod sets;
mod sim_capture;
mod simulate;
mod slowdown;
mod summary;
pub mod sweep;
mod topology;

pub use args::{CompareArgs, DeadlockArgs, Modes, RunArgs, run_dir};
pub use compare::compare;
pub use deadlock::deadlock;
pub use plan::{DcqcnSpec, Scenario, TransportSpec, list, load, load_with, root};
pub use policy::{RunPolicy, parse_policy};
pub use runner::run;
pub use schemes::{CcMode, FecnMode, FecnSpec, PfcwdMode, QcnMode, QcnSpec, parse_fecn, parse_pfcwd, parse_qcn};
pub use simulate::simulate;
pub use summary::Outcome;
