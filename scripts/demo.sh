#!/usr/bin/env bash
# The README's demo: the `incast` scenario on the built-in star3 topology. Three hosts on one
# pfcswitchd (AF_XDP, 100 Mbit/s ports, PFC on priority 3); h1 and h2 answer h3's queries at
# once (2:1 incast) while h1 streams to h2 on lossy priority 0. Ends with the FCT, flow and
# switch tables and the paths of results.json and the plots; everything is torn down.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
exec /usr/local/bin/pfcswitch scenario run incast --seed "${SEED:-1}" "$@"
