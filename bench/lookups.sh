#!/usr/bin/env bash
# How long `sendat status ID` and `sendat cancel ID` take for one waiting task while many wait
# in the same window (issue 33 item 4; not a test):
#
#   bash bench/lookups.sh [--waiting "0 1000000"] [--samples 200]
#
#   --waiting  sizes: a fresh server per size; that many tasks booked with `sendat schedule
#              --batch` into one 10-minute window a day ahead, then SAMPLES more booked one by
#              one into the same window with `sendat schedule` (which prints the id the
#              lookups need; a batch prints none). 0 gives the baseline the larger sizes are
#              read against: the same lookups with only the samples waiting.
#   --samples  how many ids are looked up each way: SAMPLES ids get one `sendat status` and
#              right after it one `sendat cancel`, each a process of its own as a user's script runs them
#              (start, connect, lookup, exit: a process start alone took 80-100 ms on this
#              loaded machine); SAMPLES more get GET then DELETE /v1/tasks/ID from `sendat
#              serve`, one client on one kept-alive connection (the lookup's own cost)
#              (GET and DELETE of one id one after the other, as with the processes)
#
# Prints p50/p99/max wall time per command and size, and the ratio of each size's p50 and p99
# to the baseline of the same run, naming the server's version; writes
# bench/results/lookups-<UTC time>.txt. Loopback only; temporary stores, removed at the end.
# Uses build/ (SENDAT_BENCH_BUILD=DIR to change); the server is $NATS_SERVER (default
# nats-server on the PATH).
set -euo pipefail

WAITING="0 1000000"
SAMPLES=200
while [ $# -gt 0 ]; do
  case $1 in
    --waiting) WAITING=$2; shift 2 ;;
    --samples) SAMPLES=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "lookups.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${SENDAT_BENCH_BUILD:-$repo/build}
analyze=(python3 "$repo/bench/analyze.py")
SENDAT=$build/producer/sendat
[ -x "$SENDAT" ] || { echo "lookups.sh: $SENDAT is missing (build first)" >&2; exit 1; }
cluster=0

# shellcheck source=bench/lib.sh
source "$repo/bench/lib.sh"
bench_start sendat-lookups

out=$repo/bench/results/lookups-$(date -u +%Y%m%dT%H%M%SZ).txt
mkdir -p "$repo/bench/results"
say() { echo "$*" | tee -a "$out"; }
now_ns() { date +%s%N; }

# quantiles FILE: "p50 p99 max" in ms of the microsecond figures in FILE
quantiles() {
  sort -n "$1" | awk '{v[NR] = $1} END {
    if (!NR) { print "0 0 0"; exit }
    i50 = int(NR * 0.50 + 0.5); if (i50 < 1) i50 = 1
    i99 = int(NR * 0.99 + 0.5); if (i99 < 1) i99 = 1; if (i99 > NR) i99 = NR
    printf "%.1f %.1f %.1f\n", v[i50] / 1000, v[i99] / 1000, v[NR] / 1000 }'
}

# timed FILE CMD...: runs CMD (its output to the work folder), appends its wall time in us
timed() {
  local file=$1 t0 t1
  shift
  t0=$(now_ns)
  SENDAT_NATS_URL=$NATS_URL SENDAT_KEY_FILE=$KEY "$@" >>"$work/cmd.out" 2>>"$work/cmd.err" || {
    echo "lookups.sh: $* failed:" >&2
    tail -n 3 "$work/cmd.err" >&2
    return 1
  }
  t1=$(now_ns)
  echo $(( (t1 - t0) / 1000 )) >>"$file"
}

# size N: N waiting in one window, then SAMPLES booked and looked up; sets P50_<cmd>, P99_<cmd>
size() {
  local n=$1 d=$work/size-$1 w file i at id q
  mkdir -p "$d"
  start_servers "$d"
  init_sendat "$d"
  w=$(( ($(now_ms) + 86400000) / 600000 * 600000 + 600000 )) # a window a day ahead
  if ((n > 0)); then
    file=$d/tasks.ndjson
    gen_tasks "$file" "$n" "$((w + 1000))" 590000 "http://127.0.0.1:9/hook"
    schedule "$d" "$file"
    rm -f "$file"
  fi
  for ((i = 0; i < 2 * SAMPLES; i++)); do
    at=$(( w + 1000 + (i * 2654435761 % 590000) )) # spread over the window
    SENDAT_NATS_URL=$NATS_URL SENDAT_KEY_FILE=$KEY "$SENDAT" schedule --at "@$((at / 1000)).$(printf %03d $((at % 1000)))" \
      --webhook "http://127.0.0.1:9/hook" >>"$d/ids" 2>>"$work/cmd.err"
  done
  [ "$(wc -l <"$d/ids")" -eq $((2 * SAMPLES)) ] || { echo "lookups.sh: booked $(wc -l <"$d/ids") of $((2 * SAMPLES)) samples" >&2; return 1; }
  head -n "$SAMPLES" "$d/ids" >"$d/cli.ids"
  tail -n "$SAMPLES" "$d/ids" >"$d/api.ids"
  while read -r id; do # each id's status then its cancel: both meet the same moment's load
    timed "$d/status.us" "$SENDAT" status "$id"
    timed "$d/cancel.us" "$SENDAT" cancel "$id"
  done <"$d/cli.ids"
  api "$d"
  for c in status cancel api_get api_delete; do
    read -r p50 p99 max < <(quantiles "$d/$c.us")
    if ((n == 0)); then base50[$c]=$p50; base99[$c]=$p99; fi
    q=""
    [ -n "${base50[$c]:-}" ] && q=" ratio_to_baseline p50=$(awk -v a="$p50" -v b="${base50[$c]}" 'BEGIN{printf "%.2f", (b > 0 ? a / b : 0)}')" &&
      q+=" p99=$(awk -v a="$p99" -v b="${base99[$c]}" 'BEGIN{printf "%.2f", (b > 0 ? a / b : 0)}')"
    say "lookups waiting=$n samples=$SAMPLES $c: p50_ms=$p50 p99_ms=$p99 max_ms=$max$q"
  done
  stop_servers
  rm -rf "$d"
}

# api DIR: `sendat serve` on a free port; GET then DELETE /v1/tasks/ID for each id of
# DIR/api.ids over one kept-alive connection, wall times in us to DIR/api_get.us, api_delete.us
api() {
  local d=$1 port tok serve k
  read -r port < <(free_ports 1)
  tok=$(SENDAT_API_TOKENS_FILE=$d/tokens "$SENDAT" token create --role producer)
  SENDAT_NATS_URL=$NATS_URL SENDAT_KEY_FILE=$KEY SENDAT_API_TOKENS_FILE=$d/tokens \
    SENDAT_API_ADDR=127.0.0.1:$port SENDAT_API_RATE=0 "$SENDAT" serve 2>"$d/serve.log" &
  serve=$!
  pids+=("$serve")
  for ((k = 0; k < 100; k++)); do grep -q api_listening "$d/serve.log" && break; sleep 0.1; done
  python3 - "$port" "$tok" "$d" <<'PY'
import http.client, sys, time
port, tok, d = int(sys.argv[1]), sys.argv[2], sys.argv[3]
ids = open(d + "/api.ids").read().split()
c = http.client.HTTPConnection("127.0.0.1", port)
h = {"Authorization": "Bearer " + tok}
out = {m: open("%s/%s.us" % (d, name), "w") for m, name in (("GET", "api_get"), ("DELETE", "api_delete"))}
for i in ids:
    for method in ("GET", "DELETE"):
        t = time.monotonic_ns()
        c.request(method, "/v1/tasks/" + i, headers=h)
        r = c.getresponse()
        r.read()
        if r.status != 200:
            sys.exit("lookups.sh: %s /v1/tasks/%s answered %d" % (method, i, r.status))
        out[method].write("%d\n" % ((time.monotonic_ns() - t) // 1000))
PY
  stop_pid "$serve" 10
}

declare -A base50 base99
KEY=$work/sendat.key
"$SENDAT" keygen "$KEY" >/dev/null
say "# bench/lookups.sh at $(git -C "$repo" rev-parse --short HEAD), binaries from $build, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $("$NATS_BIN" --version)"
for n in $WAITING; do size "$n"; done
say "# results in $out"
