#!/usr/bin/env bash
# pfcswitch's simulator beside HPCC's own ns-3 on HPCC's own experiment (issue 49; docs/simulator.md,
# "Beside HPCC's ns-3"): HPCC's 320-host fat-tree, FB_Hadoop flows from `pfcswitch hpcc
# traffic-gen`, and for each congestion control the config.txt HPCC's run.py writes at 100 Gbit/s
# (checked against `pfcswitch hpcc preset`) run by HPCC's `scratch/third` and, imported (`pfcswitch
# hpcc import`), by `pfcswitch scenario simulate`; then HPCC's ns-3 again with another ECMP salt
# (the yardstick), and bench/hpcc/compare.py prints speed, memory and fct_analysis.py's bins side
# by side.
#
# Usage: scripts/bench-hpcc.sh HPCC   (HPCC: a checkout of alibaba-edu/High-Precision-Congestion-
#        Control, or its simulation/ directory; root, for apt.)
#        CCS="hpcc dcqcn dctcp" LOAD=0.5 FLOWS_MS=1 DRAIN_MS=9 SEED=1 INCAST=0 STEP=10 SALT=1000
#        OTHER_PATHS=1 OUT=TARGET/bench-hpcc override; TARGET: $CARGO_TARGET_DIR or target.
#        NS3_WIRE_PAD=BYTES NS3_WIRE_PAD_ACK=BYTES NS3_WIRE_PAD_PER_HOP=BYTES: ns-3 takes that
#        much longer to send each data frame and each ACK, and that much more per INT record
#        either carries (the framing experiment in docs/simulator.md); unset, its own model.
#        One simulation at a time, each under `nice`.
#
# HPCC's tree is copied to TARGET/hpcc-ns3/<commit>/ and built there (once) with its own waf 1.7
# and its `optimized` profile, after scripted edits that let waf run on Python 3 (nothing in C++
# changes for gcc 12) and two counters and an ECMP salt for the measurement (salt unset: the
# authors' model exactly). Nothing of HPCC's is written into this repository.
set -Eeuo pipefail
trap 'echo "bench-hpcc.sh: failed at line $LINENO: $BASH_COMMAND" >&2' ERR

[ $# -eq 1 ] || { sed -n '10,17p' "$0" >&2; exit 2; }
HPCC=$(realpath "$1")
[ -d "$HPCC/simulation" ] && HPCC=$HPCC/simulation
[ -f "$HPCC/scratch/third.cc" ] || { echo "bench-hpcc.sh: $1 has no scratch/third.cc (HPCC's simulation/)" >&2; exit 2; }
cd "$(dirname "$0")/.."
REPO=$PWD

CCS=${CCS:-hpcc dcqcn dctcp}
LOAD=${LOAD:-0.5}
FLOWS_MS=${FLOWS_MS:-1}
DRAIN_MS=${DRAIN_MS:-9}
SEED=${SEED:-1}
INCAST=${INCAST:-0}
STEP=${STEP:-10}
SALT=${SALT:-1000}
OTHER_PATHS=${OTHER_PATHS:-1}
NS3_WIRE_PAD=${NS3_WIRE_PAD:-0}
NS3_WIRE_PAD_ACK=${NS3_WIRE_PAD_ACK:-0}
NS3_WIRE_PAD_PER_HOP=${NS3_WIRE_PAD_PER_HOP:-0}
TARGET=$(realpath -m "${CARGO_TARGET_DIR:-target}")
OUT=$(realpath -m "${OUT:-$TARGET/bench-hpcc}")
PY=/usr/bin/python3 # Debian's: waf runs on it, and lib2to3 is its package

# shellcheck source=scripts/lib/common.sh
. scripts/lib/common.sh
install_missing bench-hpcc.sh g++ python3 python3-lib2to3 time

# The version built: the checkout's commit, plus a mark when its tree has local changes.
commit=$(git -C "$HPCC" rev-parse --short=12 HEAD 2>/dev/null || echo unversioned)
[ -z "$(git -C "$HPCC" status --porcelain -- . 2>/dev/null)" ] || commit=$commit-dirty
# Bump when the edits below change, so that an old build is not taken for a new one.
EDITS=8
NS3DIR=$TARGET/hpcc-ns3/$commit
THIRD=$NS3DIR/build/scratch/third

# waf 1.7.11 and ns-3.17's wscripts are Python 2; Debian 12 has Python 3.11 only. These are the
# edits that make them run there (docs/simulator.md lists each with the error it fixes).
fix_waf_for_python3() {
  # waf unpacks its library into .waf3-<version>-<revision>/ on first run.
  "$PY" waf --version >/dev/null
  local waflib
  waflib=$(echo .waf3-*/waflib)
  sed -i "s/'rU'/'r'/g" "$waflib/ConfigSet.py" "$waflib/Context.py"  # 'U' mode: gone in 3.11
  sed -i 's/raise StopIteration$/return/' "$waflib/Node.py"           # PEP 479 (3.7)
  sed -i 's/^\(\t*\)self.node_class.__name__="Nod3"$/&\n\1self.node_class.__qualname__="Nod3"/' \
    "$waflib/Context.py"                                               # pickled by __qualname__
  local scripts
  mapfile -t scripts < <(find . -name wscript -o -name wutils.py -o -path './waf-tools/*.py')
  "$PY" -W ignore -m lib2to3 -w -n -j2 "${scripts[@]}" >/dev/null 2>&1 # print, except X, e
  for f in "${scripts[@]}"; do                                           # tabs as Python 2 read them
    expand -i -t 8 "$f" >"$f.expanded" && mv "$f.expanded" "$f"
  done
  sed -i 's/\bfile(/open(/' wscript src/wscript bindings/python/wscript
  sed -i 's/if flag_str > 28:/if len(flag_str) > 28:/' wscript
  sed -i 's/p\.stdout\.read()\.strip()/p.stdout.read().decode().strip()/' wscript
  sed -i 's/up(self\.mode)$/up(self.mode.encode())/' src/wscript
  sed -i 's/self\.m\.update(\(.*\))$/self.m.update((\1).encode())/' src/wscript
  sed -i 's/m\.update("ns-3-module-header-%s" % self\.module)/m.update(("ns-3-module-header-%s" % self.module).encode())/' src/wscript
  # Each edit found its line (a checkout other than 9f4be2a may not have them all).
  grep -q "__qualname__" "$waflib/Context.py"
  grep -q "len(flag_str) > 28" wscript
  grep -q "up(self.mode.encode())" src/wscript
  grep -q "self.m.update((.*).encode())" src/wscript
  grep -q '"ns-3-module-header-%s" % self.module).encode()' src/wscript
}

# Measurement only: frames put on a wire (packet-hops), events scheduled and the event loop's wall
# time, printed after the run; HPCC_ECMP_SALT added to every switch's ECMP seed (its node id); and
# HPCC_WIRE_PAD bytes added to the transmission time of every data frame (UDP: the IP protocol
# at 14 + 9, HPCC's PppHeader being 14 bytes), HPCC_WIRE_PAD_ACK to every ACK and NACK (0xFC,
# 0xFD), and HPCC_WIRE_PAD_PER_HOP bytes per INT record either carries (nhop: in a data frame at
# 14 + 20 + 8 + 6 + 40, in an ACK at 14 + 20 + 12 + 40): the experiment that gives ns-3 our
# frames' size on the wire (NS3_WIRE_PAD, NS3_WIRE_PAD_ACK, NS3_WIRE_PAD_PER_HOP). All unset:
# the authors' model.
instrument() {
  sed -i '1i #include <cstdint>\nuint64_t pfcswitch_bench_tx_frames = 0;' src/point-to-point/model/qbb-net-device.cc
  sed -i 's/^\(\s*\)m_txMachineState = BUSY;/&\n\1++::pfcswitch_bench_tx_frames;/' src/point-to-point/model/qbb-net-device.cc
  sed -i '1i #include <cstdlib>' src/point-to-point/model/switch-node.cc
  sed -i 's/^\(\s*\)m_ecmpSeed = m_id;/\1m_ecmpSeed = m_id + (getenv("HPCC_ECMP_SALT") ? atoi(getenv("HPCC_ECMP_SALT")) : 0);/' \
    src/point-to-point/model/switch-node.cc
  sed -i '1i #include <cstdint>\n#include <cstdio>\n#include <ctime>\nextern uint64_t pfcswitch_bench_tx_frames;\nstatic void pfcswitch_bench_noop() {}' scratch/third.cc
  sed -i 's/^\(\s*\)Simulator::Run();/\1struct timespec bench_t0, bench_t1;\n\1clock_gettime(CLOCK_MONOTONIC, \&bench_t0);\n&\n\1clock_gettime(CLOCK_MONOTONIC, \&bench_t1);\n\1fprintf(stderr, "bench: event loop %.3f s wall, simulated to %.9f s, %u events scheduled, %lu frames sent\\n", (bench_t1.tv_sec - bench_t0.tv_sec) + (bench_t1.tv_nsec - bench_t0.tv_nsec) * 1e-9, Simulator::Now().GetSeconds(), Simulator::ScheduleNow(\&pfcswitch_bench_noop).GetUid(), (unsigned long)pfcswitch_bench_tx_frames);/' scratch/third.cc
  # nhop is read only when a pad per record is asked for (HPCC's runs, whose frames carry the INT
  # header): ns-3 stores a packet's payload as a virtual zero area, so in a frame without INT
  # byte 88 lies past the bytes its buffer holds (read so, DCTCP's run crashed on a page's edge).
  sed -i '1i #include <cstdlib>\nstatic unsigned pfcswitch_bench_pad(const unsigned char *frame, unsigned size) { static const char *data = getenv("HPCC_WIRE_PAD"), *ack = getenv("HPCC_WIRE_PAD_ACK"), *per_hop = getenv("HPCC_WIRE_PAD_PER_HOP"); unsigned hops = 0, pad = 0, at = 0; if (size <= 14 + 9) return 0; if (frame[14 + 9] == 0x11 \&\& data) { pad = atoi(data); at = 88; } else if ((frame[14 + 9] == 0xFC || frame[14 + 9] == 0xFD) \&\& ack) { pad = atoi(ack); at = 86; } if (per_hop \&\& atoi(per_hop) \&\& at \&\& size > at + 1) hops = frame[at] | frame[at + 1] << 8; return pad + (per_hop ? atoi(per_hop) * hops : 0); }' \
    src/point-to-point/model/qbb-net-device.cc
  sed -i 's/m_bps\.CalculateTxTime(p->GetSize())/m_bps.CalculateTxTime(p->GetSize() + pfcswitch_bench_pad(p->GetBuffer(), p->GetSize()))/' \
    src/point-to-point/model/qbb-net-device.cc
  grep -q pfcswitch_bench_tx_frames src/point-to-point/model/qbb-net-device.cc
  grep -q 'p->GetSize() + pfcswitch_bench_pad' src/point-to-point/model/qbb-net-device.cc
  grep -q HPCC_ECMP_SALT src/point-to-point/model/switch-node.cc
  grep -q 'bench: event loop' scratch/third.cc
}

if [ ! -x "$THIRD" ] || [ "$(cat "$NS3DIR/.pfcswitch-edits" 2>/dev/null)" != "$EDITS" ]; then
  echo "bench-hpcc.sh: building HPCC's ns-3 ($commit) in $NS3DIR"
  rm -rf "$NS3DIR" && mkdir -p "$NS3DIR"
  cp -a "$HPCC/." "$NS3DIR/"
  # A build the user made in the checkout (with Python 2 and its own paths) is not ours.
  rm -rf "$NS3DIR/build" "$NS3DIR"/.waf-* "$NS3DIR"/.waf3-* "$NS3DIR"/.lock-waf*
  (
    cd "$NS3DIR"
    fix_waf_for_python3
    instrument
    quiet
    # The authors' optimized profile (-O3 -g -march=native, no logging or asserts), only the
    # modules scratch/third.cc needs.
    nice -n 19 "$PY" waf configure -d optimized --disable-python --disable-examples --disable-tests \
      --enable-modules=applications,point-to-point,internet,network,core >configure.log 2>&1 ||
      { tail -20 configure.log >&2; exit 1; }
    quiet
    nice -n 19 "$PY" waf build -j2 >build.log 2>&1 || { grep -m20 -A3 'error' build.log >&2; exit 1; }
  )
  echo "$EDITS" >"$NS3DIR/.pfcswitch-edits"
fi

quiet
nice -n 19 cargo build --release --locked -p pfcswitch
PFC=$TARGET/release/pfcswitch

stop=$("$PY" -c "print('%.6f' % (2 + ($FLOWS_MS + $DRAIN_MS) / 1000))")
mkdir -p "$OUT"
incast=()
[ "$INCAST" = 0 ] || incast=(--incast)
"$PFC" hpcc fat-tree -o "$OUT/fat.txt" >/dev/null
"$PFC" hpcc traffic-gen -c hadoop -n 320 -l "$LOAD" -b 100G -t "$("$PY" -c "print($FLOWS_MS / 1000)")" \
  -o "$OUT/flow.txt" --seed "$SEED" "${incast[@]}" | tee "$OUT/traffic-gen.txt"

# One side's run in DIR: ns-3 in DIR/mix/ as run.py lays it out, or ours from the same config.
run_ns3() { # DIR SALT
  local dir=$1
  rm -rf "$dir" && mkdir -p "$dir/mix"
  ln -s "$OUT/fat.txt" "$dir/mix/fat.txt"
  ln -s "$OUT/flow.txt" "$dir/mix/flow.txt"
  echo 0 >"$dir/mix/trace.txt" # no node traced (ENABLE_TRACE is 0 in every preset)
  cp "$2" "$dir/mix/config.txt"
  quiet
  (cd "$dir" && HPCC_ECMP_SALT=$3 HPCC_WIRE_PAD=$NS3_WIRE_PAD \
    HPCC_WIRE_PAD_ACK=$NS3_WIRE_PAD_ACK HPCC_WIRE_PAD_PER_HOP=$NS3_WIRE_PAD_PER_HOP LD_LIBRARY_PATH=$NS3DIR/build /usr/bin/time -v -o time.txt \
    nice -n 19 "$THIRD" mix/config.txt >log.txt 2>&1) || { tail -20 "$dir/log.txt" >&2; exit 1; }
}

# run.py itself, on Python 3: its Python 2 integer divisions (of the link rate) made `//`, its
# print statement a function, and its os.system (./waf --run) printed instead of run.
RUNPY=$OUT/run-py3.py
sed -e 's#\([0-9a-z_)]\) \?/ \?\([0-9]\+\)\([^.0-9]\|$\)#\1 // \2\3#g' -e 's/os\.system(/print(/' \
  "$NS3DIR/run.py" | expand -i -t 8 >"$RUNPY"
"$PY" -W ignore -m lib2to3 -w -n -f print "$RUNPY" >/dev/null 2>&1

echo "bench-hpcc: $(date -u +%FT%TZ), commit $(git rev-parse --short HEAD), HPCC $commit, $(nproc) cores"
[ "$NS3_WIRE_PAD$NS3_WIRE_PAD_ACK$NS3_WIRE_PAD_PER_HOP" = 000 ] ||
  echo "ns-3's data frames take $NS3_WIRE_PAD bytes longer to send, its ACKs $NS3_WIRE_PAD_ACK, and both $NS3_WIRE_PAD_PER_HOP more per INT record (NS3_WIRE_PAD, NS3_WIRE_PAD_ACK, NS3_WIRE_PAD_PER_HOP)"
for cc in $CCS; do
  case $cc in
    hpcc) preset=hp ;;
    dcqcn) preset=dcqcn ;;
    dctcp) preset=dctcp ;;
    timely) preset=timely ;;
    dcqcn-w) preset=dcqcn_vwin ;;
    timely-w) preset=timely_vwin ;;
    *) echo "bench-hpcc.sh: no run.py preset for $cc" >&2; exit 2 ;;
  esac
  run=$OUT/$cc
  rm -rf "$run" && mkdir -p "$run"
  # run.py writes the config (mix/config_fat_flow_<cc>.txt); both sides run it, with the stop time.
  mkdir -p "$run/run.py/mix"
  (cd "$run/run.py" && "$PY" "$RUNPY" --cc "$preset" --bw 100 --topo fat --trace flow >/dev/null)
  written=("$run"/run.py/mix/config_*.txt)
  if [ "${#written[@]}" -ne 1 ] || [ ! -f "${written[0]}" ]; then
    echo "bench-hpcc.sh: run.py wrote no config" >&2
    exit 1
  fi
  # The check that `pfcswitch hpcc preset` (what `pfcswitch hpcc fig11` runs) is run.py's.
  "$PFC" hpcc preset "$preset" --bw 100 --topo fat --trace flow >"$run/preset.txt"
  if cmp -s "${written[0]}" "$run/preset.txt"; then preset_check="pfcswitch hpcc preset: the same bytes"
  else preset_check="pfcswitch hpcc preset DIFFERS: diff $run/preset.txt ${written[0]}"; fi
  sed "s/^SIMULATOR_STOP_TIME .*/SIMULATOR_STOP_TIME $stop/" "${written[0]}" >"$run/config.txt"

  run_ns3 "$run/ns3" "$run/config.txt" 0
  # Ours: the same config.txt, imported from where ns-3 ran (it names mix/fat.txt and mix/flow.txt).
  (cd "$run/ns3" && "$PFC" hpcc import mix/config.txt -o "$run/ours" >"$run/import.txt" 2>&1) ||
    { cat "$run/import.txt" >&2; exit 1; }
  quiet
  /usr/bin/time -v -o "$run/ours/time.txt" nice -n 19 "$PFC" scenario simulate "$run/ours/scenario.toml" \
    --out "$run/ours/run" >"$run/ours/log.txt" 2>&1 || { tail -20 "$run/ours/log.txt" >&2; exit 1; }
  if [ "$OTHER_PATHS" != 0 ]; then
    run_ns3 "$run/ns3-salt" "$run/config.txt" "$SALT"
  fi
  echo
  echo "== $cc (run.py --cc $preset --bw 100): FB_Hadoop at $LOAD, ${FLOWS_MS} ms of flows, stop at ${stop} s, seed $SEED, incast $INCAST =="
  echo "run.py's config.txt against $preset_check"
  "$PY" "$REPO/bench/hpcc/compare.py" --pfcswitch "$PFC" --step "$STEP" "$run"
done
