//! Raw Ethernet frames through AF_PACKET, in the calling thread's network namespace.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// An AF_PACKET socket bound to one interface, seeing every EtherType.
#[derive(Debug)]
pub struct RawSocket {
    fd: OwnedFd,
}

const ETH_P_ALL_BE: u16 = (libc::ETH_P_ALL as u16).to_be();

impl RawSocket {
    pub fn open(iface: &str) -> io::Result<RawSocket> {
        let name = std::ffi::CString::new(iface).map_err(io::Error::other)?;
        // SAFETY: plain syscalls with valid arguments; the fd is owned right after creation.
        unsafe {
            let ifindex = libc::if_nametoindex(name.as_ptr());
            if ifindex == 0 {
                return Err(io::Error::last_os_error());
            }
            let raw = libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, i32::from(ETH_P_ALL_BE));
            if raw < 0 {
                return Err(io::Error::last_os_error());
            }
            let fd = OwnedFd::from_raw_fd(raw);
            let mut address: libc::sockaddr_ll = std::mem::zeroed();
            address.sll_family = libc::AF_PACKET as u16;
            address.sll_protocol = ETH_P_ALL_BE;
            address.sll_ifindex = ifindex as i32;
            let rc = libc::bind(
                fd.as_raw_fd(),
                (&raw const address).cast(),
                std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
            );
            if rc != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(RawSocket { fd })
        }
    }

    /// Sends `frame` exactly as given (tags inline, no padding added).
    pub fn send(&self, frame: &[u8]) -> io::Result<()> {
        // SAFETY: the buffer is valid for its length.
        let sent = unsafe { libc::send(self.fd.as_raw_fd(), frame.as_ptr().cast(), frame.len(), 0) };
        if sent < 0 {
            return Err(io::Error::last_os_error());
        }
        assert_eq!(sent as usize, frame.len(), "short send");
        Ok(())
    }
}
