#!/usr/bin/env bash
# The style checks CI runs (issue 16): every .c and .h file git tracks is as the repo's
# .clang-format writes it, no two headers share a guard, the product code has no file cycles
# (tests/filecycles.py, issue 26), and the tree builds with -Wpedantic -Werror (ISO C, no GNU
# extensions), and as users build it (issue 27): Release (-O3, where gcc and clang warn of
# more) with gcc and with clang, -Werror on. Exits non-zero if any fails. Builds into
# build-pedantic/, build-release-gcc/ and build-release-clang/.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
status=0

mapfile -t files < <(git ls-files '*.c' '*.h')
if ! clang-format --dry-run -Werror "${files[@]}"; then
    echo "style: clang-format would change the files above (run clang-format -i on them)" >&2
    status=1
fi

dups=$(for f in "${files[@]}"; do
    case $f in *.h) sed -n 's/^#ifndef \([A-Z0-9_]*_H\)$/\1/p' "$f" | head -n 1 ;; esac
done | sort | uniq -d)
if [ -n "$dups" ]; then
    echo "style: header guards used twice: $dups" >&2
    status=1
fi

if ! python3 tests/filecycles.py >/dev/null; then
    echo "style: file cycles above (tests/filecycles.py; known ones go in tests/filecycles.allow)" >&2
    status=1
fi

build() { # folder, what it is, then CC= and cmake flags
    local dir=$1 what=$2 cc=$3
    shift 3
    env "$cc" cmake -S . -B "$dir" -DSENDAT_TESTS=ON -DSENDAT_WERROR=ON "$@" >/dev/null
    if ! cmake --build "$dir" -j"$jobs" >/dev/null; then
        cmake --build "$dir" -j1 2>&1 | grep -E 'error|warning' >&2 || true
        echo "style: the $what build fails" >&2
        status=1
    fi
}
build build-pedantic "-Wpedantic -Werror" CC="${CC:-cc}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DSENDAT_PEDANTIC=ON
build build-release-gcc "Release gcc" CC=gcc -DCMAKE_BUILD_TYPE=Release
build build-release-clang "Release clang" CC=clang -DCMAKE_BUILD_TYPE=Release
exit "$status"
