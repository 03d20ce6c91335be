"""RoCEv2 oracle: reads a pcap with scapy's contrib/roce.py, which shares no code with
pfcswitch_wire, and prints one JSON object per frame: the BTH opcode, destination QP and PSN,
the AETH syndrome and MSN of an ACK, and whether the stored ICRC equals the one scapy
computes when it rebuilds the packet (compute_icrc: 8 bytes of 0xFF, IP with TOS, TTL and
checksum masked, UDP checksum masked, BTH byte 4 masked).

    roce_check.py PCAP

Run by tests/tests/roce_frames.rs with Debian's python3-scapy.
"""
import json
import sys

from scapy.all import IP, UDP, rdpcap, raw
from scapy.contrib.roce import AETH, BTH


def check(frame):
    if BTH not in frame:
        return {"roce": False}
    bth = frame[BTH]
    ip = frame[IP]
    stored = raw(ip)[: ip.len][-4:]
    rebuilt = frame.copy()
    rebuilt[BTH].icrc = None
    computed = raw(rebuilt[IP])[: ip.len][-4:]
    fields = {
        "roce": True,
        "dport": frame[UDP].dport,
        "opcode": bth.opcode,
        "dest_qp": bth.dqpn,
        "psn": bth.psn,
        "pad_count": bth.padcount,
        "ack_req": bth.ackreq,
        "becn": bth.becn,
        "ecn": ip.tos & 3,
        "stored_icrc": stored.hex(),
        "computed_icrc": computed.hex(),
        "icrc_ok": stored == computed,
    }
    if AETH in frame:
        fields["syndrome"] = frame[AETH].syndrome
        fields["msn"] = frame[AETH].msn
    return fields


def main():
    for frame in rdpcap(sys.argv[1]):
        print(json.dumps(check(frame)))


if __name__ == "__main__":
    main()
