"""scapy as an independent oracle for pfcswitch's wire formats.

    dissect PCAP          one JSON object per frame: the fields scapy reads
    craft PCAP SEED N     write N random frames built by scapy; print the fields used

Run by tests/tests/oracles.rs with Debian's python3-scapy.
"""
import json
import random
import sys

from scapy.all import Dot1Q, Ether, IP, UDP, Raw, rdpcap, wrpcap
from scapy.contrib.mac_control import MACControlClassBasedFlowControl, MACControlPause


def pfc_fields(layer):
    enable = sum(getattr(layer, f"c{c}_enabled") << c for c in range(8))
    times = [getattr(layer, f"c{c}_pause_time") for c in range(8)]
    return {"kind": "pfc", "enable": enable, "quanta": times}


def dissect(frame):
    fields = {"src": frame[Ether].src, "dst": frame[Ether].dst}
    if MACControlClassBasedFlowControl in frame:
        fields.update(pfc_fields(frame[MACControlClassBasedFlowControl]))
    elif MACControlPause in frame:
        fields.update({"kind": "pause", "quanta": frame[MACControlPause].pause_time})
    else:
        fields["kind"] = "other"
    if Dot1Q in frame:
        tag = frame[Dot1Q]
        fields["vlan"] = {"pcp": tag.prio, "dei": tag.id, "vid": tag.vlan}
    if IP in frame:
        fields["ipv4"] = {"src": frame[IP].src, "dst": frame[IP].dst, "dscp": frame[IP].tos >> 2}
    if UDP in frame:
        fields["udp"] = {"src_port": frame[UDP].sport, "dst_port": frame[UDP].dport}
    return fields


def random_mac(rng):
    return "02:" + ":".join(f"{rng.randrange(256):02x}" for _ in range(5))


def craft_one(rng):
    src, kind = random_mac(rng), rng.choice(["pfc", "pause", "data"])
    if kind == "pfc":
        enable = rng.randrange(256)
        times = [rng.randrange(65536) for _ in range(8)]
        args = {f"c{c}_enabled": (enable >> c) & 1 for c in range(8)}
        args.update({f"c{c}_pause_time": times[c] for c in range(8)})
        frame = Ether(dst="01:80:c2:00:00:01", src=src) / MACControlClassBasedFlowControl(**args)
        return frame, {"kind": "pfc", "src": src, "enable": enable, "quanta": times}
    if kind == "pause":
        quanta = rng.randrange(65536)
        frame = Ether(dst="01:80:c2:00:00:01", src=src) / MACControlPause(pause_time=quanta)
        return frame, {"kind": "pause", "src": src, "quanta": quanta}
    pcp, dei, vid, dscp = rng.randrange(8), rng.randrange(2), rng.randrange(4095), rng.randrange(64)
    frame = (
        Ether(dst=random_mac(rng), src=src)
        / Dot1Q(prio=pcp, id=dei, vlan=vid)
        / IP(src="10.0.0.1", dst="10.0.0.2", tos=dscp << 2)
        / UDP(sport=rng.randrange(1, 65536), dport=39000)
        / Raw(b"\x00" * rng.randrange(0, 64))
    )
    return frame, {"kind": "data", "src": src, "vlan": {"pcp": pcp, "dei": dei, "vid": vid}, "dscp": dscp}


def main():
    command = sys.argv[1]
    if command == "dissect":
        for frame in rdpcap(sys.argv[2]):
            print(json.dumps(dissect(frame)))
    elif command == "craft":
        rng = random.Random(int(sys.argv[3]))
        built = [craft_one(rng) for _ in range(int(sys.argv[4]))]
        wrpcap(sys.argv[2], [frame for frame, _ in built])
        for _, fields in built:
            print(json.dumps(fields))
    else:
        sys.exit(f"unknown command {command}")


if __name__ == "__main__":
    main()
