//! The switch of pfcswitch as a sans-IO state machine, in quinn-proto's style: frames and
//! time come in as parameters (`Switch::handle_rx(now, port, frame)`), outputs are polled
//! (`poll_tx`, `poll_timeout`). Buffers (ingress accounting, egress queues, shared pools),
//! the scheduler, the FDB and ECMP, the flow-control policies (`pfc`, the CaPFC baselines,
//! CaPFC, OFC), QCN congestion points, FECN rate points, ECN marking, the PFC watchdog, the
//! switch configuration and the snapshots the control socket serves.
//!
//! No I/O, no clock, no threads: the AF_XDP daemon (`pfcswitchd`), unit tests on virtual
//! time and the simulator (`pfcswitch-sim`) drive the same code. Hosts' transports are not
//! here (`pfcswitch-hosts`), nor are sockets (`pfcswitchd`).
#![forbid(unsafe_code)]

pub mod buffer;
pub mod config;
pub mod config_error;
pub mod counters;
pub mod ecn;
pub mod explain;
pub mod fdb;
pub mod fecn;
pub mod int;
pub mod ledger;
pub mod pfcwd;
pub mod policy;
mod port_set;
pub mod qcn;
pub mod report;
pub mod sched;
pub mod switch;

pub use switch::{ControlFrame, QueueState, RxVerdict, Switch, Tx};
