#!/usr/bin/env bash
# The CaPFC paper's Fig. 8(a) comparison over many seeds, on virtual time: for each seed, the
# tail (maximum) FCT per class under PFC_wdrop / PFC_wstop / CaPFC_max / CaPFC_cal, then how
# many seeds put both CaPFC versions below both PFC versions (short, query; "ties" counts
# the seeds where the worse CaPFC is within 0.05 ms of the better PFC) or within 15 % of the
# better PFC (long, Table III).
#
#   scripts/capfc-seeds.sh [SCENARIO] [SEEDS]     (default: capfc-s1 10)
set -euo pipefail
cd "$(dirname "$0")/.."
scenario=${1:-capfc-s1}
seeds=${2:-10}
pfcswitch=${PFCSWITCH:-target/release/pfcswitch}
work=$(mktemp -d /tmp/pfcswitch-capfc-seeds.XXXXXX)
trap 'rm -rf "$work"' EXIT
policies=(pfc-wdrop pfc-wstop capfc-max capfc-cal)

echo "$scenario on virtual time: tail (max) FCT in ms, wdrop / wstop / CaPFC_max / CaPFC_cal"
printf '%-5s %-30s %-30s %s\n' seed short query long
for seed in $(seq "$seeds"); do
  $pfcswitch scenario compare "$scenario" --sim --seed "$seed" --out "$work/$seed" \
    --policies "$(IFS=,; echo "${policies[*]}")" >/dev/null 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
  row="$seed"
  for class in short query long; do
    row+=" $(for p in "${policies[@]}"; do
      jq -r --arg c "$class" '.summary.classes[] | select(.class == $c) | .fct_max_ms' "$work/$seed/$p-seed$seed-sim/results.json"
    done | paste -sd/)"
  done
  echo "$row"
done | tee "$work/rows" | awk '{printf "%-5s %-30s %-30s %s\n", $1, $2, $3, $4}' | sed -E 's/([0-9]+\.[0-9])[0-9]*/\1/g'
awk -v n="$seeds" '
  # 1: both CaPFC below both PFC (long: within 15 % of the better PFC), 0.5: a tie, 0: neither.
  function verdict(f, long,   v, cap, pfc) {
    split(f, v, "/"); cap = (v[3] > v[4]) ? v[3] : v[4]; pfc = (v[1] < v[2]) ? v[1] : v[2]
    if (long) return cap <= 1.15 * pfc
    if (cap < pfc - 0.05) return 1
    return (cap <= pfc + 0.05) ? 0.5 : 0
  }
  { a = verdict($2, 0); s += (a == 1); st += (a == 0.5)
    b = verdict($3, 0); q += (b == 1); qt += (b == 0.5)
    l += verdict($4, 1) }
  END { printf "seeds where CaPFC is below both PFCs: short %d/%d (%d ties), query %d/%d (%d ties); long within 15%%: %d/%d\n", s, n, st, q, n, qt, l, n }
' "$work/rows"
