//! Whole frames: the layer-2 stack (Ethernet, optional 802.1Q tag, optional CN-TAG) and
//! builders for the frames pfcswitch sends, each writing into a caller's buffer.

use super::cn_tag::CN_TAG_HEADER_LEN;
use super::field::write_u16;
use super::ipv4::{IPV4_HEADER_LEN, PROTOCOL_UDP};
use super::traffic::TRAFFIC_HEADER_LEN;
use super::udp::UDP_HEADER_LEN;
use super::vlan::VLAN_HEADER_LEN;
use super::{
    BTH_LEN, CnTagHeader, CnTagRepr, CnmPacket, CnmRepr, ETHERNET_HEADER_LEN, Error, ErrorKind, EthernetAddress,
    EthernetFrame, EthernetRepr, FecnProbe, FecnProbeRepr, FlowKey, Framing, ICRC_LEN, Ipv4Addr, Ipv4Packet, Ipv4Repr,
    Layer, MIN_FRAME_LEN, MacControlPacket, MacControlRepr, OFC_ENTRY_LEN, OFC_HEADER_LEN, OFC_TLV_OFFSET, OfcHeader,
    OfcOp, OfcRepr, OfcTlv, Opcode, PAUSE_MULTICAST, Pcp, PfcRepr, ROCEV2_UDP_PORT, Result, RocePacket, RoceRepr,
    SEGMENT_INFO_LEN, TrafficHeader, TrafficKind, TrafficRepr, UdpPacket, UdpRepr, VlanHeader, VlanRepr, check_icrc,
    ethertype, fill_icrc, has_ofc_tlv,
};

/// The layer-2 headers of a frame as values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct L2Repr {
    pub dst: EthernetAddress,
    pub src: EthernetAddress,
    pub vlan: Option<VlanRepr>,
    pub cn_tag: Option<CnTagRepr>,
    /// The EtherType after all tags.
    pub ethertype: u16,
}

impl L2Repr {
    /// Parses the headers and returns them with the offset of the payload.
    #[inline]
    pub fn parse(frame: &[u8]) -> Result<(L2Repr, usize)> {
        let ethernet = EthernetRepr::parse(&EthernetFrame::new_checked(frame)?)?;
        let mut repr =
            L2Repr { dst: ethernet.dst, src: ethernet.src, vlan: None, cn_tag: None, ethertype: ethernet.ethertype };
        let mut offset = ETHERNET_HEADER_LEN;
        if repr.ethertype == ethertype::VLAN {
            let header = VlanHeader::new_checked(&frame[offset..])?;
            repr.vlan = Some(VlanRepr::parse(&header));
            repr.ethertype = header.ethertype();
            offset += VLAN_HEADER_LEN;
        }
        if repr.ethertype == ethertype::CN_TAG {
            let header = CnTagHeader::new_checked(&frame[offset..])?;
            repr.cn_tag = Some(CnTagRepr::parse(&header));
            repr.ethertype = header.ethertype();
            offset += CN_TAG_HEADER_LEN;
        }
        Ok((repr, offset))
    }

    pub fn header_len(&self) -> usize {
        ETHERNET_HEADER_LEN
            + if self.vlan.is_some() { VLAN_HEADER_LEN } else { 0 }
            + if self.cn_tag.is_some() { CN_TAG_HEADER_LEN } else { 0 }
    }

    /// Writes the headers and returns the offset of the payload.
    pub fn emit(&self, frame: &mut [u8]) -> usize {
        let after_vlan = if self.cn_tag.is_some() { ethertype::CN_TAG } else { self.ethertype };
        let outer = if self.vlan.is_some() { ethertype::VLAN } else { after_vlan };
        EthernetRepr { src: self.src, dst: self.dst, ethertype: outer }
            .emit(&mut EthernetFrame::new_unchecked(&mut *frame));
        let mut offset = ETHERNET_HEADER_LEN;
        if let Some(vlan) = self.vlan {
            let mut header = VlanHeader::new_unchecked(&mut frame[offset..]);
            vlan.emit(&mut header);
            header.set_ethertype(after_vlan);
            offset += VLAN_HEADER_LEN;
        }
        if let Some(cn_tag) = self.cn_tag {
            let mut header = CnTagHeader::new_unchecked(&mut frame[offset..]);
            cn_tag.emit(&mut header);
            header.set_ethertype(self.ethertype);
            offset += CN_TAG_HEADER_LEN;
        }
        offset
    }
}

/// A parsed frame: its layer-2 headers and the payload after them.
#[derive(Clone, Copy, Debug)]
pub struct FrameView<'a> {
    pub l2: L2Repr,
    pub payload: &'a [u8],
}

impl<'a> FrameView<'a> {
    #[inline]
    pub fn parse(frame: &'a [u8]) -> Result<FrameView<'a>> {
        let (l2, offset) = L2Repr::parse(frame)?;
        Ok(FrameView { l2, payload: &frame[offset..] })
    }

    /// The PCP of the 802.1Q tag, if the frame has one.
    pub fn pcp(&self) -> Option<Pcp> {
        self.l2.vlan.map(|vlan| vlan.pcp)
    }

    fn expect_ethertype(&self, wanted: u16, layer: Layer) -> Result<()> {
        if self.l2.ethertype == wanted { Ok(()) } else { Err(Error::new(layer, ErrorKind::WrongEtherType)) }
    }

    pub fn is_mac_control(&self) -> bool {
        self.l2.ethertype == ethertype::MAC_CONTROL
    }

    /// The PAUSE or PFC content of a MAC control frame.
    pub fn mac_control(&self) -> Result<MacControlRepr> {
        self.expect_ethertype(ethertype::MAC_CONTROL, Layer::MacControl)?;
        MacControlRepr::parse(&MacControlPacket::new_checked(self.payload)?)
    }

    /// The OFC TLV after a PFC frame's fields: `None` for a plain PFC frame (or another
    /// MAC control frame), an error for a malformed TLV or PFC frame.
    pub fn ofc(&self) -> Result<Option<OfcRepr<'a>>> {
        let MacControlRepr::Pfc(pfc) = self.mac_control()? else { return Ok(None) };
        // After the 20 PFC bytes (mac_control() checked the payload holds at least 46).
        let trailer = &self.payload[OFC_TLV_OFFSET - ETHERNET_HEADER_LEN..];
        if !has_ofc_tlv(trailer) {
            return Ok(None);
        }
        OfcRepr::parse(&OfcTlv::new_checked(trailer)?, &pfc).map(Some)
    }

    pub fn cnm(&self) -> Result<CnmRepr<'a>> {
        self.expect_ethertype(ethertype::CNM, Layer::Cnm)?;
        CnmRepr::parse(&CnmPacket::new_checked(self.payload)?)
    }

    /// A FECN probe (EtherType 0x88B5, version 1).
    pub fn fecn_probe(&self) -> Result<FecnProbeRepr> {
        self.expect_ethertype(ethertype::LOCAL_EXPERIMENTAL_1, Layer::Fecn)?;
        FecnProbeRepr::parse(&FecnProbe::new_checked(self.payload)?)
    }

    /// The DSCP of an IPv4 or IPv6 payload, for trust mode `dscp`.
    pub fn dscp(&self) -> Option<u8> {
        match (self.l2.ethertype, self.payload) {
            (ethertype::IPV4, [version_ihl, tos, ..]) if version_ihl >> 4 == 4 => Some(tos >> 2),
            (ethertype::IPV6, [first, second, ..]) if first >> 4 == 6 => Some(((first & 0x0F) << 2) | (second >> 6)),
            _ => None,
        }
    }

    /// The ECN field (RFC 3168 §5) of an IPv4 or IPv6 payload: 0 Not-ECT, 1 ECT(1),
    /// 2 ECT(0), 3 CE.
    pub fn ecn(&self) -> Option<u8> {
        match (self.l2.ethertype, self.payload) {
            (ethertype::IPV4, [version_ihl, tos, ..]) if version_ihl >> 4 == 4 => Some(tos & 0x03),
            (ethertype::IPV6, [first, second, ..]) if first >> 4 == 6 => Some((second >> 4) & 0x03),
            _ => None,
        }
    }

    /// A hash of the frame's flow for ECMP: the MAC addresses, and for IPv4 and IPv6 the
    /// addresses, the protocol and, for TCP and UDP, the ports (not of IPv4 fragments, or
    /// behind IPv6 extension headers, whose later pieces have none). `seed` differs per
    /// switch so that two tiers of ECMP do not pick alike (hash polarisation).
    pub fn flow_hash(&self, seed: u32) -> u32 {
        let mut hash = FlowHasher(u64::from(seed));
        hash.add(&self.l2.dst.0);
        hash.add(&self.l2.src.0);
        let (addresses, protocol, transport) = match (self.l2.ethertype, self.payload) {
            (ethertype::IPV4, ip) if ip.len() >= IPV4_HEADER_LEN && ip[0] >> 4 == 4 => {
                let header_len = usize::from(ip[0] & 0x0F) * 4;
                let fragment = u16::from_be_bytes([ip[6], ip[7]]) & 0x3FFF != 0;
                (&ip[12..20], ip[9], if fragment { &[][..] } else { ip.get(header_len..).unwrap_or(&[]) })
            }
            (ethertype::IPV6, ip) if ip.len() >= IPV6_HEADER_LEN && ip[0] >> 4 == 6 => {
                (&ip[8..40], ip[6], &ip[IPV6_HEADER_LEN..])
            }
            _ => (&[][..], 0, &[][..]),
        };
        hash.add(addresses);
        hash.add(&[protocol]);
        if matches!(protocol, PROTOCOL_TCP | PROTOCOL_UDP) {
            hash.add(transport.get(..4).unwrap_or(&[]));
        }
        hash.finish()
    }

    /// The IPv4 and UDP headers of an IPv4/UDP frame, the IP header's length and the UDP
    /// payload.
    pub(crate) fn ip_udp(&self) -> Result<(Ipv4Repr, usize, UdpRepr, &'a [u8])> {
        self.expect_ethertype(ethertype::IPV4, Layer::Ipv4)?;
        let ip_packet = Ipv4Packet::new_checked(self.payload)?;
        let ip = Ipv4Repr::parse(&ip_packet)?;
        if ip.protocol != PROTOCOL_UDP {
            return Err(Error::new(Layer::Udp, ErrorKind::WrongEtherType));
        }
        // Ipv4Repr::parse checked header length <= total length <= the bytes, UdpRepr::parse
        // 8 <= UDP length <= the IP payload.
        let header_len = ip_packet.header_len();
        let datagram = &self.payload[header_len..header_len + ip.payload_len];
        let udp = UdpRepr::parse(&UdpPacket::new_checked(datagram)?)?;
        Ok((ip, header_len, udp, &datagram[UDP_HEADER_LEN..UDP_HEADER_LEN + udp.payload_len]))
    }

    /// The IPv4, UDP and traffic headers of an endpoint's frame, in either framing: a
    /// datagram to UDP port 4791 is RoCEv2 (its ICRC verified, then mapped back by
    /// [`TrafficRepr::from_roce`]), any other the traffic header.
    pub fn traffic(&self) -> Result<(Ipv4Repr, UdpRepr, TrafficRepr)> {
        let (ip, header_len, udp, udp_payload) = self.ip_udp()?;
        let traffic = if udp.dst_port == ROCEV2_UDP_PORT {
            let roce = self.roce_of(ip, header_len, udp, udp_payload)?;
            roce.icrc?;
            TrafficRepr::from_roce(&roce.repr, roce.packet.payload())?
        } else {
            TrafficRepr::parse(&TrafficHeader::new_checked(udp_payload)?)?
        };
        Ok((ip, udp, traffic))
    }

    /// The RoCEv2 packet of a frame to UDP port 4791 (another port: `WrongEtherType` at
    /// layer `roce`), its headers checked; whether its ICRC holds is in [`RoceFrame::icrc`].
    pub fn roce(&self) -> Result<RoceFrame<'a>> {
        let (ip, header_len, udp, udp_payload) = self.ip_udp()?;
        if udp.dst_port != ROCEV2_UDP_PORT {
            return Err(Error::new(Layer::Roce, ErrorKind::WrongEtherType));
        }
        self.roce_of(ip, header_len, udp, udp_payload)
    }

    fn roce_of(&self, ip: Ipv4Repr, header_len: usize, udp: UdpRepr, udp_payload: &'a [u8]) -> Result<RoceFrame<'a>> {
        let packet = RocePacket::new_checked(udp_payload)?;
        let repr = RoceRepr::parse_headers(&packet)?;
        let ip_packet = &self.payload[..header_len + ip.payload_len];
        Ok(RoceFrame { ip, udp, repr, packet, ip_packet, icrc: check_icrc(ip_packet) })
    }
}

/// A frame's RoCEv2 packet, as [`FrameView::roce`] reads it.
#[derive(Clone, Debug)]
pub struct RoceFrame<'a> {
    pub ip: Ipv4Repr,
    pub udp: UdpRepr,
    pub repr: RoceRepr,
    /// The UDP payload, BTH through ICRC.
    pub packet: RocePacket<&'a [u8]>,
    /// The IPv4 packet as its total length delimits it, ICRC included.
    pub ip_packet: &'a [u8],
    /// `Ok` when the ICRC matches, `BadChecksum` otherwise.
    pub icrc: Result<()>,
}

const IPV6_HEADER_LEN: usize = 40;
const PROTOCOL_TCP: u8 = 6;

/// FxHash's mixing step on 8-byte words: a few instructions per frame, deterministic, and
/// good enough to spread flows; flows are not adversarial keys in a test fabric.
struct FlowHasher(u64);

impl FlowHasher {
    fn add(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(word)).wrapping_mul(0x51_7C_C1_B7_27_22_0A_95);
        }
    }

    fn finish(&self) -> u32 {
        let mixed = self.0 ^ (self.0 >> 29);
        (mixed.wrapping_mul(0xBF58_476D_1CE4_E5B9) >> 32) as u32
    }
}

/// Zeroes `frame[len..MIN_FRAME_LEN]` and returns the padded length.
fn pad(frame: &mut [u8], len: usize) -> usize {
    if len < MIN_FRAME_LEN {
        frame[len..MIN_FRAME_LEN].fill(0);
        MIN_FRAME_LEN
    } else {
        len
    }
}

/// Writes a host's announcement (60 bytes): a broadcast with EtherType 0x88B5 (local
/// experimental) and a zero payload, which teaches every switch on the way where `src` is.
///
/// # Panics
/// If `frame` is shorter than 60 bytes.
pub fn build_announcement_frame(frame: &mut [u8], src: EthernetAddress) -> usize {
    let l2 = L2Repr {
        dst: EthernetAddress::BROADCAST,
        src,
        vlan: None,
        cn_tag: None,
        ethertype: ethertype::LOCAL_EXPERIMENTAL_1,
    };
    let offset = l2.emit(frame);
    frame[offset..MIN_FRAME_LEN].fill(0);
    MIN_FRAME_LEN
}

/// Writes an untagged PAUSE or PFC frame (60 bytes) and returns its length.
///
/// # Panics
/// If `frame` is shorter than 60 bytes.
pub fn build_mac_control_frame(
    frame: &mut [u8],
    src: EthernetAddress,
    dst: EthernetAddress,
    repr: &MacControlRepr,
) -> usize {
    let l2 = L2Repr { dst, src, vlan: None, cn_tag: None, ethertype: ethertype::MAC_CONTROL };
    let offset = l2.emit(frame);
    repr.emit(&mut MacControlPacket::new_unchecked(&mut frame[offset..]));
    offset + repr.buffer_len()
}

/// Writes an OFC PAUSE or RESUME: an untagged PFC frame for `header.priority` (time
/// `quanta` for a PAUSE, 0 for a RESUME) followed by the TLV and `flows`. Writes no more
/// flows than `frame` holds (callers size it with [`super::ofc_frame_len`] and split lists
/// with [`super::ofc_max_entries`]); returns the length, padded to 60. Never allocates.
///
/// # Panics
/// If `frame` is shorter than 60 bytes.
pub fn build_ofc_frame(
    frame: &mut [u8],
    src: EthernetAddress,
    header: OfcHeader,
    quanta: u16,
    flows: impl IntoIterator<Item = FlowKey>,
) -> usize {
    let quanta = if header.op == OfcOp::Resume { 0 } else { quanta };
    let repr = MacControlRepr::Pfc(PfcRepr::default().with_class(header.priority, quanta));
    build_mac_control_frame(frame, src, PAUSE_MULTICAST, &repr);
    let room = frame.len().saturating_sub(OFC_TLV_OFFSET + OFC_HEADER_LEN) / OFC_ENTRY_LEN;
    let mut tlv = OfcTlv::new_unchecked(&mut frame[OFC_TLV_OFFSET..]);
    let mut count = 0;
    for flow in flows.into_iter().take(room.min(usize::from(u16::MAX))) {
        tlv.set_flow(count, &flow);
        count += 1;
    }
    tlv.set_header(&header, count as u16);
    let len = OFC_TLV_OFFSET + OFC_HEADER_LEN + OFC_ENTRY_LEN * count;
    pad(frame, len)
}

/// Writes a CNM: `l2` gives the addresses (destination = source of the sampled frame), the
/// CNM's VLAN tag and, if the sampled frame had one, its CN-TAG. Returns the padded length.
///
/// # Panics
/// If `frame` is too short or the CNM repr is invalid.
pub fn build_cnm_frame(frame: &mut [u8], l2: &L2Repr, cnm: &CnmRepr<'_>) -> usize {
    let l2 = L2Repr { ethertype: ethertype::CNM, ..*l2 };
    let offset = l2.emit(frame);
    cnm.emit(&mut CnmPacket::new_unchecked(&mut frame[offset..]));
    pad(frame, offset + cnm.buffer_len())
}

/// Writes a FECN probe: `l2` gives the addresses and the flow's 802.1Q tag (probes travel on
/// the flow's priority, through the queues they measure). Returns the padded length.
///
/// # Panics
/// If `frame` is shorter than 60 bytes.
pub fn build_fecn_probe_frame(frame: &mut [u8], l2: &L2Repr, probe: &FecnProbeRepr) -> usize {
    let l2 = L2Repr { ethertype: ethertype::LOCAL_EXPERIMENTAL_1, ..*l2 };
    let offset = l2.emit(frame);
    probe.emit(&mut FecnProbe::new_unchecked(&mut frame[offset..offset + super::FECN_PROBE_LEN]));
    pad(frame, offset + super::FECN_PROBE_LEN)
}

/// Applies a switch's marking to the FECN probe in `frame` (§IV: its rate falls to
/// `rate_kbps` if that is lower, naming `port` the bottleneck). Returns whether it lowered
/// the rate; `false` for a frame that is not a probe.
pub fn mark_fecn_probe(frame: &mut [u8], rate_kbps: u32, port: EthernetAddress) -> bool {
    let Ok(view) = FrameView::parse(frame) else { return false };
    if view.fecn_probe().is_err() {
        return false;
    }
    let offset = frame.len() - view.payload.len();
    FecnProbe::new_unchecked(&mut frame[offset..]).mark(rate_kbps, port)
}

/// Marks congestion in `frame` (RFC 3168 §5): an ECN-capable IPv4 or IPv6 packet (ECT(0) or
/// ECT(1)) gets CE, and an IPv4 header its checksum recomputed. Returns whether it marked;
/// `false` for a frame without IP, one that is not ECN-capable, or one already CE.
pub fn mark_ecn_ce(frame: &mut [u8]) -> bool {
    let Ok(view) = FrameView::parse(frame) else { return false };
    if !matches!(view.ecn(), Some(1 | 2)) {
        return false;
    }
    let (ip_version, offset) = (view.payload[0] >> 4, frame.len() - view.payload.len());
    let ip = &mut frame[offset..];
    if ip_version == 4 {
        let header_len = usize::from(ip[0] & 0x0F) * 4;
        if header_len < IPV4_HEADER_LEN || ip.len() < header_len {
            return false;
        }
        ip[1] |= 0x03;
        ip[10..12].fill(0);
        let checksum = crate::field::internet_checksum(&[&ip[..header_len]]);
        ip[10..12].copy_from_slice(&checksum.to_be_bytes());
    } else {
        ip[1] |= 0x30;
    }
    true
}

/// An endpoint's data, ACK, NAK or CNP frame: 802.1Q (optional) + IPv4 + UDP + the traffic
/// header, or RoCEv2 headers ([`Framing`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataFrameSpec {
    pub src_mac: EthernetAddress,
    pub dst_mac: EthernetAddress,
    pub vlan: Option<VlanRepr>,
    /// The 802.1Qau CN-TAG a QCN reaction point puts on its flow's frames.
    pub cn_tag: Option<CnTagRepr>,
    pub src_ip: Ipv4Addr,
    pub dst_ip: Ipv4Addr,
    pub dscp: u8,
    /// The IP header's ECN field: 0 Not-ECT, 2 ECT(0) for a sender that reacts to marks.
    pub ecn: u8,
    /// In RoCEv2 framing, the QP's source port: the only entropy ECMP sees (A17.5.1.1).
    pub src_port: u16,
    /// Ignored in RoCEv2 framing, which always sends to 4791.
    pub dst_port: u16,
    pub traffic: TrafficRepr,
    /// Frame length without FCS; raised to the headers' length (and to 60) if smaller. In
    /// RoCEv2 framing a data frame's payload is padded to a multiple of 4 (up to 3 bytes more),
    /// and ACKs, NAKs and CNPs have their fixed length.
    pub frame_len: usize,
    pub framing: Framing,
}

impl DataFrameSpec {
    /// A data frame from `src_mac` to `dst_mac` with the endpoints' defaults for the rest:
    /// 10.0.0.1 → 10.0.0.2, UDP port 39000 both ways, DSCP 0, flow 0, sequence 0.
    pub fn between(
        src_mac: EthernetAddress,
        dst_mac: EthernetAddress,
        vlan: Option<VlanRepr>,
        frame_len: usize,
    ) -> DataFrameSpec {
        DataFrameSpec {
            src_mac,
            dst_mac,
            vlan,
            cn_tag: None,
            src_ip: Ipv4Addr::new(10, 0, 0, 1),
            dst_ip: Ipv4Addr::new(10, 0, 0, 2),
            dscp: 0,
            ecn: 0,
            src_port: super::TRAFFIC_UDP_PORT,
            dst_port: super::TRAFFIC_UDP_PORT,
            traffic: TrafficRepr {
                kind: super::TrafficKind::Data,
                flow_id: 0,
                sequence: 0,
                message_id: 0,
                message_len: 0,
                offset: 0,
                timestamp_ns: 0,
                ack_req: false,
            },
            frame_len,
            framing: Framing::Traffic,
        }
    }

    /// The frame as a new byte vector (for tools and tests; the datapath builds in place).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut frame = vec![0u8; self.len()];
        build_data_frame(&mut frame, self);
        frame
    }

    /// Writes the layer-2 headers (Ethernet, the tags, EtherType IPv4) and returns where the
    /// IPv4 header goes.
    fn emit_l2(&self, frame: &mut [u8]) -> usize {
        let l2 = L2Repr {
            dst: self.dst_mac,
            src: self.src_mac,
            vlan: self.vlan,
            cn_tag: self.cn_tag,
            ethertype: ethertype::IPV4,
        };
        l2.emit(frame)
    }

    fn l2_len(&self) -> usize {
        ETHERNET_HEADER_LEN
            + if self.vlan.is_some() { VLAN_HEADER_LEN } else { 0 }
            + if self.cn_tag.is_some() { CN_TAG_HEADER_LEN } else { 0 }
    }

    /// The smallest frame this spec can produce.
    pub fn min_len(&self) -> usize {
        let transport = match self.framing {
            Framing::Traffic => TRAFFIC_HEADER_LEN,
            Framing::Rocev2 => self.traffic.to_roce(0).buffer_len(),
        };
        (self.l2_len() + IPV4_HEADER_LEN + UDP_HEADER_LEN + transport).max(MIN_FRAME_LEN)
    }

    /// The RoCEv2 headers of this frame (whatever its framing): a data segment carries
    /// `frame_len` less the headers, the segment info and the ICRC.
    pub fn roce_repr(&self) -> RoceRepr {
        let headers = self.l2_len() + IPV4_HEADER_LEN + UDP_HEADER_LEN + BTH_LEN + SEGMENT_INFO_LEN + ICRC_LEN;
        self.traffic.to_roce(self.frame_len.saturating_sub(headers))
    }

    /// The length of the frame [`build_data_frame`] writes.
    pub fn len(&self) -> usize {
        match self.framing {
            Framing::Traffic => self.frame_len.max(self.min_len()),
            Framing::Rocev2 => {
                (self.l2_len() + IPV4_HEADER_LEN + UDP_HEADER_LEN + self.roce_repr().buffer_len()).max(MIN_FRAME_LEN)
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        false
    }
}

/// Writes the frame described by `spec` (payload bytes after the header are zero) and
/// returns its length, [`DataFrameSpec::len`].
///
/// # Panics
/// If `frame` is shorter than `spec.len()`.
pub fn build_data_frame(frame: &mut [u8], spec: &DataFrameSpec) -> usize {
    if spec.framing == Framing::Rocev2 {
        return build_rocev2_frame(frame, spec);
    }
    let len = spec.len();
    let ip_at = spec.emit_l2(frame);
    let udp_at = ip_at + IPV4_HEADER_LEN;
    let traffic_at = udp_at + UDP_HEADER_LEN;
    let udp_payload_len = len - traffic_at;
    spec.traffic.emit(&mut TrafficHeader::new_unchecked(&mut frame[traffic_at..]));
    frame[traffic_at + TRAFFIC_HEADER_LEN..len].fill(0);
    let udp = UdpRepr { src_port: spec.src_port, dst_port: spec.dst_port, payload_len: udp_payload_len };
    udp.emit(&mut UdpPacket::new_unchecked(&mut frame[udp_at..len]), spec.src_ip, spec.dst_ip);
    let ip = Ipv4Repr {
        src: spec.src_ip,
        dst: spec.dst_ip,
        protocol: PROTOCOL_UDP,
        dscp: spec.dscp,
        ecn: spec.ecn,
        ttl: 64,
        payload_len: UDP_HEADER_LEN + udp_payload_len,
    };
    ip.emit(&mut Ipv4Packet::new_unchecked(&mut frame[ip_at..len]));
    len
}

/// The RoCEv2 encoding of `spec`: its [`DataFrameSpec::roce_repr`], a SEND's payload
/// starting with the segment info.
fn build_rocev2_frame(frame: &mut [u8], spec: &DataFrameSpec) -> usize {
    let mut info = [0u8; SEGMENT_INFO_LEN];
    let payload: &[u8] = if spec.traffic.kind == TrafficKind::Data {
        spec.traffic.emit_segment_info(&mut info);
        &info
    } else {
        &[]
    };
    build_roce_frame(frame, spec, &spec.roce_repr(), payload)
}

/// Writes a RoCEv2 frame (A17.4) with `spec`'s addresses, tags, DSCP, ECN and source port,
/// whatever its framing and traffic repr, and `roce`'s headers: IPv4 with DF set, UDP to
/// port 4791 with checksum 0 as RoCEv2 NICs send it (the ICRC covers the payload), the BTH
/// (and AETH), `payload` then zeros up to `roce.payload_len`, the pad, the ICRC, and
/// Ethernet padding to 60 bytes, which the IP total length leaves out. A CNP is Not-ECT
/// whatever `spec.ecn` says, so that no switch marks it. Returns the length.
///
/// # Panics
/// If `frame` is too short, or `payload` longer than `roce.payload_len`.
pub fn build_roce_frame(frame: &mut [u8], spec: &DataFrameSpec, roce: &RoceRepr, payload: &[u8]) -> usize {
    let ip_at = spec.emit_l2(frame);
    let udp_at = ip_at + IPV4_HEADER_LEN;
    let udp_len = UDP_HEADER_LEN + roce.buffer_len();
    let end = udp_at + udp_len;
    let mut packet = RocePacket::new_unchecked(&mut frame[udp_at + UDP_HEADER_LEN..end]);
    roce.emit(&mut packet);
    let (written, zeros) = packet.payload_mut(roce.payload_len).split_at_mut(payload.len());
    written.copy_from_slice(payload);
    zeros.fill(0);
    let udp = &mut frame[udp_at..udp_at + UDP_HEADER_LEN];
    write_u16(udp, 0, spec.src_port);
    write_u16(udp, 2, ROCEV2_UDP_PORT);
    write_u16(udp, 4, u16::try_from(udp_len).expect("UDP datagram over 64 KiB"));
    write_u16(udp, 6, 0);
    let ip = Ipv4Repr {
        src: spec.src_ip,
        dst: spec.dst_ip,
        protocol: PROTOCOL_UDP,
        dscp: spec.dscp,
        ecn: if roce.bth.opcode == Opcode::Cnp { 0 } else { spec.ecn },
        ttl: 64,
        payload_len: udp_len,
    };
    ip.emit(&mut Ipv4Packet::new_unchecked(&mut frame[ip_at..end]));
    fill_icrc(&mut frame[ip_at..end]);
    pad(frame, end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{PAUSE_MULTICAST, PfcRepr};
    use proptest::prelude::*;

    const SRC: EthernetAddress = EthernetAddress([2, 0, 0, 0, 0, 1]);

    #[test]
    fn a_flow_hashes_alike_and_its_ports_and_addresses_tell_flows_apart() {
        let spec = DataFrameSpec::between(SRC, EthernetAddress([2, 0, 0, 0, 0, 2]), None, 100);
        let hash = |spec: DataFrameSpec, seed| FrameView::parse(&spec.to_bytes()).unwrap().flow_hash(seed);
        let base = hash(spec, 1);
        assert_eq!(hash(DataFrameSpec { traffic: TrafficRepr { sequence: 9, ..spec.traffic }, ..spec }, 1), base);
        assert_ne!(hash(DataFrameSpec { src_port: 39001, ..spec }, 1), base, "the UDP port");
        assert_ne!(hash(DataFrameSpec { dst_ip: Ipv4Addr::new(10, 0, 0, 3), ..spec }, 1), base, "the address");
        assert_ne!(hash(spec, 2), base, "the seed");
        // A later fragment carries no ports: the ports' bytes are payload and ignored.
        let mut fragment = spec.to_bytes();
        fragment[14 + 6] = 0x20; // more fragments
        let fragment_hash = FrameView::parse(&fragment).unwrap().flow_hash(1);
        fragment[14 + 20] ^= 0xFF;
        assert_eq!(FrameView::parse(&fragment).unwrap().flow_hash(1), fragment_hash);
    }

    #[test]
    fn an_ect_packet_is_marked_ce_with_a_valid_checksum_and_others_are_left_alone() {
        let spec =
            DataFrameSpec { dscp: 26, ..DataFrameSpec::between(SRC, EthernetAddress([2, 0, 0, 0, 0, 2]), None, 100) };
        let mut frame = spec.to_bytes();
        assert_eq!(FrameView::parse(&frame).unwrap().ecn(), Some(0));
        assert!(!mark_ecn_ce(&mut frame), "Not-ECT is never marked");
        frame[15] |= 0x02; // ECT(0)
        assert!(mark_ecn_ce(&mut frame));
        let ip = Ipv4Packet::new_checked(&frame[14..]).unwrap();
        assert_eq!((ip.ecn(), ip.dscp()), (3, 26), "CE, the DSCP kept");
        assert!(ip.checksum_valid(), "the header checksum follows the mark");
        assert!(!mark_ecn_ce(&mut frame), "CE stays CE");

        let mut ipv6 = vec![0u8; 14 + 40];
        ipv6[12..14].copy_from_slice(&ethertype::IPV6.to_be_bytes());
        ipv6[14] = 0x6B; // version 6, traffic class 0xB_
        ipv6[15] = 0x10; // ... ECN 01: ECT(1)
        assert!(mark_ecn_ce(&mut ipv6));
        assert_eq!((ipv6[14], ipv6[15]), (0x6B, 0x30), "only the ECN bits change");
        let mut pfc = [0u8; 60];
        build_mac_control_frame(&mut pfc, SRC, PAUSE_MULTICAST, &MacControlRepr::Pfc(PfcRepr::default()));
        assert!(!mark_ecn_ce(&mut pfc), "no IP, no mark");
    }

    #[test]
    fn pfc_frame_matches_design_offsets() {
        let mut frame = [0xEEu8; 64];
        let pfc = PfcRepr::default().with_class(Pcp::new(3).unwrap(), 65535);
        let len = build_mac_control_frame(&mut frame, SRC, PAUSE_MULTICAST, &MacControlRepr::Pfc(pfc));
        assert_eq!(len, 60);
        assert_eq!(&frame[0..6], &[0x01, 0x80, 0xC2, 0, 0, 0x01]);
        assert_eq!(&frame[12..18], &[0x88, 0x08, 0x01, 0x01, 0x00, 0x08]);
        assert_eq!(&frame[24..26], &[0xFF, 0xFF], "time[3] at 18 + 2*3");
        assert!(frame[34..60].iter().all(|&b| b == 0));
        let view = FrameView::parse(&frame[..len]).unwrap();
        assert_eq!(view.mac_control().unwrap(), MacControlRepr::Pfc(pfc));
        assert!(view.cnm().is_err());
    }

    #[test]
    fn truncated_tags_name_their_layer() {
        let mut frame = [0u8; 16];
        frame[12..14].copy_from_slice(&ethertype::VLAN.to_be_bytes());
        assert_eq!(FrameView::parse(&frame).unwrap_err(), Error::new(Layer::Vlan, ErrorKind::Truncated));
        let mut frame = [0u8; 20];
        frame[12..14].copy_from_slice(&ethertype::VLAN.to_be_bytes());
        frame[16..18].copy_from_slice(&ethertype::CN_TAG.to_be_bytes());
        assert_eq!(FrameView::parse(&frame).unwrap_err(), Error::new(Layer::CnTag, ErrorKind::Truncated));
    }

    #[test]
    fn dscp_of_ipv4_and_ipv6() {
        let mut frame = [0u8; 60];
        frame[12..14].copy_from_slice(&ethertype::IPV4.to_be_bytes());
        frame[14] = 0x45;
        frame[15] = 46 << 2;
        assert_eq!(FrameView::parse(&frame).unwrap().dscp(), Some(46));
        frame[12..14].copy_from_slice(&ethertype::IPV6.to_be_bytes());
        frame[14] = 0x60 | (26 >> 2);
        frame[15] = (26 & 0x3) << 6;
        assert_eq!(FrameView::parse(&frame).unwrap().dscp(), Some(26));
    }

    fn spec(frame_len: usize, vlan: Option<VlanRepr>) -> DataFrameSpec {
        DataFrameSpec {
            src_mac: SRC,
            dst_mac: EthernetAddress([2, 0, 0, 0, 0, 2]),
            vlan,
            cn_tag: None,
            src_ip: Ipv4Addr::new(10, 0, 0, 1),
            dst_ip: Ipv4Addr::new(10, 0, 0, 2),
            dscp: 26,
            ecn: 0,
            src_port: 40000,
            dst_port: 47000,
            traffic: TrafficRepr {
                kind: TrafficKind::Data,
                flow_id: 7,
                sequence: 9,
                message_id: 1,
                message_len: 1000,
                offset: 0,
                timestamp_ns: 123,
                ack_req: false,
            },
            frame_len,
            framing: Framing::Traffic,
        }
    }

    proptest! {
        #[test]
        fn data_frames_round_trip(frame_len in 0usize..1600, pcp in 0u8..8, vid in 0u16..4096, tagged: bool) {
            let vlan = tagged.then(|| VlanRepr { pcp: Pcp::new(pcp).unwrap(), dei: false, vid });
            let spec = spec(frame_len, vlan);
            let mut frame = vec![0xEEu8; 1600];
            let len = build_data_frame(&mut frame, &spec);
            prop_assert_eq!(len, frame_len.max(spec.min_len()));
            let view = FrameView::parse(&frame[..len]).unwrap();
            prop_assert_eq!(view.l2.vlan, vlan);
            prop_assert_eq!(view.dscp(), Some(26));
            let (ip, udp, traffic) = view.traffic().unwrap();
            prop_assert!(Ipv4Packet::new_checked(view.payload).unwrap().checksum_valid());
            prop_assert!(UdpPacket::new_checked(Ipv4Packet::new_checked(view.payload).unwrap().payload()).unwrap().checksum_valid(ip.src, ip.dst));
            prop_assert_eq!((udp.src_port, udp.dst_port), (40000, 47000));
            prop_assert_eq!(traffic, spec.traffic);
        }

        #[test]
        fn cnm_frames_round_trip(flow in proptest::option::of(any::<u16>()), fb in 0u8..64, msdu_len in 0u16..200) {
            let msdu = [0x42u8; 64];
            let cnm = CnmRepr {
                quantized_feedback: fb, cpid: 0x0200_0000_0000_0003, q_offset: -100, q_delta: 50,
                encapsulated_priority: Pcp::new(3).unwrap(), encapsulated_dst: EthernetAddress([2, 0, 0, 0, 0, 2]),
                msdu_len, msdu: &msdu[..usize::from(msdu_len).min(64)],
            };
            let l2 = L2Repr {
                dst: EthernetAddress([2, 0, 0, 0, 0, 9]), src: SRC,
                vlan: Some(VlanRepr { pcp: Pcp::new(6).unwrap(), dei: false, vid: 1 }),
                cn_tag: flow.map(|flow_id| CnTagRepr { flow_id }), ethertype: 0,
            };
            let mut frame = [0u8; 128];
            let len = build_cnm_frame(&mut frame, &l2, &cnm);
            prop_assert!(len >= MIN_FRAME_LEN);
            let view = FrameView::parse(&frame[..len]).unwrap();
            prop_assert_eq!(view.l2, L2Repr { ethertype: ethertype::CNM, ..l2 });
            prop_assert_eq!(view.cnm().unwrap(), cnm);
        }

        #[test]
        fn parsing_any_bytes_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..128)) {
            if let Ok(view) = FrameView::parse(&bytes) {
                let _ = (view.mac_control(), view.cnm(), view.dscp(), view.traffic());
            }
        }
    }
}
