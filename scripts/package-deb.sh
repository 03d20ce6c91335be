#!/usr/bin/env bash
# Builds the Debian package of pfcswitch from this checkout: pfcswitchd and pfcswitch, the
# systemd template unit, an example configuration under /etc/pfcswitch (a conffile), the
# topologies, scenarios and workloads the CLI reads, the Prometheus alert rules, the Grafana
# dashboard, the Wireshark Lua dissector, man pages and shell completions rendered from the
# clap definitions. Plain dpkg-deb on a staged tree (no cargo-deb to install); the result is
# reproducible: file times, owners and gzip headers come from the commit (SOURCE_DATE_EPOCH).
#
#   scripts/package-deb.sh [OUT_DIR]     (default: target/debian; prints the .deb's path last)
#
# Needs what scripts/setup.sh installs (it runs it unless PFCSWITCH_SKIP_SETUP=1, for callers
# that just ran it). docs/packaging.md says what goes where and why.
set -euo pipefail
umask 022
cd "$(dirname "$0")/.."
top=$PWD
out=$(realpath -m "${1:-target/debian}")

[ "${PFCSWITCH_SKIP_SETUP:-0}" = 1 ] || scripts/setup.sh >&2
command -v cargo >/dev/null 2>&1 || . "$HOME/.cargo/env"
# The same build as setup.sh (the workspace's features unified the same way), so nothing rebuilds.
cargo build --release --locked --workspace --bins >&2

# Version: the workspace's, then the commit's time and hash, so that every commit's package
# upgrades the one before (0.1.0~git… sorts below a future 0.1.0 release).
crate_version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct)}
stamp=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y%m%d%H%M%S)
version="${crate_version}~git${stamp}.$(git rev-parse --short=7 HEAD)"
[ -z "$(git status --porcelain --untracked-files=no)" ] || version="${version}+dirty"
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root="$stage/pfcswitch"
share="$root/usr/share/pfcswitch"
doc="$root/usr/share/doc/pfcswitch"
release=target/release

install -D -m 0755 "$release/pfcswitch" "$root/usr/bin/pfcswitch"
install -D -m 0755 "$release/pfcswitchd" "$root/usr/sbin/pfcswitchd"
# Debian strips binaries into a -dbgsym package; this package ships them stripped.
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$root/usr/bin/pfcswitch" "$root/usr/sbin/pfcswitchd"

# The unit as the package installs it: binaries in /usr/sbin, documentation in man.
install -d "$root/lib/systemd/system"
sed -e 's|/usr/local/bin/pfcswitchd|/usr/sbin/pfcswitchd|g' \
    -e 's|^Documentation=.*|Documentation=man:pfcswitchd(8) man:pfcswitch(1)|' \
    configs/pfcswitchd@.service >"$root/lib/systemd/system/pfcswitchd@.service"
chmod 0644 "$root/lib/systemd/system/pfcswitchd@.service"

# An example, not a configuration: the unit runs /etc/pfcswitch/NAME.toml for an instance the
# administrator enables, and nothing is enabled by the package.
install -d "$root/etc/pfcswitch"
{
  echo "# An example pfcswitchd configuration (star3's switch: three 100 Mbit/s ports, PFC on"
  echo "# priority 3). To run a switch: copy it to /etc/pfcswitch/NAME.toml, set each port's"
  echo "# iface, check it with \`pfcswitchd --config /etc/pfcswitch/NAME.toml --check\`, then"
  echo "# \`systemctl enable --now pfcswitchd@NAME\`. Every key: /usr/share/doc/pfcswitch/docs/configuration.md."
  echo "#"
  cat configs/default.toml
} >"$root/etc/pfcswitch/example.toml"
chmod 0644 "$root/etc/pfcswitch/example.toml"

# What `pfcswitch topology` and `scenario` read (lab's repository::root finds it beside
# /usr/bin), and the examples every doc refers to.
install -d "$share"
cp -r topologies scenarios workloads configs "$share/"
install -D -m 0644 configs/pfcswitch-alerts.yml "$share/prometheus/pfcswitch-alerts.yml"
install -D -m 0644 configs/pfcswitch-alerts.test.yml "$share/prometheus/pfcswitch-alerts.test.yml"
# The dashboard and its provisioning; render.py, which draws the docs' picture, stays in the
# checkout (it needs matplotlib, which a switch has no use for).
install -D -m 0644 contrib/grafana/pfcswitch.json "$share/grafana/pfcswitch.json"
cp -r contrib/grafana/provisioning "$share/grafana/"

# The fanout shim (docs/pfc-watchdog.md): run as `python3 pfc_gen.py`, as the templates do.
install -D -m 0644 contrib/sonic/pfc_gen.py "$share/sonic/pfc_gen.py"

# Wireshark's global Lua plugin folder on Debian (`tshark -G folders`: "Global Lua Plugins").
install -D -m 0644 contrib/wireshark/pfcswitch.lua "$root/usr/lib/$multiarch/wireshark/plugins/pfcswitch.lua"

# Man pages and completions from the binary's own clap definitions.
"$release/pfcswitch" manpages "$stage/man"
install -d "$root/usr/share/man/man1" "$root/usr/share/man/man8"
for page in "$stage"/man/*.1; do install -m 0644 "$page" "$root/usr/share/man/man1/"; done
install -m 0644 "$stage/man/pfcswitchd.8" "$root/usr/share/man/man8/"
install -d "$root/usr/share/bash-completion/completions" "$root/usr/share/zsh/vendor-completions" \
  "$root/usr/share/fish/vendor_completions.d"
for program in pfcswitch pfcswitchd; do
  "$release/pfcswitch" completions bash --program "$program" >"$root/usr/share/bash-completion/completions/$program"
  "$release/pfcswitch" completions zsh --program "$program" >"$root/usr/share/zsh/vendor-completions/_$program"
  "$release/pfcswitch" completions fish --program "$program" >"$root/usr/share/fish/vendor_completions.d/$program.fish"
done

install -d "$doc"
cp README.md "$doc/"
cp -r docs "$doc/"   # beside the README, so that its links resolve
cat >"$doc/copyright" <<EOF
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: pfcswitch
Source: https://github.com/pfcswitch/pfcswitch

Files: *
Copyright: $(date -u -d "@$SOURCE_DATE_EPOCH" +%Y) The pfcswitch developers
License: MIT or Apache-2.0

License: Apache-2.0
 On Debian systems, the full text of the Apache License, Version 2.0 is in
 /usr/share/common-licenses/Apache-2.0.

License: MIT
 Permission is hereby granted, free of charge, to any person obtaining a copy of this
 software and associated documentation files (the "Software"), to deal in the Software
 without restriction, including without limitation the rights to use, copy, modify, merge,
 publish, distribute, sublicense, and/or sell copies of the Software, and to permit persons
 to whom the Software is furnished to do so, subject to the following conditions:
 .
 The above copyright notice and this permission notice shall be included in all copies or
 substantial portions of the Software.
 .
 THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED,
 INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR
 PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE
 FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR
 OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER
 DEALINGS IN THE SOFTWARE.
EOF
cat >"$stage/changelog" <<EOF
pfcswitch ($version) unstable; urgency=medium

  * Built from commit $(git rev-parse HEAD).

 -- The pfcswitch developers <pfcswitch@users.noreply.github.com>  $(date -u -R -d "@$SOURCE_DATE_EPOCH")
EOF
gzip -9n <"$stage/changelog" >"$doc/changelog.gz"   # a native package's name for it
install -D -m 0644 contrib/debian/lintian-overrides "$root/usr/share/lintian/overrides/pfcswitch"
find "$root/usr/share/man" -type f -exec gzip -9n {} +

# Maintainer scripts and metadata.
install -d "$root/DEBIAN"
install -m 0755 contrib/debian/postinst contrib/debian/prerm contrib/debian/postrm "$root/DEBIAN/"
(cd "$root" && find etc -type f | sed 's|^|/|' | sort) >"$root/DEBIAN/conffiles"
# The shared libraries the binaries link, as dpkg-shlibdeps reads them.
mkdir -p "$stage/shlibs/debian"
printf 'Source: pfcswitch\n\nPackage: pfcswitch\nArchitecture: any\n' >"$stage/shlibs/debian/control"
depends=$(cd "$stage/shlibs" && dpkg-shlibdeps -O "$root/usr/bin/pfcswitch" "$root/usr/sbin/pfcswitchd" 2>/dev/null |
  sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || { echo "package-deb.sh: dpkg-shlibdeps found no dependencies" >&2; exit 1; }
installed_size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
sed -e "s|@VERSION@|$version|" -e "s|@ARCH@|$arch|" -e "s|@DEPENDS@|$depends|" \
    -e "s|@INSTALLED_SIZE@|$installed_size|" contrib/debian/control >"$root/DEBIAN/control"
(cd "$root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | sort -z | xargs -0 md5sum) >"$root/DEBIAN/md5sums"

find "$root" -exec touch --no-dereference -d "@$SOURCE_DATE_EPOCH" {} +
mkdir -p "$out"
deb="$out/pfcswitch_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >&2
echo "$deb"
