#!/usr/bin/env bash
# The per-batch claim ledger prototype of issue 32 item 2, measured against the raw loop of the
# same run (not a test):
#
#   bash bench/ledger_proto.sh [--single] [--n 20000] [--runs 3] [--block 256]
#                              [--cancel-every K] [--same-pull] [--watch-thread] [--sendat]
#                              [--out DIR]
#
#   --single        one node with one replica (default: a 3-node loopback cluster, R3)
#   --n             tasks per burst (default 20000)
#   --runs          bursts of each kind, alternating which goes first (default 3)
#   --block         tasks per claim block (one pull; default 256)
#   --cancel-every  a cancel for every K-th id appended before the ledger's consumer starts
#   --same-pull     also the raw loop pulling --block at a time (bench --post-batch), to tell
#                   the ledger's cost from the pull size's effect
#   --watch-thread  also the ledger with its watcher read on nats.c's thread (sendat-rawjs
#                   ledger --watch-thread 1), which wakes the loop, instead of between its steps
#   --sendat        also one sendat burst of N on the same servers (sendat init, 2 consumers,
#                   as bench/run.sh's burst), its rate and servers' CPU per delivery
#   --out DIR       where the JSON of each run and the table go (default: a new
#                   /tmp/sendat-ledger-<UTC time>; never inside the repository)
#
# Each run stores N messages of a sealed task's size in a work-queue stream and delivers them
# to a local sink: "raw" is sendat-rawjs bench --post-only (pull, POST, ack), "ledger" is
# sendat-rawjs ledger (rawledger.c: a claim block per pull on the ledger stream, sent once the
# ordered watcher read it, one outcome record per 10 ms, acked on its PubAck). Both report
# deliveries/s and the servers' CPU per delivery (every node's, from /proc) over their
# delivery phase; the table gives ledger / raw inside each run, the watcher's lag (append ->
# read back by the loop) and what answering a cancel read.
#
# The server is $NATS_SERVER (default nats-server on the PATH), e.g.
#   NATS_SERVER=$(bash deploy/nats/fetch-server.sh) bash bench/ledger_proto.sh
# Uses build-bench/ (SENDAT_BENCH_BUILD=DIR), built first unless SENDAT_BENCH_NO_BUILD=1.
# Loopback only, random ports; every process started here is stopped on exit and the stores
# removed. 20-60 s per run pair on 2 busy cores, about 2 minutes more with --sendat.
set -euo pipefail

N=20000
RUNS=3
BLOCK=256
CANCEL_EVERY=0
SENDAT_RUN=0
SAME_PULL=0
WATCH_THREAD=0
OUT=""
cluster=1
while [ $# -gt 0 ]; do
  case $1 in
    --single) cluster=0; shift ;;
    --n) N=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --block) BLOCK=$2; shift 2 ;;
    --cancel-every) CANCEL_EVERY=$2; shift 2 ;;
    --sendat) SENDAT_RUN=1; shift ;;
    --same-pull) SAME_PULL=1; shift ;;
    --watch-thread) WATCH_THREAD=1; shift ;;
    --out) OUT=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "ledger_proto.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
for v in "$N" "$RUNS" "$BLOCK"; do
  [[ $v =~ ^[1-9][0-9]*$ ]] || { echo "ledger_proto.sh: --n, --runs, --block want positive counts" >&2; exit 2; }
done
[[ $CANCEL_EVERY =~ ^[0-9]+$ ]] || { echo "ledger_proto.sh: --cancel-every wants a count" >&2; exit 2; }

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${SENDAT_BENCH_BUILD:-$repo/build-bench}
# shellcheck disable=SC2034 # read by lib.sh's schedule
analyze=(python3 "$repo/bench/analyze.py")
if [ -z "${SENDAT_BENCH_NO_BUILD:-}" ]; then
  echo "== building in $build"
  cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSENDAT_TESTS=OFF >/dev/null
  cmake --build "$build" -j"$(nproc 2>/dev/null || echo 2)" \
        --target sendat sendat-consumer sendat-rawjs sendat-sink >/dev/null
fi
SENDAT=$build/producer/sendat
CONSUMER=$build/consumer/sendat-consumer
RAWJS=$build/bench/sendat-rawjs
SINK=$build/bench/sendat-sink
for b in "$RAWJS" "$SINK"; do
  [ -x "$b" ] || { echo "ledger_proto.sh: $b is missing (build first)" >&2; exit 1; }
done

CONSUMERS=2
MARGIN_MS=24000 # as bench/run.sh --quick: the tasks go straight into their slot
SLOT_MS=10000
SCHED_GUESS_PER_S=15000
# shellcheck source=bench/lib.sh disable=SC2034 # the globals above are read by lib.sh
source "$repo/bench/lib.sh"
command -v "$NATS_BIN" >/dev/null || { echo "ledger_proto.sh: $NATS_BIN is not installed" >&2; exit 1; }
bench_start sendat-ledger
OUT=${OUT:-/tmp/sendat-ledger-$(date -u +%Y%m%dT%H%M%SZ)}
case $OUT in "$repo"/*) echo "ledger_proto.sh: --out must be outside the repository" >&2; exit 2 ;; esac
mkdir -p "$OUT"
REPLICAS=1
((cluster)) && REPLICAS=3
{
  echo "nats_server=$("$NATS_BIN" --version 2>&1 | head -n 1)"
  echo "commit=$(git -C "$repo" describe --always --dirty 2>/dev/null || echo unknown)"
  echo "n=$N replicas=$REPLICAS block=$BLOCK cancel_every=$CANCEL_EVERY cores=$(nproc)"
  echo "loadavg_at_start=$(cut -d' ' -f1-3 /proc/loadavg | tr ' ' /)"
} >"$OUT/meta.txt"
echo "== ledger prototype: $RUNS x (raw, ledger) bursts of $N, replicas $REPLICAS, nats-server $(nats_version), load $(cut -d' ' -f1 /proc/loadavg); dumps in $OUT"

d=$work/c
mkdir -p "$d"
start_servers "$d"
start_sink "$d"
spids=$(IFS=,; echo "${SERVER_PIDS[*]}")
size=$("$RAWJS" sealed --url "http://127.0.0.1:65535/hook" --data "$SAMPLE_DATA" | grep -o '"sealed_bytes":[0-9]*' | cut -d: -f2)

run_raw() {
  "$RAWJS" bench --post-only 1 --server "$NATS_URL" --n "$N" --size "$size" --replicas "$REPLICAS" \
    --server-pid "$spids" --sink "http://127.0.0.1:$SINK_PORT/raw" >"$OUT/raw.$1.json" 2>"$OUT/raw.$1.err"
}
run_raw_same() {
  "$RAWJS" bench --post-only 1 --post-batch "$BLOCK" --server "$NATS_URL" --n "$N" --size "$size" \
    --replicas "$REPLICAS" --server-pid "$spids" --sink "http://127.0.0.1:$SINK_PORT/raw" \
    >"$OUT/rawsame.$1.json" 2>"$OUT/rawsame.$1.err"
}
run_ledger() { # run_ledger RUN [FILE-PREFIX EXTRA-ARGS...]
  local r=$1 f=${2:-ledger}
  shift $(($# > 1 ? 2 : 1))
  "$RAWJS" ledger "$@" --server "$NATS_URL" --n "$N" --size "$size" --replicas "$REPLICAS" --batch "$BLOCK" \
    --cancel-every "$CANCEL_EVERY" --server-pid "$spids" --sink "http://127.0.0.1:$SINK_PORT/ledger" \
    >"$OUT/$f.$r.json" 2>"$OUT/$f.$r.err"
}
table() { # the runs' table, from their JSON
  python3 - "$OUT" "$RUNS" <<'PY' | tee "$OUT/table.txt"
import json, os, sys
out, runs = sys.argv[1], int(sys.argv[2])
meta = dict(l.strip().split("=", 1) for l in open(os.path.join(out, "meta.txt")) if "=" in l)
print("== %s, %s, load at start %s" % (meta["nats_server"], meta["n"], meta["loadavg_at_start"]))
print("%-4s %6s %9s %9s %6s %9s %9s %6s %8s %8s %7s %s" % (
    "run", "load", "raw/s", "ledger/s", "ratio", "raw us", "ledger us", "ratio",
    "lag p50", "lag p99", "rec/t", "cancel answer (sent id; unclaimed id)"))
sends = []
for r in range(1, runs + 1):
    raw = json.load(open(os.path.join(out, "raw.%d.json" % r)))["pull_post_ack"]
    lj = json.load(open(os.path.join(out, "ledger.%d.json" % r)))
    led = lj["ledger_pull_post_ack"]
    load = open(os.path.join(out, "load.%d.txt" % r)).read().split()[1]
    c1, c2 = lj["cancel_sent_id"], lj["cancel_unclaimed_id"]
    sends.append((raw["rate"], raw["server_cpu_us_per_msg"]))
    print("%-4d %6s %9.0f %9.0f %6.2f %9.1f %9.1f %6.2f %8.2f %8.2f %7.4f %s %.1f ms/%d rec; %s %.1f ms/%d rec" % (
        r, load, raw["rate"], led["rate"], led["rate"] / raw["rate"],
        raw["server_cpu_us_per_msg"], led["server_cpu_us_per_msg"],
        led["server_cpu_us_per_msg"] / max(raw["server_cpu_us_per_msg"], 1e-9),
        lj["watcher_lag_ms"]["p50"], lj["watcher_lag_ms"]["p99"], lj["ledger_records_per_task"],
        c1["answer"], c1["ms"], c1["records_read"], c2["answer"], c2["ms"], c2["records_read"]))
    ps = os.path.join(out, "rawsame.%d.json" % r)
    if os.path.exists(ps):
        rs = json.load(open(ps))["pull_post_ack"]
        print("     raw loop pulling %s at a time: %.0f/s, %.1f us; ledger / it: rate %.2f, CPU %.2f" % (
            meta["n"].split("block=")[1].split()[0], rs["rate"], rs["server_cpu_us_per_msg"],
            led["rate"] / rs["rate"], led["server_cpu_us_per_msg"] / max(rs["server_cpu_us_per_msg"], 1e-9)))
    pt = os.path.join(out, "ledgert.%d.json" % r)
    if os.path.exists(pt):
        lt = json.load(open(pt))
        t = lt["ledger_pull_post_ack"]
        print("     ledger, watcher on its own thread: %.0f/s, %.1f us; / raw: rate %.2f, CPU %.2f;"
              " lag p50 %.2f p99 %.2f ms, of it the watcher's read p50 %.2f p99 %.2f ms" % (
              t["rate"], t["server_cpu_us_per_msg"], t["rate"] / raw["rate"],
              t["server_cpu_us_per_msg"] / max(raw["server_cpu_us_per_msg"], 1e-9),
              lt["watcher_lag_ms"]["p50"], lt["watcher_lag_ms"]["p99"],
              lt["watcher_read_ms"]["p50"], lt["watcher_read_ms"]["p99"]))
    if lj.get("skipped_cancelled"):
        print("     cancelled before their block: %d skipped, %d cancels read" % (
            lj["skipped_cancelled"], lj["cancels_seen"]))
PY
}
sendat_line() {
  python3 - "$OUT" "$RUNS" <<'PY' | tee -a "$OUT/table.txt"
import json, os, sys
out, runs = sys.argv[1], int(sys.argv[2])
raw = json.load(open(os.path.join(out, "raw.%d.json" % runs)))["pull_post_ack"]
sends = [(raw["rate"], raw["server_cpu_us_per_msg"])]
p = os.path.join(out, "sendat.json")
if os.path.exists(p):
    s = json.load(open(p))
    secs = max(s["last_arrival_ms"] - s["due_ms"], 1) / 1000.0
    us = 1e6 * s["server_ticks"] / s["hz"] / s["n"]
    raw_rate, raw_us = sends[-1]
    print("sendat burst (after the runs, due time -> last arrival; servers' CPU from 1 s before due to"
          " every ack settled): %d delivered, %.0f/s = %.2f x the last raw; %.0f us = %.2f x the last raw" % (
          s["delivered"], s["n"] / secs, s["n"] / secs / raw_rate, us, us / max(raw_us, 1e-9)))
PY
}
for ((r = 1; r <= RUNS; r++)); do
  echo "load $(cut -d' ' -f1 /proc/loadavg)" >"$OUT/load.$r.txt"
  if ((r % 2)); then run_raw "$r"; run_ledger "$r"; else run_ledger "$r"; run_raw "$r"; fi
  ((SAME_PULL)) && run_raw_same "$r"
  ((WATCH_THREAD)) && run_ledger "$r" ledgert --watch-thread 1
  echo "   run $r done (load $(cut -d' ' -f1 /proc/loadavg))"
done
table

if ((SENDAT_RUN)); then
  for b in "$SENDAT" "$CONSUMER"; do
    [ -x "$b" ] || { echo "ledger_proto.sh: $b is missing (build first)" >&2; exit 1; }
  done
  stop_pid "$SINK_PID" 5
  KEY=$work/sendat.key
  "$SENDAT" keygen "$KEY" >/dev/null
  s=$work/sendat
  mkdir -p "$s"
  init_sendat "$s"
  start_sink "$s"
  start_consumers "$s" "$CONSUMERS"
  due=$(($(now_ms) + MARGIN_MS + N * 1000 / SCHED_GUESS_PER_S))
  due=$(((due + SLOT_MS - 1) / SLOT_MS * SLOT_MS))
  gen_tasks "$s/tasks.ndjson" "$N" "$due" 0 "http://127.0.0.1:$SINK_PORT/hook"
  schedule "$s" "$s/tasks.ndjson"
  rm -f "$s/tasks.ndjson"
  t=$((due - 1000 - $(now_ms)))
  ((t > 0)) && sleep "$(awk -v t="$t" 'BEGIN{printf "%.3f", t / 1000}')"
  t0=$(ticks "${SERVER_PIDS[@]}")
  wait_delivered "$N" $((due + 120000))
  for ((k = 0; k < 60; k++)); do # every ack settled: the task stream empty
    m=$("$RAWJS" info --server "$NATS_URL" --stream SENDAT_TASKS 2>/dev/null | grep -o '"msgs":[0-9]*' | cut -d: -f2 || true)
    [ "$m" = 0 ] && break
    sleep 0.5
  done
  t1=$(ticks "${SERVER_PIDS[@]}")
  stop_consumers
  stop_pid "$SINK_PID" 5
  last=$(sort -n "$s/arrivals.txt" | tail -n 1 | cut -d' ' -f1)
  echo "{\"n\":$N,\"due_ms\":$due,\"last_arrival_ms\":$last,\"server_ticks\":$((t1 - t0)),\"hz\":$HZ,\"delivered\":$(wc -l <"$s/arrivals.txt")}" >"$OUT/sendat.json"
fi
stop_servers
((SENDAT_RUN)) && sendat_line
exit 0
