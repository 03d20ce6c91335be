#!/usr/bin/env bash
# The README's `capfc-incast-share` table: under each policy, the long flow's goodput while
# the 15-sender query runs (whole 10 ms bins from the burst at 300 ms to the query's last
# answer) and before it, and the query's tail (maximum) FCT. On the AF_XDP datapath by
# default (as root, after scripts/setup.sh), on virtual time with --sim.
#
#   scripts/capfc-incast-share.sh [--sim]
set -euo pipefail
cd "$(dirname "$0")/.."
sim=${1:-}
pfcswitch=${PFCSWITCH:-target/release/pfcswitch}
work=$(mktemp -d /tmp/pfcswitch-incast-share.XXXXXX)
trap 'rm -rf "$work"' EXIT
$pfcswitch scenario compare capfc-incast-share $sim --policies pfc-wdrop,pfc-wstop,capfc-max,capfc-cal \
  --out "$work" >/dev/null 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
suffix=${sim:+-sim}
printf '%-10s %28s %22s %16s\n' policy "long during query (Mbit/s)" "long before (Mbit/s)" "query tail (ms)"
for policy in pfc-wdrop pfc-wstop capfc-max capfc-cal; do
  jq -r --arg p "$policy" '
    def mbps(b): (b | add) * 8 / ((b | length) * 0.010) / 1e6;
    ([.messages[] | select(.class == "query") | .fct_ms] | max) as $tail
    | (.flows[] | select(.class == "long") | .receiver.goodput_bins) as $bins
    | [$p, mbps($bins[30:((300 + $tail) / 10 | floor)]), mbps($bins[20:30]), $tail]
    | "\(.[0]) \(.[1] * 10 | round / 10) \(.[2] * 10 | round / 10) \(.[3] * 10 | round / 10)"
  ' "$work/$policy-seed1$suffix/results.json"
done | awk '{ printf "%-10s %28s %22s %16s\n", $1, $2, $3, $4 }'
