#!/usr/bin/env bash
# Builds sendat's Debian package from this tree (committed or not): the tracked and untracked
# (not ignored) files are copied to a temporary folder with deploy/debian as debian/ and the
# systemd units of deploy/systemd, debian/changelog gets the version of CMakeLists.txt's
# project() (the one place it is set), and dpkg-buildpackage builds it with debhelper.
# The .deb files go to OUTDIR (default build-deb/); the last line printed is the package's path.
# usage: bash deploy/package.sh [OUTDIR]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-build-deb}
mkdir -p "$out"
out=$(cd "$out" && pwd)
version=$(sed -n 's/^project(sendat VERSION \([0-9][0-9.]*\).*/\1/p' CMakeLists.txt)
[ -n "$version" ] || { echo "package.sh: no version in CMakeLists.txt's project()" >&2; exit 1; }
for tool in dpkg-buildpackage dh; do
  command -v "$tool" >/dev/null ||
    { echo "package.sh: $tool missing (apt-get install dpkg-dev debhelper)" >&2; exit 1; }
done
work=$(mktemp -d /tmp/sendat-deb-XXXXXX)
trap 'rm -rf "$work"' EXIT
src=$work/sendat-$version
mkdir -p "$src"

if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  git ls-files -z -co --exclude-standard |
    while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
    xargs -0 cp --parents -t "$src"
  stamp=$(git log -1 --format=%ct 2>/dev/null || date +%s)
else
  tar --exclude='./build*' --exclude='./.git' -cf - . | tar -C "$src" -xf -
  stamp=$(date +%s)
fi
rm -rf "$src/debian"
cp -r deploy/debian "$src/debian"
cp deploy/systemd/sendat-serve.service "$src/debian/sendat.sendat-serve.service"
cp deploy/systemd/sendat-consumer@.service "$src/debian/sendat.sendat-consumer@.service"
cat >"$src/debian/changelog" <<END
sendat ($version) unstable; urgency=medium

  * sendat $version, built from this tree by deploy/package.sh.

 -- sendat maintainers <maintainers@sendat.invalid>  $(LC_ALL=C date -u -R -d "@$stamp")
END

export SOURCE_DATE_EPOCH=$stamp
jobs=$(nproc 2>/dev/null || echo 2)
(cd "$src" && DEB_BUILD_OPTIONS="parallel=$jobs ${DEB_BUILD_OPTIONS:-}" \
  dpkg-buildpackage -b -us -uc >"$work/build.log" 2>&1) || {
  tail -40 "$work/build.log" >&2
  echo "package.sh: dpkg-buildpackage failed (the end of its log above)" >&2
  exit 1
}
cp "$work"/*.deb "$out"/
deb=$out/sendat_${version}_$(dpkg-architecture -qDEB_HOST_ARCH).deb
[ -f "$deb" ] || { echo "package.sh: $deb was not built" >&2; exit 1; }
echo "$deb"
