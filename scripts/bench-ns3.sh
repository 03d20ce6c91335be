#!/usr/bin/env bash
# pfcswitch's simulator beside ns-3 on the same k = 8 fat-tree and the same flows
# (docs/simulator.md, "Beside ns-3"): for each load, `pfcswitch scenario simulate` runs
# bench/ns3/websearch-fat-tree-lossy.toml and writes the flows it runs (flows.txt), ns-3
# (a release build: the libraries and headers of PyPI's `ns3` wheel, NS3_VERSION, fetched
# here once; Debian's libns3-dev is built with logging and asserts compiled in) runs that list
# in bench/ns3/fat-tree-dctcp.cc,
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
NS3_VERSION=${NS3_VERSION:-3.44.post0}

# shellcheck source=scripts/lib/common.sh
. scripts/lib/common.sh
install_missing bench-ns3.sh time g++ python3 python3-pip

quiet
nice -n 10 cargo build --release --locked -p pfcswitch
# The wheel's libraries are ns-3's `release` profile (no logging, no asserts), built for
# manylinux; only its lib64/ and include/ are used, not its Python bindings.
WHEEL=$TARGET/ns3-pypi/$NS3_VERSION
if [ ! -d "$WHEEL/unpacked/ns3/lib64" ]; then
  rm -rf "$WHEEL" && mkdir -p "$WHEEL"
  python3 -m pip download --quiet --no-deps --only-binary=:all: "ns3==$NS3_VERSION" -d "$WHEEL"
  python3 -m zipfile -e "$WHEEL"/ns3-*.whl "$WHEEL/unpacked"
fi
NS3LIB=$WHEEL/unpacked/ns3/lib64
NS3=$TARGET/ns3/fat-tree-dctcp-$NS3_VERSION
if [ ! -x "$NS3" ] || [ bench/ns3/fat-tree-dctcp.cc -nt "$NS3" ]; then
  mkdir -p "$TARGET/ns3"
  quiet
  libs=()
  for module in core network internet point-to-point traffic-control applications; do
    libs+=("$(basename "$NS3LIB"/libns3.*-"$module".so .so | sed 's/^lib/-l/')")
  done
  nice -n 10 g++ -O2 -std=c++20 -I"$WHEEL/unpacked/ns3/include" -o "$NS3" bench/ns3/fat-tree-dctcp.cc \
    -L"$NS3LIB" -Wl,-rpath,"$NS3LIB" "${libs[@]}"
fi

echo "bench-ns3: $(date -u +%FT%TZ), commit $(git rev-parse --short HEAD), ns-3 $NS3_VERSION (PyPI wheel, release build), $(nproc) cores"
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
