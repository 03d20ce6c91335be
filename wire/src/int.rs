//! In-band network telemetry (P4.org "In-band Network Telemetry (INT) Dataplane
//! Specification" v2.1, INT-MD over UDP): the INT source (a sending host) puts a shim and an
//! INT-MD metadata header between the UDP header and the UDP payload, every transit switch
//! pushes one hop record at egress, and the sink (the receiving host) strips it all before
//! the payload is read, so a RoCEv2 ICRC (the source's, over the packet without INT) holds.
//!
//! The shim's NPT is 1: the UDP destination port becomes [`INT_UDP_PORT`] and the original
//! one travels in the shim, so DSCP stays free for classification. The view starts at the
//! shim:
//!
//! | bytes | field                                                                    |
//! |-------|--------------------------------------------------------------------------|
//! | 0     | type (4 bits: 1 INT-MD, 2 echo) · NPT (2 bits, 1) · reserved (2)         |
//! | 1     | length: MD header and hop stack in 4-byte words (v2.1: not the shim)     |
//! | 2–3   | original UDP destination port                                            |
//! | 4     | version (4 bits, 2) · D · E (hop limit exceeded) · M (MTU exceeded) · R   |
//! | 5     | reserved                                                                 |
//! | 6     | reserved (3 bits) · HopML (5 bits): words per hop                        |
//! | 7     | remaining hop count                                                      |
//! | 8–9   | instruction bitmap (bit 0 = 0x8000)                                      |
//! | 10–11 | domain-specific ID ([`INT_DOMAIN_ID`])                                   |
//! | 12–13 | domain-specific instruction bitmap                                       |
//! | 14–15 | domain-specific flags                                                    |
//! | 16–   | hop stack, newest first, HopML words each                                |
//!
//! A hop holds, in bit order, the fields its bitmaps ask for ([`IntInstructions`]); fields
//! pfcswitch does not measure are all ones, as the specification asks of transit nodes. An
//! acknowledgement echoes the records of the segment it acknowledges under a type-2 shim
//! ("INT-Destination" in v2.1, which transit nodes leave alone). Byte layout and reasons:
//! docs/frames.md, "INT over UDP".

use crate::field::{check_len, internet_checksum, read_u16, write_u16};
use crate::{Error, ErrorKind, FrameView, Layer, MIN_FRAME_LEN, Result, ethertype};

/// The UDP destination port of a datagram carrying INT. The specification leaves the port
/// to the domain; 4792 sits next to RoCEv2's 4791 and no Wireshark dissector claims it.
pub const INT_UDP_PORT: u16 = 4792;
pub const INT_SHIM_LEN: usize = 4;
/// The shim and the INT-MD metadata header: what a source inserts.
pub const INT_HEADER_LEN: usize = 16;
/// pfcswitch's domain-specific ID ("PF"), under which the DS bitmap asks for transmitted
/// bytes and link speed.
pub const INT_DOMAIN_ID: u16 = 0x5046;
const VERSION: u8 = 2;
const NPT_UDP_PORT: u8 = 1;
const FLAG_EXCEEDED: u8 = 0x04;
const FLAG_MTU: u8 = 0x02;
const IPV4_MIN_HEADER: usize = 20;
const UDP_HEADER: usize = 8;

/// What the shim announces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IntKind {
    /// INT-MD: transit switches push hop records.
    Md = 1,
    /// A receiver's echo of a segment's records to its sender; switches leave it alone.
    Echo = 2,
}

/// The two instruction bitmaps: which fields each hop record holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct IntInstructions {
    pub standard: u16,
    /// Meaningful under [`INT_DOMAIN_ID`].
    pub domain: u16,
}

impl IntInstructions {
    pub const NODE_ID: u16 = 0x8000;
    pub const PORTS: u16 = 0x4000;
    pub const QUEUE: u16 = 0x1000;
    pub const EGRESS_TIMESTAMP: u16 = 0x0400;
    /// Standard fields of 8 bytes: ingress and egress timestamps, L2 interface ids.
    const WIDE: u16 = 0x0800 | 0x0400 | 0x0200;
    /// The checksum complement (bit 15), which v2.1 places after the domain-specific fields.
    const CHECKSUM_COMPLEMENT: u16 = 0x0001;
    /// Domain-specific: the egress port's transmitted data bytes, modulo 2^32.
    pub const TX_BYTES: u16 = 0x8000;
    /// Domain-specific: the egress link's speed in Mbit/s.
    pub const LINK_SPEED: u16 = 0x4000;

    /// What HPCC's senders ask for (HPCC §3.1 needs ts, txBytes, qLen and B), with the node
    /// ID that names the switch: 24 bytes per hop.
    pub const HPCC: IntInstructions = IntInstructions {
        standard: Self::NODE_ID | Self::QUEUE | Self::EGRESS_TIMESTAMP,
        domain: Self::TX_BYTES | Self::LINK_SPEED,
    };

    /// 4-byte words per hop record.
    pub const fn hop_words(self) -> usize {
        (self.standard.count_ones() + (self.standard & Self::WIDE).count_ones() + self.domain.count_ones()) as usize
    }

    pub const fn hop_len(self) -> usize {
        self.hop_words() * 4
    }
}

/// One hop record: what a switch measured, `None` where the record does not ask (or, read
/// from a frame, where the node could not say: all ones).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct IntHop {
    pub node_id: Option<u32>,
    /// Ingress and egress port indices.
    pub ports: Option<(u16, u16)>,
    /// Queue id (the frame's priority) and occupancy in bytes (24 bits, saturating).
    pub queue: Option<(u8, u32)>,
    pub egress_ns: Option<u64>,
    pub tx_bytes: Option<u32>,
    pub link_mbps: Option<u32>,
}

/// The largest queue occupancy a record carries.
pub const INT_MAX_QUEUE_BYTES: u32 = 0x00FF_FFFF;

impl IntHop {
    /// Writes the record `instructions` ask for into `out` (at least their `hop_len`).
    pub fn emit(&self, instructions: IntInstructions, out: &mut [u8]) {
        let mut at = 0;
        let mut put = |bytes: &[u8]| {
            out[at..at + bytes.len()].copy_from_slice(bytes);
            at += bytes.len();
        };
        for bit in 0..15 {
            let mask = 0x8000u16 >> bit;
            if instructions.standard & mask == 0 {
                continue;
            }
            match mask {
                IntInstructions::NODE_ID => put(&word(self.node_id)),
                IntInstructions::PORTS => put(&word(self.ports.map(|(i, e)| u32::from(i) << 16 | u32::from(e)))),
                IntInstructions::QUEUE => {
                    put(&word(self.queue.map(|(id, bytes)| u32::from(id) << 24 | bytes.min(INT_MAX_QUEUE_BYTES))))
                }
                IntInstructions::EGRESS_TIMESTAMP => put(&self.egress_ns.unwrap_or(u64::MAX).to_be_bytes()),
                wide if wide & IntInstructions::WIDE != 0 => put(&[0xFF; 8]),
                _ => put(&[0xFF; 4]),
            }
        }
        for bit in 0..16 {
            let mask = 0x8000u16 >> bit;
            match instructions.domain & mask {
                0 => {}
                IntInstructions::TX_BYTES => put(&word(self.tx_bytes)),
                IntInstructions::LINK_SPEED => put(&word(self.link_mbps)),
                _ => put(&[0xFF; 4]),
            }
        }
        if instructions.standard & IntInstructions::CHECKSUM_COMPLEMENT != 0 {
            put(&[0xFF; 4]);
        }
    }

    /// Reads a record `instructions` describe from `bytes` (at least their `hop_len`).
    pub fn parse(instructions: IntInstructions, bytes: &[u8]) -> IntHop {
        let mut hop = IntHop::default();
        let mut at = 0;
        let mut take = |n: usize| {
            let field = &bytes[at..at + n];
            at += n;
            field
        };
        let word_of =
            |field: &[u8]| Some(u32::from_be_bytes(field.try_into().expect("4 bytes"))).filter(|&w| w != u32::MAX);
        for bit in 0..15 {
            let mask = 0x8000u16 >> bit;
            if instructions.standard & mask == 0 {
                continue;
            }
            match mask {
                IntInstructions::NODE_ID => hop.node_id = word_of(take(4)),
                IntInstructions::PORTS => hop.ports = word_of(take(4)).map(|w| ((w >> 16) as u16, w as u16)),
                IntInstructions::QUEUE => {
                    hop.queue = word_of(take(4)).map(|w| ((w >> 24) as u8, w & INT_MAX_QUEUE_BYTES))
                }
                IntInstructions::EGRESS_TIMESTAMP => {
                    hop.egress_ns =
                        Some(u64::from_be_bytes(take(8).try_into().expect("8 bytes"))).filter(|&t| t != u64::MAX)
                }
                wide if wide & IntInstructions::WIDE != 0 => {
                    take(8);
                }
                _ => {
                    take(4);
                }
            }
        }
        for bit in 0..16 {
            match instructions.domain & (0x8000u16 >> bit) {
                0 => {}
                IntInstructions::TX_BYTES => hop.tx_bytes = word_of(take(4)),
                IntInstructions::LINK_SPEED => hop.link_mbps = word_of(take(4)),
                _ => {
                    take(4);
                }
            }
        }
        hop
    }
}

fn word(value: Option<u32>) -> [u8; 4] {
    value.unwrap_or(u32::MAX).to_be_bytes()
}

/// A view of the INT bytes of a datagram: from the shim through the hop stack.
#[derive(Debug, Clone)]
pub struct IntHeader<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> IntHeader<T> {
    pub const fn new_unchecked(buffer: T) -> Self {
        IntHeader { buffer }
    }

    /// Guarantees the shim, the MD header and the stack its length announces are in bounds
    /// and consistent: type 1 or 2 (`BadValue`), NPT 1 (`BadValue`), version 2
    /// (`BadVersion`), HopML equal to what the bitmaps ask for and a stack of whole hops
    /// within the length (`BadLength`).
    pub fn new_checked(buffer: T) -> Result<Self> {
        let header = IntHeader { buffer };
        let data = header.buffer.as_ref();
        check_len(Layer::Int, data.len(), INT_HEADER_LEN)?;
        let bad = |kind| Err(Error::new(Layer::Int, kind));
        if !matches!(data[0] >> 4, 1 | 2) || (data[0] >> 2) & 0x03 != NPT_UDP_PORT {
            return bad(ErrorKind::BadValue);
        }
        if data[4] >> 4 != VERSION {
            return bad(ErrorKind::BadVersion);
        }
        let (len, hop_len) = (header.int_len(), header.hop_words() * 4);
        if len < INT_HEADER_LEN || len > data.len() || hop_len != header.instructions().hop_len() {
            return bad(ErrorKind::BadLength);
        }
        let stack = len - INT_HEADER_LEN;
        if !stack.is_multiple_of(hop_len) {
            return bad(ErrorKind::BadLength);
        }
        Ok(header)
    }

    fn data(&self) -> &[u8] {
        self.buffer.as_ref()
    }

    pub fn kind(&self) -> IntKind {
        if self.data()[0] >> 4 == 2 { IntKind::Echo } else { IntKind::Md }
    }

    /// Bytes of INT: shim, MD header and hop stack (the shim's length counts the last two).
    pub fn int_len(&self) -> usize {
        INT_SHIM_LEN + usize::from(self.data()[1]) * 4
    }

    pub fn original_port(&self) -> u16 {
        read_u16(self.data(), 2)
    }

    /// A node found the remaining hop count at 0 and pushed nothing.
    pub fn hop_limit_exceeded(&self) -> bool {
        self.data()[4] & FLAG_EXCEEDED != 0
    }

    /// A node had no room for its record under its egress MTU.
    pub fn mtu_exceeded(&self) -> bool {
        self.data()[4] & FLAG_MTU != 0
    }

    pub fn hop_words(&self) -> usize {
        usize::from(self.data()[6] & 0x1F)
    }

    pub fn remaining_hops(&self) -> u8 {
        self.data()[7]
    }

    /// The bitmaps; the domain-specific one only under [`INT_DOMAIN_ID`].
    pub fn instructions(&self) -> IntInstructions {
        let domain = if read_u16(self.data(), 10) == INT_DOMAIN_ID { read_u16(self.data(), 12) } else { 0 };
        IntInstructions { standard: read_u16(self.data(), 8), domain }
    }

    pub fn hop_count(&self) -> usize {
        match self.hop_words() {
            0 => 0,
            words => (self.int_len() - INT_HEADER_LEN) / (words * 4),
        }
    }

    /// Hop `i`'s record, 0 the newest (the last switch's).
    pub fn hop(&self, i: usize) -> IntHop {
        let hop_len = self.hop_words() * 4;
        let at = INT_HEADER_LEN + i * hop_len;
        IntHop::parse(self.instructions(), &self.data()[at..at + hop_len])
    }

    /// The MD header and the hop stack, as an echo carries them.
    pub fn metadata(&self) -> &[u8] {
        &self.data()[INT_SHIM_LEN..self.int_len()]
    }
}

/// The INT header as values, without its stack.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct IntRepr {
    pub kind: IntKind,
    pub original_port: u16,
    pub instructions: IntInstructions,
    pub remaining_hops: u8,
}

impl IntRepr {
    /// What an INT source inserts: the header for `instructions`, room for `max_hops`.
    pub const fn source(original_port: u16, instructions: IntInstructions, max_hops: u8) -> IntRepr {
        IntRepr { kind: IntKind::Md, original_port, instructions, remaining_hops: max_hops }
    }

    /// Writes the shim and the MD header of an empty stack into `out` (16 bytes).
    pub fn emit(&self, out: &mut [u8]) {
        out[0] = (self.kind as u8) << 4 | NPT_UDP_PORT << 2;
        out[1] = ((INT_HEADER_LEN - INT_SHIM_LEN) / 4) as u8;
        write_u16(out, 2, self.original_port);
        out[4] = VERSION << 4;
        out[5] = 0;
        out[6] = self.instructions.hop_words() as u8;
        out[7] = self.remaining_hops;
        write_u16(out, 8, self.instructions.standard);
        write_u16(out, 10, if self.instructions.domain != 0 { INT_DOMAIN_ID } else { 0 });
        write_u16(out, 12, self.instructions.domain);
        write_u16(out, 14, 0);
    }
}

/// What an egress port does to a frame carrying INT-MD.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntEgress {
    /// Push this record.
    Push(IntHop),
    /// No hops remain: set E.
    HopLimit,
    /// The record would take the frame past the egress MTU: set M.
    Mtu,
}

/// Where the IPv4 header, the UDP header and the UDP payload start in an IPv4/UDP frame,
/// and where the IP packet ends.
struct Layout {
    ip: usize,
    udp: usize,
    ip_end: usize,
}

fn layout(frame: &[u8]) -> Result<Layout> {
    let view = FrameView::parse(frame)?;
    if view.l2.ethertype != ethertype::IPV4 {
        return Err(Error::new(Layer::Ipv4, ErrorKind::WrongEtherType));
    }
    let ip = frame.len() - view.payload.len();
    let packet = &frame[ip..];
    check_len(Layer::Ipv4, packet.len(), IPV4_MIN_HEADER)?;
    let header_len = usize::from(packet[0] & 0x0F) * 4;
    let total = usize::from(read_u16(packet, 2));
    if packet[9] != crate::ipv4::PROTOCOL_UDP {
        return Err(Error::new(Layer::Udp, ErrorKind::WrongEtherType));
    }
    if header_len < IPV4_MIN_HEADER || total < header_len + UDP_HEADER || total > packet.len() {
        return Err(Error::new(Layer::Ipv4, ErrorKind::BadLength));
    }
    Ok(Layout { ip, udp: ip + header_len, ip_end: ip + total })
}

/// The INT of a parsed frame, as [`int_of`] finds it, without parsing the frame again (what
/// the switch and the hosts do for every frame they receive).
pub fn int_in<'a>(view: &FrameView<'a>) -> Result<IntHeader<&'a [u8]>> {
    let (_, _, udp, payload) = view.ip_udp()?;
    if udp.dst_port != INT_UDP_PORT {
        return Err(Error::new(Layer::Int, ErrorKind::WrongEtherType));
    }
    IntHeader::new_checked(payload)
}

/// The offset of the INT shim in an IPv4/UDP `frame` to [`INT_UDP_PORT`], and its view. A
/// datagram to another port is `WrongEtherType` at layer INT (no INT, as
/// [`crate::FrameView::roce`] answers for other ports), a bad INT header any other error there.
pub fn int_of(frame: &[u8]) -> Result<(usize, IntHeader<&[u8]>)> {
    let at = layout(frame)?;
    if read_u16(frame, at.udp + 2) != INT_UDP_PORT {
        return Err(Error::new(Layer::Int, ErrorKind::WrongEtherType));
    }
    let shim = at.udp + UDP_HEADER;
    Ok((shim, IntHeader::new_checked(&frame[shim..at.ip_end])?))
}

/// Grows the IP packet and the UDP datagram by `delta` bytes (negative: shrinks) in their
/// length fields, and recomputes the IPv4 header checksum. UDP's checksum becomes 0 (none),
/// as RoCEv2 sends it: the payload moved under it.
fn resize(frame: &mut [u8], at: &Layout, delta: isize) {
    let grow = |value: u16| (value as isize + delta) as u16;
    let (ip_total, udp_len) = (read_u16(frame, at.ip + 2), read_u16(frame, at.udp + 4));
    write_u16(frame, at.ip + 2, grow(ip_total));
    write_u16(frame, at.udp + 4, grow(udp_len));
    write_u16(frame, at.udp + 6, 0);
    write_u16(frame, at.ip + 10, 0);
    let checksum = internet_checksum(&[&frame[at.ip..at.udp]]);
    write_u16(frame, at.ip + 10, checksum);
}

/// Inserts INT after the UDP header of the IPv4/UDP frame in `frame[..len]`: `header` with
/// `metadata` after it (a source: empty; an echo: the MD header and hop stack it echoes, in
/// which case `header`'s own MD fields are left out). The UDP destination port moves into
/// the shim. Returns the new length; `frame` needs room for it (`Truncated` otherwise).
pub fn insert_int(frame: &mut [u8], len: usize, header: &IntRepr, metadata: &[u8]) -> Result<usize> {
    let at = layout(&frame[..len])?;
    let n = if header.kind == IntKind::Echo { INT_SHIM_LEN + metadata.len() } else { INT_HEADER_LEN };
    if !n.is_multiple_of(4) || (n - INT_SHIM_LEN) / 4 > usize::from(u8::MAX) {
        return Err(Error::new(Layer::Int, ErrorKind::BadLength));
    }
    check_len(Layer::Int, frame.len(), (at.ip_end + n).max(MIN_FRAME_LEN))?;
    let payload = at.udp + UDP_HEADER;
    frame.copy_within(payload..at.ip_end, payload + n);
    let mut shim = [0u8; INT_HEADER_LEN];
    header.emit(&mut shim);
    shim[1] = ((n - INT_SHIM_LEN) / 4) as u8;
    shim[2..4].copy_from_slice(&frame[at.udp + 2..at.udp + 4]);
    match header.kind {
        IntKind::Md => frame[payload..payload + n].copy_from_slice(&shim),
        IntKind::Echo => {
            frame[payload..payload + INT_SHIM_LEN].copy_from_slice(&shim[..INT_SHIM_LEN]);
            frame[payload + INT_SHIM_LEN..payload + n].copy_from_slice(metadata);
        }
    }
    write_u16(frame, at.udp + 2, INT_UDP_PORT);
    resize(frame, &at, n as isize);
    Ok(pad_to_min(frame, at.ip_end + n))
}

/// Removes the INT of the frame in `frame[..len]` (a sink), restoring the UDP destination
/// port and the lengths; returns the new length.
pub fn remove_int(frame: &mut [u8], len: usize) -> Result<usize> {
    let (shim, header) = int_of(&frame[..len])?;
    let (n, port) = (header.int_len(), header.original_port());
    let at = layout(&frame[..len])?;
    frame.copy_within(shim + n..at.ip_end, shim);
    write_u16(frame, at.udp + 2, port);
    resize(frame, &at, -(n as isize));
    Ok(pad_to_min(frame, at.ip_end - n))
}

fn pad_to_min(frame: &mut [u8], end: usize) -> usize {
    if end < MIN_FRAME_LEN {
        frame[end..MIN_FRAME_LEN].fill(0);
    }
    end.max(MIN_FRAME_LEN)
}

/// Applies an egress port's INT action to the frame in `buffer[start..start + len]`: a
/// pushed record goes right after the MD header, the bytes before it moving `hop_len` into
/// the headroom before `start` (so a datapath stamps in place, moving only the headers);
/// a flag is set in place. Returns the frame's new start and length. The frame must carry
/// INT-MD, and a push needs `start >= hop_len` (`Truncated` otherwise).
pub fn apply_int(buffer: &mut [u8], start: usize, len: usize, egress: &IntEgress) -> Result<(usize, usize)> {
    let frame = &buffer[start..start + len];
    let (shim, header) = int_of(frame)?;
    if header.kind() != IntKind::Md {
        return Err(Error::new(Layer::Int, ErrorKind::BadValue));
    }
    let (instructions, hop_len, int_words) = (header.instructions(), header.hop_words() * 4, frame[shim + 1]);
    let at = layout(frame)?;
    let flag = match egress {
        IntEgress::Push(hop) => {
            let words = usize::from(int_words) + hop_len / 4;
            if header.remaining_hops() == 0 || words > usize::from(u8::MAX) {
                return Err(Error::new(Layer::Int, ErrorKind::BadValue));
            }
            check_len(Layer::Int, start, hop_len)?;
            let new_start = start - hop_len;
            let stack = start + shim + INT_HEADER_LEN;
            buffer.copy_within(start..stack, new_start);
            hop.emit(instructions, &mut buffer[stack - hop_len..stack]);
            let frame = &mut buffer[new_start..start + len];
            frame[shim + 1] = words as u8;
            frame[shim + 7] -= 1;
            resize(frame, &at, hop_len as isize);
            return Ok((new_start, len + hop_len));
        }
        IntEgress::HopLimit => FLAG_EXCEEDED,
        IntEgress::Mtu => FLAG_MTU,
    };
    buffer[start + shim + 4] |= flag;
    Ok((start, len))
}

#[cfg(test)]
mod tests;
