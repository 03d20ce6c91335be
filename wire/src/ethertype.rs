//! EtherType values pfcswitch reads or writes.

pub const IPV4: u16 = 0x0800;
pub const ARP: u16 = 0x0806;
pub const VLAN: u16 = 0x8100;
pub const IPV6: u16 = 0x86DD;
pub const MAC_CONTROL: u16 = 0x8808;
/// IEEE 802 local experimental EtherType 1: the project's own frames, told apart by
/// their first nibble: a host's announcement (0, a zero payload) or a FECN probe (1).
pub const LOCAL_EXPERIMENTAL_1: u16 = 0x88B5;
/// 802.1Qau congestion notification message.
pub const CNM: u16 = 0x22E7;
/// 802.1Qau congestion notification tag.
pub const CN_TAG: u16 = 0x22E9;
