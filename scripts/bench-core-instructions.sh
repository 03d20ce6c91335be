#!/usr/bin/env bash
# Instructions the switch core executes per frame, counted by callgrind: the datapath's
# shape of work (`one_flow_two_ports_burst64_*` in switch/benches/switch.rs: a burst of 64
# frames received on one port, then sent on the other). A count, not a time: the same
# build gives the same figure in any sitting, where the core's timings here move by up to
# 8 % between sittings and the datapath's rounds by more. A cut of the per-frame work shows
# here first; whether it buys forwarding rate is still for `scripts/bench-datapath.sh`.
#
#   scripts/bench-core-instructions.sh        prints, per cell, instructions per frame:
#                                             in all, in `handle_rx` and in `poll_tx`
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib/common.sh
. scripts/lib/common.sh
install_missing bench-core-instructions.sh valgrind jq

bench=$(cargo bench --locked -p pfcswitch-switch --bench switch --no-run --message-format=json 2>/dev/null |
  jq -r 'select(.reason == "compiler-artifact" and .target.name == "switch" and .executable != null) | .executable')
[ -x "$bench" ] || { echo "bench-core-instructions.sh: no benchmark executable built" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The calls of each function from the benchmark's loop, with their inclusive cost: lines
# such as `389,820,687 (58.05%)  >   .../rx.rs:...::handle_rx (415,040x) [...]` under the
# loop's own entry `... *  .../benches/switch.rs:criterion::bencher::Bencher<M>::iter`.
per_frame() { # callgrind output file
  callgrind_annotate --tree=calling --inclusive=yes "$1" 2>/dev/null | awk '
    /\*  .*benches\/switch\.rs:criterion::bencher::Bencher<M>::iter/ { inside = 1; total = $1; next }
    inside && /^$/ { inside = 0 }
    inside && /Switch>::handle_rx \(/ { rx = $1; calls = $0; sub(/.*\(/, "", calls); sub(/x\).*/, "", calls) }
    inside && /Switch>::poll_tx \(/ { tx = $1 }
    END {
      gsub(",", "", total); gsub(",", "", rx); gsub(",", "", tx); gsub(",", "", calls)
      if (calls == 0) { print "no handle_rx calls found" > "/dev/stderr"; exit 1 }
      printf "%10.0f %10.0f %10.0f %12d\n", total / calls, rx / calls, tx / calls, calls
    }'
}

printf '%-9s %10s %10s %10s %12s\n' cell "per frame" handle_rx poll_tx frames
for cell in lossy lossless; do
  valgrind --tool=callgrind --callgrind-out-file="$work/$cell" "$bench" \
    --bench "one_flow_two_ports_burst64_$cell" --profile-time 1 >/dev/null 2>&1
  printf '%-9s %s\n' "$cell" "$(per_frame "$work/$cell")"
done
