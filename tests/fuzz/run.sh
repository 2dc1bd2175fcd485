#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (build-fuzz/, SENDAT_FUZZ=ON) and runs each one from
# its seed corpus in tests/fuzz/corpus/<target>. New inputs go to a scratch folder, never into
# the repository; a crash stops the run and leaves its input in build-fuzz/artifacts/.
#   tests/fuzz/run.sh                      brief (CI): 100,000 runs or 15 s per target
#   tests/fuzz/run.sh --runs 10000000 --seconds 0    the long run docs/fuzzing.md records
#   tests/fuzz/run.sh --only task,batch    some targets
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=100000
seconds=15
only=""
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    --only) only="$2"; shift 2 ;;
    *) echo "usage: tests/fuzz/run.sh [--runs N] [--seconds S (0: no limit)] [--only a,b]" >&2; exit 2 ;;
  esac
done
targets=(envelope task batch time claim mail limits relay)
[ -z "$only" ] || IFS=, read -r -a targets <<<"$only"

CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSENDAT_TESTS=OFF \
  -DSENDAT_FUZZ=ON -DSENDAT_WERROR=ON >/dev/null
cmake --build build-fuzz -j"$(nproc 2>/dev/null || echo 2)" --target "${targets[@]/#/fuzz_}" >/dev/null
scratch=$(mktemp -d /tmp/sendat-fuzz-XXXXXX)
trap 'rm -rf "$scratch"' EXIT
mkdir -p build-fuzz/artifacts
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
for t in "${targets[@]}"; do
  mkdir -p "$scratch/$t"
  start=$(date +%s)
  log="build-fuzz/artifacts/$t.log"
  if ! build-fuzz/tests/fuzz/fuzz_"$t" -runs="$runs" -max_total_time="$seconds" -max_len=4096 \
      -artifact_prefix="build-fuzz/artifacts/$t-" -print_final_stats=1 \
      "$scratch/$t" "tests/fuzz/corpus/$t" >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    echo "fuzz $t: FAILED (input in build-fuzz/artifacts/$t-*)" >&2
    exit 1
  fi
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 | cut -d' ' -f2)
  echo "fuzz $t: ok, ${execs:-?} runs in $(($(date +%s) - start)) s, coverage ${cov:-?} edges"
done
echo "fuzz: ${#targets[@]} passed, 0 failed"
