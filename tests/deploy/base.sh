#!/usr/bin/env bash
# The day's Debian 12 base, shared by the deploy phase (a chroot) and the containers phase (a
# podman image): `debootstrap --variant=minbase --include=man-db,systemd,procps bookworm`,
# made once a day and kept as a tarball in SENDAT_DEPLOY_CACHE (default /var/cache/sendat-test;
# the day before's is removed). Prints the tarball's path; the debootstrap log goes to stderr
# when it fails. Needs root.
set -euo pipefail
cd "$(dirname "$0")/../.."
cache=${SENDAT_DEPLOY_CACHE:-/var/cache/sendat-test}
base=$cache/debian-bookworm-$(date -u +%Y%m%d).tar.gz
if [ ! -s "$base" ]; then
  mirror=$(bash deploy/apt-mirror.sh)
  mkdir -p "$cache"
  root=$(mktemp -d "${SENDAT_TEST_TMPDIR:-/tmp}/base-XXXXXX")
  trap 'rm -rf --one-file-system "$root"' EXIT
  echo "base: debootstrap bookworm from $mirror (once a day, cached in $cache)" >&2
  debootstrap --variant=minbase --include=man-db,systemd,procps bookworm "$root/r" "$mirror" \
    >"$root/debootstrap.log" 2>&1 || {
    tail -20 "$root/debootstrap.log" >&2
    echo "base: debootstrap failed" >&2
    exit 1
  }
  rm -f "$cache"/debian-bookworm-*.tar.gz
  tar -C "$root/r" -czf "$base.part" . && mv "$base.part" "$base"
fi
echo "$base"
