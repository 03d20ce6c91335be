//! `pfcswitch traffic`: endpoints for a host namespace. `send` emits one sequence-numbered
//! flow at an emulated NIC speed and obeys PFC and PAUSE like a RoCE NIC (core's
//! `HostNic`); `recv` counts what arrives per flow, with loss and reordering; `storm` keeps
//! the link paused as a broken NIC does (core's `Storm`). With `--rocev2`, `send` and `recv`
//! are instead the two ends of one RoCEv2 RC connection of the hosts' `Transport` (RC SENDs,
//! ACKs and NAKs, CNPs; DCQCN with `send --dcqcn`). Frames go through AF_PACKET on the
//! host's interface.

mod args;
mod flow;
mod host;
mod iface;
mod rocev2;
mod storm;

pub use args::{RecvArgs, RoceArgs, SendArgs, StormArgs};

use anyhow::Result;

pub fn send(args: &SendArgs, json: bool) -> Result<()> {
    if args.rocev2 { rocev2::send(args, json) } else { flow::send(args, json) }
}

pub fn recv(args: &RecvArgs, json: bool) -> Result<()> {
    if args.rocev2 { rocev2::recv(args, json) } else { flow::recv(args, json) }
}

pub fn storm(args: &StormArgs, json: bool) -> Result<()> {
    storm::storm(args, json)
}
