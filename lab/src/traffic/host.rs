//! A host's [`Transport`] and [`HostNic`] on an AF_PACKET socket: the loop both RoCEv2 ends
//! of `traffic send` and `recv` run. Each turn takes what arrived (PAUSE/PFC to the NIC, the
//! rest to the transport), fires the transport's timers, sends what the transport has, and
//! sleeps until its next deadline, the caller's, or a frame.
//!
//! Frames are read with their VLAN tag back in place: with rx-vlan-offload on (veth's
//! default, and the hosts' `eth0` in the topologies) the kernel lifts the tag out of a
//! received frame, and a receiver that saw its data untagged would acknowledge it, and send
//! its CNPs, untagged on priority 0.

use pfcswitch_hosts::{HostNic, Transport};
use pfcswitch_link::time::Instant;
use pfcswitch_link::units::BitRate;
use pfcswitchd::packet::RawSocket;
use pfcswitchd::timer::{self, Clock, Lateness};
use std::io;

/// What the caller wants after a turn.
pub(super) enum Turn {
    /// Go on, waking no later than this (`None`: when the transport or a frame needs it).
    WakeBy(Option<Instant>),
    Stop,
}

pub(super) struct Host {
    pub(super) socket: RawSocket,
    pub(super) clock: Clock,
    pub(super) nic: HostNic,
    pub(super) transport: Transport,
    /// Frames that were neither PAUSE/PFC nor the transport's (ICMP, ARP, other hosts').
    pub(super) foreign: u64,
    /// When the transport last took a frame.
    pub(super) last_arrival: Option<Instant>,
    /// The lowest rate any DCQCN reaction point was at after a turn.
    pub(super) lowest_dcqcn_rate: Option<BitRate>,
    lateness: Lateness,
    buffer: Vec<u8>,
    incoming: Vec<u8>,
}

impl Host {
    pub(super) fn new(socket: RawSocket, clock: Clock, nic: HostNic, transport: Transport) -> io::Result<Host> {
        let on: libc::c_int = 1;
        // SAFETY: a valid socket and an int option of the right size.
        let set = unsafe {
            libc::setsockopt(
                socket.fd(),
                libc::SOL_PACKET,
                libc::PACKET_AUXDATA,
                (&raw const on).cast(),
                std::mem::size_of_val(&on) as libc::socklen_t,
            )
        };
        if set != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Host {
            socket,
            clock,
            nic,
            transport,
            foreign: 0,
            last_arrival: None,
            lowest_dcqcn_rate: None,
            lateness: Lateness::new(),
            buffer: vec![0u8; 9216],
            incoming: vec![0u8; 9216 + VLAN_TAG_LEN],
        })
    }

    /// Runs turns until `next` says stop; `transmit`: whether the transport may send (a
    /// sender that stopped only listens for the last ACKs and PFC frames).
    pub(super) fn run(&mut self, transmit: bool, mut next: impl FnMut(&Host, Instant) -> Turn) -> io::Result<()> {
        // What the last wait was for: the NIC's catch-up credit starts there, not at the poll
        // before the wait.
        let mut woke_for: Option<Instant> = None;
        loop {
            let now = self.clock.now();
            if let Some(due) = woke_for {
                self.nic.rest(due.min(now));
            }
            self.receive(now)?;
            self.transport.handle_timeout(now);
            if transmit {
                while let Some(len) = self.transport.poll_transmit(now, &mut self.nic, &mut self.buffer) {
                    self.socket.send(&self.buffer[..len])?;
                }
            }
            self.note_rates();
            let wake_by = match next(self, now) {
                Turn::Stop => return Ok(()),
                Turn::WakeBy(wake_by) => wake_by,
            };
            let transport = if transmit { self.transport.poll_timeout(&self.nic) } else { None };
            let deadline = match (transport, wake_by) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            let mut fds = [timer::readable(self.socket.fd())];
            // No spinning: the NIC's burst credit absorbs late wake-ups, and the switch needs the CPU.
            timer::wait(&self.clock, deadline, std::time::Duration::ZERO, &mut fds, || false, Some(&mut self.lateness));
            woke_for = deadline;
        }
    }

    /// Takes every frame waiting on the socket.
    fn receive(&mut self, now: Instant) -> io::Result<()> {
        loop {
            let frame = match recv_tagged(self.socket.fd(), &mut self.incoming) {
                Ok(Some(frame)) => frame,
                Ok(None) => return Ok(()),
                // The interface went down (a link flap): go on once it is back.
                Err(error) if error.raw_os_error() == Some(libc::ENETDOWN) => return Ok(()),
                Err(error) => return Err(error),
            };
            if self.nic.handle_rx(now, frame) {
                continue;
            }
            if self.transport.handle_rx(now, frame) {
                self.last_arrival = Some(now);
            } else {
                self.foreign += 1;
            }
        }
    }

    fn note_rates(&mut self) {
        for (_, rp, _) in self.transport.dcqcn_points() {
            self.lowest_dcqcn_rate = Some(self.lowest_dcqcn_rate.map_or(rp.rate(), |r| r.min(rp.rate())));
        }
    }
}

const VLAN_TAG_LEN: usize = 4;

/// The next frame another host sent, if any, with the VLAN tag the kernel lifted out of it
/// (`PACKET_AUXDATA`) put back after the MAC addresses.
fn recv_tagged(fd: std::os::fd::RawFd, buffer: &mut [u8]) -> io::Result<Option<&[u8]>> {
    loop {
        // SAFETY: plain C structs, zero-initialised.
        let mut address: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        let mut control = [0u64; 16];
        // Received 4 bytes in, so that the tag fits in front of the EtherType.
        let mut iov =
            libc::iovec { iov_base: buffer[VLAN_TAG_LEN..].as_mut_ptr().cast(), iov_len: buffer.len() - VLAN_TAG_LEN };
        // SAFETY: as above.
        let mut message: libc::msghdr = unsafe { std::mem::zeroed() };
        message.msg_name = (&raw mut address).cast();
        message.msg_namelen = std::mem::size_of_val(&address) as libc::socklen_t;
        message.msg_iov = &raw mut iov;
        message.msg_iovlen = 1;
        message.msg_control = control.as_mut_ptr().cast();
        message.msg_controllen = std::mem::size_of_val(&control) as _;
        // SAFETY: every pointer in `message` is to a live buffer of the length it gives.
        let received = unsafe { libc::recvmsg(fd, &raw mut message, libc::MSG_DONTWAIT) };
        if received < 0 {
            let error = io::Error::last_os_error();
            match error.kind() {
                io::ErrorKind::WouldBlock => return Ok(None),
                io::ErrorKind::Interrupted => continue,
                _ => return Err(error),
            }
        }
        if address.sll_pkttype == libc::PACKET_OUTGOING {
            continue;
        }
        let len = received as usize;
        // SAFETY: the control buffer the kernel filled, walked with the CMSG macros.
        let tag = unsafe {
            let mut header = libc::CMSG_FIRSTHDR(&raw const message);
            let mut tag = None;
            while !header.is_null() {
                if (*header).cmsg_level == libc::SOL_PACKET && (*header).cmsg_type == libc::PACKET_AUXDATA {
                    let aux: libc::tpacket_auxdata = std::ptr::read_unaligned(libc::CMSG_DATA(header).cast());
                    if aux.tp_status & libc::TP_STATUS_VLAN_VALID != 0 {
                        let tpid_valid = aux.tp_status & libc::TP_STATUS_VLAN_TPID_VALID != 0;
                        tag = Some((if tpid_valid { aux.tp_vlan_tpid } else { 0x8100 }, aux.tp_vlan_tci));
                    }
                }
                header = libc::CMSG_NXTHDR(&raw const message, header);
            }
            tag
        };
        let Some((tpid, tci)) = tag else { return Ok(Some(&buffer[VLAN_TAG_LEN..VLAN_TAG_LEN + len])) };
        if len < 12 {
            continue;
        }
        buffer.copy_within(VLAN_TAG_LEN..VLAN_TAG_LEN + 12, 0);
        buffer[12..14].copy_from_slice(&tpid.to_be_bytes());
        buffer[14..16].copy_from_slice(&tci.to_be_bytes());
        return Ok(Some(&buffer[..len + VLAN_TAG_LEN]));
    }
}
