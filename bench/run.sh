#!/usr/bin/env bash
# sendat's benchmark (not a test): the raw JetStream limits and sendat's own figures, measured
# in one run on this machine, printed as a table and written to bench/results/<time>.json.
#
#   bash bench/run.sh [--smoke | --quick | --full] [--cluster]
#
#   --smoke    tiny sizes, under a minute: keeps the benchmark working (CI never judges speed)
#   --quick    (default) smaller sizes, under 3 minutes
#   --full     the sizes of issue 6 (1M bulk, 100k burst, 60k over 60 s, 1M idle for 60 s)
#              and 10M tasks far ahead
#   --cluster  three nats-server nodes, streams and buckets with 3 replicas
#
# Each scenario gets its own nats-server (temporary store, random loopback port), its own
# webhook sink and fresh consumers, so CPU seconds and peak RSS from /proc are the scenario's.
# Consumer settings in the environment (SENDAT_FETCH_BATCH, SENDAT_MAX_INFLIGHT, ...) are
# passed on. SENDAT_BENCH_BUILD=DIR picks the build folder (default build-bench/),
# SENDAT_BENCH_NO_BUILD=1 skips building (SENDAT_BENCH_LABEL=TEXT then says in the results
# what that build is), SENDAT_BENCH_LOG_LEVEL=debug sets the consumers' log level (default
# info), SENDAT_BENCH_KEEP=1 keeps the work folder (logs,
# arrival records), SENDAT_BENCH_ONLY="burst spread" runs only the scenarios named (sink raw
# burst spread failover rolling native leader bulk api huge junk; bulk includes idle; leader only with
# --cluster: a burst with the task stream's, then the claims bucket's, leader node killed with
# -9 at its due time). Every process started here is stopped on exit.
# junk: JUNK_SHAPE=sealed (default) | garbage | realkey | one | slot picks what the junk looks
# like (sendat-rawjs junk --shape, bench/rawtools.c); JUNK_BEFORE=1 publishes it before the
# consumers start; JUNK_DUE_MS=MS (default 6000) sets how long after the junk the valid tasks
# are due; JUNK_N_OVERRIDE=N how many junk messages; JUNK_PARKED=N first puts N junk messages
# in and waits JUNK_PARKED_S (60) for them to be parked, as earlier runs on one deployment
# leave them.
#
# The server is $NATS_SERVER (default: nats-server on the PATH), as for the tests; its version
# is in every result (meta.nats_server) and above the table. To run on the current server:
#   NATS_SERVER=$(bash deploy/nats/fetch-server.sh) bash bench/run.sh --quick
# native: the server's own scheduler (ADR-51, 2.12 and later; skipped with a note on older
# servers) with the burst's, the spread's and the bulk's sizes: schedules fired into a
# work-queue subject, pulled, POSTed to the same sink with <= 256 in flight, acked.
set -euo pipefail

mode=quick
cluster=0
for a in "$@"; do
  case $a in
    --smoke) mode=smoke ;;
    --quick) mode=quick ;;
    --full) mode=full ;;
    --cluster) cluster=1 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run.sh: unknown argument $a (see --help)" >&2; exit 2 ;;
  esac
done

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${SENDAT_BENCH_BUILD:-$repo/build-bench}
analyze=(python3 "$repo/bench/analyze.py")

# ---- sizes -------------------------------------------------------------------------------
case $mode in
  smoke) RAW_N=2000 KV_N=1000 SYNC_S=1 BULK_N=2000 BURST_N=2000 SPREAD_N=2000 SPREAD_S=4 API_N=500 FAILOVER_N=2000 LEADER_N=2000 ROLL_N=1500 ROLL_S=6
         IDLE_S=3 IDLE_SETTLE=1 LOAD_S=0.5 MARGIN_MS=3000 ALIGN=0 HUGE_N=0 WAIT_EXTRA_S=20
         JUNK_N=2000 JUNK_VALID=100 ;;
  quick) RAW_N=50000 KV_N=20000 SYNC_S=2 BULK_N=200000 BURST_N=20000 SPREAD_N=20000 SPREAD_S=20 API_N=10000 FAILOVER_N=20000 LEADER_N=20000 ROLL_N=10000 ROLL_S=30
         IDLE_S=15 IDLE_SETTLE=8 LOAD_S=1 MARGIN_MS=24000 ALIGN=1 HUGE_N=0 WAIT_EXTRA_S=40
         JUNK_N=100000 JUNK_VALID=1000 ;;
  full)  RAW_N=200000 KV_N=50000 SYNC_S=5 BULK_N=1000000 BURST_N=100000 SPREAD_N=60000 SPREAD_S=60 API_N=20000 FAILOVER_N=20000 LEADER_N=20000 ROLL_N=30000 ROLL_S=60
         IDLE_S=60 IDLE_SETTLE=10 LOAD_S=3 MARGIN_MS=24000 ALIGN=1 HUGE_N=10000000 WAIT_EXTRA_S=120
         JUNK_N=100000 JUNK_VALID=1000 ;;
esac
CONSUMERS=2
JUNK_N=${JUNK_N_OVERRIDE:-$JUNK_N} # junk: another number of junk messages
# MARGIN_MS: burst, spread and failover tasks are due this long after scheduling starts (plus
# the scheduling time, then aligned up to a slot). 24 s leaves their slots more than lead + slot
# (12 s) ahead when the last line is published even on a loaded machine, so they are booked
# straight into their slots, as tasks booked ahead are (with 14 s, a busy run moved part of the
# first slot through the window level).
SLOT_MS=10000         # sendat init's default slot: a burst "at 07:00:00" starts a slot
WINDOW_MS=600000      # and its default window
JUNK_DUE_MS=${JUNK_DUE_MS:-6000} # junk: the valid tasks are due this long after the junk is in (issue 24)
SCHED_GUESS_PER_S=15000 # to choose due times the producer will not overrun
RESEND_SETTLE_S=8       # failover: after the last first arrival, resends still land
SETTLE_MAX_S=120        # leader: the longest wait for every task to be acked

# ---- build -------------------------------------------------------------------------------
if [ -z "${SENDAT_BENCH_NO_BUILD:-}" ]; then
  echo "== building in $build"
  cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSENDAT_TESTS=OFF >/dev/null
  cmake --build "$build" -j"$(nproc 2>/dev/null || echo 2)" \
        --target sendat sendat-consumer sendat-rawjs sendat-sink sendat-httpload >/dev/null
fi
SENDAT=$build/producer/sendat
CONSUMER=$build/consumer/sendat-consumer
RAWJS=$build/bench/sendat-rawjs
SINK=$build/bench/sendat-sink
HTTPLOAD=$build/bench/sendat-httpload
for b in "$SENDAT" "$CONSUMER" "$RAWJS" "$SINK" "$HTTPLOAD"; do
  [ -x "$b" ] || { echo "run.sh: $b is missing (build failed?)" >&2; exit 1; }
done

# ---- processes ---------------------------------------------------------------------------
# shellcheck source=bench/lib.sh
source "$repo/bench/lib.sh"
command -v "$NATS_BIN" >/dev/null || { echo "run.sh: $NATS_BIN is not installed" >&2; exit 1; }
bench_start sendat-bench

# ---- scenarios ---------------------------------------------------------------------------
# The scenarios of tasks due now (burst, spread, failover, rolling, leader) and the server's own
# scheduler beside them (native) are in bench/due.sh.
# shellcheck source=bench/due.sh
source "$repo/bench/due.sh"
# sendat serve: one client booking one task at a time over keep-alive, then a batch of API_N
# * 10 lines through POST /v1/batches beside sendat schedule --batch of the same file. The
# per-token rate limit is off (SENDAT_API_RATE=0): the scenario measures the server's own cost.
scenario_api() {
  local d=$work/api port tok file b0 b1 c0 c1
  mkdir -p "$d"
  echo "== api: $API_N single bookings, then $((API_N * 10)) in one batch beside schedule --batch"
  start_servers "$d"
  init_sendat "$d"
  read -r port < <(free_ports 1)
  tok=$(SENDAT_API_TOKENS_FILE=$d/tokens "$SENDAT" token create --role producer)
  SENDAT_NATS_URL=$NATS_URL SENDAT_KEY_FILE=$KEY SENDAT_API_TOKENS_FILE=$d/tokens \
    SENDAT_API_ADDR=127.0.0.1:$port SENDAT_API_RATE=0 "$SENDAT" serve 2>"$d/serve.log" &
  pids+=($!)
  local serve=$!
  for ((k = 0; k < 100; k++)); do grep -q api_listening "$d/serve.log" && break; sleep 0.1; done
  python3 - "$port" "$tok" "$API_N" "$(( $(now_ms) + 86400000 ))" >"$d/single.json" <<'PY'
import http.client, json, sys, time
port, tok, n, due = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
c = http.client.HTTPConnection("127.0.0.1", port)
h = {"Authorization": "Bearer " + tok, "Content-Type": "application/json"}
t = time.time()
for i in range(n):
    c.request("POST", "/v1/tasks", json.dumps({"at": "@%d" % (due // 1000 + i % 3600),
              "webhook": "http://127.0.0.1:9/hook", "data": "{\"order\":%d}" % i}), h)
    r = c.getresponse(); r.read()
    assert r.status == 201, r.status
print(json.dumps({"n": n, "wall_s": round(time.time() - t, 3)}))
PY
  file=$d/tasks.ndjson
  gen_tasks "$file" $((API_N * 10)) $(( $(now_ms) + 86400000 )) 3600000 "http://127.0.0.1:9/hook"
  c0=$(ticks "$serve"); b0=$(now_ms)
  curl -s -o "$d/batch.out" -H "Authorization: Bearer $tok" --data-binary @"$file" \
    "http://127.0.0.1:$port/v1/batches"
  b1=$(now_ms); c1=$(ticks "$serve")
  schedule "$d" "$file"
  fact api single "$(cat "$d/single.json")"
  fact api single_rate "$(awk -v n="$API_N" -v t="$(grep -o '"wall_s": [0-9.]*' "$d/single.json" | cut -d' ' -f2)" 'BEGIN{printf "%.0f", n / t}')"
  fact api batch_n $((API_N * 10))
  fact api batch_rate "$(awk -v n=$((API_N * 10)) -v ms=$((b1 - b0)) 'BEGIN{printf "%.0f", n * 1000 / ms}')"
  fact api batch_scheduled "$(grep -o '"scheduled":[0-9]*' "$d/batch.out" | cut -d: -f2)"
  fact api batch_serve_cpu_s "$(secs $((c1 - c0)))"
  fact api cli_rate "$(awk -v n=$((API_N * 10)) -v t="$(grep -o '"wall_s": [0-9.]*' "$d/schedule.json" | cut -d' ' -f2)" 'BEGIN{printf "%.0f", n / t}')"
  rm -f "$file"
  stop_pid "$serve" 10
  stop_servers
}

scenario_sink() {
  local d=$work/sink out
  mkdir -p "$d"
  echo "== sink capacity: ${LOAD_S} s of keep-alive POSTs"
  start_sink "$d"
  out=$("$HTTPLOAD" --port "$SINK_PORT" --conns 64 --seconds "$LOAD_S" || true)
  stop_pid "$SINK_PID" 10
  fact sink rate "$(echo "$out" | grep -o 'rate=[0-9]*' | cut -d= -f2)"
  fact sink line "\"$out\""
}

scenario_raw() {
  local d=$work/raw sealed size raw reps=1
  ((cluster)) && reps=3
  mkdir -p "$d"
  sealed=$("$RAWJS" sealed --url "http://127.0.0.1:65535/hook" --data "$SAMPLE_DATA")
  size=$(echo "$sealed" | grep -o '"sealed_bytes":[0-9]*' | cut -d: -f2)
  echo "== raw JetStream: $RAW_N messages of $size bytes (a sealed task)"
  start_servers "$d"
  # the pull+POST+ack phases: the least any delivery costs, at full speed and paced as the
  # spread scenario's tasks are due (each sent on its own at its instant)
  start_sink "$d"
  raw=$("$RAWJS" bench --server "$NATS_URL" --n "$RAW_N" --size "$size" --replicas "$reps" \
        --kv-n "$KV_N" --sync-seconds "$SYNC_S" --server-pid "$(IFS=,; echo "${SERVER_PIDS[*]}")" \
        --sink "http://127.0.0.1:$SINK_PORT/raw" --pace-n "$SPREAD_N" --pace-seconds "$SPREAD_S" \
        2>"$d/rawjs.err") || { cat "$d/rawjs.err" >&2; return 1; }
  sed 's/^/   /' "$d/rawjs.err"
  stop_pid "$SINK_PID" 10
  stop_servers
  fact raw sealed "$sealed"
  fact raw raw "$raw"
}

# bulk scheduling of tasks due tomorrow, then the idle consumers with those tasks waiting
scenario_bulk_idle() {
  local d=$work/bulk now file s0 s1 c0 c1 i pct worst=0 cpus=() info msgs bytes
  mkdir -p "$d"
  echo "== bulk: $BULK_N tasks due tomorrow through sendat schedule --batch"
  start_servers "$d"
  init_sendat "$d"
  fact bulk server_rss_mb_before "$(rss_mb "${SERVER_PIDS[@]}")"
  now=$(now_ms)
  file=$d/tasks.ndjson
  gen_tasks "$file" "$BULK_N" $((now + 86400000)) 3600000 "http://127.0.0.1:9/hook"
  s0=$(ticks "${SERVER_PIDS[@]}")
  schedule "$d" "$file"
  s1=$(ticks "${SERVER_PIDS[@]}")
  rm -f "$file"
  info=$("$RAWJS" info --server "$NATS_URL" --stream SENDAT_TASKS)
  msgs=$(echo "$info" | grep -o '"msgs":[0-9]*' | cut -d: -f2)
  bytes=$(echo "$info" | grep -o '"bytes":[0-9]*' | cut -d: -f2)
  fact bulk n "$BULK_N"
  fact bulk producer "$(cat "$d/schedule.json")"
  # the summary without its list of every booked id (75 MB at 1,000,000)
  fact bulk summary "$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
d["ids"] = "(%d ids left out)" % len(d.get("ids", []))
print(json.dumps(d))' "$d/schedule.out")"
  fact bulk stream "$info"
  fact bulk rate "$(awk -v n="$BULK_N" -v t="$(grep -o '"wall_s": [0-9.]*' "$d/schedule.json" | cut -d' ' -f2)" 'BEGIN{printf "%.0f", n / t}')"
  fact bulk bytes_per_task "$(awk -v b="$bytes" -v m="$msgs" 'BEGIN{printf "%.1f", m ? b / m : 0}')"
  fact bulk server_cpu_s "$(secs $((s1 - s0)))"
  fact bulk server_rss_mb "$(rss_mb "${SERVER_PIDS[@]}")"

  echo "== idle: $CONSUMERS consumers, $msgs tasks due tomorrow, ${IDLE_S} s"
  s0=$(ticks "${SERVER_PIDS[@]}")
  start_consumers "$d" "$CONSUMERS"
  sleep "$IDLE_SETTLE" # consumers create their level durables: the server scans the stream
  s1=$(ticks "${SERVER_PIDS[@]}")
  fact idle server_cpu_s_consumers_start "$(secs $((s1 - s0)))"
  fact idle settle_s "$IDLE_SETTLE"
  for i in "${!CONS_PIDS[@]}"; do c0[i]=$(ticks "${CONS_PIDS[i]}"); done
  s0=$(ticks "${SERVER_PIDS[@]}")
  sleep "$IDLE_S"
  for i in "${!CONS_PIDS[@]}"; do
    c1=$(ticks "${CONS_PIDS[i]}")
    pct=$(awk -v t=$((c1 - c0[i])) -v hz="$HZ" -v s="$IDLE_S" 'BEGIN{printf "%.2f", 100 * t / hz / s}')
    cpus+=("$pct")
    worst=$(awk -v a="$worst" -v b="$pct" 'BEGIN{print (b > a ? b : a)}')
  done
  s1=$(ticks "${SERVER_PIDS[@]}")
  stop_consumers
  fact idle backlog "$msgs"
  fact idle seconds "$IDLE_S"
  fact idle consumer_cpu_pct "[$(IFS=,; echo "${cpus[*]}")]"
  fact idle consumer_cpu_pct_max "$worst"
  fact idle server_cpu_pct "$(awk -v t=$((s1 - s0)) -v hz="$HZ" -v s="$IDLE_S" 'BEGIN{printf "%.2f", 100 * t / hz / s}')"
  fact idle pulled "$(counter_sum "$d" pulled)"
  stop_servers
}

scenario_huge() {
  local d=$work/huge now file info msgs bytes
  mkdir -p "$d"
  echo "== 10M: $HUGE_N tasks far ahead"
  start_servers "$d"
  init_sendat "$d"
  now=$(now_ms)
  file=$d/tasks.ndjson
  gen_tasks "$file" "$HUGE_N" $((now + 30 * 86400000)) 86400000 "http://127.0.0.1:9/hook"
  schedule "$d" "$file"
  rm -f "$file"
  info=$("$RAWJS" info --server "$NATS_URL" --stream SENDAT_TASKS)
  msgs=$(echo "$info" | grep -o '"msgs":[0-9]*' | cut -d: -f2)
  bytes=$(echo "$info" | grep -o '"bytes":[0-9]*' | cut -d: -f2)
  fact huge n "$HUGE_N"
  fact huge producer "$(cat "$d/schedule.json")"
  fact huge stream "$info"
  fact huge rate "$(awk -v n="$HUGE_N" -v t="$(grep -o '"wall_s": [0-9.]*' "$d/schedule.json" | cut -d' ' -f2)" 'BEGIN{printf "%.0f", n / t}')"
  fact huge bytes_per_task "$(awk -v b="$bytes" -v m="$msgs" 'BEGIN{printf "%.1f", m ? b / m : 0}')"
  fact huge server_rss_mb "$(rss_mb "${SERVER_PIDS[@]}")"
  stop_servers
}

# issue 24: JUNK_N messages that look sealed under an unknown key (what a keyless producer-role
# client can publish) in the window of JUNK_VALID valid tasks due JUNK_DUE_MS after the junk is
# in; before the park (consumer/wheel/park.h) the junk held every max-ack-pending place of the
# window and the valid tasks were still unsent after 4.5 minutes. Reports their lateness, what
# was parked and how much the consumers logged.
scenario_junk() {
  local d=$work/junk now due w j0 file lines bytes i slot=0 c0 shape=${JUNK_SHAPE:-sealed}
  mkdir -p "$d"
  echo "== junk: $JUNK_N junk messages ($shape$( ((${JUNK_BEFORE:-0})) && echo ', before the consumers start')) in the window of $JUNK_VALID webhooks due ${JUNK_DUE_MS} ms after, $CONSUMERS consumers"
  start_servers "$d"
  init_sendat "$d"
  start_sink "$d"
  ((${JUNK_BEFORE:-0})) || start_consumers "$d" "$CONSUMERS"
  if ((${JUNK_PARKED:-0} > 0)); then # junk of earlier runs, parked by now (the park keeps it an hour)
    now=$(now_ms)
    fact junk parked_before "$("$RAWJS" junk --server "$NATS_URL" --n "$JUNK_PARKED" --window $(( now / WINDOW_MS * WINDOW_MS )))"
    sleep "${JUNK_PARKED_S:-60}"
  fi
  if [ "$shape" = realkey ]; then # a stored task to read the deployment's key id from
    gen_tasks "$d/far.ndjson" 1 $(( $(now_ms) + 86400000 )) 1000 "http://127.0.0.1:$SINK_PORT/far"
    schedule "$d" "$d/far.ndjson"
  fi
  now=$(now_ms)
  due=$((now + JUNK_DUE_MS + JUNK_N / 20)) # the junk goes in at about 50,000/s
  w=$((due / WINDOW_MS * WINDOW_MS))
  [ "$shape" = slot ] && slot=$((due / SLOT_MS * SLOT_MS))
  j0=$(now_ms)
  c0=$(ticks "${SERVER_PIDS[@]}")
  fact junk publish "$("$RAWJS" junk --server "$NATS_URL" --n "$JUNK_N" --window "$w" --shape "$shape" --slot "$slot")"
  ((${JUNK_BEFORE:-0})) && start_consumers "$d" "$CONSUMERS"
  if [ "$shape" = slot ] && ((due > $(now_ms) + 2000)); then
    : # the valid tasks stay due in the slot the junk went to
  else
    due=$(( $(now_ms) + JUNK_DUE_MS ))
  fi
  ((due / WINDOW_MS * WINDOW_MS == w)) || echo "   (the valid tasks fall in the next window: the junk does not stand before them)"
  [ "$shape" != slot ] || ((due / SLOT_MS * SLOT_MS == slot)) || echo "   (the valid tasks fall in the next slot: the junk does not stand before them)"
  file=$d/tasks.ndjson
  gen_tasks "$file" "$JUNK_VALID" "$due" 1000 "http://127.0.0.1:$SINK_PORT/hook"
  schedule "$d" "$file"
  echo "   junk in after $(( due - JUNK_DUE_MS - j0 )) ms; valid tasks due in $(( (due - $(now_ms)) / 1000 )) s"
  wait_delivered "$JUNK_VALID" $((due + 1000 + WAIT_EXTRA_S * 1000)) || true
  fact junk server_cpu_s "$(secs $(( $(ticks "${SERVER_PIDS[@]}") - c0 )))"
  fact junk server_wall_s "$(( ($(now_ms) - j0) / 1000 ))"
  sleep 12 # a summary interval of the log passes
  stop_consumers
  stop_pid "$SINK_PID" 10
  fact junk shape "\"$shape\""
  fact junk before_consumers "${JUNK_BEFORE:-0}"
  fact junk parked_first "${JUNK_PARKED:-0}"
  fact junk n "$JUNK_N"
  fact junk valid "$JUNK_VALID"
  fact junk lat "$("${analyze[@]}" lateness "$d/arrivals.txt" "$JUNK_VALID")"
  lines=0 bytes=0
  for ((i = 1; i <= CONSUMERS; i++)); do
    lines=$((lines + $(grep -c -E 'event=(unknown_key|parked|dead_letter) ' "$d/consumer-$i.log" || true)))
    bytes=$((bytes + $(stat -c %s "$d/consumer-$i.log")))
  done
  fact junk log_lines_per_event "$lines"
  fact junk log_bytes "$bytes"
  for k in parked key_waits dead sent; do fact junk "$k" "$(counter_sum "$d" "$k")"; done
  stop_servers
}

# ---- run ---------------------------------------------------------------------------------
stamp=$(date -u +%Y%m%dT%H%M%SZ)
started=$(now_ms)
KEY=$work/sendat.key
"$SENDAT" keygen "$KEY" >/dev/null
fact meta stamp "$stamp"
fact meta mode "$mode"
fact meta cluster "$cluster"
fact meta cores "$(nproc)"
fact meta loadavg_at_start "\"$(cut -d' ' -f1-3 /proc/loadavg)\""
fact meta cpu "\"$(awk -F': ' '/model name/{print $2; exit}' /proc/cpuinfo)\""
fact meta nats_server "\"$("$NATS_BIN" --version 2>&1 | head -n 1)\""
fact meta nats_server_version "\"$(nats_version)\""
fact meta nats_server_path "\"$(command -v "$NATS_BIN")\""
fact meta commit "\"$(git -C "$repo" describe --always --dirty 2>/dev/null || echo unknown)\""
fact meta label "\"${SENDAT_BENCH_LABEL:-}\"" # what was measured, when the build is not this tree
fact meta consumer_env "\"$(env | grep -E '^SENDAT_(FETCH_BATCH|MAX_INFLIGHT|MAX_HELD)=' | tr '\n' ' ')\""
echo "== sendat benchmark: $mode$( ((cluster)) && echo ', 3-node cluster'), nats-server $(nats_version), $(nproc) cores, work folder $work"

wanted() { [ -z "${SENDAT_BENCH_ONLY:-}" ] || [[ " $SENDAT_BENCH_ONLY " == *" $1 "* ]]; }
wanted sink && scenario_sink
wanted raw && scenario_raw
wanted burst && scenario_burst
wanted spread && scenario_spread
wanted failover && scenario_failover
wanted rolling && scenario_rolling
wanted native && scenario_native
wanted leader && scenario_leader
wanted bulk && scenario_bulk_idle
wanted api && scenario_api
wanted junk && scenario_junk
((HUGE_N > 0)) && wanted huge && scenario_huge
fact meta seconds "$(( ($(now_ms) - started) / 1000 ))"
echo
"${analyze[@]}" report "$work" "$repo/bench/results"
echo "took $(( ($(now_ms) - started) / 1000 )) s"
