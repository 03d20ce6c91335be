#!/usr/bin/env bash
# Forwarding rate (frames per second) of pfcswitchd and four other forwarders on the same
# veth topology in the same run, for 64 B and 1500 B frames on the wire (60 B and 1496 B
# without FCS), unshaped, on two paths through the switch (PATHS):
#
#   lossless        frames 802.1Q-tagged with PCP 3: PFC holds the generator back when
#                   pfcswitchd's ingress fills
#   lossy           untagged frames, priority 0 (the port's default): what most traffic is;
#                   nothing holds the generator back, and what pfcswitchd cannot send it
#                   drops at its egress queue
#
#   pfcswitchd      the daemon: 2 ports at 400 Gbit/s (its shaper never limits), PFC on
#                   priority 3, static FDB, its default --spin 60us
#   pfcswitchd-capfc  the same with policy capfc (CaPFC, Stop-Max) instead of pfc
#   pfcswitchd-spin0  the same with --spin 0us: what the timer spin costs in throughput
#   libxdp-forward  the independent reference: a plain C AF_XDP forwarder on libxdp's xsk API
#                   (bench/libxdp-forward.c: copy mode, shared UMEM, busy polling, batches of
#                   64, the kernel's xdpsock l2fwd shape), built here with cc
#   libxdp-bridge   the reference as a two-port learning bridge (its --learn): it reads each
#                   frame's Ethernet header, learns the source and looks up the destination,
#                   as any L2 forwarder must; its gap to libxdp-forward is what reading a frame
#                   written by another CPU costs here, and a table of pfcswitchd over it follows
#   libxdp-forward-twin  the reference again, as a forwarder of its own in each round: its
#                   ratio to libxdp-forward is what the instrument itself spreads, the
#                   control for every d/c below (same binary, same setup, only the turn differs)
#   pfcswitchd-alt  the same as pfcswitchd with another build, ALT_DAEMON=PATH: an A/B of two
#                   versions in the same rounds (its d/c beside pfcswitchd's)
#   xsk-forward     bare AF_XDP forwarder: pfcswitchd's UMEM, sockets and XDP classifier with
#                   no switch core, port A -> port B by UMEM address; its gap to
#                   libxdp-forward is what pfcswitchd's I/O layer costs
#   linux-bridge    the kernel bridge, static FDB entry for the sink
#   xdp-redirect    kernel XDP_REDIRECT through a DEVMAP (ebpf/bench_redirect.c)
#
#   pb-gen [pb-gen0] ---- [pb-a] pb-sw [pb-b] ---- [pb-sink0] pb-sink
#
# The generator (pfcswitch-bench flood: AF_XDP TX of one prebuilt frame, as fast as it goes)
# runs on CPU GEN_CPU and the forwarder process on CPU FWD_CPU.
#
# GENERATOR=kernel is the overload mode: the generator is pfcswitch-bench overload, an XDP
# program run inside the kernel with BPF_PROG_RUN on live frames (XDP_TX on pb-gen0), which
# offers several times what any AF_XDP forwarder here takes; on the lossless path it obeys
# the PFC frames it receives, as a NIC at 400 Gbit/s would. After each round, once the
# generator has stopped and the sink has seen nothing for half a second, a ledger says where
# every frame the generator sent went: dropped on the wire (the veth peer's ring full,
# pb-gen0's xdp_xmit_errors), refused by the forwarder's AF_XDP sockets (the kernel's
# XDP_STATISTICS: no fill buffer or RX ring full), dropped by pfcswitchd's classifier (by
# reason) or its switch (by reason), or delivered to the sink; what none of them counts is
# printed as unaccounted, beside the PFC frames the generator received. The forwarders default
# to pfcswitchd, libxdp-forward, its twin and pfcswitchd-probe (below).
#
# The overload mode also measures latency: a probe host pb-probe on pfcswitchd's third port
# (pb-c) sends PROBE_RATE frames per second of 128 B on priority 3 (lossless) to the sink,
# each stamped as it leaves by an XDP program run from userspace (pfcswitch-bench probe), and
# the sink's XDP program takes its one-way latency on the same clock. It runs in rounds of
# its own, pfcswitchd-probe (pfcswitchd with the probe, on the lossy path only), while
# priority 0 overloads the egress to the sink, and once beforehand with no generator (idle):
# the last table gives p50 and p99 of each. The probe's sender shares the generator's CPU, so
# pfcswitchd-probe's d/c says what the probe costs, and pfcswitchd's stays unperturbed.
#
#   pb-probe [pb-probe0] ---- [pb-c] pb-sw
#
# pb-a's receive processing
# (its XDP program and the copy into the socket) runs in one of two placements, both
# measured (PLACEMENTS):
#
#   forwarder  on FWD_CPU: threaded NAPI pinned there (RPS for the bridge, which has no
#              NAPI on veth), so the generator has its CPU to itself
#   generator  where veth runs it without threads: in the sender's softirq on GEN_CPU
#
# As veth runs a peer's receive where the sender transmits, the sink's XDP counter on
# pb-sink0 runs on FWD_CPU in both. With an AF_XDP forwarder pb-a's NAPI thread runs at
# nice 19, so it fills the RX ring when the forwarder has room instead of taking half of the
# CPU to copy frames the forwarder must drop (receive livelock); the kernel forwarders run
# entirely in that thread. A first row measures the generator alone (the counter on pb-a
# itself). Each point is the median of REPEAT rounds, the forwarders taking turns in a round,
# in the listed order in odd rounds and the reverse in even ones (c, d, d, c, ...), so that a
# drift of the machine's speed weighs on both alike. The second table gives, per cell, each
# pfcswitchd variant's rate over libxdp-forward's in the same round (d/c): the median and the
# worst round, and, from the reference's twin (the same binary, whose true ratio is 1), how
# far a round and a median of REPEAT rounds stray on this machine: what the table resolves.
# pfcswitchd's own counters give what it received on pb-a, transmitted on pb-b and dropped
# (any reason), per second, from the middle of the warm-up to the generator's tail: read
# outside the sink's window, so that the reads cost pfcswitchd's rounds nothing counted. A
# forwarder that exits during its window is reported with its exit status and log, and the
# round is measured again (at most three times): a round with no forwarder measures nothing.
#
#   scripts/bench-datapath.sh
#   env: GENERATOR=flood|kernel, WARMUP=1 WINDOW=5 (seconds), REPEAT=5, SIZES="60 1496",
#        GEN_CPU=0 FWD_CPU=1,
#        PATHS="lossless lossy", PLACEMENTS="generator forwarder",
#        FORWARDERS="pfcswitchd pfcswitchd-capfc pfcswitchd-spin0 libxdp-forward xsk-forward
#        linux-bridge xdp-redirect",
#        ALT_DAEMON=PATH (for pfcswitchd-alt), PROBE_RATE=2000 (frames/s, overload mode),
#        PROFILE=DIR: perf samples the forwarder's CPU (every process and the kernel) during
#        each point's first run and writes its top symbols to DIR/PLACEMENT-PATH-FORWARDER-SIZE.txt,
#        the forwarder's system calls per delivered frame to DIR/PLACEMENT-PATH-FORWARDER-SIZE.syscalls,
#        its CPU's time per delivered frame, in userspace and in the kernel, to ...-SIZE.cpu
#        (the samples beside it, .perf, for perf annotate) and pfcswitchd's status and
#        ports after the run to DIR/PLACEMENT-pfcswitchd-SIZE.status
#
# Needs root. Creates only namespaces pb-gen, pb-sw, pb-sink (and pb-probe) and removes them on exit,
# error or Ctrl-C; the XDP programs go with their processes and interfaces.
set -euo pipefail
cd "$(dirname "$0")/.."

WARMUP=${WARMUP:-1}
WINDOW=${WINDOW:-5}
REPEAT=${REPEAT:-5}
SIZES=${SIZES:-"60 1496"}
GEN_CPU=${GEN_CPU:-0}
FWD_CPU=${FWD_CPU:-1}
PLACEMENTS=${PLACEMENTS:-"generator forwarder"}
PATHS=${PATHS:-"lossless lossy"}
GENERATOR=${GENERATOR:-flood}
# The switch's ports are far faster than the datapath, so the shaper never limits. The
# overload mode's are slower: a pause quantum is 512 bit times, so at 400 Gbit/s the longest
# pause (65535 quanta) lasts 84 us, less than a turn of the loop takes under overload, and a
# peer would resume between refreshes; at 25 Gbit/s it lasts 1.3 ms, and 25 Gbit/s is still
# more than twice what either forwarder sends here at 1500 B (ten times at 64 B).
SPEED=400Gbps
[ "$GENERATOR" = kernel ] && SPEED=25Gbps
case "$GENERATOR" in
  flood) FORWARDERS=${FORWARDERS:-"pfcswitchd pfcswitchd-capfc pfcswitchd-spin0 libxdp-forward xsk-forward linux-bridge xdp-redirect"} ;;
  # XDP_TX into a veth needs an XDP program on its peer: the kernel forwarders have none.
  kernel) FORWARDERS=${FORWARDERS:-"pfcswitchd libxdp-forward libxdp-forward-twin pfcswitchd-probe"} ;;
  *) echo "bench-datapath.sh: GENERATOR is flood or kernel, not $GENERATOR" >&2; exit 1 ;;
esac
PROBE_RATE=${PROBE_RATE:-2000}
GEN_MAC=02:00:00:00:00:01
SINK_MAC=02:00:00:00:00:02
PROBE_MAC=02:00:00:00:00:03
NAMESPACES="pb-gen pb-sw pb-sink"
SWITCH_IFACES="pb-a pb-b"
if [ "$GENERATOR" = kernel ]; then
  NAMESPACES+=" pb-probe"
  SWITCH_IFACES+=" pb-c"
fi

if [[ " $FORWARDERS " == *" pfcswitchd-alt "* && ! -x ${ALT_DAEMON:-} ]]; then
  echo "bench-datapath.sh: pfcswitchd-alt needs ALT_DAEMON, the path of another pfcswitchd build" >&2
  exit 1
fi
for tool in ip ethtool bridge taskset renice awk cc pkg-config jq; do
  command -v "$tool" >/dev/null || { echo "bench-datapath.sh: needs $tool (scripts/setup.sh installs it)" >&2; exit 1; }
done
[ "$(id -u)" = 0 ] || { echo "bench-datapath.sh: needs root (network namespaces, XDP)" >&2; exit 1; }
command -v cargo >/dev/null 2>&1 || . "$HOME/.cargo/env"
cargo build --release --locked --workspace --bins
bench=$PWD/target/release/pfcswitch-bench
daemon=$PWD/target/release/pfcswitchd
cli=$PWD/target/release/pfcswitch

for ns in $NAMESPACES; do
  if ip netns list | awk '{ print $1 }' | grep -qx "$ns"; then
    echo "bench-datapath.sh: namespace $ns exists (another run?); remove it with: ip netns del $ns" >&2
    exit 1
  fi
done
work=$(mktemp -d /tmp/pfcswitch-bench.XXXXXX)
forwarder_pid=
pkg-config --exists libxdp libbpf ||
  { echo "bench-datapath.sh: needs libxdp-dev and libbpf-dev (scripts/setup.sh installs them)" >&2; exit 1; }
# shellcheck disable=SC2046 # pkg-config's flags are words
cc -O2 -Wall -Wextra -o "$work/libxdp-forward" bench/libxdp-forward.c $(pkg-config --cflags --libs libxdp libbpf)

stop_forwarder() {
  local iface
  if [ -n "$forwarder_pid" ]; then
    kill -TERM "$forwarder_pid" 2>/dev/null || true
    wait "$forwarder_pid" 2>/dev/null || true
    forwarder_pid=
  fi
  ip -n pb-sw link del pb-br 2>/dev/null || true
  # A detach can lag its process's exit a little; one that never happens is a bug to report.
  for iface in $SWITCH_IFACES; do
    for _ in $(seq 50); do
      ip -n pb-sw -d link show dev "$iface" 2>/dev/null | grep -q "prog/xdp" || continue 2
      sleep 0.1
    done
    echo "bench-datapath.sh: the last forwarder left an XDP program on $iface" >&2
    return 1
  done
}

cleanup() {
  local pid
  stop_forwarder || true
  for pid in $(jobs -p); do kill -TERM "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  for ns in $NAMESPACES; do ip netns del "$ns" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- topology ----

for ns in $NAMESPACES; do
  ip netns add "$ns"
  ip -n "$ns" link set lo up
  ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
done
ip link add pb-a netns pb-sw type veth peer name pb-gen0 netns pb-gen
ip link add pb-b netns pb-sw type veth peer name pb-sink0 netns pb-sink
ip -n pb-gen link set pb-gen0 address "$GEN_MAC"
ip -n pb-sink link set pb-sink0 address "$SINK_MAC"
hosts="pb-gen:pb-gen0 pb-sink:pb-sink0"
if [ "$GENERATOR" = kernel ]; then
  ip link add pb-c netns pb-sw type veth peer name pb-probe0 netns pb-probe
  ip -n pb-probe link set pb-probe0 address "$PROBE_MAC"
  ip -n pb-sw link set pb-c up
  hosts+=" pb-probe:pb-probe0"
fi
for host in $hosts; do
  # Frames leave the hosts as on a real wire: tags inline, no offloads.
  ip netns exec "${host%%:*}" ethtool -K "${host#*:}" txvlan off tx off tso off gso off >/dev/null
  ip -n "${host%%:*}" link set "${host#*:}" up
done
ip -n pb-sw link set pb-a up
ip -n pb-sw link set pb-b up
# pb-a's NAPI becomes a thread (pinned by pin_napi whenever XDP creates it). The flag can
# only be set while a NAPI instance exists, which GRO briefly provides; it then sticks.
ip netns exec pb-sw ethtool -K pb-a gro on
ip netns exec pb-sw sh -c 'echo 1 > /sys/class/net/pb-a/threaded'
ip netns exec pb-sw ethtool -K pb-a gro off

place_receive() { # placement nice: where pb-a's receive processing runs (see the top)
  local threaded=0 mask=0 queue task
  if [ "$1" = forwarder ]; then
    threaded=1
    mask=$(printf '%x' $((1 << FWD_CPU)))
  fi
  # Takes effect while a NAPI instance exists (XDP attached); the bridge has none.
  ip netns exec pb-sw sh -c "echo $threaded > /sys/class/net/pb-a/threaded" 2>/dev/null || true
  # Without XDP (the bridge), veth receives through the backlog, which RPS can move.
  for queue in $(ip netns exec pb-sw sh -c 'echo /sys/class/net/pb-a/queues/rx-*'); do
    ip netns exec pb-sw sh -c "echo $mask > $queue/rps_cpus"
  done
  [ "$1" = forwarder ] || return 0
  for task in /proc/[0-9]*; do
    if [[ $(cat "$task/comm" 2>/dev/null) == napi/pb-a-* ]]; then
      taskset -pc "$FWD_CPU" "${task#/proc/}" >/dev/null
      renice -n "$2" -p "${task#/proc/}" >/dev/null
    fi
  done
}

wait_for() { # file pattern pid what
  for _ in $(seq 100); do
    grep -q "$2" "$1" 2>/dev/null && return 0
    kill -0 "$3" 2>/dev/null || { echo "bench-datapath.sh: $4 exited:" >&2; cat "$1" >&2; return 1; }
    sleep 0.1
  done
  echo "bench-datapath.sh: $4 did not get ready:" >&2
  cat "$1" >&2
  return 1
}

switch_config() { # policy kind: pfcswitchd's configuration for the benchmark
  local probe_port="" probe_fdb=""
  if [ "$GENERATOR" = kernel ]; then
    probe_port=$'[[port]]\nname = "p3"\niface = "pb-c"\nspeed = "'"$SPEED"$'"\n'
    probe_fdb=", { mac = \"$PROBE_MAC\", port = \"p3\" }"
  fi
  cat <<EOF
# pfcswitchd for the benchmark: ports far faster than the datapath, so the shaper never
# limits; PFC on priority 3 with thresholds above the headroom bound at $SPEED, and headroom
# for the frames that wait in the datapath's RX ring, uncounted, when XOFF goes out (up to
# about 512 + a turn's intake before the backlog holds the sender: 1.3 MB at 1500 B).
[switch]
name = "pb-sw"

[[port]]
name = "p1"
iface = "pb-a"
speed = "$SPEED"

[[port]]
name = "p2"
iface = "pb-b"
speed = "$SPEED"
$probe_port

[pfc]
lossless = [3]
xoff = "200KB"
xon = "150KB"
max = "1500KB"

[buffer]
egress_max = "2MB"

[policy]
kind = "$1"

[fdb]
static = [ { mac = "$GEN_MAC", port = "p1" }, { mac = "$SINK_MAC", port = "p2" }$probe_fdb ]
EOF
}
switch_config pfc >"$work/pb-sw-pfc.toml"
switch_config capfc >"$work/pb-sw-capfc.toml"

start_forwarder() { # name log
  case "$1" in
    none) ;;
    pfcswitchd | pfcswitchd-capfc | pfcswitchd-spin0 | pfcswitchd-alt | pfcswitchd-probe)
      local policy=pfc spin=60us binary=$daemon
      [ "$1" = pfcswitchd-capfc ] && policy=capfc
      [ "$1" = pfcswitchd-spin0 ] && spin=0us
      [ "$1" = pfcswitchd-alt ] && binary=$ALT_DAEMON
      taskset -c "$FWD_CPU" ip netns exec pb-sw "$binary" --config "$work/pb-sw-$policy.toml" --spin "$spin" \
        --control-socket "$work/pb-sw.sock" --metrics-listen off >"$2" 2>&1 &
      forwarder_pid=$!
      wait_for "$2" "forwarding on" "$forwarder_pid" pfcswitchd ;;
    xsk-forward | xdp-redirect)
      taskset -c "$FWD_CPU" ip netns exec pb-sw "$bench" "$1" --port-a pb-a --port-b pb-b >"$2" 2>&1 &
      forwarder_pid=$!
      wait_for "$2" ready "$forwarder_pid" "$1" ;;
    libxdp-forward | libxdp-forward-twin | libxdp-bridge)
      local learn=()
      [ "$1" = libxdp-bridge ] && learn=(--learn)
      taskset -c "$FWD_CPU" ip netns exec pb-sw "$work/libxdp-forward" --port-a pb-a --port-b pb-b "${learn[@]}" >"$2" 2>&1 &
      forwarder_pid=$!
      wait_for "$2" ready "$forwarder_pid" "$1" ;;
    linux-bridge)
      ip -n pb-sw link add pb-br type bridge
      ip -n pb-sw link set pb-a master pb-br
      ip -n pb-sw link set pb-b master pb-br
      ip -n pb-sw link set pb-br up
      bridge -n pb-sw fdb replace "$SINK_MAC" dev pb-b master static ;;
    *) echo "bench-datapath.sh: unknown forwarder $1" >&2; return 1 ;;
  esac
}

# ---- measurement ----

json() { # file key: a number from pfcswitch-bench's one-line JSON
  sed -n "s/.*\"$2\":\([-0-9.e+]*\).*/\1/p" "$1"
}

cpu_jiffies() { # cpuN: "busy total"
  awk -v cpu="$1" '$1 == cpu { print $2 + $3 + $4 + $7 + $8, $2 + $3 + $4 + $5 + $6 + $7 + $8 }' /proc/stat
}

machine_busy() { # percent of all CPUs busy over one second
  local a b
  a=$(cpu_jiffies cpu)
  sleep 1
  b=$(cpu_jiffies cpu)
  echo "$a $b" | awk '{ printf "%.0f", ($4 - $2) ? 100 * ($3 - $1) / ($4 - $2) : 0 }'
}

profile_report() { # perf.data report.txt: the top symbols by self time, with the process;
  # the samples stay beside it (report.perf) for perf annotate
  perf report -i "$1" --no-children --sort comm,dso,symbol --percent-limit 0.5 --stdio 2>/dev/null |
    awk '/^ +[0-9.]+%/ { printf "%8s  %-16s %-20s %s\n", $1, $2, $3, $5 }' | head -40 >"$2"
  mv "$1" "${2%.txt}.perf"
}
delivered() { # fps seconds: the frames the sink counted over the span
  awk -v f="$1" -v s="$2" 'BEGIN { print f * s }'
}
cpu_report() { # samples.perf fps seconds: the forwarder CPU's time a delivered frame, in its
  # userspace and in the kernel (BPF programs counted with the kernel); cpu-clock counts ns
  perf report -i "$1" --no-children --sort dso -g none --stdio 2>/dev/null |
    awk -v frames="$(delivered "$2" "$3")" '
      /Event count/ { count = $NF }
      /^ +[0-9.]+%/ { share = $1; sub("%", "", share); if ($NF == "[kernel.kallsyms]" || $NF ~ /^bpf_/) kernel += share; else user += share }
      END { if (frames > 0) printf "userspace %.1f ns a frame delivered, kernel %.1f ns\n", user / 100 * count / frames, kernel / 100 * count / frames }'
}
syscalls_report() { # counts.csv fps seconds: each system call's count and its count per delivered frame
  awk -F, -v frames="$(delivered "$2" "$3")" '
    $1 ~ /^[0-9]+$/ { printf "%-36s %12d  %8.4f per frame delivered\n", $3, $1, frames ? $1 / frames : 0 }' "$1"
}
if [ -n "${PROFILE:-}" ]; then
  command -v perf >/dev/null || { echo "bench-datapath.sh: PROFILE needs perf (apt install linux-perf)" >&2; exit 1; }
  mkdir -p "$PROFILE"
  PROFILE=$(cd "$PROFILE" && pwd)
fi

results=$work/results
: >"$results"
veth_counter() { # namespace iface name: one of the veth's `ethtool -S` counters
  ip netns exec "$1" ethtool -S "$2" | awk -v name="$3:" '$1 == name { print $2 }'
}

ledger() { # name out wire0: "offered wire socket classifier switch delivered reasons pfc" of a round
  # in the overload mode, from the counters each place keeps (see the top)
  local name=$1 out=$2 wire socket=0 classifier=0 switch=0 reasons=-
  wire=$(($(veth_counter pb-gen pb-gen0 tx_queue_0_xdp_xmit_errors) - $3))
  case "$name" in
    pfcswitchd*)
      socket=$("$cli" -j -s "$work/pb-sw.sock" status | jq '.datapath.xsk_rx_dropped')
      "$cli" -j -s "$work/pb-sw.sock" ports >"$out.ports"
      classifier=$(jq '[.[].xdp_drops // {} | add // 0] | add' "$out.ports")
      switch=$(jq '[.[].drops] | add' "$out.ports")
      reasons=$(jq -r '[.[] | (.drop_reasons | to_entries[]), (.xdp_drops // {} | to_entries[] | .key |= "xdp_" + .)]
        | group_by(.key) | map({key: .[0].key, value: (map(.value) | add)}) | map(select(.value > 0))
        | map("\(.key)=\(.value)") | join(",") | if . == "" then "-" else . end' "$out.ports") ;;
  esac
  echo "$(json "$out.flood" total_sent) $wire $socket $classifier $switch $(json "$out.sink" total_frames) $reasons" \
    "$(json "$out.flood" total_pfc_rx)"
}

reference_socket_drops() { # log: frames the reference's sockets refused (its exit statistics)
  awk '$1 == "statistics" { n += $4 + $6 } END { print n + 0 }' "$1"
}

seconds_us() { # an awk expression in seconds, as whole microseconds
  awk "BEGIN { printf \"%d\", ($1) * 1e6 }"
}

sleep_until() { # start offset: sleeps until offset microseconds after start (both from EPOCHREALTIME)
  local left=$(($1 + $2 - ${EPOCHREALTIME/./}))
  ((left <= 0)) || sleep "$((left / 1000000)).$(printf '%06d' $((left % 1000000)))"
}

daemon_counters() { # "seconds received transmitted dropped": pfcswitchd's frames in on p1, out on p2,
  # and dropped anywhere, now
  local seconds
  seconds=$(date +%s.%N)
  "$cli" -j -s "$work/pb-sw.sock" ports | jq -r --arg at "$seconds" '[$at,
    (.[] | select(.port == "p1") | .rx_frames), (.[] | select(.port == "p2") | .tx_frames),
    ([.[].drops] | add)] | @tsv'
}

start_sink() { # namespace iface out [sink options]: counts what arrives on iface, in the background
  local ns=$1 iface=$2 out=$3
  shift 3
  # The sink process only reads counters; its XDP program runs where frames arrive.
  taskset -c "$GEN_CPU" ip netns exec "$ns" "$bench" sink --iface "$iface" \
    --warmup "$WARMUP" --window "$WINDOW" "$@" >"$out.sink" 2>"$out.sink.log" &
  sink_pid=$!
  wait_for "$out.sink.log" ready "$sink_pid" sink
}

start_probe() { # out: the latency probe from pb-probe to the sink, in the background (see the top)
  taskset -c "$GEN_CPU" ip netns exec pb-probe "$bench" probe --iface pb-probe0 --size 124 --pcp 3 \
    --src "$PROBE_MAC" --dst "$SINK_MAC" --rate "$PROBE_RATE" --warmup "$WARMUP" --window "$WINDOW" >"$1.probe" &
  probe_pid=$!
}

probe_latency() { # sink-output: "p50 p99" of the probe in microseconds, or "- -"
  local p50 p99
  p50=$(json "$1" probe_p50_ns)
  p99=$(json "$1" probe_p99_ns)
  if [ -n "$p50" ]; then awk -v a="$p50" -v b="$p99" 'BEGIN { printf "%.1f %.1f", a / 1e3, b / 1e3 }'; else echo "- -"; fi
}

probe_idle() { # the probe's latency through pfcswitchd with nothing else offered, into idle_latency
  local out=$work/probe-idle sink_pid probe_pid
  start_forwarder pfcswitchd "$out.forwarder.log"
  start_sink pb-sink pb-sink0 "$out"
  start_probe "$out"
  wait "$probe_pid" "$sink_pid"
  stop_forwarder
  idle_latency=$(probe_latency "$out.sink")
}

measure() { # placement path forwarder size run
  local placement=$1 path=$2 name=$3 size=$4 run=$5 out=$work/$1-$2-$3-$4-$5 sink_ns=pb-sink sink_iface=pb-sink0 nice=0
  local tag=(--pcp 3) counters0="" counters1="" rates="- - -" generator=(flood) drain=() wire0=0 book="- - - - - - - -"
  [ "$path" = lossy ] && tag=(--untagged)
  if [ "$GENERATOR" = kernel ]; then
    generator=(overload)
    [ "$path" = lossless ] && generator+=(--pfc-speed "$SPEED")
    drain=(--drain 0.5)
    wire0=$(veth_counter pb-gen pb-gen0 tx_queue_0_xdp_xmit_errors)
  fi
  [ "$name" = none ] && sink_ns=pb-sw sink_iface=pb-a
  [[ $name == pfcswitchd* || $name == xsk-forward || $name == libxdp-* ]] && nice=19
  start_forwarder "$name" "$out.forwarder.log"
  local sink_pid probe_pid=
  start_sink "$sink_ns" "$sink_iface" "$out" "${drain[@]}"
  place_receive "$placement" "$nice"
  taskset -c "$GEN_CPU" ip netns exec pb-gen "$bench" "${generator[@]}" --iface pb-gen0 --size "$size" \
    --src "$GEN_MAC" --dst "$SINK_MAC" "${tag[@]}" --warmup "$WARMUP" --window "$WINDOW" >"$out.flood" &
  local flood_pid=$! started=${EPOCHREALTIME/./} busy0 total0 busy1 total1
  [ "$name" = pfcswitchd-probe ] && start_probe "$out"
  # pfcswitchd's counters are read in the warm-up and in the generator's 1 s tail, outside
  # the sink's window: each read (CLI, jq) takes CPU time the reference's rounds never lose.
  [[ $name == pfcswitchd* ]] && sleep_until "$started" "$(seconds_us "$WARMUP / 2")" && counters0=$(daemon_counters)
  sleep_until "$started" "$(seconds_us "$WARMUP + 0.5")"
  read -r busy0 total0 < <(cpu_jiffies "cpu$FWD_CPU")
  local span
  span=$(awk -v w="$WINDOW" 'BEGIN { print (w > 1.5 ? w - 1 : w / 2) }')
  if [ -n "${PROFILE:-}" ] && [ "$run" = 1 ] && [ "$name" != none ]; then
    # The forwarder's system calls over the same span, from tracepoints (no ptrace).
    perf stat -x, -o "$out.syscalls" -p "$forwarder_pid" -e raw_syscalls:sys_enter,syscalls:sys_enter_sendto \
      -e syscalls:sys_enter_recvfrom,syscalls:sys_enter_poll,syscalls:sys_enter_ppoll -- \
      perf record -q -g -C "$FWD_CPU" -o "$out.perf" -- sleep "$span" 2>/dev/null
  else
    sleep "$span"
  fi
  read -r busy1 total1 < <(cpu_jiffies "cpu$FWD_CPU")
  if [ -n "$forwarder_pid" ] && ! kill -0 "$forwarder_pid" 2>/dev/null; then
    # A forwarder that exits mid-window measures nothing: say how it ended, and the caller
    # measures the round again.
    local status=0
    wait "$forwarder_pid" || status=$?
    forwarder_pid=
    echo "   round $run: $name exited during the window (status $status$( ((status > 128)) && echo ", signal $((status - 128))")); its log:" >&2
    sed 's/^/     /' "$out.forwarder.log" >&2
    wait "$flood_pid" "$sink_pid" ${probe_pid:+"$probe_pid"} || true
    # libxdp-forward attaches without a BPF link: its program outlives an abnormal exit.
    for iface in pb-a pb-b; do ip -n pb-sw link set dev "$iface" xdp off 2>/dev/null || true; done
    stop_forwarder
    return 3
  fi
  if [[ $name == pfcswitchd* ]]; then
    sleep_until "$started" "$(seconds_us "$WARMUP + $WINDOW + 0.4")"
    counters1=$(daemon_counters)
    rates=$(printf '%s\t%s\n' "$counters0" "$counters1" |
      awk '{ printf "%.0f %.0f %.0f", ($6 - $2) / ($5 - $1), ($7 - $3) / ($5 - $1), ($8 - $4) / ($5 - $1) }')
  fi
  wait "$flood_pid" ${probe_pid:+"$probe_pid"}
  wait "$sink_pid" || { cat "$out.sink.log" >&2; return 1; }
  [ "$GENERATOR" = kernel ] && [ "$name" != none ] && book=$(ledger "$name" "$out" "$wire0")
  if [ -f "$out.perf" ] && [[ $name == pfcswitchd* ]]; then
    "$cli" -s "$work/pb-sw.sock" status >"$PROFILE/$placement-$path-$name-$((size + 4))B.status"
    "$cli" -s "$work/pb-sw.sock" ports >>"$PROFILE/$placement-$path-$name-$((size + 4))B.status"
  fi
  stop_forwarder
  if [[ $book != -* && $name == libxdp-* ]]; then
    book=$(echo "$book" | awk -v socket="$(reference_socket_drops "$out.forwarder.log")" '{ $3 = socket; print }')
  fi
  [ -f "$out.perf" ] && cpu_report "$out.perf" "$(json "$out.sink" fps)" "$span" \
    >"$PROFILE/$placement-$path-$name-$((size + 4))B.cpu"
  [ -f "$out.perf" ] && profile_report "$out.perf" "$PROFILE/$placement-$path-$name-$((size + 4))B.txt"
  [ -f "$out.syscalls" ] && syscalls_report "$out.syscalls" "$(json "$out.sink" fps)" "$span" \
    >"$PROFILE/$placement-$path-$name-$((size + 4))B.syscalls"
  local line
  line="$placement $path $name $size $(json "$out.sink" fps) $(json "$out.flood" fps) $(json "$out.flood" peer_dropped_fps) \
$(awk -v b=$((busy1 - busy0)) -v t=$((total1 - total0)) 'BEGIN { printf "%.0f", t ? 100 * b / t : 0 }') $run $rates $book \
$(probe_latency "$out.sink")"
  echo "$line" >>"$results"
  echo "   round $run: $line" >&2
}

busy_before=$(machine_busy)
echo "== CPUs busy before the run: $busy_before %" >&2
# Everything this script runs from here on (reading pfcswitchd's counters with the CLI and
# jq, awk, date, perf) runs on the generator's CPU, never on the forwarder's:
# pfcswitchd's counter reads took about 1.5 % of its CPU in each round, with the RCU work
# of their processes' exits, time no other forwarder lost (docs/performance.md, "What the
# benchmark took from pfcswitchd's rounds"). The forwarders are pinned to FWD_CPU
# explicitly; the generator offers several times what they take, so it misses nothing.
taskset -pc "$GEN_CPU" $$ >/dev/null
if [ "$GENERATOR" = kernel ]; then
  echo "== the latency probe through an idle pfcswitchd" >&2
  probe_idle
  echo "   p50 p99 (us): $idle_latency" >&2
fi
reversed=$(echo "$FORWARDERS" | awk '{ for (i = NF; i > 0; i--) printf "%s ", $i }')
for placement in $PLACEMENTS; do
  for path in $PATHS; do
    for size in $SIZES; do
      for run in $(seq "$REPEAT"); do
        order=$FORWARDERS
        [ $((run % 2)) = 0 ] && order=$reversed
        for name in none $order; do
          # The probe shares the flood's priority on the lossless path: nothing to compare.
          [ "$name" = pfcswitchd-probe ] && [ "$path" != lossy ] && continue
          echo "== $name, $path, $size B frames + FCS, receive on the $placement's CPU, round $run/$REPEAT" >&2
          for attempt in 1 2 3; do
            status=0
            measure "$placement" "$path" "$name" "$size" "$run" || status=$?
            [ "$status" = 3 ] || break
            [ "$attempt" = 3 ] && { echo "bench-datapath.sh: $name exited in 3 attempts at round $run" >&2; exit 1; }
          done
          [ "$status" = 0 ] || exit "$status"
        done
      done
    done
  done
done
busy_after=$(machine_busy)

# ---- table ----

median_rows() { # per placement, path, size and forwarder: the round with the median delivered rate, then min and max
  local placement path size name
  for placement in $PLACEMENTS; do
    for path in $PATHS; do
      for size in $SIZES; do
        for name in none $FORWARDERS; do
          { grep "^$placement $path $name $size " "$results" || true; } | sort -g -k5 |
            awk '{ row[NR] = $0; rx[NR] = $5 } END { if (NR) print row[int((NR + 1) / 2)], rx[1], rx[NR] }'
        done
      done
    done
  done
}

echo
echo "Forwarding rate: generator on CPU $GEN_CPU, forwarder on CPU $FWD_CPU; median of $REPEAT rounds," \
  "each ${WINDOW} s after ${WARMUP} s warm-up"
if [ "$busy_before" -gt 10 ] || [ "$busy_after" -gt 10 ]; then
  echo "WARNING: other processes kept the CPUs ${busy_before} % / ${busy_after} % busy before / after the run: rates are skewed"
fi
median_rows | awk -v cpu="$FWD_CPU" '
  { place[NR] = $1; path[NR] = $2; name[NR] = $3; size[NR] = $4; rx[NR] = $5; tx[NR] = $6; refused[NR] = $7
    busy[NR] = $8; drx[NR] = $10; dtx[NR] = $11; ddrop[NR] = $12; low[NR] = $(NF - 1); high[NR] = $NF
    if ($3 == "xsk-forward") bare[$1, $2, $4] = $5
    if ($3 == "libxdp-forward") reference[$1, $2, $4] = $5
  }
  function ratio(i, of) { return (name[i] != "none" && of > 0) ? sprintf("%.2f", rx[i] / of) : "-" }
  function mpps(x) { return x == "-" ? "-" : sprintf("%.3f", x / 1e6) }
  END {
    printf "%-9s %-8s %-19s %6s %7s %13s %9s %7s %8s %8s %6s  %-23s %s\n", "receive", "path", "forwarder", "frame", \
      "Mpps", "(min-max)", "vs libxdp", "vs bare", "offered", "refused", "CPU " cpu, "pfcswitchd rx/tx/drop", \
      "limited by"
    for (i = 1; i <= NR; i++) {
      if (name[i] == "none") limit = "reference: no forwarder, the counter on pb-a"
      else if (rx[i] < 0.01 * tx[i]) limit = "STALLED: the forwarder stopped forwarding"
      else if (rx[i] >= 0.97 * tx[i]) limit = "generator: no loss, the forwarder may be faster"
      else limit = sprintf("forwarder (CPU %d %d%% busy)", cpu, busy[i])
      daemon = drx[i] == "-" ? "-" : sprintf("%s/%s/%s", mpps(drx[i]), mpps(dtx[i]), mpps(ddrop[i]))
      printf "%-9s %-8s %-19s %5dB %7.3f %13s %9s %7s %8.3f %8.3f %5d%%  %-23s %s\n", place[i], path[i], \
        (name[i] == "none" ? "(generator)" : name[i]), size[i] + 4, rx[i] / 1e6, \
        sprintf("(%.3f-%.3f)", low[i] / 1e6, high[i] / 1e6), ratio(i, reference[place[i], path[i], size[i]]), \
        ratio(i, bare[place[i], path[i], size[i]]), tx[i] / 1e6, refused[i] / 1e6, busy[i], daemon, limit
    }
  }'

ratio_table() { # reference: each pfcswitchd variant, the twin and the bridge over it, round by round
  awk -v repeat="$REPEAT" -v of="$1" '
  $3 == of { reference[$1, $2, $4, $9] = $5 }
  $3 != of && ($3 ~ /^pfcswitchd/ || $3 == "libxdp-forward-twin" || $3 == "libxdp-bridge") { key = $1 SUBSEP $2 SUBSEP $3 SUBSEP $4; rounds[key] = rounds[key] " " $9; rate[key, $9] = $5
    if (!(key in seen)) { seen[key] = 1; order[++n] = key } }
  END {
    printf "%-9s %-8s %-19s %6s %10s %12s  %s\n", "receive", "path", "forwarder", "frame", "median d/c", "worst round", "per round"
    for (k = 1; k <= n; k++) {
      split(order[k], f, SUBSEP); m = split(rounds[order[k]], r, " "); count = 0; list = ""
      for (j = 1; j <= m; j++) {
        c = reference[f[1], f[2], f[4], r[j]]
        if (c > 0) { ratios[++count] = rate[order[k], r[j]] / c; list = list sprintf(" %.2f", ratios[count]) }
      }
      if (count == 0) continue
      for (x = 1; x <= count; x++) for (y = x + 1; y <= count; y++) if (ratios[y] < ratios[x]) { t = ratios[x]; ratios[x] = ratios[y]; ratios[y] = t }
      median = count % 2 ? ratios[(count + 1) / 2] : (ratios[count / 2] + ratios[count / 2 + 1]) / 2
      printf "%-9s %-8s %-19s %5dB %10.2f %12.2f  %s\n", f[1], f[2], f[3], f[4] + 4, median, ratios[1], list
      if (f[3] == "libxdp-forward-twin") for (x = 1; x <= count; x++) { stray = log(ratios[x]); strays[++twins] = stray < 0 ? -stray : stray }
    }
    # The twin is the reference itself, so its true ratio is 1: how far its rounds stray is
    # what the machine adds to any ratio of the table. Robustly (a round now and then strays
    # by 30 %): 1.4826 x the median of |ln(twin/c)| estimates a normal spread.
    if (twins > 1 && of == "libxdp-forward") {
      for (x = 1; x <= twins; x++) for (y = x + 1; y <= twins; y++) if (strays[y] < strays[x]) { t = strays[x]; strays[x] = strays[y]; strays[y] = t }
      middle = twins % 2 ? strays[(twins + 1) / 2] : (strays[twins / 2] + strays[twins / 2 + 1]) / 2
      spread = 1.4826 * middle
      printf "The reference over its twin: a round strays by %.1f %% (1.4826 x the median |ln(twin/c)|, %d rounds);" \
        " the median of %d rounds by about %.1f %% (1.25 x that / sqrt(rounds)), which is what this table resolves\n", \
        100 * spread, twins, repeat, 125 * spread / sqrt(repeat)
    }
  }' "$results"
}

echo
echo "pfcswitchd (and the reference's twin) over libxdp-forward in the same round (d/c): the median and the worst of $REPEAT rounds"
ratio_table libxdp-forward
if [[ " $FORWARDERS " == *" libxdp-bridge "* ]]; then
  echo
  echo "The same over libxdp-bridge, the reference reading each frame's header as a learning bridge"
  ratio_table libxdp-bridge
fi

[ "$GENERATOR" = kernel ] || exit 0
echo
echo "Where the generator's frames went, in per cent of those it sent (overload mode): the round with the median" \
  "delivered rate, and the largest share no counter accounts for in any round of the cell"
median_rows | awk -v results="$results" '$3 != "none" && $13 != "-" {
    offered = $13; unaccounted = offered - $14 - $15 - $16 - $17 - $18
    key = $1 SUBSEP $2 SUBSEP $3 SUBSEP $4
    row[key] = sprintf("%-9s %-8s %-19s %5dB %9.2f %6.1f %7.1f %10.1f %7.1f %9.1f %11.2f", $1, $2, $3, $4 + 4, offered / 1e6,
      100 * $14 / offered, 100 * $15 / offered, 100 * $16 / offered, 100 * $17 / offered, 100 * $18 / offered,
      100 * unaccounted / offered)
    reasons[key] = $19; pfc[key] = $20; order[++n] = key
  }
  END {
    while ((getline line < results) > 0) {
      split(line, f, " ")
      if (f[3] == "none" || f[13] == "-") continue
      k = f[1] SUBSEP f[2] SUBSEP f[3] SUBSEP f[4]; u = 100 * (f[13] - f[14] - f[15] - f[16] - f[17] - f[18]) / f[13]
      if (u < 0) u = -u
      if (u > worst[k]) worst[k] = u
    }
    printf "%-9s %-8s %-19s %6s %9s %6s %7s %10s %7s %9s %11s %6s %7s  %s\n", "receive", "path", "forwarder", "frame", "sent (M)", \
      "wire", "socket", "classifier", "switch", "delivered", "unaccounted", "worst", "PFC rx", "drops by reason"
    for (i = 1; i <= n; i++) printf "%s %6.2f %7s  %s\n", row[order[i]], worst[order[i]], pfc[order[i]], reasons[order[i]]
  }'

echo
echo "One-way latency of the priority-3 probe ($PROBE_RATE frames/s, 128 B) from pb-probe through pfcswitchd to the" \
  "sink, in microseconds: idle, and while priority-0 frames of the size given overload the same egress (lossy" \
  "path): p50 and p99 of each round, the median over rounds and the worst round's p99"
awk -v idle="$idle_latency" '
  function median(list,   v, m, x, y, t) {
    m = split(list, v, " ")
    for (x = 1; x <= m; x++) for (y = x + 1; y <= m; y++) if (v[y] + 0 < v[x] + 0) { t = v[x]; v[x] = v[y]; v[y] = t }
    return m % 2 ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2
  }
  $2 == "lossy" && $3 == "pfcswitchd-probe" && $21 != "-" {
    key = $1 SUBSEP $3 SUBSEP $4
    if (!(key in p50)) order[++n] = key
    p50[key] = p50[key] " " $21; p99[key] = p99[key] " " $22
    if ($22 + 0 > worst[key]) worst[key] = $22
  }
  END {
    split(idle, i, " ")
    printf "%-9s %-19s %-14s %9s %9s %11s\n", "receive", "forwarder", "overload", "p50", "p99", "worst p99"
    printf "%-9s %-19s %-14s %9s %9s %11s\n", "-", "pfcswitchd", "none (idle)", i[1], i[2], "-"
    for (k = 1; k <= n; k++) {
      split(order[k], f, SUBSEP)
      printf "%-9s %-19s %-14s %9.1f %9.1f %11.1f\n", f[1], f[2], "lossy " (f[3] + 4) " B", median(p50[order[k]]), \
        median(p99[order[k]]), worst[order[k]]
    }
  }' "$results"
