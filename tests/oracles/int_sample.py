#!/usr/bin/env python3
"""Writes a pcap of RoCEv2 frames carrying INT over UDP as docs/frames.md lays it out ("INT
over UDP (in-band telemetry)"), built byte by byte with struct and zlib: no scapy, no
pfcswitch_wire. For the Lua dissector and tests/oracles/int_check.py.

    int_sample.py PCAP [--hops N] [--broken]

Good frames (the default), tagged PCP 3, 10.0.0.1 -> 10.0.0.2:
  1. an RC SEND ONLY (QP 0x107, PSN 5) with INT (Type 1) that crossed N switches (default 2,
     at most 5), Remaining Hop Count 5 - N;
  2. the RC ACK answering it, with the echo (Type 2) of frame 1's MD header and hop stack;
  3. a SEND ONLY that crossed 5 switches and then a sixth, which set E;
  4. a SEND ONLY that no switch touched yet (0 hops, as the source sends it);
  5. like 1, but asking for every baseline instruction (bits 0-8, HopML 14): the switch
     fills the ones it does not support (2, 4, 6, 7, 8) with all ones;
  6. like 1, with the checksum complement (bit 15, HopML 7) asked too: all ones, the last
     word of each hop, after the domain-specific tx bytes and link speed.
Each RoCEv2 ICRC is the one of the packet without INT, as the source computed it.

--broken writes one frame per malformation instead, and prints, one JSON object a line, the
frame number and the malformation it carries: Length inconsistent with HopML x hops, HopML
not matching the bitmaps, version 3, a hop stack cut short by the UDP length, timestamps
that go backwards along the path, an IPv4 total length that does not cover the INT bytes.
"""
import argparse
import json
import struct
import zlib

INT_UDP_PORT = 4792
ROCE_PORT = 4791
DOMAIN_ID = 0x5046
SHIM_LEN = 4
# Instruction bits 0, 3, 5 (node id, queue id + occupancy, egress timestamp); DS bits 0, 1
# (tx bytes, link speed): HPCC's request, 6 words a hop.
INSTRUCTIONS = 0x8000 | 0x1000 | 0x0400
DS_INSTRUCTIONS = 0x8000 | 0x4000
HOP_ML = 6
# Every defined baseline bit (0-8): what a switch fills with all ones shows up too.
ALL_BASELINE = 0xFF80
MAX_HOPS = 5


def ipv4_checksum(header):
    total = sum(struct.unpack("!10H", header))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return (~total) & 0xFFFF


def ipv4(payload_len, src, dst, dscp=26, ecn=2, ttl=64):
    header = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, (dscp << 2) | ecn, 20 + payload_len, 0, 0x4000, ttl, 17,
                                   0, bytes(src), bytes(dst)))
    struct.pack_into("!H", header, 10, ipv4_checksum(bytes(header)))
    return bytes(header)


def icrc(ip, udp, bth, rest):
    """docs/frames.md's ICRC: CRC-32 over 8 x 0xFF, the masked IPv4, UDP and BTH, the rest."""
    ip = bytearray(ip)
    ip[1] = 0xFF
    ip[8] = 0xFF
    ip[10:12] = b"\xff\xff"
    udp = bytearray(udp)
    udp[6:8] = b"\xff\xff"
    bth = bytearray(bth)
    bth[4] = 0xFF
    return struct.pack("<I", zlib.crc32(b"\xff" * 8 + bytes(ip) + bytes(udp) + bytes(bth) + rest) & 0xFFFFFFFF)


def roce_udp_payload(opcode, qp, psn, ack_req, body, ip_src, ip_dst, sport):
    """BTH + body + ICRC of a RoCEv2 packet, the ICRC over the packet as sent to 4791."""
    pad = (-len(body)) % 4
    body = body + bytes(pad)
    bth = struct.pack("!BBHI I", opcode, (pad << 4), 0xFFFF, qp & 0xFFFFFF, (ack_req << 31) | (psn & 0xFFFFFF))
    udp_len = 8 + len(bth) + len(body) + 4
    udp = struct.pack("!HHHH", sport, ROCE_PORT, udp_len, 0)
    ip = ipv4(udp_len, ip_src, ip_dst)
    return bth + body + icrc(ip, udp, bth, body)


def words(instructions, ds):
    """HopML for the bitmaps: 2 words for instruction bits 4-6, 1 for every other set bit,
    1 for each of DS bits 0 and 1."""
    baseline = sum((2 if bit in (4, 5, 6) else 1) for bit in range(16) if instructions & (0x8000 >> bit))
    return baseline + bin(ds & 0xC000).count("1")


def hop(k, instructions=INSTRUCTIONS, ds=DS_INSTRUCTIONS, base_ts=1_000_000):
    """The k-th switch's record (k = 1 first on the path), for the bits asked: baseline bits
    0-14, then DS bits, then bit 15; all ones where pfcswitch supports no value."""
    node_id, ingress, egress, queue = 100 + k, 1, 2 + k % 3, 3
    qlen = 1500 * k + 82 * (k % 2)
    egress_ts, tx_bytes, speed = base_ts + 1200 * k, 0xFFFFF000 + 4100 * k, 100_000 if k % 2 else 25_000
    fields = {
        0: struct.pack("!I", node_id),
        1: struct.pack("!HH", ingress, egress),
        3: struct.pack("!I", (queue << 24) | min(qlen, 0xFFFFFF)),
        5: struct.pack("!Q", egress_ts),
    }
    out = b""
    for bit in range(15):
        if instructions & (0x8000 >> bit):
            out += fields.get(bit, b"\xff" * (8 if bit in (4, 5, 6) else 4))
    if ds & 0x8000:
        out += struct.pack("!I", tx_bytes & 0xFFFFFFFF)
    if ds & 0x4000:
        out += struct.pack("!I", speed)
    # The checksum complement (bit 15) comes last, after the domain-specific metadata (v2.1).
    if instructions & 0x0001:
        out += b"\xff" * 4
    return out


def path_hops(n, instructions=INSTRUCTIONS, ds=DS_INSTRUCTIONS):
    """The stack after n switches, newest (the n-th switch) first."""
    return b"".join(hop(k, instructions, ds) for k in range(n, 0, -1))


def md_header(hops, version=2, e=False, m=False, hop_ml=HOP_ML, instructions=INSTRUCTIONS, ds=DS_INSTRUCTIONS,
              remaining=None):
    if remaining is None:
        remaining = max(MAX_HOPS - hops, 0)
    return struct.pack("!BBBBHHHH", (version << 4) | (int(e) << 2) | (int(m) << 1), 0, hop_ml & 0x1F, remaining,
                       instructions, DOMAIN_ID, ds, 0)


def shim(kind, int_len, port=ROCE_PORT, length=None):
    """Type, NPT 1, Length, original UDP destination port. `int_len` is the INT bytes, shim
    included; Length counts the words after the shim (MD header + hop stack), as v2.1 says."""
    words = (int_len - SHIM_LEN) // 4 if length is None else length
    return struct.pack("!BBH", (kind << 4) | (1 << 2), words, port)


def frame(udp_payload_with_int, ip_src, ip_dst, sport, pcp=3, ip_extra=0):
    """Ethernet + 802.1Q + IPv4 + UDP to 4792 (checksum 0) around INT + original payload."""
    udp_len = 8 + len(udp_payload_with_int)
    udp = struct.pack("!HHHH", sport, INT_UDP_PORT, udp_len, 0)
    ip = ipv4(udp_len + ip_extra, ip_src, ip_dst)
    eth = bytes.fromhex("020000000002" "020000000001") + struct.pack("!HH", 0x8100, (pcp << 13) | 100) + b"\x08\x00"
    out = eth + ip + udp + udp_payload_with_int
    return out + bytes(max(0, 60 - len(out)))


H1, H2 = (10, 0, 0, 1), (10, 0, 0, 2)
SPORT = 49152


def send(n_hops, e=False, **md):
    roce = roce_udp_payload(0x04, 0x107, 5, 1, struct.pack("!IIIQ", 7, 1000, 0, 123456789) + bytes(980), H1, H2,
                            SPORT)
    stack = path_hops(n_hops, md.get("instructions", INSTRUCTIONS), md.get("ds", DS_INSTRUCTIONS))
    header = md_header(n_hops, e=e, **md)
    return roce, header, stack


def data_frame(n_hops, e=False, length=None, stack_cut=0, ip_extra=0, md=None, stack=None):
    roce, header, default_stack = send(n_hops, e=e, **(md or {}))
    stack = default_stack if stack is None else stack
    body = header + stack
    int_bytes = shim(1, 4 + len(body), length=length) + body
    if stack_cut:
        int_bytes = int_bytes[:len(int_bytes) - stack_cut]
        roce = b""
    return frame(int_bytes + roce, H1, H2, SPORT, ip_extra=ip_extra)


def ack_frame(n_hops):
    """The ACK for the SEND, echoing its MD header and stack under a Type 2 shim."""
    _, header, stack = send(n_hops)
    aeth = struct.pack("!I", (0x1F << 24) | 0)
    roce = roce_udp_payload(0x11, 0x107, 5, 0, aeth, H2, H1, SPORT)
    body = header + stack
    return frame(shim(2, 4 + len(body)) + body + roce, H2, H1, SPORT)


def write_pcap(path, frames):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i, data in enumerate(frames):
            f.write(struct.pack("<IIII", 0, i, len(data), len(data)))
            f.write(data)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pcap")
    parser.add_argument("--hops", type=int, default=2, choices=range(0, MAX_HOPS + 1))
    parser.add_argument("--broken", action="store_true")
    args = parser.parse_args()
    if not args.broken:
        every = {"instructions": ALL_BASELINE, "hop_ml": words(ALL_BASELINE, DS_INSTRUCTIONS)}
        complement = {"instructions": INSTRUCTIONS | 0x0001, "hop_ml": words(INSTRUCTIONS | 0x0001, DS_INSTRUCTIONS)}
        frames = [data_frame(args.hops), ack_frame(args.hops), data_frame(MAX_HOPS, e=True), data_frame(0),
                  data_frame(args.hops, md=every), data_frame(args.hops, md=complement)]
        write_pcap(args.pcap, frames)
        return
    # Timestamps going backwards: the newest hop older than the one before it.
    _, _, good = send(2)
    swapped = good[24:] + good[:24]
    broken = [
        # v2.1's Length for 2 hops is 3 + 2 x HopML = 15 words; one word more.
        ("length", data_frame(2, length=3 + 2 * HOP_ML + 1)),
        ("hop_ml", data_frame(2, md={"hop_ml": 5})),
        ("version", data_frame(2, md={"version": 3})),
        ("truncated", data_frame(2, stack_cut=8)),
        ("timestamps", data_frame(2, stack=swapped)),
        # The IPv4 total length short by the INT bytes, 4 + Length x 4 = 64.
        ("ip_length", data_frame(2, ip_extra=-(SHIM_LEN + 4 * (3 + 2 * HOP_ML)))),
    ]
    write_pcap(args.pcap, [f for _, f in broken])
    for number, (kind, _) in enumerate(broken, 1):
        print(json.dumps({"frame": number, "malformation": kind}))


if __name__ == "__main__":
    main()
