#!/usr/bin/env bash
# Installs the Debian packages sendat builds, runs and tests with (Debian 12 bookworm).
set -euo pipefail
pkgs=(build-essential cmake pkg-config git
      libnats-dev protobuf-c-compiler libprotobuf-c-dev libcurl4-openssl-dev libsodium-dev
      libjansson-dev libmicrohttpd-dev libcmocka-dev libicu-dev
      nats-server python3 python3-aiosmtpd python3-yaml python3-jsonschema curl
      clang libclang-rt-14-dev clang-format chromium
      debhelper lintian debootstrap) # fuzz/run.sh, style.sh; chromium: tests/console; the last
                                     # three: deploy/package.sh and tests/deploy/run.sh
# tests/openapi runs Redocly CLI through npx; a Node.js that brings its own npm stays as it is
command -v npx >/dev/null 2>&1 || pkgs+=(nodejs npm)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
$SUDO apt-get update -qq
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
