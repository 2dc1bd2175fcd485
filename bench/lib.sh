# sendat's benchmark helpers, sourced by bench/run.sh and bench/broker_cost.sh. They use the
# globals work (a temporary folder) and pids (every process started, stopped on exit by
# cleanup), both set by bench_start, and the caller's cluster (0/1), SENDAT, KEY, analyze.
# The server is $NATS_SERVER, as for the tests (default: nats-server on the PATH).
# NATS_EXTRA_ARGS (an array, default empty) is added to every server's command line, e.g.
# (-m -1 --profile -1) for a monitoring and a profiling port each (in its .ports file).

NATS_BIN=${NATS_SERVER:-nats-server}
nats_version() { "$NATS_BIN" --version 2>&1 | grep -o 'v[0-9][0-9.]*' | head -n 1 | tr -d v; }
nats_at_least() { # nats_at_least 2.12: whether the server's version is that or later
  printf '%s\n%s\n' "$1" "$(nats_version)" | sort -V -C
}

bench_start() { # bench_start PREFIX: a work folder /tmp/PREFIX-XXXXXX, cleaned up on exit
  work=$(mktemp -d "/tmp/$1-XXXXXX")
  mkdir -p "$work/facts"
  pids=()
  trap cleanup EXIT
  trap 'exit 130' INT TERM
}

alive() { # a child that exited but was not waited for is a zombie: not alive
  [ -r "/proc/$1/stat" ] && ! grep -q '^[0-9]* ([^)]*) Z' "/proc/$1/stat" 2>/dev/null
}

forget() {
  local keep=() p
  for p in "${pids[@]}"; do [ "$p" = "$1" ] || keep+=("$p"); done
  pids=("${keep[@]+"${keep[@]}"}")
}

stop_pid() { # stop_pid PID [SECONDS]: TERM, then KILL after SECONDS
  local pid=$1 t=${2:-15} k
  if alive "$pid"; then
    kill -TERM "$pid" 2>/dev/null || true
    for ((k = 0; k < t * 10; k++)); do alive "$pid" || break; sleep 0.1; done
    alive "$pid" && kill -KILL "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
  forget "$pid"
}

cleanup() {
  local rc=$? i
  trap - EXIT INT TERM
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do stop_pid "${pids[i]}" 5; done
  if [ -n "${SENDAT_BENCH_KEEP:-}" ]; then echo "work folder kept: $work"; else rm -rf "$work"; fi
  exit "$rc"
}

now_ms() { date +%s%3N; }

ticks() { # CPU clock ticks (user + system) of the given processes
  local sum=0 p f
  for p in "$@"; do
    if [ -r "/proc/$p/stat" ]; then
      read -r -a f < <(sed 's/^.*) //' "/proc/$p/stat")
      sum=$((sum + f[11] + f[12]))
    fi
  done
  echo "$sum"
}
HZ=$(getconf CLK_TCK)
secs() { awk -v t="$1" -v hz="$HZ" 'BEGIN{printf "%.2f", t / hz}'; }

hwm_mb() { # peak RSS in MB; with several processes the largest
  local max=0 p v
  for p in "$@"; do
    v=$(awk '/^VmHWM/{print $2}' "/proc/$p/status" 2>/dev/null || echo 0)
    [ "${v:-0}" -gt "$max" ] && max=$v
  done
  awk -v k="$max" 'BEGIN{printf "%.0f", k / 1024}'
}
rss_mb() { # current RSS in MB, summed
  local sum=0 p v
  for p in "$@"; do
    v=$(awk '/^VmRSS/{print $2}' "/proc/$p/status" 2>/dev/null || echo 0)
    sum=$((sum + ${v:-0}))
  done
  awk -v k="$sum" 'BEGIN{printf "%.0f", k / 1024}'
}

wait_file() { # wait_file FILE SECONDS
  local k
  for ((k = 0; k < $2 * 10; k++)); do [ -s "$1" ] && return 0; sleep 0.1; done
  echo "run.sh: $1 did not appear" >&2
  return 1
}

free_ports() { # N free loopback TCP ports
  python3 -c '
import socket, sys
socks = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in socks: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))
for s in socks: s.close()' "$1"
}

# start_servers DIR: sets NATS_URL and SERVER_PIDS
start_servers() {
  local d=$1 i k routes="" cports urls=() f
  SERVER_PIDS=()
  if ((cluster)); then
    read -r -a cports < <(free_ports 3)
    for i in 0 1 2; do routes+="${routes:+,}nats://127.0.0.1:${cports[i]}"; done
    for i in 0 1 2; do
      mkdir -p "$d/n$i"
      "$NATS_BIN" -a 127.0.0.1 -p -1 -n "bench-$i" -js -sd "$d/n$i/js" --ports_file_dir "$d/n$i" \
        --cluster_name bench --cluster "nats://127.0.0.1:${cports[i]}" --routes "$routes" \
        -l "$d/n$i/nats.log" "${NATS_EXTRA_ARGS[@]+"${NATS_EXTRA_ARGS[@]}"}" &
      SERVER_PIDS+=($!)
      pids+=($!)
    done
  else
    mkdir -p "$d/n0"
    "$NATS_BIN" -a 127.0.0.1 -p -1 -js -sd "$d/n0/js" --ports_file_dir "$d/n0" -l "$d/n0/nats.log" \
      "${NATS_EXTRA_ARGS[@]+"${NATS_EXTRA_ARGS[@]}"}" &
    SERVER_PIDS+=($!)
    pids+=($!)
  fi
  for i in "${!SERVER_PIDS[@]}"; do
    for ((k = 0; k < 100; k++)); do
      f=$(ls "$d/n$i"/*.ports 2>/dev/null | head -n 1 || true)
      [ -n "$f" ] && grep -q 'nats://' "$f" && break
      sleep 0.1
    done
    [ -n "$f" ] || { echo "run.sh: nats-server $i did not start" >&2; return 1; }
    urls+=("$(grep -o 'nats://127.0.0.1:[0-9]*' "$f" | head -n 1)")
  done
  NATS_URL=$(IFS=,; echo "${urls[*]}")
}

stop_servers() { local p; for p in "${SERVER_PIDS[@]}"; do stop_pid "$p" 15; done; }

init_sendat() { # streams and buckets; a new cluster needs a moment to elect a leader
  local d=$1 k reps=()
  ((cluster)) && reps=(--replicas 3)
  for ((k = 0; k < 60; k++)); do
    SENDAT_NATS_URL=$NATS_URL "$SENDAT" init "${reps[@]+"${reps[@]}"}" >>"$d/init.log" 2>&1 && return 0
    sleep 0.5
  done
  echo "run.sh: sendat init failed:" >&2
  tail -n 5 "$d/init.log" >&2
  return 1
}

start_sink() { # start_sink DIR: sets SINK_PID, SINK_PORT
  "$SINK" --out "$1/arrivals.txt" --port-file "$1/sink.port" --threads 2 2>"$1/sink.log" &
  SINK_PID=$!
  pids+=($!)
  wait_file "$1/sink.port" 10
  SINK_PORT=$(cat "$1/sink.port")
}

sink_count() {
  local v
  v=$(curl -s --max-time 2 "http://127.0.0.1:$SINK_PORT/count" 2>/dev/null) || v=0
  v=${v%% *}
  echo "${v:-0}"
}

start_consumer() { # start_consumer DIR I: consumer bench-I logging to DIR/consumer-I.log, its pid CONS_PIDS[I-1]
  local d=$1 i=$2
  SENDAT_NATS_URL=$NATS_URL SENDAT_KEY_FILE=$KEY SENDAT_CONSUMER_NAME="bench-$i" SENDAT_HTTP_ADDR=off \
    SENDAT_LOG_FORMAT=logfmt SENDAT_LOG_LEVEL="${SENDAT_BENCH_LOG_LEVEL:-info}" "$CONSUMER" 2>"$d/consumer-$i.log" &
  CONS_PIDS[i - 1]=$!
  pids+=($!)
}

wait_started() { # wait_started DIR I: until consumer I logged event=started (10 s)
  local d=$1 i=$2 k
  for ((k = 0; k < 100; k++)); do grep -q 'event=started' "$d/consumer-$i.log" && break; sleep 0.1; done
  grep -q 'event=started' "$d/consumer-$i.log" || { echo "run.sh: consumer $i did not start" >&2; tail -n 3 "$d/consumer-$i.log" >&2; return 1; }
}

start_consumers() { # start_consumers DIR N: sets CONS_PIDS
  local d=$1 i
  CONS_PIDS=()
  for ((i = 1; i <= $2; i++)); do start_consumer "$d" "$i"; done
  for ((i = 1; i <= $2; i++)); do wait_started "$d" "$i" || return 1; done
}

stop_consumers() { local p; for p in "${CONS_PIDS[@]}"; do stop_pid "$p" 30; done; }

counter_sum() { # counter_sum DIR NAME: NAME= summed over the consumers' last counters lines
  # (a restarted consumer's earlier runs are consumer-I.run<K>.log)
  local d=$1 f sum=0 v
  for f in "$d"/consumer-*.log; do
    [ -e "$f" ] || continue
    v=$(grep 'event=counters' "$f" 2>/dev/null | tail -n 1 | grep -o " $2=[0-9]*" | cut -d= -f2 || true)
    sum=$((sum + ${v:-0}))
  done
  echo "$sum"
}

# gen_tasks FILE N FIRST_DUE_MS SPREAD_MS URL: N NDJSON lines, due times spread evenly
gen_tasks() {
  awk -v n="$2" -v d0="$3" -v sp="$4" -v hook="$5" 'BEGIN {
    for (i = 0; i < n; i++) {
      d = d0 + (sp > 0 ? int(i * sp / n) : 0)
      printf "{\"at\":\"@%d.%03d\",\"webhook\":\"%s\",\"data\":\"{\\\"order\\\":%07d,\\\"customer\\\":\\\"c-%07d\\\",\\\"event\\\":\\\"payment_reminder\\\",\\\"note\\\":\\\"pay before the due date\\\"}\"}\n", int(d / 1000), d % 1000, hook, i, i
    }
  }' >"$1"
}
SAMPLE_DATA='{"order":0123456,"customer":"c-0123456","event":"payment_reminder","note":"pay before the due date"}'

schedule() { # schedule DIR FILE: runs sendat schedule --batch, times it into DIR/schedule.json
  SENDAT_NATS_URL=$NATS_URL SENDAT_KEY_FILE=$KEY \
    "${analyze[@]}" timed "$1/schedule.json" "$SENDAT" schedule --batch "$2" --json >"$1/schedule.out" 2>"$1/schedule.err" || {
    echo "run.sh: sendat schedule --batch failed:" >&2
    tail -n 5 "$1/schedule.err" >&2
    return 1
  }
}

wait_delivered() { # wait_delivered N DEADLINE_MS: until the sink saw N requests
  # every 0.5 s: a curl and a date every 50 ms took a quarter of the 2 cores from the run
  local n=$1 deadline=$2 c=0
  while [ "$(now_ms)" -lt "$deadline" ]; do
    c=$(sink_count)
    [ "$c" -ge "$n" ] && return 0
    sleep 0.5
  done
  echo "run.sh: only $c of $n deliveries before the deadline" >&2
}

fact() { echo "$2=$3" >>"$work/facts/$1.kv"; }
