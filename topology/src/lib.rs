//! Topology descriptions: switches, hosts and the links between them, each link with its
//! speed, propagation delay, loss and MTU. One description serves the datapath (`pfcswitch
//! topology up` builds it from namespaces and veth pairs) and the simulator (`scenario
//! simulate` builds the same nodes in virtual time); the built-in topologies are files of
//! this format in the repository's `topologies/`, and the generated fabrics produce it too.
//!
//! The format is documented in `docs/topology.md`. Reading a file ([`Topology::load`]) checks
//! everything that can be checked without the switches' configs, before anything is built,
//! and a refusal names the file, the line and the reason ([`TopologyError`]).

mod description;
mod emit;
mod error;
mod file;
mod flooding;
mod load;
mod machines;
mod validate;

#[cfg(test)]
mod tests;

pub use description::{
    End, FIRST_VNI, HostAddresses, Interface, Link, MAX_HOSTS, MAX_VNI, Machine, NAMESPACE_HOSTS, Topology, Tunnel,
    VXLAN_PORT, VxlanSettings, builtins,
};
pub use error::TopologyError;
