"""The frames of a classic pcap file, read with struct alone: what the plain-Python oracles
(cnm_check.py, int_check.py) share, so that none of them depends on pfcswitch's code or on
scapy to read a capture."""
import struct
import sys


def frames(path):
    """Each record's bytes, in file order; pcapng is refused with how to convert it."""
    with open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack("<I", data[:4])[0]
    if magic == 0x0A0D0D0A:
        sys.exit(f"{path}: pcapng; convert it with `editcap -F pcap`")
    endian = "<" if magic in (0xA1B2C3D4, 0xA1B23C4D) else ">"
    at = 24
    while at + 16 <= len(data):
        _, _, incl, _ = struct.unpack(endian + "IIII", data[at:at + 16])
        yield data[at + 16:at + 16 + incl]
        at += 16 + incl
