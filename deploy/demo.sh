#!/usr/bin/env bash
# The whole pipeline on one machine: a local nats-server with a temporary store, two
# consumers and a webhook receiver; schedules a message a few seconds ahead and shows it
# arriving, with its lateness from `sendat status`; then books one more over the HTTP API
# (`sendat serve` on a loopback port, a producer token) and shows its answer and arrival.
# Everything stops when it ends.
set -euo pipefail
cd "$(dirname "$0")/.."
bash deploy/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSENDAT_TESTS=OFF >/dev/null
cmake --build build -j"$(nproc 2>/dev/null || echo 2)" >/dev/null
SENDAT=$PWD/build/producer/sendat
CONSUMER=$PWD/build/consumer/sendat-consumer

work=$(mktemp -d /tmp/sendat-demo-XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

wait_for() { # wait_for FILE SECONDS
  for _ in $(seq 1 $(( $2 * 10 ))); do [ -s "$1" ] && return 0; sleep 0.1; done
  echo "demo: $1 did not appear" >&2; return 1
}

nats-server -a 127.0.0.1 -p -1 -js -sd "$work/js" --ports_file_dir "$work" -l "$work/nats.log" &
pids+=($!)
for _ in $(seq 1 100); do ls "$work"/*.ports >/dev/null 2>&1 && grep -q nats "$work"/*.ports && break; sleep 0.1; done
port=$(grep -o '127.0.0.1:[0-9]*' "$work"/*.ports | head -n 1)
export SENDAT_NATS_URL="nats://$port" SENDAT_KEY_FILE="$work/sendat.key"
echo "== nats-server at $SENDAT_NATS_URL (store in $work/js)"

"$SENDAT" keygen "$SENDAT_KEY_FILE" >/dev/null
"$SENDAT" init >/dev/null
echo "== streams and buckets created, key written to $SENDAT_KEY_FILE"

python3 deploy/demo_receiver.py "$work/receiver.port" > "$work/receiver.log" &
pids+=($!)
wait_for "$work/receiver.port" 10
hook="http://127.0.0.1:$(cat "$work/receiver.port")/hook"

for n in 1 2; do
  SENDAT_CONSUMER_NAME="demo-$n" SENDAT_HTTP_ADDR=127.0.0.1:0 "$CONSUMER" 2> "$work/consumer-$n.log" &
  pids+=($!)
done
echo "== two consumers running; receiver at $hook"

id=$("$SENDAT" schedule --at +5s --webhook "$hook" --data '{"hello":"from sendat"}')
echo "== scheduled task $id for $(date -u -d @$(( ${id%%-*} / 1000 )) +%H:%M:%S) UTC (5 s ahead); waiting..."
wait_for "$work/receiver.log" 30
cat "$work/receiver.log"
sleep 0.5
echo "== sendat status $id"
"$SENDAT" status "$id"

wait_lines() { # wait_lines FILE N SECONDS
  for _ in $(seq 1 $(( $3 * 10 ))); do [ "$(wc -l < "$1")" -ge "$2" ] && return 0; sleep 0.1; done
  echo "demo: $1 has fewer than $2 lines" >&2; return 1
}

export SENDAT_API_TOKENS_FILE="$work/tokens"
token=$("$SENDAT" token create --role producer --name demo)
: > "$work/serve.log" # made before the poll below reads it, not when serve starts
SENDAT_API_ADDR=127.0.0.1:0 "$SENDAT" serve 2> "$work/serve.log" &
pids+=($!)
for _ in $(seq 1 100); do grep -q "event=api_listening" "$work/serve.log" && break; sleep 0.1; done
api="http://127.0.0.1:$(grep -o 'event=api_listening.* port=[0-9]*' "$work/serve.log" | grep -o '[0-9]*$')/v1"
echo "== sendat serve at $api; POST /v1/tasks with a producer token:"
curl -sS -H "Authorization: Bearer $token" \
     -d "{\"at\":\"+3s\",\"webhook\":\"$hook\",\"data\":\"{\\\"hello\\\":\\\"over the API\\\"}\",\"id\":\"demo-api\"}" \
     "$api/tasks"
echo
wait_lines "$work/receiver.log" 2 30
tail -n 1 "$work/receiver.log"
echo "== GET /v1/tasks/demo-api"
curl -sS -H "Authorization: Bearer $token" "$api/tasks/demo-api"
echo
