//! The deterministic core of pfcswitch.
//!
//! Everything that decides about a frame lives here and runs on time passed in by the caller:
//! no I/O, no clock, no threads. The AF_XDP daemon, unit tests on virtual time and the
//! simulator all drive the same code.
#![forbid(unsafe_code)]

pub mod buffer;
pub mod config;
pub mod counters;
pub mod ecn;
pub mod fdb;
pub mod fecn;
pub mod host;
pub mod pause;
pub mod pfcwd;
pub mod policy;
pub mod qcn;
pub mod report;
pub mod rng;
pub mod sched;
pub mod sim;
pub mod switch;
pub mod time;
pub mod units;
pub mod wire;
pub mod workload;

pub use switch::{ControlFrame, QueueState, RxVerdict, Switch, Tx};
