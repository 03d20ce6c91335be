#!/usr/bin/env python3
"""Reads INT over UDP in a pcap byte by byte, as docs/frames.md lays it out ("INT over UDP
(in-band telemetry)"), independently of pfcswitch's code and of its Lua dissector: plain
struct unpacking, zlib for the RoCEv2 ICRC, no scapy, no pfcswitch_wire.

    int_check.py PCAP            one JSON object per frame with INT (UDP destination port 4792)
    int_check.py --check PCAP    the same, then exit 1 with a message a violation on stderr

Each object: the frame number (from 1), IPv4 source and destination, UDP source port, the
shim's type (1 data, 2 echo) and original port, the MD header (version, D/E/M flags, HopML,
remaining hop count, bitmaps), the hop count and each hop's fields (index 1 = newest;
a field the switch filled with all ones, its "not supported" value, is null), `icrc_ok`
for RoCEv2 (original port 4791): the ICRC recomputed over the packet with INT stripped,
and `errors`, the rules the frame breaks:

- shim Type 1 or 2, NPT 1; MD version 2;
- the INT bytes, 4 + shim Length x 4 (v2.1: Length counts the MD header and the hop stack,
  not the shim), within the UDP payload;
- Length x 4 = 12 + hops x HopML x 4 for a whole number of hops;
- HopML = the words the instruction and DS bitmaps ask for (pfcswitch's domain 0x5046);
- IPv4 total length = IPv4 header + UDP length, and the frame holds it (INT is covered);
- egress timestamps non-decreasing along the path: each hop's (index i) at least the one of
  the hop before it on the path (index i + 1), all-ones values skipped;
- for RoCEv2, the ICRC of the packet with INT stripped (UDP destination port, UDP length and
  IPv4 total length restored) equals the stored one.

Without --check the exit status is 0 whatever the frames break.
"""
import json
import struct
import sys
import zlib

from pcap_frames import frames

INT_UDP_PORT = 4792
ROCE_PORT = 4791
DOMAIN_ID = 0x5046
SHIM_LEN = 4
MD_LEN = 12
# Instruction bits (bit 0 = 0x8000) that take 8 bytes; every other set bit takes 4.
EIGHT_BYTE_BITS = (4, 5, 6)


def ip_text(b):
    return ".".join(str(x) for x in b)


def hop_words(instructions, ds_id, ds):
    words = sum(2 if bit in EIGHT_BYTE_BITS else 1 for bit in range(16) if instructions & (0x8000 >> bit))
    if ds_id == DOMAIN_ID:
        words += bin(ds & 0xC000).count("1")
    return words


def value(b):
    """Big-endian unsigned, or None for all ones (what pfcswitch cannot supply)."""
    return None if b == b"\xff" * len(b) else int.from_bytes(b, "big")


def decode_hop(b, instructions, ds_id, ds):
    """One hop: baseline metadata in bit order (0-14), then DS metadata, then bit 15."""
    out = {}
    at = 0
    names = {0: "node_id", 2: "hop_latency", 7: "tx_utilization"}
    for bit in range(15):
        if not instructions & (0x8000 >> bit):
            continue
        size = 8 if bit in EIGHT_BYTE_BITS else 4
        field = b[at:at + size]
        if bit == 1:
            out["ingress_port"], out["egress_port"] = value(field[:2]), value(field[2:])
        elif bit == 3:
            out["queue_id"], out["queue_occupancy"] = value(field[:1]), value(field[1:])
        elif bit == 4:
            out["ingress_ts"] = value(field)
        elif bit == 5:
            out["egress_ts"] = value(field)
        elif bit == 6:
            out["l2_ingress"], out["l2_egress"] = value(field[:4]), value(field[4:])
        elif bit == 8:
            out["buffer_id"], out["buffer_occupancy"] = value(field[:1]), value(field[1:])
        elif bit in names:
            out[names[bit]] = value(field)
        else:
            out[f"reserved_bit{bit}"] = value(field)
        at += size
    if ds_id == DOMAIN_ID:
        if ds & 0x8000:
            out["tx_bytes"] = value(b[at:at + 4])
            at += 4
        if ds & 0x4000:
            out["link_speed_mbps"] = value(b[at:at + 4])
            at += 4
    if instructions & 0x0001:
        out["checksum_complement"] = value(b[-4:])
    return out


def icrc(ip, udp, rest):
    """docs/frames.md's ICRC: CRC-32 over 8 x 0xFF, IPv4 with TOS, TTL and checksum as 0xFF,
    UDP with checksum 0xFFFF, BTH with byte 4 as 0xFF, then the rest up to the ICRC; stored
    least significant byte first."""
    ip, udp, rest = bytearray(ip), bytearray(udp), bytearray(rest)
    ip[1] = ip[8] = 0xFF
    ip[10:12] = b"\xff\xff"
    udp[6:8] = b"\xff\xff"
    rest[4] = 0xFF
    return struct.pack("<I", zlib.crc32(b"\xff" * 8 + bytes(ip) + bytes(udp) + bytes(rest)) & 0xFFFFFFFF)


def check(number, frame):
    at = 12
    ethertype = struct.unpack("!H", frame[at:at + 2])[0]
    while ethertype in (0x8100, 0x88A8):
        at += 4
        ethertype = struct.unpack("!H", frame[at:at + 2])[0]
    at += 2
    if ethertype != 0x0800 or len(frame) < at + 28:
        return None
    ihl = (frame[at] & 0x0F) * 4
    ip_total = struct.unpack("!H", frame[at + 2:at + 4])[0]
    if frame[at + 9] != 17:
        return None
    ip_header = frame[at:at + ihl]
    udp_at = at + ihl
    sport, dport, udp_len = struct.unpack("!HHH", frame[udp_at:udp_at + 6])
    if dport != INT_UDP_PORT:
        return None
    errors = []
    out = {"frame": number, "src": ip_text(frame[at + 12:at + 16]), "dst": ip_text(frame[at + 16:at + 20]),
           "sport": sport}
    if ip_total != ihl + udp_len:
        errors.append(f"IPv4 total length {ip_total} is not its header {ihl} + UDP length {udp_len}")
    if at + ip_total > len(frame):
        errors.append(f"IPv4 total length {ip_total} beyond the {len(frame) - at} bytes captured")
    payload = frame[udp_at + 8:udp_at + max(udp_len, 8)]
    if len(payload) < SHIM_LEN + MD_LEN:
        out["errors"] = errors + [f"truncated: {len(payload)} bytes of UDP payload, no room for shim + MD header"]
        return out
    kind, npt, length, port = payload[0] >> 4, (payload[0] >> 2) & 3, payload[1], struct.unpack("!H", payload[2:4])[0]
    md = payload[4:16]
    version, flags = md[0] >> 4, md[0] & 0x0F
    hop_ml, remaining = md[2] & 0x1F, md[3]
    instructions, ds_id, ds, ds_flags = struct.unpack("!HHHH", md[4:12])
    out.update(kind="echo" if kind == 2 else "data", type=kind, npt=npt, length=length, orig_port=port,
               version=version, d=bool(flags & 8), e=bool(flags & 4), m=bool(flags & 2), hop_ml=hop_ml,
               remaining_hops=remaining, instructions=f"{instructions:#06x}", ds_id=f"{ds_id:#06x}",
               ds_instructions=f"{ds:#06x}", ds_flags=f"{ds_flags:#06x}")
    if kind not in (1, 2):
        errors.append(f"shim Type {kind}, neither 1 (INT-MD) nor 2 (echo)")
    if npt != 1:
        errors.append(f"NPT {npt}, not 1")
    if version != 2:
        errors.append(f"MD version {version}, not 2")
    int_bytes = SHIM_LEN + length * 4
    stack = int_bytes - SHIM_LEN - MD_LEN
    expected = hop_words(instructions, ds_id, ds)
    if ds_id == DOMAIN_ID and hop_ml != expected:
        errors.append(f"HopML {hop_ml}, but the bitmaps ask for {expected} words")
    elif ds_id != DOMAIN_ID and hop_ml < expected:
        errors.append(f"HopML {hop_ml}, fewer than the {expected} words the bitmap asks for")
    if int_bytes > len(payload):
        out["errors"] = errors + [f"truncated: Length {length} words, {int_bytes} bytes of INT with the shim, "
                                  f"{len(payload)} bytes of UDP payload"]
        return out
    if stack < 0 or (stack and (hop_ml == 0 or stack % (hop_ml * 4))):
        out["errors"] = errors + [f"Length {length} words: {stack} bytes of hop stack is not a whole number of "
                                  f"HopML {hop_ml} x 4-byte hops"]
        return out
    hops = stack // (hop_ml * 4) if hop_ml else 0
    out["hops"] = hops
    records = []
    for index in range(hops):
        raw = payload[16 + index * hop_ml * 4:16 + (index + 1) * hop_ml * 4]
        records.append(dict(index=index + 1, **decode_hop(raw, instructions, ds_id, ds)))
    out["hop"] = records
    stamped = [(h["index"], h.get("egress_ts")) for h in records if h.get("egress_ts") is not None]
    for (newer, t_newer), (older, t_older) in zip(stamped, stamped[1:]):
        if t_newer < t_older:
            errors.append(f"hop {newer}'s egress timestamp {t_newer} ns is before hop {older}'s {t_older} ns "
                          "(the hop before it on the path)")
    original = payload[int_bytes:]
    if port == ROCE_PORT:
        # The sink's view: INT stripped, UDP port and lengths restored, IPv4 checksum aside (masked).
        restored_ip = bytearray(ip_header)
        struct.pack_into("!H", restored_ip, 2, ip_total - int_bytes)
        restored_udp = struct.pack("!HHHH", sport, port, udp_len - int_bytes, 0)
        if len(original) < 16:
            errors.append(f"{len(original)} bytes after INT: no room for a BTH and an ICRC")
        else:
            ok = icrc(restored_ip, restored_udp, original[:-4]) == original[-4:]
            out["icrc_ok"] = ok
            if not ok:
                errors.append("ICRC of the packet without INT does not match the stored one")
    out["errors"] = errors
    return out


def main():
    args = sys.argv[1:]
    strict = "--check" in args
    paths = [a for a in args if a != "--check"]
    if len(paths) != 1:
        sys.exit("usage: int_check.py [--check] PCAP")
    failures = []
    for number, frame in enumerate(frames(paths[0]), 1):
        out = check(number, frame)
        if out is None:
            continue
        print(json.dumps(out))
        failures += [f"frame {number}: {e}" for e in out["errors"]]
    if strict and failures:
        print("\n".join(failures), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
