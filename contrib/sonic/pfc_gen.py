#!/usr/bin/env python3
"""A drop-in for sonic-mgmt's pfc_gen.py on a fanout: the same command line, run by
`pfcswitch traffic storm`, which sends without the gaps a Python loop leaves.

sonic-mgmt's templates start pfc_gen as `python pfc_gen.py -p BITMAP -t 65535 -n COUNT -i IFACE
[-r SYSLOG]` and stop it with `pkill -f 'python pfc_gen.py -p ...'`: point `pfc_gen_file` at
this file and both work unchanged. This process keeps pfc_gen's command line for pkill,
passes the options on, and hands SIGTERM and SIGINT to the storm, which stops and reports.
The storm's binary: $PFCSWITCH, else `pfcswitch` on PATH. See docs/pfc-watchdog.md.
"""
import os
import signal
import subprocess
import sys


def main():
    binary = os.environ.get("PFCSWITCH", "pfcswitch")
    storm = subprocess.Popen([binary, "traffic", "storm", *sys.argv[1:]])

    def forward(signum, _frame):
        storm.send_signal(signum)

    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, forward)
    while True:
        try:
            sys.exit(storm.wait())
        except InterruptedError:
            continue


if __name__ == "__main__":
    main()
