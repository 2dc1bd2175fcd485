# Sourced by bench/run.sh (its sizes, processes of bench/lib.sh and work folder set): the
# scenarios of tasks due now, where lateness at the sink is the figure (burst, spread, failover,
# rolling, leader), and the same loads through the server's own scheduler (native).
# shellcheck shell=bash disable=SC2153,SC2154 # sizes, work, analyze and cluster: run.sh's

# run_due NAME N SPREAD_MS: N webhooks due from one instant on (SPREAD_MS 0: all at once),
# CONSUMERS consumers; measures lateness at the sink and CPU of consumers and server
run_due() {
  local name=$1 n=$2 spread=$3 d=$work/$1 now due c0 s0 c1 s1 t0 file
  mkdir -p "$d"
  start_servers "$d"
  init_sendat "$d"
  start_sink "$d"
  start_consumers "$d" "$CONSUMERS"
  now=$(now_ms)
  due=$((now + MARGIN_MS + n * 1000 / SCHED_GUESS_PER_S))
  ((ALIGN)) && due=$(((due + SLOT_MS - 1) / SLOT_MS * SLOT_MS))
  file=$d/tasks.ndjson
  gen_tasks "$file" "$n" "$due" "$spread" "http://127.0.0.1:$SINK_PORT/hook"
  c0=$(ticks "${CONS_PIDS[@]}")
  s0=$(ticks "${SERVER_PIDS[@]}")
  t0=$(now_ms)
  schedule "$d" "$file"
  echo "   scheduled in $(grep -o '"wall_s": [0-9.]*' "$d/schedule.json" | cut -d' ' -f2) s; first due in $(( (due - $(now_ms)) / 1000 )) s"
  [ -n "${KILL_AFTER_MS:-}" ] && kill_first_consumer_at $((due + KILL_AFTER_MS))
  [ -n "${KILL_LEADER_OF:-}" ] && kill_leader_at "$name" "$due" "$KILL_LEADER_OF"
  [ -n "${ROLL:-}" ] && roll_consumers "$d" "$due" "$spread"
  wait_delivered "$n" $((due + spread + WAIT_EXTRA_S * 1000))
  [ -n "${KILL_AFTER_MS:-}" ] && sleep "$RESEND_SETTLE_S" # resends of its sends in flight land
  # acks lost with a leader come back after the ack wait: sent twice would show by then
  [ -n "${KILL_LEADER_OF:-}" ] && wait_settled $(($(now_ms) + SETTLE_MAX_S * 1000))
  sleep 0.3 # duplicates, if any, have a moment to arrive
  c1=$(ticks "${CONS_PIDS[@]}")
  s1=$(ticks "${SERVER_PIDS[@]}")
  fact "$name" n "$n"
  fact "$name" seconds "$(awk -v s="$spread" 'BEGIN{print s / 1000}')"
  fact "$name" due_ms "$due"
  fact "$name" scheduled_ahead_s "$(awk -v a="$due" -v b="$t0" 'BEGIN{printf "%.1f", (a - b) / 1000}')"
  fact "$name" producer "$(cat "$d/schedule.json")"
  [ -z "${ROLL:-}" ] && fact "$name" consumer_cpu_s "$(secs $((c1 - c0)))" # restarted: other pids
  fact "$name" server_cpu_s "$(secs $((s1 - s0)))"
  fact "$name" consumer_rss_mb "$(hwm_mb "${CONS_PIDS[@]}")"
  fact "$name" server_rss_mb "$(hwm_mb "${SERVER_PIDS[@]}")"
  fact "$name" claims "$("$RAWJS" claims --server "$NATS_URL" 2>>"$d/claims.err" || echo '{}')"
  stop_consumers
  stop_pid "$SINK_PID" 10
  fact "$name" lat "$("${analyze[@]}" lateness "$d/arrivals.txt" "$n")"
  for k in pulled moved sent failed retried duplicates; do fact "$name" "$k" "$(counter_sum "$d" "$k")"; done
  stop_servers
}

# roll_consumers DIR DUE_MS SPREAD_MS: a rolling restart under the load: the consumers in turn,
# evenly spaced over the spread, get SIGTERM and are started again (same name) once exited
roll_consumers() {
  local d=$1 due=$2 spread=$3 n=${#CONS_PIDS[@]} i t t0 stops=() k
  for ((i = 1; i <= n; i++)); do
    t=$((due + i * spread / (n + 1) - $(now_ms)))
    ((t > 0)) && sleep "$(awk -v t="$t" 'BEGIN{printf "%.3f", t / 1000}')"
    t0=$(now_ms)
    stop_pid "${CONS_PIDS[i - 1]}" 30
    stops+=($(($(now_ms) - t0)))
    for ((k = 1; ; k++)); do [ -e "$d/consumer-$i.run$k.log" ] || break; done
    mv "$d/consumer-$i.log" "$d/consumer-$i.run$k.log"
    start_consumer "$d" "$i"
    wait_started "$d" "$i"
    echo "   restarted consumer $i at due + $((t0 - due)) ms (it took $((stops[i - 1])) ms to stop)"
  done
  fact rolling stop_ms "[$(IFS=,; echo "${stops[*]}")]"
  fact rolling handed_back "$(cat "$d"/consumer-*.run*.log | grep -o 'event=inbox_closed handed_back=[0-9]*' |
                              awk -F= '{s += $NF} END {print s + 0}')"
}

kill_first_consumer_at() { # kill_first_consumer_at MS: kill -9 of the first consumer at that time
  local t=$(($1 - $(now_ms)))
  ((t > 0)) && sleep "$(awk -v t="$t" 'BEGIN{printf "%.3f", t / 1000}')"
  kill -KILL "${CONS_PIDS[0]}" 2>/dev/null || true
  echo "   killed consumer 1 (pid ${CONS_PIDS[0]}) with -9 at due + $((KILL_AFTER_MS + $(now_ms) - $1)) ms"
}

# kill_leader_at NAME DUE_MS STREAM: kill -9 of the node leading STREAM at DUE_MS (looked up a
# second before), and which of the task stream and the claims bucket it led
kill_leader_at() {
  local name=$1 due=$2 stream=$3 t who i s led=()
  t=$((due - 1000 - $(now_ms)))
  ((t > 0)) && sleep "$(awk -v t="$t" 'BEGIN{printf "%.3f", t / 1000}')"
  who=$(leader_of "$stream")
  i=${who#bench-}
  [[ $i =~ ^[0-2]$ ]] || { echo "run.sh: $stream has no leader (\"$who\")" >&2; return 1; }
  for s in SENDAT_TASKS KV_sendat_claims; do [ "$(leader_of "$s")" = "$who" ] && led+=("$s"); done
  t=$((due - $(now_ms)))
  ((t > 0)) && sleep "$(awk -v t="$t" 'BEGIN{printf "%.3f", t / 1000}')"
  kill -KILL "${SERVER_PIDS[i]}" 2>/dev/null || true
  echo "   killed $who (pid ${SERVER_PIDS[i]}), leader of ${led[*]}, with -9 at due + $(($(now_ms) - due)) ms"
  fact "$name" killed "\"$who\""
  fact "$name" killed_led "\"${led[*]}\""
}

leader_of() { # leader_of STREAM: the name of the server leading it ("" while none)
  "$RAWJS" info --server "$NATS_URL" --stream "$1" 2>/dev/null | grep -o '"leader":"[^"]*"' | cut -d'"' -f4 || true
}

wait_settled() { # wait_settled DEADLINE_MS: until the task stream is empty (every task acked)
  local m=""
  while [ "$(now_ms)" -lt "$1" ]; do
    m=$("$RAWJS" info --server "$NATS_URL" --stream SENDAT_TASKS 2>/dev/null | grep -o '"msgs":[0-9]*' | cut -d: -f2 || true)
    [ "$m" = 0 ] && return 0
    sleep 1
  done
  echo "run.sh: the task stream still holds ${m:-?} tasks" >&2
}

scenario_leader() {
  if ((!cluster)); then echo "== leader: only in --cluster runs (skipped)"; return 0; fi
  echo "== leader: $LEADER_N webhooks due at one instant, $CONSUMERS consumers, the task stream's leader node killed with -9 at the due time"
  KILL_LEADER_OF=SENDAT_TASKS run_due leader_tasks "$LEADER_N" 0
  echo "== leader: the same, the claims bucket's (KV_sendat_claims) leader node killed"
  KILL_LEADER_OF=KV_sendat_claims run_due leader_claims "$LEADER_N" 0
}

scenario_failover() {
  echo "== failover: $FAILOVER_N webhooks due at one instant, $CONSUMERS consumers, one killed with -9 30 ms after the due time"
  KILL_AFTER_MS=30 run_due failover "$FAILOVER_N" 0
}

scenario_rolling() {
  echo "== rolling: $ROLL_N webhooks due evenly over $ROLL_S s, $CONSUMERS consumers restarted in turn"
  ROLL=1 run_due rolling "$ROLL_N" $((ROLL_S * 1000))
}

scenario_burst() {
  echo "== burst: $BURST_N webhooks due at one instant, $CONSUMERS consumers"
  run_due burst "$BURST_N" 0
}

scenario_spread() {
  echo "== spread: $SPREAD_N webhooks due evenly over $SPREAD_S s, $CONSUMERS consumers"
  run_due spread "$SPREAD_N" $((SPREAD_S * 1000))
}

# ---- the server's own scheduler (ADR-51) -----------------------------------------------------
# native_due NAME N SPREAD_MS: N schedules due as run_due's tasks are, fired into a work-queue
# subject, pulled, POSTed to the sink and acked by sendat-rawjs native; lateness at the sink,
# CPU of that client and of the server
native_due() {
  local name=$1 n=$2 spread=$3 d=$work/$1 s0 s1 out copies=1 rc=0 align=0
  ((cluster)) && copies=3
  ((ALIGN)) && align=$SLOT_MS
  mkdir -p "$d"
  start_servers "$d"
  start_sink "$d"
  s0=$(ticks "${SERVER_PIDS[@]}")
  # due as run_due's tasks, counted from when the stream is made (the cluster elected leaders)
  out=$("$RAWJS" native --server "$NATS_URL" --n "$n" --size "$NATIVE_SIZE" --replicas "$copies" \
        --due-in-ms $((MARGIN_MS + n * 1000 / SCHED_GUESS_PER_S)) --align-ms "$align" \
        --spread-ms "$spread" --sink "http://127.0.0.1:$SINK_PORT/hook" \
        --wait-seconds "$WAIT_EXTRA_S" --server-pid "$(IFS=,; echo "${SERVER_PIDS[*]}")" \
        2>"$d/rawjs.err") || rc=$?
  s1=$(ticks "${SERVER_PIDS[@]}")
  sed 's/^/   /' "$d/rawjs.err"
  stop_pid "$SINK_PID" 10
  stop_servers
  ((rc == 0)) || { echo "run.sh: sendat-rawjs native failed ($rc)" >&2; return 1; }
  fact "$name" n "$n"
  fact "$name" seconds "$(awk -v s="$spread" 'BEGIN{print s / 1000}')"
  fact "$name" client "$out"
  fact "$name" server_cpu_s "$(secs $((s1 - s0)))"
  fact "$name" lat "$("${analyze[@]}" lateness "$d/arrivals.txt" "$n")"
}

# the bulk's N schedules due tomorrow, left waiting: booking rate, store and memory per schedule
native_waiting() {
  local d=$work/native_waiting out info copies=1 r0
  ((cluster)) && copies=3
  mkdir -p "$d"
  start_servers "$d"
  r0=$(rss_mb "${SERVER_PIDS[@]}")
  out=$("$RAWJS" native --server "$NATS_URL" --n "$BULK_N" --size "$NATIVE_SIZE" --replicas "$copies" \
        --due-ms $(($(now_ms) + 86400000)) --spread-ms 3600000 \
        --server-pid "$(IFS=,; echo "${SERVER_PIDS[*]}")" 2>"$d/rawjs.err") || {
    cat "$d/rawjs.err" >&2
    stop_servers
    return 1
  }
  sed 's/^/   /' "$d/rawjs.err"
  info=$("$RAWJS" info --server "$NATS_URL" --stream NATIVE)
  fact native_waiting n "$BULK_N"
  fact native_waiting client "$out"
  fact native_waiting stream "$info"
  fact native_waiting server_rss_mb_before "$r0"
  fact native_waiting server_rss_mb "$(rss_mb "${SERVER_PIDS[@]}")"
  stop_servers
}

scenario_native() {
  if ! nats_at_least 2.12; then
    echo "== native: skipped, nats-server $(nats_version) has no message schedules (ADR-51, 2.12 or later)"
    fact native note "\"skipped: nats-server $(nats_version) has no message schedules (ADR-51, 2.12 or later)\""
    return 0
  fi
  # the schedules carry the body sendat's tasks carry in the raw loop: a sealed task's size
  NATIVE_SIZE=$("$RAWJS" sealed --url "http://127.0.0.1:65535/hook" --data "$SAMPLE_DATA" |
                grep -o '"sealed_bytes":[0-9]*' | cut -d: -f2)
  fact native note "\"the server's own scheduler, nats-server $(nats_version)\""
  echo "== native burst: $BURST_N schedules due at one instant (@at), pulled, POSTed, acked"
  native_due native_burst "$BURST_N" 0
  echo "== native spread: $SPREAD_N schedules due evenly over $SPREAD_S s"
  native_due native_spread "$SPREAD_N" $((SPREAD_S * 1000))
  echo "== native waiting: $BULK_N schedules due tomorrow"
  native_waiting
}
