#!/usr/bin/env bash
# The protocol model check (docs/design-notes.md, "Model check of the claim protocol"): the
# model must hold every invariant, and each deliberately broken variant must be caught (exit 1
# with a trace). Python 3, standard library only; about 20 s of one core (block_check.py's
# bounded search of 155,000 and 225,000 states is most of it).
set -uo pipefail
export PYTHONDONTWRITEBYTECODE=1
cd "$(dirname "$0")"
fail=0
# kv_check.py: today's per-id claims; block_check.py: the per-batch ledger's blocks (issue 32)
for model in kv_check block_check; do
  python3 "$model.py" || fail=1
  for variant in $(python3 -c "import $model; print(' '.join($model.BROKEN))"); do
    out=$(python3 "$model.py" --broken "$variant")
    rc=$?
    if [ $rc = 1 ] && grep -q 'INVARIANT BROKEN' <<<"$out"; then
      echo "$model: broken variant $variant caught: $(grep -m1 'INVARIANT BROKEN' <<<"$out")"
    else
      echo "$model: broken variant $variant NOT caught (exit $rc):"
      echo "$out"
      fail=1
    fi
  done
done
[ $fail = 0 ] && echo "tests/model/run.sh: passed" || echo "tests/model/run.sh: FAILED"
exit $fail
