#!/usr/bin/env bash
# Prints deploy/nats/accounts.conf for a cluster made with `sendat init --shards N`: every
# permission that names the task stream SENDAT_TASKS or the bucket sendat_claims is followed
# by the same permission for SENDAT_TASKS_<k> and sendat_claims_<k>, k = 1..N-1. (The task
# subjects of every shard are in accounts.conf already.)
#
#   bash deploy/nats/shard-permissions.sh 8 > /etc/nats/accounts.conf
set -euo pipefail
n=${1:-}
if ! [[ $n =~ ^[0-9]+$ ]] || [ "$n" -lt 1 ] || [ "$n" -gt 64 ]; then
  echo "usage: shard-permissions.sh N   (N: the shard count of sendat init, 1-64)" >&2
  exit 2
fi
awk -v n="$n" '
  { print }
  /^[[:space:]]*"/ && /SENDAT_TASKS|sendat_claims/ {
    line = $0
    sub(/[[:space:]]*#.*/, "", line)
    for (k = 1; k < n; k++) {
      l = line
      gsub(/SENDAT_TASKS/, "SENDAT_TASKS_" k, l)
      gsub(/sendat_claims/, "sendat_claims_" k, l)
      print l
    }
  }' "$(dirname "$0")/accounts.conf"
