#!/usr/bin/env python3
"""HPCC's analysis/fct_analysis.py (github alibaba-edu/High-Precision-Congestion-Control),
ported to Python 3 and nothing else, as the independent reader of fct.txt files: it shares
no code with pfcswitch and runs the same pipeline as the original, awk and sort included.

Usage: fct_analysis.py [-s STEP] [-t 0|1|2] [-T TIME_LIMIT_NS] FCT_FILE...

Each file is one column group (the original's list of CCs). What the port changes, and why:
- files come from the command line instead of a list edited in the script;
- Python 2's integer `/` is `//` and `print` a function;
- `-t 2`'s awk program, which has a syntax error in the original (`{$6+$7<T) {...}}`), is
  written as the pattern it means (`$6+$7<T {...}`);
- sort runs with LC_ALL=C, so equal sizes are ordered by their lines' bytes on every machine.
Everything else is the original's: the filters, awk's number format for the slowdown, the
dropped last line (`split('\\n')[:-2]`), the bins by count and the percentiles by index.
"""
import argparse
import os
import subprocess


def get_pctl(a, p):
    i = int(len(a) * p)
    return a[i]


def flows(path, kind, time_limit):
    dport = {0: "$4==100 && ", 1: "$4==200 && ", 2: ""}[kind]
    program = "{if (" + dport + "$6+$7<" + "%d" % time_limit + ") {slow=$7/$8;print slow<1?1:slow, $5}}"
    env = dict(os.environ, LC_ALL="C")
    with open(path) as f:
        awk = subprocess.run(["awk", program], stdin=f, capture_output=True, check=True, text=True, env=env)
    output = subprocess.run(["sort", "-n", "-k", "2"], input=awk.stdout, capture_output=True, check=True,
                            text=True, env=env).stdout
    return output.split("\n")[:-2]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("files", nargs="+")
    parser.add_argument("-s", dest="step", default="5")
    parser.add_argument("-t", dest="type", type=int, default=0)
    parser.add_argument("-T", dest="time_limit", type=int, default=3000000000)
    args = parser.parse_args()
    step = int(args.step)
    res = [[i / 100.] for i in range(0, 100, step)]
    for path in args.files:
        a = flows(path, args.type, args.time_limit)
        n = len(a)
        for i in range(0, 100, step):
            l = i * n // 100
            r = (i + step) * n // 100
            d = [[float(x.split()[0]), int(x.split()[1])] for x in a[l:r]]
            fct = sorted(x[0] for x in d)
            res[i // step].append(d[-1][1])
            res[i // step].append(get_pctl(fct, 0.5))
            res[i // step].append(get_pctl(fct, 0.95))
            res[i // step].append(get_pctl(fct, 0.99))
    for item in res:
        line = "%.3f %d" % (item[0], item[1])
        i = 1
        for _ in args.files:
            line += "\t%.3f %.3f %.3f" % (item[i + 1], item[i + 2], item[i + 3])
            i += 4
        print(line)


if __name__ == "__main__":
    main()
