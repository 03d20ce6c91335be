#!/usr/bin/env bash
# pfcswitch's simulator beside ns-3 on the same k = 8 fat-tree and the same flows
# (docs/simulator.md, "Beside ns-3"): for each load, `pfcswitch scenario simulate` runs
# bench/ns3/websearch-fat-tree-lossy.toml and writes the flows it runs (flows.txt), ns-3
# (Debian's libns3-dev, installed here if missing) runs that list in bench/ns3/fat-tree-dctcp.cc,
# then again with other ECMP paths (the yardstick: how far the path draw alone moves a bin;
# OTHER_PATHS=0 skips it), and bench/ns3/compare.py prints speed and slowdown by size side
# by side.
#
# Usage: scripts/bench-ns3.sh   (root, for apt; LOADS="0.3 0.5" DURATION_MS=20 SEED=1
#        OUT=TARGET/bench-ns3 OTHER_PATHS=1 override; TARGET: $CARGO_TARGET_DIR or target).
#        One simulation at a time, each under `nice`.
set -euo pipefail
cd "$(dirname "$0")/.."

LOADS=${LOADS:-0.3 0.5}
DURATION_MS=${DURATION_MS:-20}
SEED=${SEED:-1}
TARGET=${CARGO_TARGET_DIR:-target}
OUT=${OUT:-$TARGET/bench-ns3}
OTHER_PATHS=${OTHER_PATHS:-1}

missing=()
for package in libns3-dev time g++ python3; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ "${#missing[@]}" -gt 0 ]; then
  [ "$(id -u)" -eq 0 ] || { echo "bench-ns3.sh: run as root to install ${missing[*]}" >&2; exit 1; }
  echo "bench-ns3.sh: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# Another user's timing runs hold /tmp/quiet.lock; heavy steps wait for it.
quiet() { while [ -e /tmp/quiet.lock ]; do sleep 20; done; }

quiet
nice -n 10 cargo build --release --locked -p pfcswitch
NS3=$TARGET/ns3/fat-tree-dctcp
if [ ! -x "$NS3" ] || [ bench/ns3/fat-tree-dctcp.cc -nt "$NS3" ]; then
  mkdir -p "$TARGET/ns3"
  quiet
  # Debian's ns3-*.pc name libgsl.so, which only libgsl-dev has: link the libraries directly.
  nice -n 10 g++ -O2 -std=c++17 -o "$NS3" bench/ns3/fat-tree-dctcp.cc \
    -lns3-core -lns3-network -lns3-internet -lns3-point-to-point -lns3-traffic-control -lns3-applications
fi

echo "bench-ns3: $(date -u +%FT%TZ), commit $(git rev-parse --short HEAD), ns-3 $(dpkg-query -W -f='${Version}' libns3-dev), $(nproc) cores"
for load in $LOADS; do
  run="$OUT/load-$load"
  rm -rf "$run" && mkdir -p "$run/ns3" "$run/ns3-salt"
  quiet
  /usr/bin/time -f '%M' -o "$run/ours.rss" nice -n 10 "$TARGET/release/pfcswitch" scenario simulate \
    bench/ns3/websearch-fat-tree-lossy.toml --seed "$SEED" --set "load=$load" --set "duration=${DURATION_MS}ms" \
    --out "$run/ours" >"$run/ours.log" 2>&1 || { tail -20 "$run/ours.log" >&2; exit 1; }
  quiet
  /usr/bin/time -f '%M' -o "$run/ns3.rss" nice -n 10 "$NS3" --flows="$run/ours/flows.txt" \
    --fcts="$run/ns3/fcts.txt" --duration=$((DURATION_MS * 1000000)) >"$run/ns3/stats.txt"
  if [ "$OTHER_PATHS" != 0 ]; then
    quiet
    nice -n 10 "$NS3" --flows="$run/ours/flows.txt" --fcts="$run/ns3-salt/fcts.txt" \
      --duration=$((DURATION_MS * 1000000)) --ecmp-salt=1 >"$run/ns3-salt/stats.txt"
  fi
  echo
  echo "== load $load, ${DURATION_MS} ms of arrivals, seed $SEED =="
  python3 bench/ns3/compare.py "$run"
done
