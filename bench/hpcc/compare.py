#!/usr/bin/env python3
"""Prints one congestion control's run of scripts/bench-hpcc.sh: pfcswitch's simulator beside
HPCC's ns-3 (scratch/third) on the same topology.txt, flow.txt and config.txt.

Speed: wall seconds of the event loop per simulated second of the flows' span (SIMULATOR_STOP_TIME
less the 2 s before traffic_gen.py's flows, on both sides: ns-3 has nothing to do before 2 s, ours
spends a cheap 10 ms lead-in on the hosts' announcements); frames put on a wire (packet-hops) and
events per wall second; peak RSS, and user + system CPU seconds, of the whole process
(/usr/bin/time -v: setup and output included, but not the time another process takes the core,
which wall time counts on a shared machine). ns-3 tells neither
count: the script's build adds a counter of frames whose transmission starts
(QbbNetDevice::TransmitStart: data, ACKs, CNPs and PFC frames) and reads the number of events
scheduled (the uid of one more event scheduled after the run), an upper bound on those executed
(it counts cancelled ones too).

Slowdown: HPCC's analysis/fct_analysis.py's table (`pfcswitch hpcc fct-analysis`, its port, byte
for byte), traffic_gen.py's flows (dport 100), per --step percent of each file's finished flows:
the bin's largest size (from ours), and p50, p95, p99 slowdown on each side, ours over ns-3, and
ns-3 over itself with another ECMP salt (the yardstick: how far the path draw alone moves a bin).

Usage: compare.py [--pfcswitch BIN] [--step N] DIR   (DIR: ours/, ns3/ and optionally ns3-salt/ as
the script writes them)
"""

import argparse
import glob
import re
import subprocess
import sys
from pathlib import Path

FLOWS_START_S = 2.0  # traffic_gen.py's flows begin at 2 s


def rss_mib(time_txt):
    match = re.search(r"Maximum resident set size \(kbytes\): (\d+)", time_txt.read_text())
    return int(match.group(1)) / 1024 if match else float("nan")


def cpu_seconds(time_txt):
    """User + system CPU seconds of the whole process (setup and output included)."""
    text = time_txt.read_text()
    user = re.search(r"User time \(seconds\): ([\d.]+)", text)
    system = re.search(r"System time \(seconds\): ([\d.]+)", text)
    return float(user.group(1)) + float(system.group(1)) if user and system else float("nan")


def config_stop(config):
    match = re.search(r"^SIMULATOR_STOP_TIME (\S+)", config.read_text(), re.M)
    return float(match.group(1))


def ns3_side(side):
    """wall s, simulated s, events, frames, rss MiB, fct.txt of one ns-3 run."""
    log = (side / "log.txt").read_text()
    match = re.search(
        r"bench: event loop ([\d.]+) s wall, simulated to ([\d.]+) s, (\d+) events scheduled, (\d+) frames sent",
        log,
    )
    if not match:
        sys.exit(f"compare.py: no 'bench:' line in {side / 'log.txt'}")
    wall, until, events, frames = float(match[1]), float(match[2]), int(match[3]), int(match[4])
    fcts = glob.glob(str(side / "mix" / "fct_*.txt"))
    if len(fcts) != 1:
        sys.exit(f"compare.py: expected one mix/fct_*.txt in {side}, found {fcts}")
    return {
        "wall": wall,
        "simulated": until - FLOWS_START_S,
        "events": events,
        "frames": frames,
        "rss": rss_mib(side / "time.txt"),
        "cpu": cpu_seconds(side / "time.txt"),
        "fct": Path(fcts[0]),
        "pfc": Path(fcts[0]).with_name(Path(fcts[0]).name.replace("fct_", "pfc_", 1)),
    }


def ours_side(side, stop):
    log = (side / "log.txt").read_text()
    match = re.search(
        r"simulated ([\d.]+) s in ([\d.]+) s of wall time: (\d+) frame-hops \([\d.]+ M/s\), (\d+) events", log
    )
    if not match:
        sys.exit(f"compare.py: no 'simulated … s in … s' line in {side / 'log.txt'}")
    return {
        "wall": float(match[2]),
        "simulated": stop - FLOWS_START_S,
        "events": int(match[4]),
        "frames": int(match[3]),
        "rss": rss_mib(side / "time.txt"),
        "cpu": cpu_seconds(side / "time.txt"),
        "fct": side / "run" / "fct.txt",
        "pfc": side / "run" / "pfc.txt",
    }


def finished(fct):
    """Flows in an fct.txt: every flow that finished, traffic_gen.py's and the incast's."""
    return sum(1 for line in fct.read_text().splitlines() if line.strip())


def lines(path):
    return sum(1 for line in path.read_text().splitlines() if line.strip()) if path.exists() else -1


def table(pfcswitch, step, files):
    """Rows of (bin start, size, [(p50, p95, p99) per file])."""
    out = subprocess.run(
        [pfcswitch, "hpcc", "fct-analysis", "--step", str(step), *map(str, files)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    rows = []
    for line in out.splitlines():
        cols = line.split()
        values = list(map(float, cols[2:]))
        rows.append((float(cols[0]), int(cols[1]), [values[i : i + 3] for i in range(0, len(values), 3)]))
    return rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pfcswitch", default="target/release/pfcswitch")
    parser.add_argument("--step", type=int, default=10)
    parser.add_argument("dir", type=Path)
    args = parser.parse_args()
    run = args.dir
    stop = config_stop(run / "config.txt")
    sides = {"ours": ours_side(run / "ours", stop), "ns-3": ns3_side(run / "ns3")}
    salt = run / "ns3-salt"
    if (salt / "log.txt").exists():
        sides["ns-3 salt"] = ns3_side(salt)

    flows = int((run / "ns3" / "mix" / "flow.txt").read_text().split()[0])
    print(f"{'':34}" + "".join(f"{name:>14}" for name in sides) + f"{'ns-3 / ours':>14}")

    def row(label, values, fmt, ratio=True):
        cells = "".join(f"{v:>14{fmt}}" for v in values)
        tail = f"{values[1] / values[0]:>14.2f}" if ratio and values[0] else ""
        print(f"{label:34}{cells}{tail}")

    s = list(sides.values())
    row(f"flows finished (of {flows})", [finished(x["fct"]) for x in s], "d", ratio=False)
    row("pfc.txt lines (pauses, resumes)", [lines(x["pfc"]) for x in s], "d", ratio=False)
    row("simulated s (flows' span)", [x["simulated"] for x in s], ".4f", ratio=False)
    row("wall s in the event loop", [x["wall"] for x in s], ".1f")
    row("wall s per simulated s", [x["wall"] / x["simulated"] for x in s], ",.0f")
    row("CPU s, whole process", [x["cpu"] for x in s], ".1f")
    row("CPU s per simulated s", [x["cpu"] / x["simulated"] for x in s], ",.0f")
    row("packet-hops (frames sent)", [x["frames"] for x in s], ",d")
    row("packet-hops per wall s (M)", [x["frames"] / x["wall"] / 1e6 for x in s], ".3f")
    row("events (ns-3: scheduled) (M)", [x["events"] / 1e6 for x in s], ".2f")
    row("events per wall s (M)", [x["events"] / x["wall"] / 1e6 for x in s], ".3f")
    row("peak RSS (MiB)", [x["rss"] for x in s], ".0f")

    files = [x["fct"] for x in s]
    rows = table(args.pfcswitch, args.step, files)
    print()
    head = f"{'bin':>5} {'size ≤':>10} | {'p50 ours':>8} {'ns-3':>7} {'ratio':>6} | {'p95 ours':>8} {'ns-3':>7} {'ratio':>6} | {'p99 ours':>8} {'ns-3':>7} {'ratio':>6}"
    if len(files) > 2:
        head += " | ns-3 salt/ns-3 p50   p95   p99"
    print(head)
    for start, size, groups in rows:
        line = f"{start:>5.2f} {size:>10,d}"
        for q in range(3):
            ours, ns3 = groups[0][q], groups[1][q]
            line += f" | {ours:>8.3f} {ns3:>7.3f} {ours / ns3:>6.2f}"
        if len(groups) > 2:
            line += " |                 " + " ".join(f"{groups[2][q] / groups[1][q]:>5.2f}" for q in range(3))
        print(line)
    print("ratio = ours / ns-3; slowdown = FCT / HPCC's standalone FCT (fct.txt's last column)")


if __name__ == "__main__":
    main()
