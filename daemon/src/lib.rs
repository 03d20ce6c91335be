//! pfcswitchd: moves frames between AF_XDP sockets and the sans-IO switch
//! (`pfcswitch-switch`), and reads the clock for it. It owns the I/O: the shared UMEM and
//! AF_XDP sockets, loading and attaching the C XDP programs built from `ebpf/`, the
//! run-to-completion loop that feeds `Switch::handle_rx(now, port, frame)` and drains
//! `poll_tx`, the control socket, the Prometheus endpoint, config loading and signals; and,
//! for the traffic endpoints, a host's AF_XDP port (`host_port`) and an AF_PACKET socket
//! (`packet`). It decides nothing about a frame: every decision is the switch's.

pub mod args;
pub mod classifier;
pub mod config;
pub mod control;
pub mod datapath;
pub mod host_port;
pub mod link;
pub mod metrics;
pub mod notify;
pub mod packet;
pub mod signals;
pub mod timer;
pub mod umem;
pub mod xsk;
