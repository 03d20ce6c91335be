#!/usr/bin/env bash
# Forwarding rate (frames per second) of four forwarders on the same veth topology in the
# same run, for 64 B and 1500 B frames on the wire (60 B and 1496 B without FCS), unshaped:
#
#   pfcswitchd    the daemon: 2 ports at 400 Gbit/s (its shaper never limits), PFC on
#                 priority 3, static FDB; frames are 802.1Q-tagged with PCP 3
#   xsk-forward   bare AF_XDP forwarder: pfcswitchd's UMEM, sockets and XDP classifier with
#                 no switch core, port A -> port B by UMEM address (the limit of the design)
#   linux-bridge  the kernel bridge, static FDB entry for the sink
#   xdp-redirect  kernel XDP_REDIRECT through a DEVMAP (ebpf/bench_redirect.c)
#
#   pb-gen [pb-gen0] ---- [pb-a] pb-sw [pb-b] ---- [pb-sink0] pb-sink
#
# The generator (pfcswitch-bench flood: AF_XDP TX of one prebuilt frame, as fast as it goes)
# runs alone on CPU GEN_CPU. Everything behind pb-gen0 runs on CPU FWD_CPU: the forwarder
# process, pb-a's receive processing (threaded NAPI pinned there, or RPS for the bridge,
# which has no NAPI on veth) and, as veth runs a peer's receive where the sender transmits,
# the sink's XDP counter on pb-sink0. With an AF_XDP forwarder pb-a's NAPI thread runs at
# nice 19, so it fills the RX ring when the forwarder has room instead of taking half of the
# CPU to copy frames the forwarder must drop (receive livelock); the kernel forwarders run
# entirely in that thread. A first row measures the generator alone (the counter on pb-a
# itself). Each point is the median of REPEAT runs, the forwarders taking turns.
#
#   scripts/bench-datapath.sh
#   env: WARMUP=1 WINDOW=5 (seconds), REPEAT=3, SIZES="60 1496", GEN_CPU=0 FWD_CPU=1,
#        FORWARDERS="pfcswitchd xsk-forward linux-bridge xdp-redirect"
#
# Needs root. Creates only namespaces pb-gen, pb-sw, pb-sink and removes them on exit,
# error or Ctrl-C; the XDP programs go with their processes and interfaces.
set -euo pipefail
cd "$(dirname "$0")/.."

WARMUP=${WARMUP:-1}
WINDOW=${WINDOW:-5}
REPEAT=${REPEAT:-3}
SIZES=${SIZES:-"60 1496"}
GEN_CPU=${GEN_CPU:-0}
FWD_CPU=${FWD_CPU:-1}
FORWARDERS=${FORWARDERS:-"pfcswitchd xsk-forward linux-bridge xdp-redirect"}
GEN_MAC=02:00:00:00:00:01
SINK_MAC=02:00:00:00:00:02
NAMESPACES="pb-gen pb-sw pb-sink"

for tool in ip ethtool bridge taskset renice awk; do
  command -v "$tool" >/dev/null || { echo "bench-datapath.sh: needs $tool (scripts/setup.sh installs it)" >&2; exit 1; }
done
[ "$(id -u)" = 0 ] || { echo "bench-datapath.sh: needs root (network namespaces, XDP)" >&2; exit 1; }
command -v cargo >/dev/null 2>&1 || . "$HOME/.cargo/env"
cargo build --release --locked --workspace --bins
bench=$PWD/target/release/pfcswitch-bench
daemon=$PWD/target/release/pfcswitchd

for ns in $NAMESPACES; do
  if ip netns list | awk '{ print $1 }' | grep -qx "$ns"; then
    echo "bench-datapath.sh: namespace $ns exists (another run?); remove it with: ip netns del $ns" >&2
    exit 1
  fi
done
work=$(mktemp -d /tmp/pfcswitch-bench.XXXXXX)
forwarder_pid=

stop_forwarder() {
  if [ -n "$forwarder_pid" ]; then
    kill -TERM "$forwarder_pid" 2>/dev/null || true
    wait "$forwarder_pid" 2>/dev/null || true
    forwarder_pid=
  fi
  ip -n pb-sw link del pb-br 2>/dev/null || true
}

cleanup() {
  local pid
  stop_forwarder
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
for host in pb-gen:pb-gen0 pb-sink:pb-sink0; do
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
# Without XDP (the bridge), veth receives through the backlog: RPS moves it to FWD_CPU.
for queue in $(ip netns exec pb-sw sh -c 'echo /sys/class/net/pb-a/queues/rx-*'); do
  ip netns exec pb-sw sh -c "printf '%x' $((1 << FWD_CPU)) > $queue/rps_cpus"
done

pin_napi() { # nice: pins pb-a's NAPI threads to FWD_CPU at that nice level
  local task
  for task in /proc/[0-9]*; do
    if [[ $(cat "$task/comm" 2>/dev/null) == napi/pb-a-* ]]; then
      taskset -pc "$FWD_CPU" "${task#/proc/}" >/dev/null
      renice -n "$1" -p "${task#/proc/}" >/dev/null
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

cat >"$work/pb-sw.toml" <<EOF
# pfcswitchd for the benchmark: ports far faster than the datapath, so the shaper never
# limits; PFC on priority 3 with thresholds above the 400 Gbit/s headroom bound.
[switch]
name = "pb-sw"

[[port]]
name = "p1"
iface = "pb-a"
speed = "400Gbps"

[[port]]
name = "p2"
iface = "pb-b"
speed = "400Gbps"

[pfc]
lossless = [3]
xoff = "200KB"
xon = "150KB"
max = "300KB"

[buffer]
egress_max = "2MB"

[policy]
kind = "pfc"

[fdb]
static = [ { mac = "$GEN_MAC", port = "p1" }, { mac = "$SINK_MAC", port = "p2" } ]
EOF

start_forwarder() { # name log
  case "$1" in
    none) ;;
    pfcswitchd)
      taskset -c "$FWD_CPU" ip netns exec pb-sw "$daemon" --config "$work/pb-sw.toml" \
        --control-socket "$work/pb-sw.sock" --metrics-listen off >"$2" 2>&1 &
      forwarder_pid=$!
      wait_for "$2" "forwarding on" "$forwarder_pid" pfcswitchd ;;
    xsk-forward | xdp-redirect)
      taskset -c "$FWD_CPU" ip netns exec pb-sw "$bench" "$1" --port-a pb-a --port-b pb-b >"$2" 2>&1 &
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

results=$work/results
: >"$results"
measure() { # forwarder size run
  local name=$1 size=$2 out=$work/$1-$2-$3 sink_ns=pb-sink sink_iface=pb-sink0 nice=0
  [ "$name" = none ] && sink_ns=pb-sw sink_iface=pb-a
  [[ $name == pfcswitchd || $name == xsk-forward ]] && nice=19
  start_forwarder "$name" "$out.forwarder.log"
  # The sink process only reads counters; its XDP program runs where frames arrive.
  taskset -c "$GEN_CPU" ip netns exec "$sink_ns" "$bench" sink --iface "$sink_iface" \
    --warmup "$WARMUP" --window "$WINDOW" >"$out.sink" 2>"$out.sink.log" &
  local sink_pid=$!
  wait_for "$out.sink.log" ready "$sink_pid" sink
  pin_napi "$nice"
  taskset -c "$GEN_CPU" ip netns exec pb-gen "$bench" flood --iface pb-gen0 --size "$size" \
    --src "$GEN_MAC" --dst "$SINK_MAC" --pcp 3 --warmup "$WARMUP" --window "$WINDOW" >"$out.flood" &
  local flood_pid=$! busy0 total0 busy1 total1
  sleep "$(awk -v w="$WARMUP" 'BEGIN { print w + 0.5 }')"
  read -r busy0 total0 < <(cpu_jiffies "cpu$FWD_CPU")
  sleep "$(awk -v w="$WINDOW" 'BEGIN { print (w > 1.5 ? w - 1 : w / 2) }')"
  read -r busy1 total1 < <(cpu_jiffies "cpu$FWD_CPU")
  wait "$flood_pid"
  wait "$sink_pid" || { cat "$out.sink.log" >&2; return 1; }
  stop_forwarder
  local line
  line="$name $size $(json "$out.sink" fps) $(json "$out.flood" fps) $(json "$out.flood" peer_dropped_fps) \
$(awk -v b=$((busy1 - busy0)) -v t=$((total1 - total0)) 'BEGIN { printf "%.0f", t ? 100 * b / t : 0 }')"
  echo "$line" >>"$results"
  echo "   run $3: $line" >&2
}

busy_before=$(machine_busy)
echo "== CPUs busy before the run: $busy_before %" >&2
for size in $SIZES; do
  for run in $(seq "$REPEAT"); do
    for name in none $FORWARDERS; do
      echo "== $name, $size B frames + FCS, run $run/$REPEAT" >&2
      measure "$name" "$size" "$run"
    done
  done
done
busy_after=$(machine_busy)

# ---- table ----

median_rows() { # per forwarder and size: the run with the median delivered rate, then min and max
  local size name
  for size in $SIZES; do
    for name in none $FORWARDERS; do
      grep "^$name $size " "$results" | sort -g -k3 |
        awk '{ row[NR] = $0; rx[NR] = $3 } END { print row[int((NR + 1) / 2)], rx[1], rx[NR] }'
    done
  done
}

echo
echo "Forwarding rate: generator on CPU $GEN_CPU, forwarder on CPU $FWD_CPU; median of $REPEAT runs," \
  "each ${WINDOW} s after ${WARMUP} s warm-up"
if [ "$busy_before" -gt 10 ] || [ "$busy_after" -gt 10 ]; then
  echo "WARNING: other processes kept the CPUs ${busy_before} % / ${busy_after} % busy before / after the run: rates are skewed"
fi
median_rows | awk -v cpu="$FWD_CPU" '
  { name[NR] = $1; size[NR] = $2; rx[NR] = $3; tx[NR] = $4; refused[NR] = $5; busy[NR] = $6; low[NR] = $7; high[NR] = $8
    if ($1 == "xsk-forward") bare[$2] = $3
  }
  END {
    printf "%-13s %6s %7s %13s %8s %13s %13s %6s  %s\n", "forwarder", "frame", "Mpps", "(min-max)", "vs bare", \
      "offered Mpps", "refused@pb-a", "CPU " cpu, "limited by"
    for (i = 1; i <= NR; i++) {
      ratio = (name[i] != "none" && bare[size[i]] > 0) ? sprintf("%.2f", rx[i] / bare[size[i]]) : "-"
      if (name[i] == "none") limit = "reference: no forwarder, the counter on pb-a"
      else if (rx[i] < 0.01 * tx[i]) limit = "STALLED: the forwarder stopped forwarding"
      else if (rx[i] >= 0.97 * tx[i]) limit = "generator: no loss, the forwarder may be faster"
      else limit = sprintf("forwarder (CPU %d %d%% busy)", cpu, busy[i])
      printf "%-13s %5dB %7.3f %13s %8s %13.3f %13.3f %5d%%  %s\n", (name[i] == "none" ? "(generator)" : name[i]), \
        size[i] + 4, rx[i] / 1e6, sprintf("(%.3f-%.3f)", low[i] / 1e6, high[i] / 1e6), ratio, tx[i] / 1e6, \
        refused[i] / 1e6, busy[i], limit
    }
  }'
