#!/usr/bin/env python3
"""Recomputes every line's standalone FCT of an fct.txt from its topology.txt by HPCC's rule,
as HPCC's scratch/third.cc computes it, sharing no code with pfcswitch.

Usage: hpcc_standalone.py TOPOLOGY_TXT FCT_TXT [PAYLOAD_BYTES]

third.cc's CalculateRoute runs a breadth-first search from every host over the switches,
accumulating per node the one-way propagation delay, the transmission time of one payload
(PAYLOAD × 8 × 10^9 / rate, in whole ns) on every link, and the slowest rate; a pair's base
RTT is twice the delay plus the transmission times. qp_finish then writes
base RTT + total_bytes × 8 × 10^9 / slowest rate, where total_bytes is the size plus 48 bytes
of headers (14 + 20 + 8 + 2 + 4) per payload-sized packet.

Prints one JSON object: the lines read and the lines whose standalone FCT differs.
"""
import json
import re
import sys

UNITS = {"bps": 1, "Kbps": 10**3, "Mbps": 10**6, "Gbps": 10**9}
TIME = {"s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}


def number(text, units):
    value, unit = re.fullmatch(r"([0-9.]+)([A-Za-z/]*)", text).groups()
    whole, _, fraction = value.partition(".")
    scale = units[unit]
    return (int(whole or "0") * scale) + (int(fraction) * scale // 10 ** len(fraction) if fraction else 0)


def read_topology(path):
    tokens = open(path).read().split()
    nodes, switches, links = int(tokens[0]), int(tokens[1]), int(tokens[2])
    switch_ids = set(int(t) for t in tokens[3:3 + switches])
    neighbours = {n: [] for n in range(nodes)}
    at = 3 + switches
    for _ in range(links):
        a, b, rate, delay = int(tokens[at]), int(tokens[at + 1]), number(tokens[at + 2], UNITS), number(tokens[at + 3], TIME)
        neighbours[a].append((b, rate, delay))
        neighbours[b].append((a, rate, delay))
        at += 5
    return switch_ids, neighbours


def from_host(host, switch_ids, neighbours, payload):
    """delay, transmission and slowest rate from every node to `host` (CalculateRoute)."""
    delay, tx, bw = {host: 0}, {host: 0}, {host: 2**64 - 1}
    queue = [host]
    for now in queue:
        for nxt, rate, d in neighbours[now]:
            if nxt not in delay:
                delay[nxt] = delay[now] + d
                tx[nxt] = tx[now] + payload * 1000000000 * 8 // rate
                bw[nxt] = min(bw[now], rate)
                if nxt in switch_ids:
                    queue.append(nxt)
    return delay, tx, bw


def main():
    topology, fct = sys.argv[1], sys.argv[2]
    payload = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
    switch_ids, neighbours = read_topology(topology)
    routes = {}
    lines, wrong = 0, []
    for line in open(fct):
        fields = line.split()
        if not fields:
            continue
        lines += 1
        sid, did = (int(fields[0], 16) >> 8) & 0xFFFF, (int(fields[1], 16) >> 8) & 0xFFFF
        size, standalone = int(fields[4]), int(fields[7])
        if did not in routes:
            routes[did] = from_host(did, switch_ids, neighbours, payload)
        delay, tx, bw = routes[did]
        base_rtt = delay[sid] * 2 + tx[sid]
        total_bytes = size + ((size - 1) // payload + 1) * 48
        expected = base_rtt + total_bytes * 8000000000 // bw[sid]
        if expected != standalone:
            wrong.append({"line": lines, "expected": expected, "found": standalone})
    print(json.dumps({"lines": lines, "wrong": wrong}))


if __name__ == "__main__":
    main()
