#!/usr/bin/env bash
# Simulator against datapath: each scenario once in namespaces (pfcswitchd on AF_XDP,
# endpoints on AF_XDP) and once on virtual time (`scenario simulate`), same seed, same plan.
# Prints per class the median FCT of both and their ratio, and the PFC frames of both.
# Needs root (namespaces); the agreement table in docs/simulator.md
# ("Simulator and datapath") comes from it.
#
#   scripts/agreement.sh [SEED] [SCENARIO...]     (default: 1 incast capfc-s1 ofc-fig1)
set -euo pipefail
cd "$(dirname "$0")/.."
seed=${1:-1}
shift || true
scenarios=("$@")
[ ${#scenarios[@]} -gt 0 ] || scenarios=(incast capfc-s1 ofc-fig1)
pfcswitch=${PFCSWITCH:-target/release/pfcswitch}
work=$(mktemp -d /tmp/pfcswitch-agreement.XXXXXX)
trap 'rm -rf "$work"' EXIT

printf '%-10s %-8s %12s %12s %7s\n' SCENARIO CLASS DATAPATH SIM RATIO
for scenario in "${scenarios[@]}"; do
  for mode in run simulate; do
    $pfcswitch scenario "$mode" "$scenario" --seed "$seed" --out "$work/$scenario-$mode" >"$work/log" 2>&1 \
      || { cat "$work/log" >&2; exit 1; }
  done
  dp=$work/$scenario-run/results.json sim=$work/$scenario-simulate/results.json
  for class in $(jq -r '.summary.classes[] | select(.long_lived | not) | .class' "$dp"); do
    a=$(jq -r --arg c "$class" '.summary.classes[] | select(.class == $c) | .fct_p50_ms' "$dp")
    b=$(jq -r --arg c "$class" '.summary.classes[] | select(.class == $c) | .fct_p50_ms' "$sim")
    awk -v s="$scenario" -v c="$class" -v a="$a" -v b="$b" \
      'BEGIN { printf "%-10s %-8s %9.3f ms %9.3f ms %7.2f\n", s, c " p50", a, b, b / a }'
  done
  a=$(jq -r '.summary.pfc_frames' "$dp") b=$(jq -r '.summary.pfc_frames' "$sim")
  awk -v s="$scenario" -v a="$a" -v b="$b" \
    'BEGIN { printf "%-10s %-8s %12d %12d %7s\n", s, "PFC", a, b, (a > 0 ? sprintf("%.2f", b / a) : "-") }'
done
