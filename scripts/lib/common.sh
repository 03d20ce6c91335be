# shellcheck shell=bash
# Sourced by the scripts in scripts/: what several of them do alike.

# install_missing SCRIPT PACKAGE...: installs the Debian packages of the list that are not
# installed yet (apt-get, without recommends); as another user than root, says which are
# missing and exits. SCRIPT names the caller in its messages.
install_missing() {
  local script=$1 package
  local missing=()
  shift
  for package in "$@"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
  done
  [ "${#missing[@]}" -gt 0 ] || return 0
  [ "$(id -u)" -eq 0 ] || { echo "$script: run as root to install ${missing[*]}" >&2; exit 1; }
  echo "$script: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
}

# Another user's timing runs hold /tmp/quiet.lock; heavy steps wait for it.
quiet() { while [ -e /tmp/quiet.lock ]; do sleep 20; done; }
