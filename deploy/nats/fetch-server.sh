#!/usr/bin/env bash
# Fetches the current nats-server that sendat is also tested on, without installing it: the one
# package from Debian's next release (its .deb needs only libc >= 2.34, so it runs on Debian 12),
# read through a private apt configuration (its own sources list, lists and cache under .cache/,
# never the system's apt state), unpacked with dpkg-deb -x into .nats/<upstream version>/.
# Checks the binary's --version against the pin and prints its path on stdout; a second run
# finds it there and downloads nothing.
#
#   bash deploy/nats/fetch-server.sh          # prints e.g. /repo/.nats/2.15.1/usr/sbin/nats-server
#   NATS_SERVER=$(bash deploy/nats/fetch-server.sh) ctest -R it_
#
# The mirror is the one the system's apt uses (deploy/apt-mirror.sh; SENDAT_DEBIAN_MIRROR=URL
# picks another); with none configured it stops and says so.
set -euo pipefail

# The pin: the one place that names the current server's version (Debian's package version as
# the mirror serves it, and the release that has it).
DEB_VERSION=2.15.1-1
DEB_SUITE=forky

version=${DEB_VERSION%%-*}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
dest=$repo/.nats/$version
bin=$dest/usr/sbin/nats-server
apt_dir=$repo/.cache/nats-server/apt

check() { # the unpacked binary answers its --version with the pinned version
  [ -x "$bin" ] && "$bin" --version 2>&1 | grep -qx "nats-server: v$version"
}

if check; then
  echo "$bin"
  exit 0
fi

url=$(bash "$repo/deploy/apt-mirror.sh") || exit 1
mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial" "$apt_dir/parts" "$apt_dir/deb"
: >"$apt_dir/status"
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] ${url%/} $DEB_SUITE main" \
  >"$apt_dir/sources.list"
opts=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o "Dir::Etc::SourceParts=$apt_dir/parts"
      -o "Dir::Etc::Preferences=/dev/null" -o "Dir::Etc::PreferencesParts=$apt_dir/parts"
      -o "Dir::State=$apt_dir" -o "Dir::State::Lists=$apt_dir/lists"
      -o "Dir::State::status=$apt_dir/status" -o "Dir::Cache=$apt_dir"
      -o "Dir::Cache::archives=$apt_dir/archives" -o "APT::Architectures::=amd64"
      -o "Acquire::Languages=none" -o "APT::Sandbox::User=$(id -un)")

cached() { # the downloaded .deb of the pinned version, if there is one
  local f
  for f in "$apt_dir/deb/nats-server_${DEB_VERSION}_"*.deb; do [ -f "$f" ] && echo "$f" && return; done
  return 0
}
deb=$(cached)
if [ -z "$deb" ]; then
  echo "fetch-server.sh: nats-server $DEB_VERSION from $url $DEB_SUITE" >&2
  apt-get "${opts[@]}" -qq update >&2
  served=$(apt-cache "${opts[@]}" policy nats-server | awk '/Candidate:/{print $2}')
  if [ "$served" != "$DEB_VERSION" ]; then
    echo "fetch-server.sh: $url $DEB_SUITE serves nats-server ${served:-(none)}, pinned is" \
         "$DEB_VERSION: change the pin in $0" >&2
    exit 1
  fi
  (cd "$apt_dir/deb" && apt-get "${opts[@]}" -qq download "nats-server=$DEB_VERSION" >&2)
  deb=$(cached)
  [ -n "$deb" ] || { echo "fetch-server.sh: apt-get download left no .deb" >&2; exit 1; }
fi
rm -rf "$dest"
mkdir -p "$dest"
dpkg-deb -x "$deb" "$dest"
if ! check; then
  echo "fetch-server.sh: $bin does not say v$version: $("$bin" --version 2>&1 | head -n 1)" >&2
  exit 1
fi
echo "$bin"
