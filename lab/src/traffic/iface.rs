//! What the kernel says of a host interface: its address, speed, MTU and IPv4 address.

use anyhow::{Context, Result};
use pfcswitch_link::units::BitRate;
use pfcswitch_wire::{EthernetAddress, Ipv4Addr};

fn sysfs(iface: &str, attribute: &str) -> Result<String> {
    std::fs::read_to_string(format!("/sys/class/net/{iface}/{attribute}"))
        .with_context(|| format!("interface `{iface}` not found in this network namespace"))
}

pub(super) fn iface_mac(iface: &str) -> Result<EthernetAddress> {
    Ok(sysfs(iface, "address")?.trim().parse()?)
}

/// The interface's MTU (the largest IP packet it sends).
pub(super) fn iface_mtu(iface: &str) -> Result<u32> {
    let text = sysfs(iface, "mtu")?;
    text.trim().parse().with_context(|| format!("`{iface}`: MTU `{}` in sysfs", text.trim()))
}

/// The speed the kernel reports for `iface` (veth reports 10 Gbit/s), if any.
pub(super) fn iface_speed(iface: &str) -> Option<BitRate> {
    let text = sysfs(iface, "speed").ok()?;
    text.trim().parse::<u64>().ok().filter(|&mbps| mbps > 0 && mbps < 1 << 40).map(BitRate::mbps)
}

/// The first IPv4 address of `iface`, or 0.0.0.0 (the switch forwards on MAC addresses).
pub(super) fn iface_ipv4(iface: &str) -> Ipv4Addr {
    let mut found = Ipv4Addr::UNSPECIFIED;
    // SAFETY: getifaddrs/freeifaddrs pair; every pointer is checked before use.
    unsafe {
        let mut list: *mut libc::ifaddrs = std::ptr::null_mut();
        if libc::getifaddrs(&mut list) != 0 {
            return found;
        }
        let mut entry = list;
        while !entry.is_null() {
            let e = &*entry;
            if !e.ifa_addr.is_null()
                && i32::from((*e.ifa_addr).sa_family) == libc::AF_INET
                && std::ffi::CStr::from_ptr(e.ifa_name).to_bytes() == iface.as_bytes()
            {
                let address = &*(e.ifa_addr as *const libc::sockaddr_in);
                found = Ipv4Addr::from(u32::from_be(address.sin_addr.s_addr));
                break;
            }
            entry = e.ifa_next;
        }
        libc::freeifaddrs(list);
    }
    found
}
