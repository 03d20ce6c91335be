#!/usr/bin/env bash
# PFC on the wire, step by step: three hosts on one pfcswitchd (the star3 topology, configs/default.toml,
# 100 Mbit/s ports, PFC on priority 3). Two hosts send to the third at twice its port speed
# on the lossless priority: the switch pauses them with real PFC frames, nothing is lost.
# Prints pfcstat and the PFC frames captured on a sender's link, then tears everything down.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
pfcswitch=/usr/local/bin/pfcswitch
prefix=demo-
work=$(mktemp -d /tmp/pfcswitch-demo.XXXXXX)
cleanup() {
  jobs -p | xargs -r kill 2>/dev/null || true
  $pfcswitch topology down star3 --prefix $prefix
  rm -rf "$work"
}
trap cleanup EXIT

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
in_ns() { local ns=$1; shift; ip netns exec "$prefix$ns" "$@"; }
control=(-s /run/pfcswitch/${prefix}sw1.sock)

step "star3: h1, h2, h3 on switch sw1 (pfcswitchd, AF_XDP, 100 Mbit/s ports, PFC on priority 3)"
$pfcswitch topology up star3 --prefix $prefix --spin "${PFCSWITCHD_SPIN:-0us}"
$pfcswitch "${control[@]}" status

step "Kernel traffic through the switch: ping h1 -> h3"
in_ns h1 ping -c 3 -i 0.2 10.0.0.3

step "Incast: h1 and h2 each send 5000 x 1500 B at 100 Mbit/s on priority 3 to h3 (2:1)"
in_ns h1 tcpdump -i eth0 -U -w "$work/h1-pfc.pcap" ether proto 0x8808 2>/dev/null &
capture=$!
in_ns h3 $pfcswitch traffic recv --iface eth0 --duration 60s --idle 2s >"$work/recv.txt" &
receiver=$!
sleep 1
in_ns h1 $pfcswitch traffic send --iface eth0 --speed 100Mbps --dst 02:00:00:00:00:03 --pcp 3 --frames 5000 --flow 1 &
sender=$!
in_ns h2 $pfcswitch traffic send --iface eth0 --speed 100Mbps --dst 02:00:00:00:00:03 --pcp 3 --frames 5000 --flow 2
wait $sender
wait $receiver
sleep 0.3
kill -TERM $capture; wait $capture || true
echo "receiver h3:"
cat "$work/recv.txt"

step "pfcswitch pfcstat (PFC frames per port and priority)"
$pfcswitch "${control[@]}" pfcstat

step "pfcswitch queues (occupancy, high-water marks, pause times)"
$pfcswitch "${control[@]}" queues

step "pfcswitch status (datapath health, timer accuracy)"
$pfcswitch "${control[@]}" status

decoded=$(tshark -r "$work/h1-pfc.pcap" -T fields -E header=y -e frame.time_relative -e eth.src -e macc.opcode \
  -e macc.cbfc.enbv -e macc.cbfc.pause_time.c3 2>/dev/null)
step "PFC frames captured on h1's link, decoded by tshark (first 8 of $(($(wc -l <<<"$decoded") - 1)))"
head -9 <<<"$decoded"
echo "... and as pfcswitch reads them:"
$pfcswitch frame decode --speed 100Mbps "$work/h1-pfc.pcap" | sed -n 1,4p
