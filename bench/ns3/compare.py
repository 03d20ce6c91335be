#!/usr/bin/env python3
"""Prints pfcswitch's simulator and ns-3 side by side for one run of scripts/bench-ns3.sh:
speed (wall time per simulated second, events and packet-hops per second, peak memory) and
FCT slowdown by flow size with one definition for both.

Slowdown: a flow's FCT over pfcswitch's ideal FCT of that flow (results.json `ideal_fct_ms`:
alone on the idle fabric, docs/experiments.md), the same divisor for both simulators. Bins:
the flows of the flow list sorted by size, 20 bins of 5 % of their number, a bin running on
to the last flow of its largest size (lab/src/scenario/slowdown.rs); percentiles by rank
ceil(n·q) (lab/src/stats.rs). A flow unfinished in either simulator is counted, not binned.

A p50 ratio off by more than 25 % is marked `*` if the two medians' 95 % intervals
(distribution-free: order statistics of the binomial) do not overlap, `~` if they do (chance
alone can make it). A bin's p99 is its largest flow or nearly (rank ceil(0.99·n) of 30-50
flows): no interval, a `*` at 25 %.

With DIR/ns3-salt/fcts.txt (ns-3 again, the same flows on other ECMP paths) the table adds
ns-3 against itself per bin: how far the path draw alone moves a bin, the yardstick for the
ours/ns-3 ratios beside it.

Usage: compare.py DIR   (DIR holds ours/results.json, ours/flows.txt, ours.rss, ns3/fcts.txt,
ns3/stats.txt, ns3.rss, and optionally ns3-salt/fcts.txt, as the script writes them)
"""

import json
import math
import sys
from pathlib import Path

BINS = 20
WARN_RATIO = 0.25


def quantile(values, q):
    rank = min(max(math.ceil(len(values) * q), 1), len(values))
    return values[rank - 1]


def median_interval(values):
    """The 95 % interval of the median of sorted `values`: [x_(r), x_(n+1-r)] with the largest r
    for which P(Binomial(n, 1/2) <= r - 1) <= 2.5 %."""
    n, below, r = len(values), 0.0, 1
    for k in range(n):
        below += math.comb(n, k) / 2**n
        if below > 0.025:
            break
        r = k + 1
    r = min(r, (n + 1) // 2)
    return values[r - 1], values[n - r]


def read_flows(path):
    """(connection, message) → size, in the list's order."""
    flows = []
    for line in path.read_text().splitlines():
        if line and not line.startswith("#"):
            connection, message, _sender, _receiver, size, _start = map(int, line.split())
            flows.append(((connection, message), size))
    return flows


def read_ns3(path):
    fcts = {}
    for line in path.read_text().splitlines():
        if line and not line.startswith("#"):
            connection, message, fct = line.split()
            fcts[(int(connection), int(message))] = None if fct == "-" else int(fct) / 1e9
    return fcts


def read_stats(path):
    """ns-3's closing line: `... simulated_seconds S wall_seconds W events E packet_hops P drops D marks M`."""
    words = path.read_text().split()
    keys = ("simulated_seconds", "wall_seconds", "events", "packet_hops", "drops", "marks")
    return {key: float(words[words.index(key) + 1]) for key in keys}


def switch_counts(results):
    """Segments our switches dropped for want of room (not the hosts' flooded announcements,
    `filtered`) and marked CE."""
    drops = marks = 0
    for switch in results["switches"]:
        for port in switch["snapshot"]["ports"]:
            for priority in port["priorities"]:
                drops += sum(n for reason, n in priority["drops"].items() if reason in ("egress_full", "ingress_max", "no_buffer"))
                marks += priority["ecn_marked"]
    return drops, marks


def bins_of(flows):
    """Index ranges of the size bins over `flows` sorted by size."""
    n, ranges, start = len(flows), [], 0
    for i in range(BINS):
        end = max((i + 1) * n // BINS, start)
        while start < end < n and flows[end][1] == flows[end - 1][1]:
            end += 1
        if end > start:
            ranges.append((start, end))
        start = end
    return ranges


def size(b):
    return f"{b / 1e6:.1f} MB" if b >= 1e6 else f"{b / 1e3:.1f} KB" if b >= 1e3 else f"{b} B"


def main():
    run = Path(sys.argv[1])
    results = json.loads((run / "ours/results.json").read_text())
    ours, ideal = {}, {}
    for m in results["messages"]:
        key = (m["flow"], m["id"])
        ideal[key] = m["ideal_fct_ms"] / 1e3
        ours[key] = None if m["fct_ms"] is None else m["fct_ms"] / 1e3
    ns3 = read_ns3(run / "ns3/fcts.txt")
    flows = sorted(read_flows(run / "ours/flows.txt"), key=lambda f: f[1])
    missing = [key for key, _ in flows if key not in ns3 or key not in ours]
    if missing:
        sys.exit(f"compare.py: {len(missing)} flows of the list are missing from a result, e.g. {missing[0]}")

    sim, stats = results["simulator"], read_stats(run / "ns3/stats.txt")
    rss = {name: int((run / f"{name}.rss").read_text().split()[0]) / 1024 for name in ("ours", "ns3")}
    speed = {
        "ours": (sim["simulated_seconds"], sim["wall_seconds"], sim["events"], sim["frame_hops"]),
        "ns3": (stats["simulated_seconds"], stats["wall_seconds"], stats["events"], stats["packet_hops"]),
    }
    print(f"{len(flows)} flows; pfcswitch's offered load {results['summary']['offered_load']}")
    print(f"{'':34}{'pfcswitch':>14}{'ns-3':>14}{'ns-3/ours':>11}")
    rows = [
        ("simulated s", lambda s: s[0], "{:.4f}"),
        ("wall s (event loop)", lambda s: s[1], "{:.2f}"),
        ("wall s per simulated s", lambda s: s[1] / s[0], "{:.1f}"),
        ("events", lambda s: s[2], "{:,.0f}"),
        ("events per wall s", lambda s: s[2] / s[1], "{:,.0f}"),
        ("packet-hops", lambda s: s[3], "{:,.0f}"),
        ("packet-hops per wall s", lambda s: s[3] / s[1], "{:,.0f}"),
    ]
    for label, value, form in rows:
        a, b = value(speed["ours"]), value(speed["ns3"])
        print(f"{label:34}{form.format(a):>14}{form.format(b):>14}{b / a:>11.2f}")
    print(f"{'peak RSS MiB (whole process)':34}{rss['ours']:>14.0f}{rss['ns3']:>14.0f}{rss['ns3'] / rss['ours']:>11.2f}")
    drops, marks = switch_counts(results)
    print(f"{'queue drops':34}{drops:>14,}{stats['drops']:>14,.0f}")
    print(f"{'CE marks':34}{marks:>14,}{stats['marks']:>14,.0f}")
    ratio = (speed["ns3"][1] / speed["ns3"][0]) / (speed["ours"][1] / speed["ours"][0])
    print(f"speed: pfcswitch's simulator is {ratio:.1f}x as fast as ns-3 per simulated second")

    unfinished = {name: sum(1 for key, _ in flows if fcts[key] is None) for name, fcts in (("ours", ours), ("ns3", ns3))}
    salted_path = run / "ns3-salt/fcts.txt"
    salted = read_ns3(salted_path) if salted_path.exists() else None
    print(f"unfinished flows: pfcswitch {unfinished['ours']}, ns-3 {unfinished['ns3']}")
    header = f"\n{'flows (%)':>10} {'sizes':>22} {'n':>5} | {'p50 ours':>9} {'p50 ns-3':>9} {'ratio':>6} | {'p99 ours':>9} {'p99 ns-3':>9} {'ratio':>6}"
    print(header + (f" | {'ns-3/ns-3 other paths p50':>26} {'p99':>5}" if salted else ""))

    def slowdowns(fcts, keys):
        return sorted(fcts[k] / ideal[k] for k in keys if fcts.get(k) is not None)

    def at(fcts, keys, q):
        values = slowdowns(fcts, keys)
        return quantile(values, q) if values else float("nan")

    def median_cell(keys, a, b):
        """Ours against ns-3's p50, `~` where their intervals overlap."""
        ratio = at(a, keys, 0.5) / at(b, keys, 0.5)
        if abs(ratio - 1) <= WARN_RATIO:
            return f"{ratio:>5.2f} "
        (lo_a, hi_a), (lo_b, hi_b) = median_interval(slowdowns(a, keys)), median_interval(slowdowns(b, keys))
        return f"{ratio:>5.2f}{'~' if lo_a <= hi_b and lo_b <= hi_a else '*'}"

    def cell(ratio):
        return f"{ratio:>5.2f}{'*' if abs(ratio - 1) > WARN_RATIO else ' '}"

    for start, end in bins_of(flows):
        keys = [key for key, _ in flows[start:end]]
        cells = [f"{at(ours, keys, 0.5):>9.2f} {at(ns3, keys, 0.5):>9.2f} {median_cell(keys, ours, ns3)}"]
        a, b = at(ours, keys, 0.99), at(ns3, keys, 0.99)
        cells.append(f"{a:>9.2f} {b:>9.2f} {cell(a / b)}")
        sizes = f"{size(flows[start][1])} - {size(flows[end - 1][1])}"
        line = f"{start * 100 // len(flows):>4}-{end * 100 // len(flows):<5} {sizes:>22} {end - start:>5} | {cells[0]} | {cells[1]}"
        if salted:
            line += f" | {median_cell(keys, ns3, salted):>26} {cell(at(ns3, keys, 0.99) / at(salted, keys, 0.99))}"
        print(line)
    every = [key for key, _ in flows]
    line = f"{'all':>10} {'':>22} {len(every):>5} | {at(ours, every, 0.5):>9.2f} {at(ns3, every, 0.5):>9.2f} {median_cell(every, ours, ns3)} | {at(ours, every, 0.99):>9.2f} {at(ns3, every, 0.99):>9.2f} {cell(at(ours, every, 0.99) / at(ns3, every, 0.99))}"
    if salted:
        line += f" | {median_cell(every, ns3, salted):>26} {cell(at(ns3, every, 0.99) / at(salted, every, 0.99))}"
    print(line)
    print("ratio = ours / ns-3; over 25 % apart: * (p50: their 95 % intervals apart too), ~ (p50: intervals overlap)")


if __name__ == "__main__":
    main()
