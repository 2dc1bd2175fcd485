#!/usr/bin/env bash
# Installs the Debian packages named as arguments that are not installed yet (apt-get update
# only then), for the containers and systemd phases. Needs root.
set -euo pipefail
missing=()
for p in "$@"; do
  dpkg-query -W -f '${db:Status-Status}' "$p" 2>/dev/null | grep -qx installed || missing+=("$p")
done
[ ${#missing[@]} -gt 0 ] || exit 0
echo "installing ${missing[*]}"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
