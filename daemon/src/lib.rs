//! pfcswitchd: moves frames between AF_XDP sockets and the deterministic pfcswitch core.

pub mod classifier;
