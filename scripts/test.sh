#!/usr/bin/env bash
# Runs every pfcswitch test: formatting and lints, unit and property tests of the core,
# the tshark and scapy oracle tests, and the integration tests in network namespaces
# (XDP, AF_PACKET). Needs root; installs what it needs first (scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
command -v cargo >/dev/null 2>&1 || . "$HOME/.cargo/env"

echo "== layout (crates by concern, no import circle; docs/architecture.md)"
python3 scripts/check-layout.py

echo "== format and lints"
cargo fmt --all -- --check
cargo clippy --locked --workspace --all-targets -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc --locked --workspace --no-deps --quiet

echo "== fuzz targets compile"
cargo check --locked --manifest-path wire/fuzz/Cargo.toml --quiet

echo "== tests (unit, property, oracle, namespace integration)"
# The namespace tests run the release binaries setup.sh just built (target/release).
cargo test --locked --workspace --all-targets
