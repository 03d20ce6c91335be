#!/usr/bin/env bash
# pfcswitchd's resident memory with 8 ports at the default UMEM size, sampled every 30 s
# over a run at line rate with PFC and MAC learning active (star8: h1..h7 send on lossless
# priority 3 to h8, a 7:1 incast that keeps h8's port saturated and PFC pausing the senders).
#
#   scripts/bench-memory.sh [SECONDS]     default 600; prints samples and the max/min ratio
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-600}
scripts/setup.sh >/dev/null
pfcswitch=/usr/local/bin/pfcswitch
prefix=mem-
cleanup() {
  jobs -p | xargs -r kill 2>/dev/null || true
  $pfcswitch topology down star8 --prefix $prefix
}
trap cleanup EXIT

$pfcswitch topology up star8 --prefix $prefix --spin "${PFCSWITCHD_SPIN:-0us}"
pid=$(cat /run/pfcswitch/${prefix}sw1.pid)
# A switch owns its CPU: the datapath on the last core, the eight hosts on the others.
last_cpu=$(($(nproc) - 1))
taskset -a -p -c "$last_cpu" "$pid" >/dev/null
hosts_cpus=0-$((last_cpu > 0 ? last_cpu - 1 : 0))
rss() { awk '/^VmRSS/ { print $2 }' "/proc/$pid/status"; }

ip netns exec ${prefix}h8 taskset -c "$hosts_cpus" $pfcswitch traffic recv --iface eth0 --duration "$((seconds + 20))s" --idle 5s >/tmp/bench-memory-recv.txt &
sleep 1
for h in 1 2 3 4 5 6 7; do
  ip netns exec ${prefix}h$h taskset -c "$hosts_cpus" $pfcswitch traffic send --iface eth0 --speed 100Mbps --dst 02:00:00:00:00:08 \
    --pcp 3 --duration "${seconds}s" --flow "$h" >/dev/null &
done

echo "time_s rss_kib"
samples=()
for ((t = 0; t <= seconds; t += 30)); do
  value=$(rss)
  samples+=("$value")
  echo "$t $value"
  [ "$t" -lt "$seconds" ] && sleep 30
done
wait
sort -n <<<"$(printf '%s\n' "${samples[@]}")" | awk -v first="${samples[0]}" -v last="${samples[-1]}" '
  NR == 1 { min = $1 } { max = $1 }
  END { printf "first %d KiB, last %d KiB, min %d KiB, max %d KiB, max/min %.4f\n", first, last, min, max, max / min }'
echo "receiver:"; cat /tmp/bench-memory-recv.txt
control=(-s /run/pfcswitch/${prefix}sw1.sock)
$pfcswitch "${control[@]}" ports
$pfcswitch "${control[@]}" pfcstat
$pfcswitch "${control[@]}" status
