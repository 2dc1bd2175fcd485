#!/usr/bin/env bash
# What writing claim records together saves the broker (issue 25.3; not a test):
#
#   NATS_SERVER=/opt/nats215/nats-server bash bench/batch_cost.sh [ROUNDS] [N] [CLIENTS]
#
# Each round starts a fresh 3-node loopback cluster and runs `sendat-rawjs batch` on an R3
# bucket shaped like sendat's claims: N creates (default 20000) one by one with 256 PubAcks
# awaited, in atomic batches of 8, 16 and 64, as one fast batch (2.14+ only), and one by one
# again; with CLIENTS (default 1) connections writing their shares at once, as a fleet would
# (a fast batch each, which makes the server ack every message). The machine is shared, so each phase is read against the mean of the two one-by-one
# phases of its own round; the medians over ROUNDS (default 3) are printed at the end.
# Needs nats-server 2.12 or later. Uses build/ (SENDAT_BENCH_BUILD=DIR to change).
set -euo pipefail

cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
N=${2:-20000}
CLIENTS=${3:-1}
BUILD=${SENDAT_BENCH_BUILD:-build}
cluster=1
# shellcheck source=bench/lib.sh disable=SC2034,SC2154 # cluster is read by lib.sh, work set there
source bench/lib.sh
if ! nats_at_least 2.12; then
  echo "batch_cost.sh: nats-server $(nats_version) has no atomic batch publish (2.12+)" >&2
  exit 2
fi
fast=0
nats_at_least 2.14 && fast=1
bench_start sendat-batch
for ((r = 1; r <= ROUNDS; r++)); do
  start_servers "$work/r$r"
  sleep 3 # the cluster elects its meta leader
  "$BUILD/bench/sendat-rawjs" batch --server "$NATS_URL" --kv-n "$N" --replicas 3 --fast "$fast" \
    --clients "$CLIENTS" \
    --server-pid "$(IFS=,; echo "${SERVER_PIDS[*]}")" >>"$work/rounds.json"
  echo >>"$work/rounds.json"
  stop_servers
done
python3 - "$work/rounds.json" <<'PY'
import json, statistics, sys
rounds = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print("%d rounds of %d creates, R3, %d clients" % (len(rounds), rounds[0]["n"],
                                                  rounds[0]["clients"]))
for name in ("atomic_8", "atomic_16", "atomic_64", "fast_one_batch"):
    rate, cpu = [], []
    for r in rounds:
        if name not in r:
            continue
        base = [r["one_by_one"], r["one_by_one_again"]]
        rate.append(r[name]["rate"] / statistics.mean(b["rate"] for b in base))
        cpu.append(r[name]["server_cpu_us_per_msg"] /
                   statistics.mean(b["server_cpu_us_per_msg"] for b in base))
    if rate:
        print("%-15s rate x%.2f (%.2f-%.2f), server CPU per record x%.2f (%.2f-%.2f), "
              "refused %d" % (name, statistics.median(rate), min(rate), max(rate),
                              statistics.median(cpu), min(cpu), max(cpu),
                              sum(r.get(name + "_refused", 0) for r in rounds)))
PY
