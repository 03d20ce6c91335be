//! Raw Ethernet frames through AF_PACKET, in the calling thread's network namespace: how
//! `pfcswitch traffic` endpoints and the tests send and receive exact bytes on a host's veth.

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
            let raw = libc::socket(
                libc::AF_PACKET,
                libc::SOCK_RAW | libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK,
                i32::from(ETH_P_ALL_BE),
            );
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
            // Our own transmissions would otherwise be looped back into the receive queue,
            // crowding out what arrives (a sender could miss the PFC frames it must obey).
            let one: libc::c_int = 1;
            let size = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
            if libc::setsockopt(
                fd.as_raw_fd(),
                libc::SOL_PACKET,
                libc::PACKET_IGNORE_OUTGOING,
                (&raw const one).cast(),
                size,
            ) != 0
            {
                return Err(io::Error::last_os_error());
            }
            Ok(RawSocket { fd })
        }
    }

    /// Sends `frame` exactly as given (tags inline, no padding added), waiting for room in
    /// the socket buffer if needed.
    pub fn send(&self, frame: &[u8]) -> io::Result<()> {
        loop {
            // SAFETY: the buffer is valid for its length.
            let sent = unsafe { libc::send(self.fd.as_raw_fd(), frame.as_ptr().cast(), frame.len(), 0) };
            if sent >= 0 {
                return Ok(());
            }
            let error = io::Error::last_os_error();
            if error.kind() != io::ErrorKind::WouldBlock {
                return Err(error);
            }
            let mut poll = libc::pollfd { fd: self.fd.as_raw_fd(), events: libc::POLLOUT, revents: 0 };
            // SAFETY: one valid pollfd.
            unsafe { libc::poll(&mut poll, 1, 100) };
        }
    }

    /// The next frame that arrived on the interface (frames we sent ourselves are skipped),
    /// or `None` if none is waiting.
    pub fn try_recv<'b>(&self, buffer: &'b mut [u8]) -> io::Result<Option<&'b [u8]>> {
        loop {
            // SAFETY: the address is a properly sized local; the buffer is valid.
            let (len, address) = unsafe {
                let mut address: libc::sockaddr_ll = std::mem::zeroed();
                let mut address_len = std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t;
                let len = libc::recvfrom(
                    self.fd.as_raw_fd(),
                    buffer.as_mut_ptr().cast(),
                    buffer.len(),
                    0,
                    (&raw mut address).cast(),
                    &mut address_len,
                );
                (len, address)
            };
            if len < 0 {
                let error = io::Error::last_os_error();
                return if error.kind() == io::ErrorKind::WouldBlock { Ok(None) } else { Err(error) };
            }
            if address.sll_pkttype != libc::PACKET_OUTGOING {
                return Ok(Some(&buffer[..len as usize]));
            }
        }
    }

    /// Grows the receive buffer to `bytes` (as root, beyond net.core.rmem_max), so that a
    /// receiver descheduled for a while loses nothing.
    pub fn set_receive_buffer(&self, bytes: usize) -> io::Result<()> {
        let value = libc::c_int::try_from(bytes).unwrap_or(libc::c_int::MAX);
        // SAFETY: setting an integer socket option from a local.
        let rc = unsafe {
            libc::setsockopt(
                self.fd.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_RCVBUFFORCE,
                (&raw const value).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        if rc == 0 { Ok(()) } else { Err(io::Error::last_os_error()) }
    }

    /// Frames the kernel dropped because this socket's buffer was full, since the last call.
    pub fn take_drops(&self) -> io::Result<u64> {
        let mut stats = libc::tpacket_stats { tp_packets: 0, tp_drops: 0 };
        let mut len = std::mem::size_of::<libc::tpacket_stats>() as libc::socklen_t;
        // SAFETY: reading the statistics into a properly sized local.
        let rc = unsafe {
            libc::getsockopt(
                self.fd.as_raw_fd(),
                libc::SOL_PACKET,
                libc::PACKET_STATISTICS,
                (&raw mut stats).cast(),
                &mut len,
            )
        };
        if rc == 0 { Ok(u64::from(stats.tp_drops)) } else { Err(io::Error::last_os_error()) }
    }

    pub fn fd(&self) -> std::os::fd::RawFd {
        self.fd.as_raw_fd()
    }
}
