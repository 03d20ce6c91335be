#!/usr/bin/env bash
# Installs what pfcswitch needs on Debian 12, builds it, and installs the binaries into
# /usr/local/bin and the systemd unit into /etc/systemd/system. Idempotent: packages already
# present are not reinstalled, cargo rebuilds only what changed, files are replaced.
set -euo pipefail
cd "$(dirname "$0")/.."

[ "$(id -u)" -eq 0 ] || { echo "setup.sh: run as root (apt, network namespaces, XDP)" >&2; exit 1; }

PACKAGES=(
  ca-certificates curl build-essential pkg-config   # toolchain bootstrap
  clang llvm libbpf-dev linux-libc-dev              # the C XDP programs (clang -target bpf)
  libxdp-dev                                        # the benchmark's reference forwarder (bench/libxdp-forward.c)
  linux-perf                                        # the benchmark's profiles (PROFILE=DIR)
  iproute2 ethtool iputils-ping iperf3              # namespaces, veth, real traffic
  tcpdump tshark                                    # captures and the Wireshark oracle
  python3 python3-scapy                             # the scapy oracle
  python3-prometheus-client                         # its OpenMetrics parser, an oracle of the endpoint
  prometheus                                        # promtool, to lint the metrics endpoint
  jq fonts-dejavu-core
)

# shellcheck source=scripts/lib/common.sh
. scripts/lib/common.sh
install_missing setup.sh "${PACKAGES[@]}"

# Rust: Debian 12's rustc is too old; use rustup's toolchain (the version Cargo.toml names).
if ! command -v cargo >/dev/null 2>&1; then
  [ -f "$HOME/.cargo/env" ] && . "$HOME/.cargo/env"
fi
if ! command -v cargo >/dev/null 2>&1; then
  echo "setup.sh: installing Rust 1.95 with rustup"
  curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs |
    sh -s -- -y --profile minimal --default-toolchain 1.95.0 -c clippy,rustfmt
  . "$HOME/.cargo/env"
fi

cargo build --release --locked --workspace --bins
install -m 0755 target/release/pfcswitchd target/release/pfcswitch /usr/local/bin/
install -m 0644 configs/pfcswitchd@.service /etc/systemd/system/
mkdir -p /etc/pfcswitch
if [ -d /run/systemd/system ]; then systemctl daemon-reload; fi
