#!/usr/bin/env bash
# Line rate of one long-lived flow through pfcswitchd over AF_XDP endpoints, as `pfcswitch
# scenario run` measures it (LINK-USE: the flow's frames on the wire, with preamble, gap and
# FCS, over its active time and the link speed): through one switch (star3, h1 -> h3) and
# through three (ofc-fig1, h1 -> h9), at 100 Mbit/s (MTU 1500) and 1 Gbit/s (MTU 3000, with
# thresholds for 1 Gbit/s). Each case runs RUNS times (default 3); prints every run and the
# median. Run as root after scripts/setup.sh. CASES picks cases (default: all four).
#
#   scripts/bench-line-rate.sh [RUNS]
#   CASES="three-1g" scripts/bench-line-rate.sh 5
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
pfcswitch=${PFCSWITCH:-target/release/pfcswitch}
work=$(mktemp -d /tmp/pfcswitch-line-rate.XXXXXX)
trap 'rm -rf "$work"' EXIT
configs=$(pwd)/configs

scenario() { # name topology switches receiver speed mtu overrides
  cat >"$work/$1.toml" <<TOML
name = "$1"
description = "one long-lived flow"
topology = "$2"
switches = $3
speed = "$5"
mtu = $6
duration = "3s"
$7
[[class]]
name = "long"
kind = "long"
priority = 3
senders = ["h1"]
receivers = ["$4"]
TOML
}

star3="{ sw1 = \"$configs/default.toml\" }"
ofc="{ sw1 = \"$configs/ofc-fig1/sw1.toml\", sw2 = \"$configs/ofc-fig1/sw2.toml\", sw3 = \"$configs/ofc-fig1/sw3.toml\" }"
gig='[overrides]
pfc = { xoff = "100KB", xon = "70KB", max = "1400KB", response_time = "2ms" }
buffer = { egress_max = "3000KB" }'
scenario one-100m star3 "$star3" h3 100Mbps 1500 ""
scenario three-100m ofc-fig1 "$ofc" h9 100Mbps 1500 ""
scenario one-1g star3 "$star3" h3 1Gbps 3000 "$gig"
scenario three-1g ofc-fig1 "$ofc" h9 1Gbps 3000 "$gig"

printf '%-12s %s\n' case "link use per run (%) -> median"
for case in ${CASES:-one-100m three-100m one-1g three-1g}; do
  uses=()
  for _ in $(seq "$runs"); do
    $pfcswitch scenario run "$work/$case.toml" --out "$work/out-$case" >/dev/null 2>"$work/err"  || { cat "$work/err" >&2; exit 1; }
    uses+=("$(jq -r '.flows[0].link_use * 100 | . * 10 | round / 10' "$work/out-$case/results.json")")
  done
  median=$(printf '%s\n' "${uses[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  printf '%-12s %s -> %s\n' "$case" "${uses[*]}" "$median"
done
