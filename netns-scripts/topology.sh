#!/usr/bin/env bash
# Named topologies of network namespaces joined by veth pairs, with one pfcswitchd per
# switch namespace.
#
#   topology.sh up NAME [--prefix P] [--config-dir DIR] [--mtu BYTES] [--no-daemon] [--tap END]...
#   topology.sh down NAME [--prefix P]
#   topology.sh list
#   topology.sh describe NAME      (its switches, hosts and links, for programs)
#   topology.sh relink NAME SW:PORT [--prefix P] [--mtu BYTES]
#                                  (deletes the veth pair at SW:PORT if it exists and
#                                   creates it again as `up` did: a replaced cable or NIC)
#
# Namespaces are named ${P}sw1.., ${P}h1.. (default prefix "pfc-"). A host's interface is
# eth0 with MAC 02:00:00:00:00:NN, 10.0.0.N/24 and fd00::N/64, and VLAN, checksum and
# segmentation offloads off (frames leave as on a real wire: tag inline, checksums done,
# no super-frames). Switch ports are p1, p2, ... in port order. Each
# switch runs `pfcswitchd --config DIR/swK.toml` (star3 defaults to configs/default.toml,
# star8 to configs/star8.toml),
# with its control socket at /run/pfcswitch/${P}swK.sock and its log at
# /run/pfcswitch/${P}swK.log, and `--spin ${PFCSWITCHD_SPIN:-0us}`. `down` stops the daemons
# and removes every namespace of the prefix it created; nothing else is touched.
#
# --tap END (SW:PORT, or a host for its link; repeatable) builds that link through a tap
# namespace ${P}tap-SW-PORT (SW:PORT the link's first end in `describe`): its interface
# end-a leads to that end, end-b to the other, and tc mirred passes every frame across
# unchanged. tcpdump on end-a there sees both directions, which taps at the ends cannot: a switch port's
# (and a scenario endpoint's) frames go through AF_XDP and never pass the kernel's taps.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
rundir=/run/pfcswitch

usage() { sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }

# Topology tables: "switch:port host" for host links, "switch:port switch:port" for trunks.
topology_star3() {
  SWITCHES="sw1"
  HOSTS="h1 h2 h3"
  LINKS="sw1:p1-h1 sw1:p2-h2 sw1:p3-h3"
}

# Eight hosts on one switch: the size the memory measurement uses.
topology_star8() {
  SWITCHES="sw1"
  HOSTS="h1 h2 h3 h4 h5 h6 h7 h8"
  LINKS="sw1:p1-h1 sw1:p2-h2 sw1:p3-h3 sw1:p4-h4 sw1:p5-h5 sw1:p6-h6 sw1:p7-h7 sw1:p8-h8"
}

# The OFC paper's Fig. 1: three switches in a row and ten servers. F0 (h1 -> h9) and
# F1 (h2 -> h10) cross sw1 and sw2 and leave sw3 on different ports; the burst senders
# h3-h8 (F2-F7) hang off sw2 and sw3 and send to h10 with F1.
topology_ofc_fig1() {
  SWITCHES="sw1 sw2 sw3"
  HOSTS="h1 h2 h3 h4 h5 h6 h7 h8 h9 h10"
  LINKS="sw1:p1-h1 sw1:p2-h2 sw1:p3-sw2:p1 sw2:p2-h3 sw2:p3-h4 sw2:p4-h5 sw2:p5-sw3:p1 \
sw3:p2-h6 sw3:p3-h7 sw3:p4-h8 sw3:p5-h9 sw3:p6-h10"
}

# A small leaf-spine for the CaPFC paper's scenario 1: leaves sw1 (h1-h5) and sw2 (h6-h10),
# each with an uplink p6 to the spine sw3. One spine: learning L2 switches cannot use
# multipath without loops (the paper's fat-tree uses ECMP), so uplinks are 5:1 oversubscribed.
topology_leaf_spine() {
  SWITCHES="sw1 sw2 sw3"
  HOSTS="h1 h2 h3 h4 h5 h6 h7 h8 h9 h10"
  LINKS="sw1:p1-h1 sw1:p2-h2 sw1:p3-h3 sw1:p4-h4 sw1:p5-h5 sw1:p6-sw3:p1 \
sw2:p1-h6 sw2:p2-h7 sw2:p3-h8 sw2:p4-h9 sw2:p5-h10 sw2:p6-sw3:p2"
}

# A larger tree for the CaPFC paper's scenario 1: four leaves sw1-sw4 of four hosts each
# (h1-h4 on sw1, h5-h8 on sw2, ...), each with an uplink p5 to port pN of the spine sw5. Four
# hosts per 100 Mbit/s uplink: 4:1, the paper's total subscription ratio.
topology_leaf_spine_4() {
  SWITCHES="sw1 sw2 sw3 sw4 sw5"
  HOSTS="h1 h2 h3 h4 h5 h6 h7 h8 h9 h10 h11 h12 h13 h14 h15 h16"
  LINKS=""
  local leaf port
  for leaf in 1 2 3 4; do
    for port in 1 2 3 4; do LINKS+="sw$leaf:p$port-h$(((leaf - 1) * 4 + port)) "; done
    LINKS+="sw$leaf:p5-sw5:p$leaf "
  done
  LINKS=${LINKS% }
}

# Two leaves, two spines: h1, h2 on leaf sw1 and h3, h4 on leaf sw2; each leaf's p3 goes to
# spine sw3 and its p4 to spine sw4. The leaves reach the other leaf's hosts over both
# spines (static ECMP entries); uplinks learn nothing and only p3 floods, so flooded frames
# follow the tree through sw3 and never loop.
topology_leaf_spine_2s() {
  SWITCHES="sw1 sw2 sw3 sw4"
  HOSTS="h1 h2 h3 h4"
  LINKS="sw1:p1-h1 sw1:p2-h2 sw1:p3-sw3:p1 sw1:p4-sw4:p1 sw2:p1-h3 sw2:p2-h4 sw2:p3-sw3:p2 sw2:p4-sw4:p2"
}

# The OFC paper's incast dumbbell (§IV-A), at the size two cores carry: two switches joined
# by one link (sw1:p6-sw2:p1), h1-h5 on sw1 and h6-h11 on sw2. Incast senders on both sides
# hit h11; h5 -> h10 is uncongested traffic sharing the sw1 -> sw2 link with the incast.
topology_dumbbell() {
  SWITCHES="sw1 sw2"
  HOSTS="h1 h2 h3 h4 h5 h6 h7 h8 h9 h10 h11"
  LINKS="sw1:p1-h1 sw1:p2-h2 sw1:p3-h3 sw1:p4-h4 sw1:p5-h5 sw1:p6-sw2:p1 \
sw2:p2-h6 sw2:p3-h7 sw2:p4-h8 sw2:p5-h9 sw2:p6-h10 sw2:p7-h11"
}

# The OFC paper's incast dumbbell at its own scale (§IV-A): two rack switches with 32
# servers each, joined by sw1:p33-sw2:p33; h1-h32 on sw1, h33-h64 on sw2. 66 namespaces and
# 40 Gbit/s are beyond two cores: the scenarios on it run in the simulator (`--sim`).
topology_dumbbell_32() {
  SWITCHES="sw1 sw2"
  HOSTS=""
  LINKS=""
  local n
  for n in $(seq 1 32); do
    HOSTS+="h$n "
    LINKS+="sw1:p$n-h$n "
  done
  for n in $(seq 1 32); do
    HOSTS+="h$((n + 32)) "
    LINKS+="sw2:p$n-h$((n + 32)) "
  done
  HOSTS=${HOSTS% }
  LINKS+="sw1:p33-sw2:p33"
}

select_topology() {
  case "$1" in
    star3) topology_star3; DEFAULT_CONFIGS="$repo/configs/default.toml" ;;
    star8) topology_star8; DEFAULT_CONFIGS="$repo/configs/star8.toml" ;;
    ofc-fig1) topology_ofc_fig1; DEFAULT_CONFIGS="$repo/configs/ofc-fig1" ;;
    leaf-spine) topology_leaf_spine; DEFAULT_CONFIGS="$repo/configs/leaf-spine" ;;
    leaf-spine-4) topology_leaf_spine_4; DEFAULT_CONFIGS="$repo/configs/leaf-spine-4" ;;
    leaf-spine-2s) topology_leaf_spine_2s; DEFAULT_CONFIGS="$repo/configs/leaf-spine-2s" ;;
    dumbbell) topology_dumbbell; DEFAULT_CONFIGS="$repo/configs/dumbbell" ;;
    dumbbell-32) topology_dumbbell_32; DEFAULT_CONFIGS="$repo/configs/dumbbell-32" ;;
    *) echo "topology.sh: unknown topology '$1' (known: star3, star8, ofc-fig1, leaf-spine, leaf-spine-4, leaf-spine-2s, dumbbell, dumbbell-32)" >&2; exit 2 ;;
  esac
}

daemon_binary() {
  if [ -n "${PFCSWITCHD:-}" ]; then echo "$PFCSWITCHD"
  elif [ -x "$repo/target/release/pfcswitchd" ]; then echo "$repo/target/release/pfcswitchd"
  else command -v pfcswitchd || { echo "topology.sh: pfcswitchd not found (build it, or set PFCSWITCHD)" >&2; exit 1; }
  fi
}

config_for() { # switch
  if [ -f "$CONFIGS" ]; then echo "$CONFIGS"; else echo "$CONFIGS/$1.toml"; fi
}

up() {
  mkdir -p "$rundir"
  for ns in $SWITCHES $HOSTS; do
    ip netns add "$PREFIX$ns"
    ip -n "$PREFIX$ns" link set lo up
  done
  for link in $LINKS; do add_link "$link"; done
  [ -n "$NO_DAEMON" ] && return 0
  local binary; binary=$(daemon_binary)
  for sw in $SWITCHES; do
    local name="$PREFIX$sw"
    # --spin 0us by default: the switches of a topology share the machine's cores with each
    # other and with the endpoints; spinning for timer precision would starve them.
    ip netns exec "$name" "$binary" --config "$(config_for "$sw")" --spin "${PFCSWITCHD_SPIN:-0us}" \
      --control-socket "$rundir/$name.sock" >"$rundir/$name.log" 2>&1 &
    echo $! >"$rundir/$name.pid"
  done
  for sw in $SWITCHES; do wait_ready "$PREFIX$sw"; done
}

# The tap namespace of a link (an entry of $LINKS), named after its first end.
tap_namespace() { # link
  local a=${1%%-*}
  echo "${PREFIX}tap-${a%%:*}-${a#*:}"
}

is_tapped() { # link
  local end
  for end in $TAPS; do [ "$(link_at "$end")" = "$1" ] && return 0; done
  return 1
}

# Joins interface $1 of namespace $2 to interface $3 of namespace $4: one veth pair, or two
# through the link's tap namespace when it is tapped.
join() { # iface-a ns-a iface-b ns-b link
  if is_tapped "$5"; then
    local tap; tap=$(tap_namespace "$5")
    ip netns add "$tap"
    ip -n "$tap" link set lo up
    # The tap only passes frames on: no address, no neighbour discovery of its own.
    ip netns exec "$tap" sysctl -qw net.ipv6.conf.default.disable_ipv6=1 net.ipv6.conf.all.disable_ipv6=1
    ip link add "$1" netns "$2" type veth peer name end-a netns "$tap"
    ip link add "$3" netns "$4" type veth peer name end-b netns "$tap"
    local from to
    for from in end-a end-b; do
      to=$([ $from = end-a ] && echo end-b || echo end-a)
      # Frames cross as they came: VLAN tags stay in the frame (a tag the kernel lifted into
      # metadata would reach the switch's XDP program untagged, priority 0), no offloads.
      ip netns exec "$tap" ethtool -K "$from" rxvlan off txvlan off tx off tso off gso off gro off >/dev/null
      ip -n "$tap" link set dev "$from" mtu "$MTU" up
      ip netns exec "$tap" tc qdisc add dev "$from" ingress
      ip netns exec "$tap" tc filter add dev "$from" parent ffff: protocol all u32 match u32 0 0 \
        action mirred egress redirect dev "$to"
    done
  else
    ip link add "$1" netns "$2" type veth peer name "$3" netns "$4"
  fi
}

add_link() { # switch:port-(host|switch:port), an entry of $LINKS
  local link=$1
  local a=${link%%-*} b=${link#*-}
  local sw=${a%%:*} port=${a#*:}
  if [[ $b == *:* ]]; then
    local sw2=${b%%:*} port2=${b#*:}
    join "$port" "$PREFIX$sw" "$port2" "$PREFIX$sw2" "$link"
    for end in "$sw:$port" "$sw2:$port2"; do switch_port "${end%%:*}" "${end#*:}"; done
  else
    local n=${b#h}
    join "$port" "$PREFIX$sw" eth0 "$PREFIX$b" "$link"
    switch_port "$sw" "$port"
    ip -n "$PREFIX$b" link set eth0 address "$(printf '02:00:00:00:00:%02x' "$n")"
    ip -n "$PREFIX$b" addr add "10.0.0.$n/24" dev eth0
    ip -n "$PREFIX$b" -6 addr add "fd00::$n/64" dev eth0 nodad
    # Frames must leave the host as they are on a real wire: tags inline, checksums
    # computed, no TSO super-frames (the switch forwards bytes, it does not finish them).
    ip netns exec "$PREFIX$b" ethtool -K eth0 txvlan off tx off tso off gso off >/dev/null
    ip -n "$PREFIX$b" link set eth0 mtu "$MTU" up
  fi
}

# The entry of $LINKS with SW:PORT at one end.
link_at() { # switch:port
  local link
  for link in $LINKS; do
    if [ "${link%%-*}" = "$1" ] || [ "${link#*-}" = "$1" ]; then echo "$link"; return 0; fi
  done
  echo "topology.sh: no link at $1" >&2; exit 2
}

relink() { # switch:port (an untapped link)
  local link; link=$(link_at "$1")
  local a=${link%%-*}
  ip -n "$PREFIX${a%%:*}" link del "${a#*:}" 2>/dev/null || true
  add_link "$link"
}

switch_port() { # switch port
  ip netns exec "$PREFIX$1" sysctl -qw "net.ipv6.conf.$2.disable_ipv6=1"
  ip -n "$PREFIX$1" link set "$2" mtu "$MTU" up
}

wait_ready() { # namespace
  for _ in $(seq 100); do
    [ -S "$rundir/$1.sock" ] && return 0
    if ! kill -0 "$(cat "$rundir/$1.pid")" 2>/dev/null; then
      echo "topology.sh: pfcswitchd in $1 exited:" >&2; cat "$rundir/$1.log" >&2; return 1
    fi
    sleep 0.1
  done
  echo "topology.sh: pfcswitchd in $1 did not open its control socket" >&2; cat "$rundir/$1.log" >&2; return 1
}

down() {
  for sw in $SWITCHES; do
    local name="$PREFIX$sw" pidfile="$rundir/$PREFIX$sw.pid"
    if [ -f "$pidfile" ]; then
      local pid; pid=$(cat "$pidfile")
      if kill -TERM "$pid" 2>/dev/null; then
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null || true
      fi
      rm -f "$pidfile" "$rundir/$name.sock"
    fi
  done
  for ns in $SWITCHES $HOSTS; do
    ip netns del "$PREFIX$ns" 2>/dev/null || true
  done
  local link
  for link in $LINKS; do ip netns del "$(tap_namespace "$link")" 2>/dev/null || true; done
}

[ $# -ge 1 ] || usage
command=$1; shift
[ "$command" = list ] && { echo "star3 star8 ofc-fig1 leaf-spine leaf-spine-4 leaf-spine-2s dumbbell dumbbell-32"; exit 0; }
[ $# -ge 1 ] || usage
select_topology "$1"; shift
# For programs that drive a topology (pfcswitch scenario run): its nodes, one kind per line.
[ "$command" = describe ] && { echo "switches $SWITCHES"; echo "hosts $HOSTS"; echo "links $LINKS"; exit 0; }
PREFIX=pfc- CONFIGS=$DEFAULT_CONFIGS NO_DAEMON= MTU=1500 END= TAPS=
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) PREFIX=$2; shift 2 ;;
    --config-dir|--config) CONFIGS=$2; shift 2 ;;
    --no-daemon) NO_DAEMON=1; shift ;;
    --mtu) MTU=$2; shift 2 ;;
    --tap) link_at "$2" >/dev/null; TAPS+=" $2"; shift 2 ;;
    *:*) [ "$command" = relink ] && [ -z "$END" ] || usage; END=$1; shift ;;
    *) usage ;;
  esac
done
case "$command" in
  up) trap 'echo "topology.sh: setup failed; tearing down" >&2; down' ERR; up; trap - ERR ;;
  down) down ;;
  relink) [ -n "$END" ] || usage; relink "$END" ;;
  *) usage ;;
esac
