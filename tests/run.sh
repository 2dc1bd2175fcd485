#!/usr/bin/env bash
# Installs what the tests need, builds sendat, runs the whole suite, then builds it again with
# AddressSanitizer and UndefinedBehaviorSanitizer and runs the suite once more, then each libFuzzer
# target briefly (tests/fuzz/run.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash deploy/install-deps.sh
jobs=$(nproc 2>/dev/null || echo 2)

cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSENDAT_TESTS=ON >/dev/null # deploy/demo.sh builds here without tests
cmake --build build -j"$jobs"
(cd build && ctest --output-on-failure -j"$jobs")

cmake -S . -B build-san -DCMAKE_BUILD_TYPE=Debug -DSENDAT_SANITIZE=address,undefined -DSENDAT_TESTS=ON >/dev/null
cmake --build build-san -j"$jobs"
(cd build-san && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
   UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
   SENDAT_TEST_TIMEOUT_MULTIPLIER=3 ctest --output-on-failure -j"$jobs")

# Every libFuzzer target briefly from its seed corpus (clang; docs/fuzzing.md has the long run).
bash tests/fuzz/run.sh
