#!/usr/bin/env bash
# Static against dynamic buffer thresholds (docs/buffers.md, "Static and dynamic thresholds
# under incast"): runs scenarios/buffer-incast.toml for each incast size N with
# configs/buffers/static.toml and configs/buffers/dynamic.toml, on the datapath (namespaces,
# pfcswitchd on AF_XDP) and on virtual time, and prints per run what the switch reports at the
# end (`pfcswitch buffer show`'s watermarks) and the FCTs: PFC frames sw1 sent, the largest
# lossless PG's watermark, the ingress pool's watermark and what it left free at that peak,
# the lossy burst's drops and its PGs' largest watermark, the p99 FCTs, lossless drops.
# Needs root for the datapath runs.
#
#   scripts/buffer-incast.sh [N...]        (default: 2 4 6)
#   ENGINES="sim" runs virtual time only; OUT=DIR keeps every run's results.
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(2 4 6)
pfcswitch=${PFCSWITCH:-target/release/pfcswitch}
if [ -n "${OUT:-}" ]; then
  work=$OUT
  mkdir -p "$work"
else
  work=$(mktemp -d /tmp/pfcswitch-buffer-incast.XXXXXX)
  trap 'rm -rf "$work"' EXIT
fi

row() { # ENGINE N THRESHOLDS RESULTS
  jq -r --arg engine "$1" --arg n "$2" --arg thresholds "$3" '
    (.switches[] | select(.name == "sw1") | .snapshot) as $sw
    | ($sw.buffer.pools[] | select(.name == "ingress_lossless_pool")) as $pool
    | ([$sw.buffer.priority_groups[] | select(.lossless) | .watermark_bytes] | max) as $pg
    | ([$sw.buffer.priority_groups[] | select(.lossless | not) | .watermark_bytes] | max) as $lossy_pg
    | ([$sw.ports[].priorities[] | select(.priority == 0) | .drops | to_entries[] | .value] | add) as $lossy_drops
    | (.summary.classes[] | select(.class == "incast")) as $incast
    | (.summary.classes[] | select(.class == "lossy")) as $lossy
    | [$engine, $n, $thresholds, .summary.pfc_frames, $pg, $pool.watermark_bytes,
       ($pool.size_bytes - $pool.watermark_bytes), $lossy_drops, $lossy_pg, $incast.fct_p99_ms, $lossy.fct_p99_ms,
       .summary.lossless_drops]
    | @tsv' "$4"
}

printf '%-9s %2s %-8s %10s %10s %10s %10s %11s %11s %11s %11s %9s\n' ENGINE N THRESHOLD PFC-FRAMES PG-WM-B POOL-WM-B POOL-LEFT-B LOSSY-DROPS LOSSY-PG-B INCAST-P99 LOSSY-P99 LOSSLESS-DROPS
for engine in ${ENGINES:-datapath sim}; do
  mode=$([ "$engine" = datapath ] && echo run || echo simulate)
  for n in "${sizes[@]}"; do
    for thresholds in static dynamic; do
      out=$work/$engine-$n-$thresholds
      $pfcswitch scenario "$mode" buffer-incast --out "$out" --set "class.incast.senders=h1..h$n" \
        --set "switches.sw1=../configs/buffers/$thresholds.toml" >"$work/log" 2>&1 || { cat "$work/log" >&2; exit 1; }
      row "$engine" "$n" "$thresholds" "$out/results.json" |
        awk -F'\t' '{ printf "%-9s %2s %-8s %10s %10s %10s %11s %11s %11s %8.1f ms %8.1f ms %9s\n", $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12 }'
    done
  done
done
