//! The ports' links as the kernel reports them: rtnetlink link events (`RTMGRP_LINK`), read
//! without blocking from a socket the datapath's idle wait polls beside its rings, so a
//! change is seen at once and costs nothing while nothing changes.
//!
//! A port's link is up when its interface is administratively up and has carrier
//! (`IFF_UP` and `IFF_LOWER_UP`: a veth whose peer is down, or a NIC without cable, is down);
//! it is absent when its interface no longer exists.

use netlink_packet_core::{NetlinkMessage, NetlinkPayload};
use netlink_packet_route::RouteNetlinkMessage;
use netlink_packet_route::link::{LinkAttribute, LinkFlags, LinkMessage};
use netlink_sys::protocols::NETLINK_ROUTE;
use netlink_sys::{Socket, SocketAddr};
use std::io;
use std::os::fd::{AsRawFd, RawFd};

/// `RTMGRP_LINK`: the multicast group of link changes.
const RTMGRP_LINK: u32 = 1;
/// Room for one read of events (a burst of changes on many interfaces).
const BUFFER: usize = 64 * 1024;
const IFF_UP: u32 = 1;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkState {
    Up,
    Down,
    /// The interface does not exist.
    Absent,
}

impl LinkState {
    pub fn name(self) -> &'static str {
        match self {
            LinkState::Up => "up",
            LinkState::Down => "down",
            LinkState::Absent => "absent",
        }
    }

    fn of_flags(flags: LinkFlags) -> LinkState {
        if flags.contains(LinkFlags::Up | LinkFlags::LowerUp) { LinkState::Up } else { LinkState::Down }
    }

    /// The state of `iface` now, from sysfs: the starting point before any event.
    pub fn read(iface: &str) -> LinkState {
        let dir = format!("/sys/class/net/{iface}");
        let Ok(flags) = std::fs::read_to_string(format!("{dir}/flags")) else {
            return LinkState::Absent;
        };
        let up = u32::from_str_radix(flags.trim().trim_start_matches("0x"), 16).is_ok_and(|f| f & IFF_UP != 0);
        // Reading `carrier` fails while the interface is administratively down.
        let carrier = std::fs::read_to_string(format!("{dir}/carrier")).is_ok_and(|c| c.trim() == "1");
        if up && carrier { LinkState::Up } else { LinkState::Down }
    }
}

/// `iface` (interface index `index`) is now `state`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkEvent {
    pub iface: String,
    pub index: u32,
    pub state: LinkState,
}

impl LinkEvent {
    /// The state of `iface` now, from sysfs (index 0 when absent).
    pub fn read(iface: &str) -> LinkEvent {
        let index = std::fs::read_to_string(format!("/sys/class/net/{iface}/ifindex"))
            .ok()
            .and_then(|text| text.trim().parse().ok())
            .unwrap_or(0);
        LinkEvent { iface: iface.to_string(), index, state: LinkState::read(iface) }
    }
}

/// One port's link as the datapath last saw it.
#[derive(Clone, Copy, Debug)]
pub struct PortLink {
    pub state: LinkState,
    pub transitions: u64,
    /// The index of the interface the port's sockets and XDP program are on; `None` while
    /// the port is unbound.
    pub bound: Option<u32>,
    /// An interface of the port's name appeared while it was unbound: try to bind it then.
    pub bind_at: Option<pfcswitch_link::time::Instant>,
    /// Failed attempts to bind the interface that appeared.
    pub bind_failures: u32,
}

impl PortLink {
    /// A port bound at start to the interface `now` describes.
    pub fn bound(now: LinkEvent) -> PortLink {
        PortLink { state: now.state, transitions: 0, bound: Some(now.index), bind_at: None, bind_failures: 0 }
    }

    pub fn is_bound(&self) -> bool {
        self.bound.is_some()
    }
}

/// What a read of the event socket found.
#[derive(Debug, PartialEq, Eq)]
pub enum Events {
    /// These changes, in order (possibly none).
    Changes(Vec<LinkEvent>),
    /// The kernel dropped events (the socket's buffer overran): read every port's state again.
    Lost,
}

/// A non-blocking rtnetlink socket subscribed to link changes.
#[derive(Debug)]
pub struct LinkWatcher {
    socket: Socket,
    buffer: Vec<u8>,
}

impl LinkWatcher {
    pub fn open() -> io::Result<LinkWatcher> {
        let mut socket = Socket::new(NETLINK_ROUTE)?;
        socket.bind(&SocketAddr::new(0, RTMGRP_LINK))?;
        socket.set_non_blocking(true)?;
        Ok(LinkWatcher { socket, buffer: vec![0; BUFFER] })
    }

    pub fn fd(&self) -> RawFd {
        self.socket.as_raw_fd()
    }

    /// Everything that happened since the last read.
    pub fn read(&mut self) -> io::Result<Events> {
        let mut events = Vec::new();
        loop {
            let mut buffer = &mut self.buffer[..];
            match self.socket.recv(&mut buffer, 0) {
                Ok(len) => parse(&self.buffer[..len], &mut events),
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => return Ok(Events::Changes(events)),
                Err(error) if error.raw_os_error() == Some(libc::ENOBUFS) => return Ok(Events::Lost),
                Err(error) => return Err(error),
            }
        }
    }
}

/// The link events in one datagram of rtnetlink messages; others are skipped.
fn parse(mut bytes: &[u8], events: &mut Vec<LinkEvent>) {
    while !bytes.is_empty() {
        let Ok(message) = NetlinkMessage::<RouteNetlinkMessage>::deserialize(bytes) else {
            log::warn!("unreadable rtnetlink message ({} bytes)", bytes.len());
            return;
        };
        let event = match message.payload {
            NetlinkPayload::InnerMessage(RouteNetlinkMessage::NewLink(link)) => {
                event(&link, LinkState::of_flags(link.header.flags))
            }
            NetlinkPayload::InnerMessage(RouteNetlinkMessage::DelLink(link)) => event(&link, LinkState::Absent),
            _ => None,
        };
        events.extend(event);
        // Messages are aligned to 4 bytes (NLMSG_ALIGN).
        let length = (message.header.length as usize).next_multiple_of(4);
        if length == 0 || length >= bytes.len() {
            return;
        }
        bytes = &bytes[length..];
    }
}

fn event(link: &LinkMessage, state: LinkState) -> Option<LinkEvent> {
    link.attributes.iter().find_map(|attribute| match attribute {
        LinkAttribute::IfName(name) => Some(LinkEvent { iface: name.clone(), index: link.header.index, state }),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use netlink_packet_core::{NetlinkHeader, NetlinkMessage};
    use netlink_packet_route::link::LinkHeader;

    fn message(new: bool, name: &str, flags: LinkFlags) -> Vec<u8> {
        let mut link = LinkMessage::default();
        link.header = LinkHeader { flags, index: 7, ..LinkHeader::default() };
        link.attributes.push(LinkAttribute::IfName(name.into()));
        let inner = if new { RouteNetlinkMessage::NewLink(link) } else { RouteNetlinkMessage::DelLink(link) };
        let mut message = NetlinkMessage::new(NetlinkHeader::default(), NetlinkPayload::InnerMessage(inner));
        message.finalize();
        let mut bytes = vec![0; message.buffer_len()];
        message.serialize(&mut bytes);
        bytes
    }

    #[test]
    fn carrier_loss_deletion_and_return_in_one_datagram() {
        let mut datagram = message(true, "p2", LinkFlags::Up);
        datagram.extend(message(false, "p2", LinkFlags::empty()));
        datagram.extend(message(true, "p2", LinkFlags::Up | LinkFlags::LowerUp | LinkFlags::Running));
        let mut events = Vec::new();
        parse(&datagram, &mut events);
        let states: Vec<_> = events.iter().map(|e| (e.iface.as_str(), e.index, e.state)).collect();
        assert_eq!(states, [("p2", 7, LinkState::Down), ("p2", 7, LinkState::Absent), ("p2", 7, LinkState::Up)]);
    }

    #[test]
    fn a_truncated_datagram_yields_what_it_holds_and_no_panic() {
        let datagram = message(true, "p1", LinkFlags::Up | LinkFlags::LowerUp);
        for cut in 0..datagram.len() {
            let mut events = Vec::new();
            parse(&datagram[..cut], &mut events);
            assert!(events.is_empty(), "{cut} bytes");
        }
    }

    #[test]
    fn loopback_is_up_and_a_missing_interface_absent() {
        assert_eq!(LinkEvent::read("lo"), LinkEvent { iface: "lo".into(), index: 1, state: LinkState::Up });
        assert_eq!(LinkState::read("pfcswitch-no-such-if"), LinkState::Absent);
        assert_eq!(LinkEvent::read("pfcswitch-no-such-if").index, 0);
    }
}
