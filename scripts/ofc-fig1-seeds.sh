#!/usr/bin/env bash
# OFC's Fig. 1 headline over seeds: F0 (the uncongested flow that shares sw1 with the
# congested F1) is never paused under `ofc`. Runs `ofc-fig1` under each policy for every seed,
# on the datapath (namespaces, pfcswitchd on AF_XDP) and on virtual time, and prints per run
# how many OFC PAUSE frames named F0 on any link, how long F0's sender and F0's path were paused, how many PAUSE frames sw1 sent F0's sender
# (its port p1: OFC names a flow only to a port that carries it, so any PAUSE there names F0
# or pauses its whole priority), and the lossless drops. The docs' tables come from it.
# Needs root for the datapath runs.
#
#   scripts/ofc-fig1-seeds.sh [FIRST_SEED LAST_SEED [POLICY...]]   (default: 1 10 ofc)
#   OUT=DIR keeps every run's results there (default: a temporary directory, removed).
#   SET="--set KEY=VALUE ..." changes the scenario (as `pfcswitch scenario run --set`).
set -euo pipefail
cd "$(dirname "$0")/.."
first=${1:-1}
last=${2:-10}
shift 2 || true
policies=("$@")
[ ${#policies[@]} -gt 0 ] || policies=(ofc)
pfcswitch=${PFCSWITCH:-target/release/pfcswitch}
if [ -n "${OUT:-}" ]; then
  work=$OUT
  mkdir -p "$work"
else
  work=$(mktemp -d /tmp/pfcswitch-ofc-fig1.XXXXXX)
  trap 'rm -rf "$work"' EXIT
fi

row() { # ENGINE POLICY SEED RESULTS
  jq -r --arg engine "$1" --arg policy "$2" --arg seed "$3" '
    (.summary.classes[] | select(.class == "F0-uncongested")) as $f0
    | ([.switches[] | select(.name == "sw1") | .snapshot.ofc.queues[]? | select(.port == "p1") | .counters.pause_tx]
       | add // 0) as $ofc_pauses
    | ([.switches[] | select(.name == "sw1") | .snapshot.ports[] | select(.name == "p1")
        | .priorities[] | .pfc_tx] | add // 0) as $pfc_frames
    | [$engine, $policy, $seed, ($f0.ofc_pauses_naming // "-"), $f0.senders_paused_ms, $f0.path.paused_ms,
       (if $policy == "ofc" then $ofc_pauses else $pfc_frames end), .summary.lossless_drops]
    | @tsv' "$4"
}

printf '%-9s %-7s %5s %9s %18s %16s %18s %15s\n' ENGINE POLICY SEED F0-NAMED F0-SENDER-PAUSED F0-PATH-PAUSED PAUSES-TO-F0-SENDER LOSSLESS-DROPS
for policy in "${policies[@]}"; do
  for seed in $(seq "$first" "$last"); do
    for mode in run simulate; do
      out=$work/$policy-$mode-$seed
      # shellcheck disable=SC2086 # SET is a list of --set arguments
      $pfcswitch scenario "$mode" ofc-fig1 --policy "$policy" --seed "$seed" --out "$out" ${SET:-} >"$work/log" 2>&1 \
        || { cat "$work/log" >&2; exit 1; }
      engine=$([ "$mode" = run ] && echo datapath || echo sim)
      row "$engine" "$policy" "$seed" "$out/results.json" |
        awk -F'\t' '{ printf "%-9s %-7s %5s %9s %15.1f ms %13.1f ms %18s %15s\n", $1, $2, $3, $4, $5, $6, $7, $8 }'
    done
  done
done
