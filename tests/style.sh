#!/usr/bin/env bash
# The style checks CI runs (issue 16): every .c and .h file git tracks is as the repo's
# .clang-format writes it, and the tree builds with -Wpedantic -Werror (ISO C, no GNU
# extensions). Exits non-zero if either fails. Builds into build-pedantic/.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
status=0

mapfile -t files < <(git ls-files '*.c' '*.h')
if ! clang-format --dry-run -Werror "${files[@]}"; then
    echo "style: clang-format would change the files above (run clang-format -i on them)" >&2
    status=1
fi

cmake -S . -B build-pedantic -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSENDAT_TESTS=ON \
    -DSENDAT_PEDANTIC=ON >/dev/null
if ! cmake --build build-pedantic -j"$jobs" >/dev/null; then
    cmake --build build-pedantic -j1 2>&1 | grep -E 'error|warning' >&2 || true
    echo "style: the -Wpedantic -Werror build fails" >&2
    status=1
fi
exit "$status"
