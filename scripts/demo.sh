#!/usr/bin/env bash
# The README's demo: builds pfcswitch, crafts one frame of each format the switch speaks,
# and shows what pfcswitch and Wireshark's dissectors (tshark) read in them.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
pfcswitch=target/release/pfcswitch
work=$(mktemp -d /tmp/pfcswitch-demo.XXXXXX)
trap 'rm -rf "$work"' EXIT

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "PFC: pause class 3 for 65535 quanta, resume class 4"
$pfcswitch frame pfc --src 02:00:00:00:00:01 --class 3=65535 --class 4=0 -o "$work/pfc.pcap"
$pfcswitch frame decode --speed 1Gbps "$work/pfc.pcap"
echo "tshark (macc.opcode, macc.cbfc.enbv, c3, c4):"
tshark -r "$work/pfc.pcap" -T fields -e macc.opcode -e macc.cbfc.enbv \
  -e macc.cbfc.pause_time.c3 -e macc.cbfc.pause_time.c4 2>/dev/null

step "802.3x PAUSE: every priority for 1000 quanta"
$pfcswitch frame pause --src 02:00:00:00:00:01 --quanta 1000 -o "$work/pause.pcap"
$pfcswitch frame decode --speed 10Gbps "$work/pause.pcap"
echo "tshark (macc.opcode, macc.pause_time):"
tshark -r "$work/pause.pcap" -T fields -e macc.opcode -e macc.pause_time 2>/dev/null

step "Data frames: 802.1Q PCP 3, VID 100, IPv4/UDP with the traffic header"
$pfcswitch frame data --src 02:00:00:00:00:01 --dst 02:00:00:00:00:02 --pcp 3 --vid 100 \
  --flow 7 --seq 1 --size 1500 --count 3 -o "$work/data.pcap"
$pfcswitch frame decode "$work/data.pcap"
echo "tshark (vlan.priority, vlan.id, ip.src, ip.dst, udp.dstport, frame.len):"
tshark -r "$work/data.pcap" -T fields -e vlan.priority -e vlan.id -e ip.src -e ip.dst \
  -e udp.dstport -e frame.len 2>/dev/null

step "802.1Qau CNM with a CN-TAG (no Wireshark dissector exists: raw bytes shown)"
$pfcswitch frame cnm --src 02:00:00:00:00:0a --dst 02:00:00:00:00:01 --flow-id 7 --cpid 0x020000000000000a \
  --fb 42 --qoffset -1234 --qdelta 567 --encap-priority 3 --encap-dst 02:00:00:00:00:02 \
  --msdu 4500002e --msdu-len 4 -o "$work/cnm.pcap"
$pfcswitch frame decode "$work/cnm.pcap"
tshark -r "$work/cnm.pcap" -x 2>/dev/null | grep -v '^$'
