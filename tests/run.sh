#!/usr/bin/env bash
# Installs what the tests need, builds sendat, runs the whole suite on Debian 12's nats-server
# (2.9.10), then the integration tests again on the current server (fetched, pinned and checked
# by deploy/nats/fetch-server.sh), then builds it again with
# AddressSanitizer and UndefinedBehaviorSanitizer and runs the suite once more, then each
# libFuzzer target briefly (tests/fuzz/run.sh), then the style checks (tests/style.sh:
# clang-format, a -Wpedantic -Werror build and Release builds with gcc and clang), then the
# claim protocol's model check (tests/model/run.sh), then the
# Debian package installed into a fresh Debian 12 root (tests/deploy/run.sh), then the
# package's systemd units under a real systemd in a container (tests/containers/systemd.sh;
# tests/containers/run.sh, the compose stack under podman, is run by hand: README says why).
# Every build but
# the package's has -Werror (SENDAT_WERROR=ON). Every phase always runs; the summary names
# each phase's result and the script fails if any failed. Test folders go to one temporary
# folder per run, removed at the end (SENDAT_KEEP_TEST_TMP=1 keeps it, and its path is printed).
set -uo pipefail
cd "$(dirname "$0")/.."
bash deploy/install-deps.sh || exit 1
jobs=$(nproc 2>/dev/null || echo 2)
tmp=$(mktemp -d /tmp/sendat-run-XXXXXX)
export SENDAT_TEST_TMPDIR="$tmp"
cleanup() {
  if [ "${SENDAT_KEEP_TEST_TMP:-0}" = 1 ]; then echo "test folders kept in $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT

phase() { # build dir, cmake flags..., then -- and the environment for ctest
  local dir=$1; shift
  local flags=()
  while [ "$1" != "--" ]; do flags+=("$1"); shift; done
  shift
  cmake -S . -B "$dir" "${flags[@]}" -DSENDAT_TESTS=ON -DSENDAT_WERROR=ON >/dev/null &&
    cmake --build "$dir" -j"$jobs" &&
    (cd "$dir" && env "$@" ctest --output-on-failure -j"$jobs")
}

result() { [ "$1" = 0 ] && echo passed || echo "FAILED ($1)"; }

phase build -DCMAKE_BUILD_TYPE=RelWithDebInfo -- # deploy/demo.sh builds here without tests
plain=$?
# the integration tests of the same build on the current server (they read NATS_SERVER)
current=$(bash deploy/nats/fetch-server.sh) &&
  echo "== integration tests on $("$current" --version)" &&
  (cd build && NATS_SERVER=$current ctest --output-on-failure -j"$jobs" -R '^it_')
cur=$?
phase build-san -DCMAKE_BUILD_TYPE=Debug -DSENDAT_SANITIZE=address,undefined -- \
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  SENDAT_TEST_TIMEOUT_MULTIPLIER=3
san=$?
bash tests/fuzz/run.sh # every libFuzzer target briefly from its seed corpus (docs/fuzzing.md)
fuzz=$?
bash tests/style.sh
style=$?
bash tests/model/run.sh # the claim protocol's exhaustive model check (docs/design-notes.md)
model=$?
bash tests/deploy/run.sh # the .deb, lintian, and a fresh debootstrap root (docs/install.md)
deploy=$?
bash tests/containers/systemd.sh # the units under systemd: notify, reload, stop, try-restart
systemd=$?

echo "tests/run.sh: plain phase $(result $plain), current server phase $(result $cur)," \
  "sanitizer phase $(result $san), fuzz phase $(result $fuzz), style phase $(result $style)," \
  "deploy phase $(result $deploy), systemd phase $(result $systemd), model phase $(result $model)"
[ $model = 0 ] && [ $plain = 0 ] && [ $cur = 0 ] && [ $san = 0 ] && [ $fuzz = 0 ] && [ $style = 0 ] && [ $deploy = 0 ] && [ $systemd = 0 ]
