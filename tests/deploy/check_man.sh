#!/usr/bin/env bash
# The man pages against the binaries' own --help (ctest man_pages): every command `sendat
# --help` lists is a section of sendat(1), every SENDAT_ variable named by `sendat --help`,
# `sendat serve --help` and `sendat token --help` is in sendat(1), sendat-consumer(8) names
# exactly the variables `sendat-consumer --help` names, both pages carry the version the
# binaries print, and man(1) renders them without a warning.
# usage: check_man.sh BUILD_DIR SENDAT SENDAT_CONSUMER
set -uo pipefail
build=$1 sendat=$2 consumer=$3
page1=$build/man/sendat.1 page8=$build/man/sendat-consumer.8
fail=0
bad() { echo "man_pages: $*" >&2; fail=1; }
vars() { grep -o 'SENDAT_[A-Z_]*[A-Z]' | sort -u; }
plain() { sed 's/\\-/-/g' "$1"; } # the page with troff's \- as -
text1=$(plain "$page1") # held whole: grep -q on a pipe would cut its writer short (SIGPIPE)

while read -r cmd; do
  grep -Eq "^\.BI? \"?$cmd( |\"|$)" <<<"$text1" || bad "sendat(1) has no section for '$cmd'"
done < <("$sendat" --help | sed -n '/^commands:/,/^$/p' | awk 'NR > 1 && NF { print $1 }')
for v in $({ "$sendat" --help; "$sendat" serve --help; "$sendat" token --help; } 2>&1 | vars); do
  grep -q "$v" <<<"$text1" || bad "sendat(1) does not name $v"
done
diff <("$consumer" --help | vars) <(plain "$page8" | vars) >&2 ||
  bad "sendat-consumer(8) and sendat-consumer --help name different variables (< help, > man)"
version=$("$sendat" --version | awk '{ print $2 }')
[ "$("$consumer" --version)" = "sendat-consumer $version" ] || bad "the binaries' versions differ"
for p in "$page1" "$page8"; do
  grep -q "^\.TH .*\"sendat $version\"" "$p" || bad "$p does not say version $version"
  if command -v man >/dev/null; then
    w=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 -Z "$p" 2>&1 >/dev/null)
    [ -z "$w" ] || bad "$p: $w"
  fi
done
[ $fail = 0 ] && echo "man_pages: both pages agree with --help (version $version)"
exit $fail
