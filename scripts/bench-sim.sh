#!/usr/bin/env bash
# The simulator against an earlier build of itself, on this machine, back to back (issue 53;
# docs/performance.md, "Simulator"). These machines' speed varies from day to day, so a
# speed figure means something only beside a yardstick measured in the same run.
#
#   scripts/bench-sim.sh speed [REV]   REV (default 5c1ebcc, before the per-event work) and
#                                      this checkout, on one thread and on two (--threads 2),
#                                      run `websearch-fat-tree --seed 1 --set
#                                      duration=$DURATION` in turn, $ROUNDS rounds; prints
#                                      wall seconds, events/s and peak RSS of each, and the
#                                      median ratios.
#   scripts/bench-sim.sh same REV      REV and this checkout, on one thread and on two, run
#                                      the comparison set (below); results.json (without its
#                                      `simulator` timing), fct.txt, pfc.txt and qlen.txt
#                                      must be byte-identical to REV's. Exits 1 naming the
#                                      scenarios that differ.
#
# REV is built once in its own worktree and target directory under $TARGET/bench-sim/.
# DURATION=100ms ROUNDS=3 OUT=$TARGET/bench-sim override; TARGET: $CARGO_TARGET_DIR or target.
set -euo pipefail
cd "$(dirname "$0")/.."

MODE=${1:?usage: scripts/bench-sim.sh speed [REV] | same REV}
REV=${2:-5c1ebcc}
DURATION=${DURATION:-100ms}
ROUNDS=${ROUNDS:-3}
TARGET=$(realpath -m "${CARGO_TARGET_DIR:-target}")
OUT=$(realpath -m "${OUT:-$TARGET/bench-sim}")

# The comparison set: what the speed work must leave unchanged. Each line: a built-in
# scenario and its options, run on virtual time.
SAME_SET=(
  "incast"
  "capfc-s1"
  "capfc-s1-tree"
  "ofc-fig1 --policy ofc"
  "ofc-incast-32-10 --policy pfc"
  "qcn-fanin"
  "fecn-converge"
  "fecn-gamma"
  "pfc-storm"
  "buffer-incast"
  "ecmp-failover"
  "dcqcn-incast"
  "capfc-fat-tree-s1 --set duration=100ms"
  "websearch-fat-tree --set duration=5ms"
  "hpcc-incast-100g"
  "cc-incast-16 --cc hpcc"
  "cc-incast-16 --cc timely"
  "cc-incast-16 --cc swift"
  "cc-incast-16 --cc dcqcn-w --set transport.dcqcn.base_rtt=8us"
  "cc-fairness --cc hpcc"
)

command -v /usr/bin/time >/dev/null || { echo "bench-sim.sh: needs /usr/bin/time (apt install time)" >&2; exit 1; }

build_rev() {
  local rev=$1 src="$OUT/src-$1" target="$OUT/target-$1"
  if [ ! -x "$target/release/pfcswitch" ]; then
    git worktree remove --force "$src" 2>/dev/null || true
    git worktree add --detach "$src" "$rev" >&2
    (cd "$src" && CARGO_TARGET_DIR="$target" nice -n 10 cargo build --release --locked -p pfcswitch >&2)
    git worktree remove --force "$src"
  fi
  echo "$target/release/pfcswitch"
}

nice -n 10 cargo build --release --locked -p pfcswitch >&2
OURS="$TARGET/release/pfcswitch"
THEIRS=$(build_rev "$REV")
HEAD_REV=$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . || echo "+dirty")
echo "bench-sim $MODE: $(date -u +%FT%TZ), this checkout $HEAD_REV against $REV, $(nproc) cores"

# One simulation into $OUT/run (the same path for both builds, so the paths results.json
# names are the same); moved to $OUT/$2 afterwards. Both builds read this checkout's
# scenarios, configs and workloads (PFCSWITCH_ROOT): the same input for both.
simulate() {
  local binary=$1 dest=$2
  shift 2
  rm -rf "$OUT/run" "$dest"
  # shellcheck disable=SC2068 # the options are words
  PFCSWITCH_ROOT=$PWD /usr/bin/time -f '%M' -o "$OUT/rss" "$binary" scenario simulate $@ --seed 1 --out "$OUT/run" >"$OUT/log" 2>&1 ||
    { tail -20 "$OUT/log" >&2; exit 1; }
  mkdir -p "$(dirname "$dest")" && mv "$OUT/run" "$dest" && mv "$OUT/rss" "$dest/rss.kib"
}

case "$MODE" in
  speed)
    for round in $(seq 1 "$ROUNDS"); do
      simulate "$THEIRS" "$OUT/speed/$round-theirs" websearch-fat-tree --set "duration=$DURATION"
      simulate "$OURS" "$OUT/speed/$round-ours" websearch-fat-tree --set "duration=$DURATION"
      simulate "$OURS" "$OUT/speed/$round-split" websearch-fat-tree --set "duration=$DURATION" --threads 2
    done
    python3 - "$OUT/speed" "$ROUNDS" "$REV" "$HEAD_REV" <<'EOF'
import json, statistics, sys
root, rounds, rev, head = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
def load(round, side):
    sim = json.load(open(f"{root}/{round}-{side}/results.json"))["simulator"]
    sim["rss_mib"] = int(open(f"{root}/{round}-{side}/rss.kib").read()) / 1024
    return sim
print(f"{'round':>5} {'build':>12} {'wall s':>8} {'events':>12} {'M events/s':>10} {'frame-hops':>12} {'peak RSS MiB':>12}")
ratios = {"ours": [], "split": []}
for r in range(1, rounds + 1):
    sides = {side: load(r, side) for side in ("theirs", "ours", "split")}
    for side, name in (("theirs", rev), ("ours", head), ("split", head + " ×2")):
        s = sides[side]
        print(f"{r:>5} {name:>12} {s['wall_seconds']:>8.1f} {s['events']:>12,} {s['events_per_second']/1e6:>10.3f} {s['frame_hops']:>12,} {s['rss_mib']:>12.0f}")
    for side in ratios:
        ratios[side].append(sides["theirs"]["wall_seconds"] / sides[side]["wall_seconds"])
for side, threads in (("ours", "one thread"), ("split", "two threads")):
    x = ratios[side]
    print(f"speed-up ({rev} wall / this wall, {threads}): median {statistics.median(x):.2f}, rounds " + ", ".join(f"{v:.2f}" for v in x))
EOF
    ;;
  same)
    # HPCC's Fig. 11 fabric (320 hosts at 100 Gbit/s, its queue-length monitor every 100 ns)
    # under three controls: this checkout writes the scenario files, both builds run them.
    rm -rf "$OUT/fig11"
    "$OURS" hpcc fig11 -o "$OUT/fig11" -l 0.5 --no-incast -t 50us --drain 50us --cc hpcc,dcqcn,timely >"$OUT/log" 2>&1 ||
      { tail -20 "$OUT/log" >&2; exit 1; }
    for control in hpcc dcqcn timely; do SAME_SET+=("$OUT/fig11/$control/scenario.toml"); done
    differ=0
    for entry in "${SAME_SET[@]}"; do
      name=$(echo "${entry#"$OUT/"}" | tr ' =/' '___' | tr -s '_' | sed 's/--//g')
      # shellcheck disable=SC2086 # the entry's words are the options
      {
        simulate "$THEIRS" "$OUT/same/theirs/$name" $entry
        simulate "$OURS" "$OUT/same/ours/$name" $entry
        simulate "$OURS" "$OUT/same/split/$name" $entry --threads 2
      }
      for side in ours split; do
        if python3 - "$OUT/same/theirs/$name" "$OUT/same/$side/$name" "$side" <<'EOF'
import json, os, sys
a, b, side = sys.argv[1], sys.argv[2], sys.argv[3]
def results(d):
    r = json.load(open(f"{d}/results.json"))
    events = r["simulator"]["events"]
    r.pop("simulator")
    # The tables as configured, not results: fabrics have had default routes since issue 53,
    # so a leaf lists its own hosts and `default` where it listed every host.
    for switch in r.get("switches", []):
        switch.get("snapshot", {}).pop("fdb", None)
    return r, events
(ra, ea), (rb, eb) = results(a), results(b)
# The event count is printed, not compared: fewer events for the same results is the point.
same = ra == rb
for f in ("fct.txt", "pfc.txt", "qlen.txt"):
    if os.path.exists(f"{a}/{f}") or os.path.exists(f"{b}/{f}"):
        same = same and open(f"{a}/{f}", "rb").read() == open(f"{b}/{f}", "rb").read()
threads = "two threads" if side == "split" else "one thread"
print(f"{os.path.basename(a):<40} events {ea:>12,} -> {eb:>12,}  {'identical' if same else 'DIFFERENT'} on {threads}")
sys.exit(0 if same else 1)
EOF
        then :; else differ=1; fi
      done
    done
    [ "$differ" = 0 ] || { echo "bench-sim same: results differ from $REV (see $OUT/same)" >&2; exit 1; }
    echo "bench-sim same: every scenario identical to $REV, on one thread and on two"
    ;;
  *) echo "bench-sim.sh: unknown mode $MODE (speed or same)" >&2; exit 2 ;;
esac
