#!/usr/bin/env bash
# What the broker (nats-server) pays for sendat's work, per task (not a test):
#
#   bash bench/broker_cost.sh [--waiting "1000000 10000000"] [--steady 1000000] [--sends 1000000]
#                          [--ratio 200000] [--raw-n 1000000]
#
#   --waiting  sizes: tasks booked 30 days ahead with `sendat schedule --batch` on a fresh server;
#              after each, the server's RSS minus its idle RSS (streams made, nothing stored)
#              and the size of the SENDAT_TASKS store folder, per task, and its CPU per task
#   --sends    tasks due soon, booked, then sent by 2 consumers to a local sink; afterwards the
#              claims bucket's store folder and the RSS growth per claim record (the task
#              stream is empty again), and the server's CPU per sent task
#   --steady   sizes: the same booking under `init --dedupe-window 5s`, the server restarted
#              once the window passed: RSS per task without the dedupe index (default 1000000)
#   --ratio    sizes: `schedule --batch` against `sendat-rawjs fill` of the same message shape
#              (one subject per message, Msg-Id, one header), fresh servers, 3 rounds (200000);
#              the batch's lines name no id, and since issue 33 item 2 such a task carries no
#              Msg-Id, so the raw run is the shape of lines with ids
#   --raw-n    the same number of messages of the same size published by `sendat-rawjs fill`
#              on a fresh server, one subject per message and 100 subjects, with and without
#              Msg-Id: what the subject layout and the dedupe window cost, and the raw CPU the
#              scheduling CPU is read against (0: skip)
#
# Loopback only; every server gets its own temporary store, removed at the end. CPU seconds are
# utime + stime of nats-server from /proc; other work on the machine makes them noisy, so the
# raw run of the same size is printed beside them. Prints one line per figure and writes
# bench/results/broker-<UTC time>.txt. Uses build/ (SENDAT_BENCH_BUILD=DIR to change).
set -euo pipefail

WAITING="1000000 10000000"
SENDS=1000000
RAW_N=1000000
STEADY=1000000
RATIO=200000
while [ $# -gt 0 ]; do
  case $1 in
    --waiting) WAITING=$2; shift 2 ;;
    --sends) SENDS=$2; shift 2 ;;
    --raw-n) RAW_N=$2; shift 2 ;;
    --steady) STEADY=$2; shift 2 ;;
    --ratio) RATIO=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "broker_cost.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${SENDAT_BENCH_BUILD:-$repo/build}
analyze=(python3 "$repo/bench/analyze.py")
SENDAT=$build/producer/sendat
CONSUMER=$build/consumer/sendat-consumer
RAWJS=$build/bench/sendat-rawjs
SINK=$build/bench/sendat-sink
for b in "$SENDAT" "$CONSUMER" "$RAWJS" "$SINK"; do
  [ -x "$b" ] || { echo "broker_cost.sh: $b is missing (build first)" >&2; exit 1; }
done
cluster=0
CONSUMERS=2
SEALED=221 # bytes of the typical sealed task (sendat-rawjs sealed, docs/performance.md)

# shellcheck source=bench/lib.sh
source "$repo/bench/lib.sh"
bench_start sendat-cost

out=$repo/bench/results/broker-$(date -u +%Y%m%dT%H%M%SZ).txt
mkdir -p "$repo/bench/results"
say() { echo "$*" | tee -a "$out"; }
rss_kb() { awk '/^VmRSS/{print $2}' "/proc/$1/status"; }
per() { awk -v a="$1" -v n="$2" 'BEGIN{printf "%.1f", n ? a / n : 0}'; } # per A N
store_bytes() { du -sb "$1" 2>/dev/null | cut -f1 || echo 0; }
stream_dir() { echo "$1/n0/js/jetstream/\$G/streams/$2"; }

# raw DIR N SUBJECTS MSGID: a fresh server filled by sendat-rawjs; RSS, disk, server CPU per msg
raw() {
  local d=$1 n=$2 k=$3 id=$4 b c0 c1 r
  mkdir -p "$d"
  start_servers "$d"
  sleep 1
  b=$(rss_kb "${SERVER_PIDS[0]}")
  c0=$(ticks "${SERVER_PIDS[0]}")
  r=$("$RAWJS" fill --server "$NATS_URL" --n "$n" --size "$SEALED" --subjects "$k" --msg-id "$id")
  c1=$(ticks "${SERVER_PIDS[0]}")
  sleep 2
  say "raw n=$n subjects=$k msg_id=$id: rss_B_per_msg=$(per $(( ($(rss_kb "${SERVER_PIDS[0]}") - b) * 1024 )) "$n")" \
    "disk_B_per_msg=$(per "$(store_bytes "$(stream_dir "$d" RAWJS)")" "$n")" \
    "server_cpu_us_per_msg=$(per "$(( (c1 - c0) * 1000000 / HZ ))" "$n") publish=$r"
  stop_servers
}

# waiting N: N tasks 30 days ahead
waiting() {
  local n=$1 d=$work/wait-$1 b c0 c1 a file
  mkdir -p "$d"
  start_servers "$d"
  init_sendat "$d"
  sleep 1
  b=$(rss_kb "${SERVER_PIDS[0]}")
  file=$d/tasks.ndjson
  gen_tasks "$file" "$n" $(( $(now_ms) + 30 * 86400000 )) 86400000 "http://127.0.0.1:9/hook"
  c0=$(ticks "${SERVER_PIDS[0]}")
  schedule "$d" "$file"
  c1=$(ticks "${SERVER_PIDS[0]}")
  rm -f "$file"
  sleep 2
  a=$(rss_kb "${SERVER_PIDS[0]}")
  say "waiting n=$n: idle_rss_MB=$((b / 1024)) rss_MB=$((a / 1024))" \
    "rss_B_per_task=$(per $(( (a - b) * 1024 )) "$n")" \
    "disk_B_per_task=$(per "$(store_bytes "$(stream_dir "$d" SENDAT_TASKS)")" "$n")" \
    "server_cpu_us_per_task=$(per "$(( (c1 - c0) * 1000000 / HZ ))" "$n")" \
    "producer=$(cat "$d/schedule.json")" \
    "stream=$("$RAWJS" info --server "$NATS_URL" --stream SENDAT_TASKS)"
  stop_servers
  rm -rf "$d"
}

# ratio N: bulk scheduling against raw publish of the same message shape (one subject per
# message, Msg-Id, one header, the sealed size), each on a fresh server, 3 rounds alternating
ratio() {
  local n=$1 d=$work/ratio i raw bulk file
  mkdir -p "$d"
  file=$d/tasks.ndjson
  gen_tasks "$file" "$n" $(( $(now_ms) + 86400000 )) 3600000 "http://127.0.0.1:9/hook"
  for i in 1 2 3; do
    start_servers "$d/raw$i"
    raw=$("$RAWJS" fill --server "$NATS_URL" --n "$n" --size "$SEALED" --subjects "$n" | grep -o '"rate":[0-9]*' | cut -d: -f2)
    stop_servers
    start_servers "$d/bulk$i"
    init_sendat "$d/bulk$i"
    schedule "$d/bulk$i" "$file"
    bulk=$(awk -v n="$n" -v t="$(grep -o '"wall_s": [0-9.]*' "$d/bulk$i/schedule.json" | cut -d' ' -f2)" 'BEGIN{printf "%.0f", n / t}')
    stop_servers
    say "ratio n=$n round=$i: raw_same_shape=$raw/s bulk=$bulk/s ratio=$(awk -v a="$bulk" -v b="$raw" 'BEGIN{printf "%.2f", a / b}')" \
      "producer=$(cat "$d/bulk$i/schedule.json")"
    rm -rf "$d/raw$i" "$d/bulk$i"
  done
  rm -rf "$d"
}

# steady N: N tasks 30 days ahead under `init --dedupe-window 5s`, then the server restarted:
# what waiting tasks cost once their Msg-Ids have left the dedupe window (a restart rebuilds
# only the window's ids, and RSS then holds no garbage of the booking); since issue 33 item 2
# the batch's tasks (no ids given) carry none, so only the garbage is left out
steady() {
  local n=$1 d=$work/steady-$1 b a file
  mkdir -p "$d"
  start_servers "$d"
  SENDAT_NATS_URL=$NATS_URL "$SENDAT" init --dedupe-window 5s >>"$d/init.log" 2>&1
  sleep 1
  b=$(rss_kb "${SERVER_PIDS[0]}")
  file=$d/tasks.ndjson
  gen_tasks "$file" "$n" $(( $(now_ms) + 30 * 86400000 )) 86400000 "http://127.0.0.1:9/hook"
  schedule "$d" "$file"
  rm -f "$file"
  sleep 6
  stop_servers
  rm -f "$d"/n0/*.ports
  start_servers "$d"
  "$RAWJS" info --server "$NATS_URL" --stream SENDAT_TASKS >"$d/info.json"
  sleep 2
  a=$(rss_kb "${SERVER_PIDS[0]}")
  say "steady n=$n (dedupe window passed, server restarted): rss_MB=$((a / 1024))" \
    "rss_B_per_task=$(per $(( (a - b) * 1024 )) "$n") stream=$(cat "$d/info.json")"
  stop_servers
  rm -rf "$d"
}

# sends N: N tasks due from 40 s on, over N / 10,000 s, sent to the sink by the consumers
sends() {
  local n=$1 d=$work/send c0 c1 b a due spread file
  mkdir -p "$d"
  start_servers "$d"
  init_sendat "$d"
  start_sink "$d"
  file=$d/tasks.ndjson
  due=$(( $(now_ms) + 40000 ))
  spread=$(( n / 10 ))
  gen_tasks "$file" "$n" "$due" "$spread" "http://127.0.0.1:$SINK_PORT/hook"
  schedule "$d" "$file"
  rm -f "$file"
  start_consumers "$d" "$CONSUMERS"
  sleep 2
  b=$(rss_kb "${SERVER_PIDS[0]}")
  c0=$(ticks "${SERVER_PIDS[0]}")
  wait_delivered "$n" $(( due + spread + 600000 ))
  c1=$(ticks "${SERVER_PIDS[0]}")
  stop_consumers
  sleep 2
  a=$(rss_kb "${SERVER_PIDS[0]}")
  say "sends n=$n delivered=$(sink_count):" \
    "rss_growth_B_per_claim=$(per $(( (a - b) * 1024 )) "$n")" \
    "claims_disk_B_per_claim=$(per "$(store_bytes "$(stream_dir "$d" KV_sendat_claims)")" "$n")" \
    "tasks_disk_after_B=$(store_bytes "$(stream_dir "$d" SENDAT_TASKS)")" \
    "server_cpu_us_per_sent=$(per "$(( (c1 - c0) * 1000000 / HZ ))" "$n")" \
    "claims=$("$RAWJS" info --server "$NATS_URL" --stream KV_sendat_claims)"
  stop_servers
  stop_pid "$SINK_PID" 5
  rm -rf "$d"
}

KEY=$work/sendat.key
"$SENDAT" keygen "$KEY" >/dev/null
say "# bench/broker_cost.sh at $(git -C "$repo" rev-parse --short HEAD), binaries from $build, $(nproc) cores, $("$NATS_BIN" --version)"
if ((RAW_N > 0)); then
  for k in "$RAW_N" 100; do
    for id in 1 0; do raw "$work/raw-$k-$id" "$RAW_N" "$k" "$id"; rm -rf "$work/raw-$k-$id"; done
  done
fi
for n in $RATIO; do ratio "$n"; done
for n in $WAITING; do waiting "$n"; done
for n in $STEADY; do steady "$n"; done
((SENDS > 0)) && sends "$SENDS"
say "# results in $out"
