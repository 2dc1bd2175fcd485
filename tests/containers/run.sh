#!/usr/bin/env bash
# The containers phase: deploy/Dockerfile and deploy/docker-compose.yml under a real engine
# (podman 4.3 with runc, Debian 12's packages; no image registry is needed).
#  - a base image: the deploy phase's day's root (tests/deploy/base.sh: debootstrap minbase
#    bookworm with systemd, a tarball per day in SENDAT_DEPLOY_CACHE, default
#    /var/cache/sendat-test) imported with `podman import`;
#  - the sendat image on it (--format docker keeps its HEALTHCHECK): deploy/Dockerfile's
#    runtime stage (--target runtime) plus sendat and sendat-consumer built outside in
#    SENDAT_CT_BUILD_DIR (default build/, tests/run.sh's plain build; Debian 12's libraries as
#    in the image), or with SENDAT_CT_FROM_SOURCE=1 the whole Dockerfile, compiled in its build
#    stage (minutes more on a machine without podman's layer cache); an image of Debian's
#    nats-server 2.9.10 and a webhook receiver (images.Containerfile);
#  - the compose stack up with podman-compose (3 nats nodes, keygen, init --replicas 3, a
#    consumer), the nats image from SENDAT_NATS_IMAGE, the receiver and `sendat serve` in
#    containers on the stack's network;
#  - 3,000 tasks due over 60 s, half booked through a producer container (`sendat schedule
#    --batch -`), half through `sendat serve` (POST /v1/batches); while they fall due the
#    consumers go 2 -> 5 -> 1 (podman-compose 1.0.3 ignores --scale: more consumers are
#    `podman container clone`s of the compose one), one consumer and one nats node are
#    killed (SIGKILL) and the node started again, and stopped consumers must drain (exit 0)
#    within SENDAT_DRAIN_TIMEOUT's 20 s (one still running 22 s after its SIGTERM has its
#    threads' stacks saved with the logs, by gdb, installed with the engine);
#  - every task must arrive (distinct webhook-ids; a second arrival of an id is counted and
#    printed: a send the receiver answered too late, or one in flight when its consumer was
#    killed, is sent again with the same id);
#    lateness p50/p99/max is printed from the receiver's clock (the same host's);
#  - the last consumer stopped too: it must exit 0 (a crash at exit is a signal, 128+n);
#  - every container's log and state saved, then `podman-compose down -v`, then what it left
#    (1.0.3 leaves the network) removed by name; the phase fails if any container, volume or
#    network of the stack remains. A failed run copies the saved logs, the receiver's hits and
#    the booked lines to SENDAT_CT_LOGS (default /var/tmp)/sendat-containers-<time>.
# The last line is `containers: delivered N/N ...`. Exit 0 only if every task arrived, every
# stopped consumer exited 0 and nothing was left. Needs root; where podman cannot run a
# container it fails at once, saying so. A phase of tests/run.sh, which bounds it with
# timeout(1). The engine's settings come from containers.conf beside this script
# (CONTAINERS_CONF): /etc/containers is never written.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
export CONTAINERS_CONF=$repo/tests/containers/containers.conf
cache=${SENDAT_DEPLOY_CACHE:-/var/cache/sendat-test}
mult=${SENDAT_TEST_TIMEOUT_MULTIPLIER:-1}
total=${SENDAT_CT_TASKS:-3000} # tasks booked, half through each path
spread=60                      # seconds over which they fall due
proj=sendat-ct                 # compose project: containers sendat-ct_<service>_<n>
net=${proj}_default
base_img=localhost/sendat-test-base:bookworm
sendat_img=localhost/sendat-test:latest
runtime_img=localhost/sendat-test-runtime:latest # deploy/Dockerfile --target runtime
nats_img=${SENDAT_NATS_IMAGE:-localhost/sendat-test-nats:2.9.10}
recv_img=localhost/sendat-test-receiver:latest
started=$(date +%s)
say() { echo "containers: $*"; }
# podman without systemd says on stderr, at each start, that it cannot set up the health
# check's timer (the check runs with `podman healthcheck run`): shown only when a command fails
quiet() { "$@" 2>"$work/stderr" >/dev/null || { cat "$work/stderr" >&2; return 1; }; }
die() {
  echo "containers: FAILED: $*" >&2
  exit 1
}
[ "$(id -u)" = 0 ] || die "needs root (podman with netavark, debootstrap)"

# -- the engine, from Debian (apt-get update only when something is missing)
bash tests/containers/install.sh podman runc podman-compose netavark aardvark-dns iptables \
  debootstrap python3 curl gdb | sed 's/^/containers: /'
say "$(podman --version), $(runc --version | head -1), podman-compose $(dpkg-query -W -f '${Version}' podman-compose)"

work=$(mktemp -d "${SENDAT_TEST_TMPDIR:-/tmp}/containers-XXXXXX")
compose() {
  podman-compose -p "$proj" -f deploy/docker-compose.yml "$@"
}
# Everything of the stack, by the names compose gives and the ones given here.
stack_containers() { podman ps -a --format '{{.Names}}' | grep -E "^${proj}[_-]" || true; }
stack_volumes() { podman volume ls --format '{{.Name}}' | grep -E "^${proj}_" || true; }
stack_networks() { podman network ls --format '{{.Name}}' | grep -Fx "$net" || true; }
teardown() { # down -v, then what it left, by name; prints what down left
  local left c
  # first what compose did not make: the helpers (nothing to drain), then the clones
  # (consumer_2...), which drain
  for c in $(stack_containers | grep -E "^${proj}-"); do podman rm -f -t 0 "$c" >/dev/null 2>&1 || true; done
  for c in $(stack_containers | grep -vxE "${proj}_(n[123]|keygen|init|producer|consumer)_1"); do
    podman rm -f -t 25 "$c" >/dev/null 2>&1 || true
  done
  compose down -v -t 25 >"$work/down.log" 2>&1 || true
  left="$(stack_containers | tr '\n' ' ')$(stack_volumes | tr '\n' ' ')$(stack_networks)"
  for c in $(stack_containers); do podman rm -f -t 0 "$c" >/dev/null 2>&1 || true; done
  for c in $(stack_volumes); do podman volume rm -f "$c" >/dev/null 2>&1 || true; done
  for c in $(stack_networks); do podman network rm -f "$c" >/dev/null 2>&1 || true; done
  echo "$left"
}
save_logs() { # every container's log and state into $work/logs, before anything is removed
  local c
  mkdir -p "$work/logs"
  for c in $(stack_containers); do
    podman logs -t "$c" >"$work/logs/$c.log" 2>&1 || true
    podman inspect -f '{{.State.Status}} exit={{.State.ExitCode}} oom={{.State.OOMKilled}}' "$c" \
      >>"$work/logs/states.txt" 2>&1 && sed -i "\$s/^/$c /" "$work/logs/states.txt" || true
  done
}
cleanup() {
  local rc=$?
  if [ -n "$(stack_containers)$(stack_volumes)$(stack_networks)" ]; then
    [ -f "$work/logs/states.txt" ] || save_logs
    teardown >/dev/null
  fi
  if [ "$rc" != 0 ] && [ -d "$work/logs" ]; then # a failed run's logs outlive tests/run.sh's folder
    kept=${SENDAT_CT_LOGS:-/var/tmp}/sendat-containers-$(date -u +%Y%m%dT%H%M%S)
    mkdir -p "$kept" && cp -r "$work/logs" "$work/recv" "$kept/" 2>/dev/null &&
      cp "$work"/*.ndjson "$work"/*.txt "$kept/" 2>/dev/null
    say "the stack's logs and the receiver's hits kept in $kept"
  fi
  if [ "${SENDAT_KEEP_TEST_TMP:-0}" = 1 ]; then say "kept $work"; else rm -rf "$work"; fi
  exit "$rc"
}
trap cleanup EXIT
# timeout(1) (tests/run.sh) sends SIGTERM to this shell and then to its whole process group:
# the second one ended the cleanup at its first podman command and left the stack running.
# The first now exits (and so cleans up) with every later one ignored.
trap 'trap "" TERM INT; exit 143' TERM INT
# a run stopped half-way leaves its stack: start from nothing
if [ -n "$(stack_containers)$(stack_volumes)$(stack_networks)" ]; then
  say "removing a previous run's stack: $(teardown)"
fi

# -- the base image: the day's Debian 12 root the deploy phase uses too (tests/deploy/base.sh:
# debootstrap minbase with systemd, cached as a tarball per day), imported when it is newer
tarball=$(bash tests/deploy/base.sh) || die "no Debian 12 base (debootstrap)"
if ! podman image exists "$base_img" ||
  [ "$(date -d "$(podman image inspect -f '{{.Created}}' "$base_img" | cut -d' ' -f1-2)" +%s)" -lt "$(stat -c %Y "$tarball")" ]; then
  podman import -q -c 'CMD ["/bin/bash"]' "$tarball" "$base_img" >/dev/null
  say "imported $base_img from $tarball"
fi
rm -f "$cache"/containers-bookworm-*.tar # the base this phase made itself before
# Where the engine cannot run a container (no cgroups or namespaces for it, a runtime that
# refuses) the phase says so now, in seconds, instead of failing later in the stack.
timeout 120 podman run --rm --network none "$base_img" true >"$work/probe.log" 2>&1 || {
  tail -5 "$work/probe.log" >&2
  die "podman cannot run a container here (podman run --rm --network none $base_img true)"
}

# -- the images (podman's layer cache makes a rebuild of unchanged sources quick)
t=$(date +%s)
if [ "${SENDAT_CT_FROM_SOURCE:-0}" = 1 ]; then # the whole Dockerfile: compiled in the image
  podman build -q --format docker -f deploy/Dockerfile --build-arg DEBIAN="$base_img" \
    -t "$sendat_img" . >"$work/build.log" 2>&1 || {
    tail -30 "$work/build.log" >&2
    die "podman build of deploy/Dockerfile failed"
  }
  how="deploy/Dockerfile, compiled in its build stage"
else # its runtime stage, and the binaries built here (Debian 12's libraries, as in the image)
  bin=${SENDAT_CT_BUILD_DIR:-build}
  [ -f "$bin/CMakeCache.txt" ] || cmake -S . -B "$bin" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$bin" -j"$(nproc)" --target sendat sendat-consumer >"$work/make.log" 2>&1 || {
    tail -30 "$work/make.log" >&2
    die "building sendat and sendat-consumer in $bin failed"
  }
  mkdir -p "$work/bin"
  strip -o "$work/bin/sendat" "$bin/producer/sendat"
  strip -o "$work/bin/sendat-consumer" "$bin/consumer/sendat-consumer"
  printf 'FROM %s\nCOPY sendat sendat-consumer /usr/local/bin/\n' "$runtime_img" >"$work/bin/Containerfile"
  { podman build -q --format docker -f deploy/Dockerfile --build-arg DEBIAN="$base_img" \
    --target runtime -t "$runtime_img" . &&
    podman build -q --format docker -t "$sendat_img" "$work/bin"; } >"$work/build.log" 2>&1 || {
    tail -30 "$work/build.log" >&2
    die "podman build of deploy/Dockerfile's runtime stage, or the binaries on it, failed"
  }
  how="deploy/Dockerfile's runtime stage + $bin's binaries"
fi
if [ -z "${SENDAT_NATS_IMAGE:-}" ]; then
  podman build -q -f tests/containers/images.Containerfile --build-arg BASE="$base_img" \
    --target nats -t "$nats_img" tests/containers >>"$work/build.log" 2>&1 ||
    die "the nats image failed to build"
fi
podman build -q -f tests/containers/images.Containerfile --build-arg BASE="$base_img" \
  --target receiver -t "$recv_img" tests/containers >>"$work/build.log" 2>&1 ||
  die "the receiver image failed to build"
size=$(podman image inspect -f '{{.Size}}' "$sendat_img")
say "images built in $(($(date +%s) - t)) s: $sendat_img $((size / 1000000)) MB ($how)" \
  "(nats: $(podman run --rm "$nats_img" --version))"
hc=$(podman image inspect -f '{{json .HealthCheck}}' "$sendat_img")
[[ $hc == *sendat-ready* ]] || die "the image lost its HEALTHCHECK ($hc)"
user=$(podman image inspect -f '{{.User}}' "$sendat_img")
[ "$user" = 10001:10001 ] || die "the image runs as '$user', not 10001:10001"

# -- the stack
pw() { head -c 18 /dev/urandom | base64 | tr '+/' 'xy'; }
export SENDAT_ADMIN_PASSWORD=$(pw) SENDAT_PRODUCER_PASSWORD=$(pw) SENDAT_CONSUMER_PASSWORD=$(pw)
export SENDAT_IMAGE=$sendat_img SENDAT_NATS_IMAGE=$nats_img SENDAT_NATS_PUBLISH=127.0.0.1::4222
urls=nats://n1:4222,nats://n2:4222,nats://n3:4222
t=$(date +%s)
compose up -d >"$work/up.log" 2>&1 || {
  tail -30 "$work/up.log" >&2
  die "podman-compose up failed"
}
deadline() { echo $(($(date +%s) + $1 * mult)); }
state() { podman inspect -f "{{.State.$2}}" "$1" 2>/dev/null || echo none; }
# podman-compose 1.0.3 starts the services in order without waiting for a health check or a
# one-shot's exit, so init may find the cluster without a leader yet: it is run again then.
until_t=$(deadline 120)
while :; do
  if [ "$(state ${proj}_init_1 Status)" = exited ]; then
    [ "$(state ${proj}_init_1 ExitCode)" = 0 ] && break
    podman start ${proj}_init_1 >/dev/null
  fi
  [ "$(date +%s)" -lt "$until_t" ] || {
    podman logs ${proj}_init_1 2>&1 | tail -5 >&2
    die "sendat init did not succeed within 120 s"
  }
  sleep 2
done
say "compose up: 3 nats nodes, keygen, init --replicas 3 done in $(($(date +%s) - t)) s"

ready() { # container: /readyz through the image's health check
  podman healthcheck run "$1" >/dev/null 2>&1
}
wait_ready() { # seconds, containers...
  local until_t c
  until_t=$(deadline "$1")
  shift
  for c in "$@"; do
    until ready "$c"; do
      [ "$(date +%s)" -lt "$until_t" ] || {
        podman logs "$c" 2>&1 | tail -5 >&2
        die "$c not healthy in time"
      }
      sleep 1
    done
  done
}
c1=${proj}_consumer_1
wait_ready 60 "$c1"
[ "$(state $c1 Health.Status)" = healthy ] || die "$c1 answers /readyz but is $(state $c1 Health.Status)"
[ "$(podman inspect -f '{{.HostConfig.ReadonlyRootfs}}' $c1)" = true ] || die "$c1 root is not read-only"
[ "$(podman exec $c1 id -u)" = 10001 ] || die "$c1 does not run as 10001"
say "$c1 healthy (/readyz), read-only root, uid 10001"

# scale: podman-compose 1.0.3 ignores --scale; a clone has the compose consumer's settings,
# network, volume and aliases. consumer_2..5 are made now and started when scaled to.
for i in 2 3 4 5; do quiet podman container clone ${proj}_consumer_1 ${proj}_consumer_$i; done
scale_to() {
  local n=$1 i
  for ((i = 2; i <= n; i++)); do
    [ "$(state ${proj}_consumer_$i Status)" = running ] || quiet podman start ${proj}_consumer_$i
  done
}
scale_to 2

# the receiver and `sendat serve` on the stack's network
mkdir -p "$work/recv"
podman run -d --name ${proj}-receiver --network "$net" --network-alias receiver \
  -v "$work/recv:/out" "$recv_img" /out/hits.log >/dev/null
quiet podman run -d --name ${proj}-serve --network "$net" -p 127.0.0.1::8090 --read-only \
  -v ${proj}_sendat-key:/var/lib/sendat:ro --tmpfs /var/lib/sendat-api:rw,mode=1777 \
  -e SENDAT_NATS_URL=$urls -e SENDAT_NATS_USER=producer -e SENDAT_NATS_PASSWORD="$SENDAT_PRODUCER_PASSWORD" \
  -e SENDAT_API_TOKENS_FILE=/var/lib/sendat-api/tokens -e SENDAT_API_ADDR=0.0.0.0:8090 \
  -e SENDAT_API_INSECURE=1 -e SENDAT_API_RATE=0 --entrypoint sh "$sendat_img" \
  -c 'sendat token create --role producer --name ct >/var/lib/sendat-api/token && exec sendat serve'
api=http://$(podman port ${proj}-serve 8090/tcp | head -1)
until_t=$(deadline 30)
until tok=$(podman exec ${proj}-serve cat /var/lib/sendat-api/token 2>/dev/null) && [ -n "$tok" ] &&
  curl -fsS --max-time 10 -o /dev/null -H "Authorization: Bearer $tok" "$api/v1/whoami"; do
  [ "$(date +%s)" -lt "$until_t" ] || {
    podman logs ${proj}-serve 2>&1 | tail -5 >&2
    die "sendat serve did not answer"
  }
  sleep 1
done
wait_ready 60 ${proj}_consumer_2
say "2 consumers, receiver, sendat serve at $api"

# -- 3,000 tasks due from t0 over 60 s, one every 20 ms; odd ones through serve
t0=$(($(date +%s%3N) + 25000))
python3 - "$t0" "$total" "$spread" "$work" <<'EOF'
import json, sys
t0, total, spread, work = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
with open(work + "/cli.ndjson", "w") as cli, open(work + "/api.ndjson", "w") as api:
    for i in range(total):
        due = t0 + i * spread * 1000 // total
        line = {"id": "ct-%05d" % i, "at": "@%d.%03d" % (due // 1000, due % 1000),
                "webhook": "http://receiver:8000/hook", "data": json.dumps({"due": due})}
        (api if i % 2 else cli).write(json.dumps(line) + "\n")
EOF
t=$(date +%s%3N)
podman run --rm -i --network "$net" --read-only -v ${proj}_sendat-key:/var/lib/sendat:ro \
  -e SENDAT_NATS_URL=$urls -e SENDAT_NATS_USER=producer -e SENDAT_NATS_PASSWORD="$SENDAT_PRODUCER_PASSWORD" \
  --entrypoint sendat "$sendat_img" schedule --batch - <"$work/cli.ndjson" >"$work/cli.out" 2>"$work/cli.err" || {
  tail -5 "$work/cli.err" >&2
  die "the producer container's batch failed"
}
cli_n=$(grep -c . "$work/cli.out")
curl -fsS --max-time $((300 * mult)) -H "Authorization: Bearer $tok" -H 'Content-Type: application/x-ndjson' \
  --data-binary @"$work/api.ndjson" "$api/v1/batches" >"$work/api.out" || die "POST /v1/batches failed"
api_n=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["scheduled"])' "$work/api.out")
[ $((cli_n + api_n)) = "$total" ] || die "booked $cli_n (producer container) + $api_n (serve), not $total"
left=$((t0 - $(date +%s%3N)))
say "booked $cli_n through the producer container, $api_n through sendat serve in" \
  "$(($(date +%s%3N) - t)) ms; the first is due in $left ms"
[ "$left" -gt 0 ] || say "(booking ran past the first due time: those count late)"

# -- while they fall due: 2 -> 5, kill a consumer and a nats node, 5 -> 1 with drains
at() { # seconds after t0: sleep until then
  local ms=$((t0 + $1 * 1000 - $(date +%s%3N)))
  if [ "$ms" -gt 0 ]; then sleep "$((ms / 1000)).$(printf %03d $((ms % 1000)))"; fi
}
count() { cut -d' ' -f1 "$work/recv/hits.log" 2>/dev/null | sort -u | wc -l; }
now() { # seconds since t0 (the first due time), and the tasks arrived so far
  local ms=$(($(date +%s%3N) - t0))
  echo "t0+$((ms / 1000)).$((ms % 1000 / 100)) s, $(count) arrived"
}
at 8
scale_to 5
say "5 consumers from t0+8 s ($(now))"
at 20
podman kill ${proj}_consumer_2 >/dev/null
podman kill ${proj}_n3_1 >/dev/null
say "podman kill ${proj}_consumer_2 and ${proj}_n3_1 at t0+20 s ($(now))"
at 28
quiet podman start ${proj}_n3_1
say "${proj}_n3_1 started again at t0+28 s ($(now))"
at 36
# A consumer still running 22 s after its `podman stop` began (its drain is 20 s): every
# thread's stack into the logs, with the symbols of the unstripped binary (gdb, when
# installed), to say where it waits.
stacks_of() { # consumer numbers
  local i pid
  command -v gdb >/dev/null || return 0
  for i in "$@"; do
    pid=$(state ${proj}_consumer_$i Pid) # 0 once it exited (its Status is "stopping" until then)
    [ "$pid" != none ] && [ "$pid" -gt 0 ] || continue
    mkdir -p "$work/logs"
    timeout 20 gdb -batch -nx -ex "set sysroot /proc/$pid/root" -ex 'set pagination off' \
      -ex 'thread apply all bt' "${bin:-build}/consumer/sendat-consumer" -p "$pid" \
      >"$work/logs/${proj}_consumer_$i.stacks.txt" 2>&1 || true
    say "${proj}_consumer_$i still running $((22 * mult)) s after podman stop: its threads' stacks in ${proj}_consumer_$i.stacks.txt"
  done
}
drains=()
for i in 3 4 5; do
  (
    s=$(date +%s%3N)
    podman stop -t 30 ${proj}_consumer_$i >/dev/null 2>&1
    echo "${proj}_consumer_$i $(($(date +%s%3N) - s)) $(state ${proj}_consumer_$i ExitCode)"
  ) >"$work/stop.$i" &
  drains+=($!)
done
stopped_at=$(date +%s)
while kill -0 "${drains[@]}" 2>/dev/null; do # true while any of them runs
  if [ -n "${stopped_at:-}" ] && [ $(($(date +%s) - stopped_at)) -ge $((22 * mult)) ]; then
    stacks_of 3 4 5
    stopped_at=
  fi
  sleep 1
done
wait "${drains[@]}"
mkdir -p "$work/logs" # the killed consumer's log outlives it (restart: unless-stopped may have restarted it)
podman logs -t ${proj}_consumer_2 >"$work/logs/${proj}_consumer_2.killed.log" 2>&1 || true
say "${proj}_consumer_2 after its kill: $(state ${proj}_consumer_2 Status), restarts $(podman inspect -f "{{.RestartCount}}" ${proj}_consumer_2 2>/dev/null)"
quiet podman rm -f ${proj}_consumer_2
slow=0
for i in 3 4 5; do
  read -r name ms code <"$work/stop.$i"
  say "podman stop $name: exit $code after $ms ms"
  # the drain is 20 s at most; the engine gets 5 s more to stop the container
  [ "$code" = 0 ] && [ "$ms" -le $((20000 + 5000 * mult)) ] || slow=1
done
if [ "$slow" != 0 ]; then
  for i in 3 4 5; do
    echo "--- the last lines of ${proj}_consumer_$i:" >&2
    podman logs --tail 15 ${proj}_consumer_$i 2>&1 | grep -v 'systemd connection' >&2 || true
  done
  die "a stopped consumer did not drain within 20 s (exit 0)"
fi
say "1 consumer from t0+36 s ($(now))"

# -- wait for every task (bounded), then what arrived
until_t=$(deadline $((spread + 60)))
until [ "$(count)" -ge "$total" ] || [ "$(date +%s)" -ge "$until_t" ]; do sleep 2; done
sleep 3 # a late second arrival of an id still counts as one
python3 - "$work/recv/hits.log" "$total" >"$work/report.txt" <<'EOF'
import sys
path, total = sys.argv[1], int(sys.argv[2])
first, arrivals = {}, 0
for line in open(path):
    wid, due, now = line.split()
    arrivals += 1
    if wid not in first:
        first[wid] = int(now) - int(due)
want = {"ct-%05d" % i for i in range(total)}
late = sorted(first.values())
pick = lambda q: late[min(len(late) - 1, int(q * len(late)))] if late else -1
print("lateness_ms p50=%d p99=%d max=%d; arrivals %d, ids sent twice %d, unknown ids %d"
      % (pick(0.5), pick(0.99), late[-1] if late else -1, arrivals, arrivals - len(first),
         len(set(first) - want)))
print(len(want & set(first)), arrivals - len(first))
EOF
head -1 "$work/report.txt" | sed 's/^/containers: /'
read -r got twice <<<"$(tail -1 "$work/report.txt")"
if [ "$got" != "$total" ]; then # what the stack's logs say of the first few missing ones
  for i in $(seq 0 $((total - 1))); do printf 'ct-%05d\n' "$i"; done |
    grep -vxFf <(cut -d' ' -f1 "$work/recv/hits.log" | sort -u) | head -5 >"$work/missing.txt" || true
  say "missing (the first 5): $(tr '\n' ' ' <"$work/missing.txt")"
  for c in $(stack_containers); do
    podman logs "$c" 2>&1 | grep -Ff "$work/missing.txt" | sed "s/^/  $c: /" | tail -20 >&2 || true
  done
fi

# the last consumer stops too: a crash at exit (a signal, exit 128+n) is a failure like a loss
s=$(date +%s%3N)
podman stop -t 30 $c1 >/dev/null 2>&1 || true
last="exit $(state $c1 ExitCode) after $(($(date +%s%3N) - s)) ms"
say "podman stop $c1: $last"

# -- down -v: nothing of the stack may remain (the stack's logs are saved first)
save_logs
left=$(teardown)
[ -z "$left" ] || say "podman-compose down -v left: $left (removed by name)"
rest="$(stack_containers)$(stack_volumes)$(stack_networks)"
[ -z "$rest" ] || die "left after cleanup: $rest"
say "cleanup: no container, volume or network of $proj left; phase took $(($(date +%s) - started)) s"
echo "containers: delivered $got/$total (distinct webhook-ids; $twice arrived a second time: sent again with the same id after no answer in time or a kill)"
[ "$got" = "$total" ] || exit 1
[[ $last == "exit 0 "* ]] || die "$c1 did not exit 0 when stopped ($last)"
