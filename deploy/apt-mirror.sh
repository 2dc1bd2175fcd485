#!/usr/bin/env bash
# Prints the Debian archive the system's apt uses: the first http(s) URI ending in /debian in
# /etc/apt/sources.list, /etc/apt/sources.list.d/*.list (one-line format) or *.sources (deb822),
# comments skipped. The repository names no mirror of its own: with none configured this fails
# and says so. SENDAT_DEBIAN_MIRROR=URL overrides it.
#
#   mirror=$(bash deploy/apt-mirror.sh) || exit 1
set -euo pipefail
if [ -n "${SENDAT_DEBIAN_MIRROR:-}" ]; then
  echo "${SENDAT_DEBIAN_MIRROR%/}"
  exit 0
fi
dir=${SENDAT_APT_DIR:-/etc/apt} # another apt configuration folder, for the tests of this script
m=$(cat "$dir"/sources.list "$dir"/sources.list.d/*.list "$dir"/sources.list.d/*.sources \
      2>/dev/null | grep -v '^\s*#' | grep -oE 'https?://[^ ]*/debian/?( |$)' | head -n 1 |
      tr -d ' ') || true
if [ -z "$m" ]; then
  echo "apt-mirror.sh: no Debian archive in $dir/sources.list or $dir/sources.list.d/" \
       "(configure apt's sources, or set SENDAT_DEBIAN_MIRROR=URL)" >&2
  exit 1
fi
echo "${m%/}"
