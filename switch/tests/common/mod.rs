//! Addresses and priorities shared by the switch's tests, which drive one `Switch` by hand.
#![allow(dead_code)] // each test binary uses its own subset

use pfcswitch_wire::{EthernetAddress, Pcp};

/// The MAC of the host on port `index` (the simulator's tests number hosts the same way).
pub fn host_mac(index: usize) -> EthernetAddress {
    EthernetAddress([0x02, 0, 0, 0, 0x01, index as u8 + 1])
}

pub fn pcp(n: u8) -> Pcp {
    Pcp::new(n).unwrap()
}
