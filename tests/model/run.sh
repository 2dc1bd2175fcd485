#!/usr/bin/env bash
# The protocol model check (docs/design-notes.md, "Model check of the claim protocol"): the
# model must hold every invariant, and each deliberately broken variant must be caught (exit 1
# with a trace). Python 3, standard library only; a few seconds on one core.
set -uo pipefail
export PYTHONDONTWRITEBYTECODE=1
cd "$(dirname "$0")"
fail=0
python3 kv_check.py || fail=1
for variant in $(python3 -c 'import kv_check; print(" ".join(kv_check.BROKEN))'); do
  out=$(python3 kv_check.py --broken "$variant")
  rc=$?
  if [ $rc = 1 ] && grep -q 'INVARIANT BROKEN' <<<"$out"; then
    echo "broken variant $variant caught: $(grep -m1 'INVARIANT BROKEN' <<<"$out")"
  else
    echo "broken variant $variant NOT caught (exit $rc):"
    echo "$out"
    fail=1
  fi
done
[ $fail = 0 ] && echo "tests/model/run.sh: passed" || echo "tests/model/run.sh: FAILED"
exit $fail
