//! pfcswitchd: moves frames between AF_XDP sockets and the deterministic pfcswitch core.

pub mod classifier;
pub mod config;
pub mod control;
pub mod datapath;
pub mod host_port;
pub mod metrics;
pub mod notify;
pub mod packet;
pub mod signals;
pub mod timer;
pub mod umem;
pub mod xsk;
