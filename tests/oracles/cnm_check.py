#!/usr/bin/env python3
"""Checks 802.1Qau CNMs in a pcap byte by byte against DESIGN.md's table, independently of
pfcswitch's own code: plain struct unpacking, no scapy, no pfcswitch_wire.

Usage: cnm_check.py PCAP QEQ_BYTES W

Prints one JSON object per frame: the fields read, and `errors`, the rules the frame breaks.
The rules: an 802.1Q tag (TPID 0x8100) then, optionally, a CN-TAG (0x22E9, flow id), then
EtherType 0x22E7; version 0 and reserved bits 0; QntzFb = min(63, floor(-Fb * 63 /
(Qeq * (2w + 1)))) with Fb = -(cnmQOffset + w * cnmQDelta) < 0, all in units of 64 octets as
the CNM carries them; the encapsulated priority's low 13 bits 0; the encapsulated MSDU is
min(length, 64) bytes; the frame is padded to at least 60 bytes.
"""
import json
import struct
import sys

from pcap_frames import frames


def mac(b):
    return ":".join(f"{x:02x}" for x in b)


def check(frame, qeq, w):
    errors = []
    out = {"len": len(frame), "dst": mac(frame[0:6]), "src": mac(frame[6:12])}
    if len(frame) < 60:
        errors.append("shorter than 60 bytes")
    tpid, tci = struct.unpack("!HH", frame[12:16])
    if tpid != 0x8100:
        return dict(out, errors=[f"no 802.1Q tag (TPID {tpid:#06x})"])
    out.update(pcp=tci >> 13, vid=tci & 0xFFF)
    at = 16
    ethertype = struct.unpack("!H", frame[at:at + 2])[0]
    if ethertype == 0x22E9:
        out["flow_id"] = struct.unpack("!H", frame[at + 2:at + 4])[0]
        at += 4
        ethertype = struct.unpack("!H", frame[at:at + 2])[0]
    if ethertype != 0x22E7:
        return dict(out, errors=[f"EtherType {ethertype:#06x}, not 0x22E7"])
    pdu = frame[at + 2:]
    first = struct.unpack("!H", pdu[0:2])[0]
    version, reserved, qntz = first >> 12, (first >> 6) & 0x3F, first & 0x3F
    cpid = pdu[2:10]
    qoff, qdelta = struct.unpack("!hh", pdu[10:14])
    encap_prio = struct.unpack("!H", pdu[14:16])[0]
    encap_dst = pdu[16:22]
    msdu_len = struct.unpack("!H", pdu[22:24])[0]
    carried = min(msdu_len, 64)
    msdu = pdu[24:24 + carried]
    if version != 0:
        errors.append(f"version {version}")
    if reserved != 0:
        errors.append(f"reserved bits {reserved}")
    if encap_prio & 0x1FFF:
        errors.append(f"encapsulated priority's low bits {encap_prio & 0x1FFF:#x}")
    if len(msdu) != carried:
        errors.append(f"{len(msdu)} MSDU bytes where {carried} are promised")
    fb = -(qoff + w * qdelta)
    full_scale = (qeq // 64) * (2 * w + 1)
    expected = min(63, (-fb * 63) // full_scale) if fb < 0 else None
    if expected is None:
        errors.append(f"a CNM with Fb = {fb} >= 0")
    elif qntz != expected:
        errors.append(f"QntzFb {qntz}, but Fb {fb} gives {expected}")
    out.update(
        version=version, qntz_fb=qntz, fb=fb, cpid=cpid.hex(), cpid_mac=mac(cpid[:6]), cpid_priority=cpid[6],
        cpid_input=cpid[7], q_offset=qoff, q_delta=qdelta, encapsulated_priority=encap_prio >> 13,
        encapsulated_dst=mac(encap_dst), msdu_len=msdu_len, msdu=msdu.hex(), errors=errors,
    )
    return out


def main():
    path, qeq, w = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    for frame in frames(path):
        print(json.dumps(check(frame, qeq, w)))


if __name__ == "__main__":
    main()
