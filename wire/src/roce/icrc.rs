//! The invariant CRC that ends every RoCEv2 packet (IBTA vol. 1 §7.8.1, and Annex A17.3.3
//! for the RoCEv2 pseudo-header): the fields a router or switch may rewrite on the way are
//! replaced by ones, so that a CE mark or a TTL decrement keeps it valid end to end.
//!
//! It is the Ethernet CRC-32 over, in order:
//! - 8 bytes of 0xFF, standing for the masked Local Route Header RoCEv2 has no room for;
//! - the IPv4 header with TOS (DSCP and ECN), TTL and header checksum set to 0xFF bytes;
//! - the UDP header with its checksum set to 0xFFFF;
//! - the BTH with byte 4 (FECN, BECN and reserved bits, `resv8a`) set to 0xFF;
//! - every byte after the BTH up to the ICRC.
//!
//! The CRC is stored least significant byte first, as scapy (`contrib/roce.py`) and Linux's
//! soft RoCE (`rxe_icrc.c`) write it; Wireshark shows the 4 bytes as a big-endian number.

use super::bth::BTH_LEN;
use crate::ipv4::IPV4_HEADER_LEN;
use crate::udp::UDP_HEADER_LEN;
use crate::{Error, ErrorKind, Layer, Result};

pub const ICRC_LEN: usize = 4;

const MAX_IPV4_HEADER_LEN: usize = 60;

/// The ICRC of `ip_packet`: an IPv4 header (with any options) and everything after it up to,
/// not including, the ICRC. Never panics; a packet too short to hold the headers gets the
/// CRC of what it has, masked where the fields are.
pub fn icrc(ip_packet: &[u8]) -> u32 {
    let ip_header_len = ip_packet.first().map_or(IPV4_HEADER_LEN, |b| usize::from(b & 0x0F) * 4);
    let ip_header_len = ip_header_len.clamp(IPV4_HEADER_LEN, MAX_IPV4_HEADER_LEN);
    let (udp_at, bth_at) = (ip_header_len, ip_header_len + UDP_HEADER_LEN);
    let masked_len = (bth_at + BTH_LEN).min(ip_packet.len());
    let mut masked = [0u8; MAX_IPV4_HEADER_LEN + UDP_HEADER_LEN + BTH_LEN];
    masked[..masked_len].copy_from_slice(&ip_packet[..masked_len]);
    for at in [1, 8, 10, 11, udp_at + 6, udp_at + 7, bth_at + 4] {
        if at < masked_len {
            masked[at] = 0xFF;
        }
    }
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(&[0xFF; 8]);
    hasher.update(&masked[..masked_len]);
    hasher.update(&ip_packet[masked_len..]);
    hasher.finalize()
}

/// The ICRC stored in the last 4 bytes of `ip_packet` (as [`icrc`] computes it).
pub fn stored_icrc(ip_packet: &[u8]) -> Option<u32> {
    let at = ip_packet.len().checked_sub(ICRC_LEN)?;
    Some(u32::from_le_bytes(ip_packet[at..].try_into().expect("4 bytes")))
}

/// Checks the ICRC at the end of `ip_packet` (an IPv4 packet as its total length delimits it,
/// ICRC included): `BadChecksum` on a mismatch, `Truncated` if it cannot hold one.
pub fn check_icrc(ip_packet: &[u8]) -> Result<()> {
    let stored = stored_icrc(ip_packet).ok_or(Error::new(Layer::Roce, ErrorKind::Truncated))?;
    if icrc(&ip_packet[..ip_packet.len() - ICRC_LEN]) == stored {
        Ok(())
    } else {
        Err(Error::new(Layer::Roce, ErrorKind::BadChecksum))
    }
}

/// Computes the ICRC of `ip_packet` (whose last 4 bytes are the ICRC's place) and stores it.
///
/// # Panics
/// If `ip_packet` is shorter than 4 bytes.
pub fn fill_icrc(ip_packet: &mut [u8]) {
    let at = ip_packet.len() - ICRC_LEN;
    let crc = icrc(&ip_packet[..at]);
    ip_packet[at..].copy_from_slice(&crc.to_le_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Built by scapy 2.5 (`contrib/roce.py`, which computes the ICRC on build):
    /// `IP(src="10.0.0.1", dst="10.0.0.2", tos=0x6a, ttl=63, flags="DF", id=0) /
    /// UDP(sport=49152, dport=4791, chksum=0) / BTH(opcode=4, migreq=1, padcount=2,
    /// dqpn=0x107, ackreq=1, psn=0x123456) / Raw(b"pfcswitch RoCEv2 ICRC!" + b"\0\0")`.
    const SCAPY_PACKET: &str = "456a0044000040003f11273d0a0000010a000002c00012b7003000000460ffff000001078012345670666373776974636820526f434576322049435243210000eb7f769b";

    fn unhex(text: &str) -> Vec<u8> {
        (0..text.len()).step_by(2).map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap()).collect()
    }

    #[test]
    fn agrees_with_scapy() {
        let packet = unhex(SCAPY_PACKET);
        assert_eq!(stored_icrc(&packet), Some(0x9B76_7FEB), "stored least significant byte first");
        assert_eq!(icrc(&packet[..packet.len() - 4]), 0x9B76_7FEB);
        check_icrc(&packet).unwrap();
    }

    #[test]
    fn masked_fields_do_not_count_and_the_others_do() {
        let packet = unhex(SCAPY_PACKET);
        let mut rewritten = packet.clone();
        rewritten[1] |= 0x03; // CE
        rewritten[8] -= 1; // TTL
        rewritten[10..12].copy_from_slice(&[0x12, 0x34]); // IP checksum
        rewritten[26..28].copy_from_slice(&[0xAB, 0xCD]); // UDP checksum
        rewritten[28 + 4] = 0xC0; // FECN, BECN
        check_icrc(&rewritten).unwrap();
        for at in [0, 2, 6, 9, 12, 20, 24, 28, 29, 33, 40, 63] {
            let mut flipped = packet.clone();
            flipped[at] ^= 0x01;
            assert_eq!(check_icrc(&flipped).unwrap_err().kind, ErrorKind::BadChecksum, "byte {at}");
        }
    }

    #[test]
    fn short_input_never_panics() {
        for len in 0..40 {
            let _ = icrc(&vec![0x4F; len]);
            let _ = check_icrc(&vec![0x45; len]);
        }
    }
}
