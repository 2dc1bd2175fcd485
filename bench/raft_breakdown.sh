#!/usr/bin/env bash
# Where the servers' work goes in one R3 burst, asset by asset (issue 32 item 1; not a test):
#
#   bash bench/raft_breakdown.sh [--n 20000] [--no-raw] [--no-profile] [--out DIR]
#
#   --n           tasks in the burst, all due at one instant (default 20000); the raw loop
#                 delivers as many messages
#   --no-raw      skip the raw pull+POST+ack loop (sendat-rawjs bench --post-only) afterwards
#   --no-profile  take no CPU profile of the servers during the burst
#   --out DIR     where the counter dumps, profiles and the printed table go (default: a new
#                 /tmp/sendat-raft-<UTC time>; kept, never inside the repository)
#
# A 3-node loopback cluster (each node with a monitoring and a profiling port), sendat init
# --replicas 3, a sink and 2 consumers, as bench/run.sh's burst scenario sets them up. Every
# node's /jsz?streams=true&consumers=true&raft=true (and /raftz where the server has it, 2.10+)
# and the servers' CPU ticks are read three times: when the booking is done (A), 5 s before
# the due time (B, before the slot's durable is taken up 2 s ahead) and once every task reached the sink and every ack settled (C). The
# differences per stream (last sequence: records appended), per durable (ack floor, delivered,
# redelivered) and per raft group (applied index: raft appends, each carrying whatever was
# proposed meanwhile; where /raftz shows it)
# are printed per delivered task with their share, for A->B (the wait: moves, member and
# lease beats) and B->C (the burst: the slot taken up, pulls, claims, sends, outcomes, acks).
# Unless --no-profile, every node is profiled over the burst (/debug/pprof/profile) and the samples are
# grouped by kind of work (bench/pprof_top.py reads them), and 200 ms before the due time the
# durables' unacked and undelivered counts are read. Then, on the same cluster with the
# consumers stopped, the raw loop over N stored messages of a sealed task's size is read the
# same way between its publishing and its last ack.
#
# The server is $NATS_SERVER (default nats-server on the PATH), e.g.
#   NATS_SERVER=$(bash deploy/nats/fetch-server.sh) bash bench/raft_breakdown.sh
# Uses build-bench/ (SENDAT_BENCH_BUILD=DIR), built first unless SENDAT_BENCH_NO_BUILD=1.
# Loopback only; every process started here is stopped on exit and the stores removed
# (SENDAT_BENCH_KEEP=1 keeps them). 1.5-2 minutes at 20,000 on 2 busy cores.
set -euo pipefail

N=20000
RAW=1
PROFILE=1
OUT=""
while [ $# -gt 0 ]; do
  case $1 in
    --n) N=$2; shift 2 ;;
    --no-raw) RAW=0; shift ;;
    --no-profile) PROFILE=0; shift ;;
    --out) OUT=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "raft_breakdown.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ $N =~ ^[1-9][0-9]*$ ]] || { echo "raft_breakdown.sh: --n wants a positive count" >&2; exit 2; }

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${SENDAT_BENCH_BUILD:-$repo/build-bench}
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
for b in "$SENDAT" "$CONSUMER" "$RAWJS" "$SINK"; do
  [ -x "$b" ] || { echo "raft_breakdown.sh: $b is missing (build first)" >&2; exit 1; }
done

cluster=1
CONSUMERS=2
MARGIN_MS=24000 # as bench/run.sh --quick: the tasks go straight into their slot
SLOT_MS=10000
SCHED_GUESS_PER_S=15000
NATS_EXTRA_ARGS=(-m -1 --profile -1) # read by start_servers: monitoring and profiling ports
# shellcheck source=bench/lib.sh disable=SC2034 # the globals above are read by lib.sh
source "$repo/bench/lib.sh"
command -v "$NATS_BIN" >/dev/null || { echo "raft_breakdown.sh: $NATS_BIN is not installed" >&2; exit 1; }
bench_start sendat-raft
OUT=${OUT:-/tmp/sendat-raft-$(date -u +%Y%m%dT%H%M%SZ)}
case $OUT in "$repo"/*) echo "raft_breakdown.sh: --out must be outside the repository" >&2; exit 2 ;; esac
mkdir -p "$OUT"
started=$(now_ms)

port_of() { # port_of NODE KIND: the node's monitoring or profile URL from its .ports file
  grep -o "\"$2\":\[\"[^\"]*" "$work/c/n$1"/*.ports | head -n 1 | cut -d'"' -f4
}

# snap NAME: every node's /jsz (streams, consumers, raft groups) and /raftz, and the CPU
# ticks of each server, into $OUT/NAME/
snap() {
  local d=$OUT/$1 i m
  mkdir -p "$d"
  now_ms >"$d/at_ms"
  for i in 0 1 2; do
    m=$(port_of "$i" monitoring)
    curl -s --max-time 10 "$m/jsz?streams=true&consumers=true&raft=true&config=false" >"$d/n$i.jsz.json" || echo '{}' >"$d/n$i.jsz.json"
    # /raftz (2.10+): the raft groups' committed and applied indexes (the system account's
    # meta group by default, the streams' and consumers' with acc=$G); a 404 page on 2.9
    curl -sf --max-time 10 "$m/raftz" >"$d/n$i.raftz.json" || echo '{}' >"$d/n$i.raftz.json"
    curl -sf --max-time 10 "$m/raftz?acc=%24G" >"$d/n$i.raftz-G.json" || echo '{}' >"$d/n$i.raftz-G.json"
    ticks "${SERVER_PIDS[i]}" >"$d/n$i.ticks"
  done
}

# profile_all NAME SECONDS: a CPU profile of every node over SECONDS, in the background
PROF_PIDS=()
profile_all() {
  local i p
  PROF_PIDS=()
  ((PROFILE)) || return 0
  for i in 0 1 2; do
    p=$(port_of "$i" profile)
    curl -s --max-time $(($2 + 20)) -o "$OUT/$1.n$i.pb.gz" "$p/debug/pprof/profile?seconds=$2" &
    PROF_PIDS+=($!)
    pids+=($!)
  done
}
profile_wait() { local p; for p in "${PROF_PIDS[@]+"${PROF_PIDS[@]}"}"; do wait "$p" || true; forget "$p"; done; }

sleep_until() { # sleep_until MS
  local t=$(($1 - $(now_ms)))
  ((t > 0)) && sleep "$(awk -v t="$t" 'BEGIN{printf "%.3f", t / 1000}')"
  return 0
}

stream_msgs() { "$RAWJS" info --server "$NATS_URL" --stream "$1" 2>/dev/null | grep -o '"msgs":[0-9]*' | cut -d: -f2 || true; }
wait_empty() { # wait_empty STREAM SECONDS: until every task is acked away (the last acks replicated)
  local k m=""
  for ((k = 0; k < $2 * 2; k++)); do
    m=$(stream_msgs "$1")
    [ "$m" = 0 ] && return 0
    sleep 0.5
  done
  echo "raft_breakdown.sh: $1 still holds ${m:-?} messages" >&2
}

KEY=$work/sendat.key
"$SENDAT" keygen "$KEY" >/dev/null
{
  echo "nats_server=$("$NATS_BIN" --version 2>&1 | head -n 1)"
  echo "commit=$(git -C "$repo" describe --always --dirty 2>/dev/null || echo unknown)"
  echo "n=$N cores=$(nproc) loadavg_at_start=$(cut -d' ' -f1-3 /proc/loadavg | tr ' ' /)"
} >"$OUT/meta.txt"
echo "== raft breakdown: $N tasks in one burst, 3-node R3 cluster, nats-server $(nats_version), dumps in $OUT"

d=$work/c
mkdir -p "$d"
start_servers "$d"
init_sendat "$d"
start_sink "$d"
start_consumers "$d" "$CONSUMERS"
due=$(($(now_ms) + MARGIN_MS + N * 1000 / SCHED_GUESS_PER_S))
due=$(((due + SLOT_MS - 1) / SLOT_MS * SLOT_MS))
gen_tasks "$d/tasks.ndjson" "$N" "$due" 0 "http://127.0.0.1:$SINK_PORT/hook"
schedule "$d" "$d/tasks.ndjson"
rm -f "$d/tasks.ndjson"
echo "   booked in $(grep -o '"wall_s": [0-9.]*' "$d/schedule.json" | cut -d' ' -f2) s; due in $(((due - $(now_ms)) / 1000)) s"
snap sendat_A
sleep_until $((due - 5000))
snap sendat_B
# the burst's own profile: from B on, long enough for a slow run
profile_all sendat $(((due - $(now_ms)) / 1000 + 3 + N / 4000))
# what the durables hold unacked as the tasks fall due (their state is written with all of it)
sleep_until $((due - 200))
mkdir -p "$OUT/sendat_due"
for i in 0 1 2; do
  curl -s --max-time 10 "$(port_of "$i" monitoring)/jsz?consumers=true&config=false" >"$OUT/sendat_due/n$i.jsz.json" || true
done
wait_delivered "$N" $((due + 120000))
wait_empty SENDAT_TASKS 30
sleep 1 # the last beats of the followers' applied indexes
snap sendat_C
echo "   delivered $(sink_count) in $(( $(cat "$OUT/sendat_C/at_ms") - due )) ms after the due time (including the settling)"
profile_wait
stop_consumers
for k in pulled moved sent failed retried duplicates; do echo "$k=$(counter_sum "$d" "$k")"; done >"$OUT/consumer_counters.txt"

if ((RAW)); then
  sealed=$("$RAWJS" sealed --url "http://127.0.0.1:65535/hook" --data "$SAMPLE_DATA")
  size=$(echo "$sealed" | grep -o '"sealed_bytes":[0-9]*' | cut -d: -f2)
  echo "== raw loop on the same cluster: $N messages of $size bytes, R3, pulled, POSTed, acked"
  rm -f "$OUT/raw.hold" "$OUT/raw.hold.go"
  "$RAWJS" bench --post-only 1 --hold-file "$OUT/raw.hold" --server "$NATS_URL" --n "$N" \
    --size "$size" --replicas 3 --server-pid "$(IFS=,; echo "${SERVER_PIDS[*]}")" \
    --sink "http://127.0.0.1:$SINK_PORT/raw" >"$OUT/raw.json" 2>"$OUT/raw.err" &
  rawpid=$!
  pids+=("$rawpid")
  wait_file "$OUT/raw.hold" 120
  sleep 1 # the publishing's last raft entries applied everywhere
  snap raw_B
  profile_all raw $((3 + N / 4000))
  touch "$OUT/raw.hold.go"
  wait "$rawpid" || { cat "$OUT/raw.err" >&2; exit 1; }
  forget "$rawpid"
  wait_empty RAWJS 30
  sleep 1
  snap raw_C
  profile_wait
fi
stop_pid "$SINK_PID" 5
stop_servers

python3 - "$OUT" "$N" "$HZ" "$repo/bench" <<'PY' | tee "$OUT/breakdown.txt"
# Differences of the servers' own counters between the snapshots, per asset.
import glob, json, os, sys, collections
out, n, hz = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
sys.path.insert(0, sys.argv[4])
sys.dont_write_bytecode = True  # no __pycache__ left in bench/

def load(name):
    """Per asset, the highest value any node shows (the leader's, or a follower caught up)."""
    d = os.path.join(out, name)
    if not os.path.isdir(d):
        return None
    assets, ticks = {}, 0
    raft = {}
    for f in glob.glob(os.path.join(d, "n*.raftz*.json")):
        raftz = json.load(open(f))
        for acc, groups in (raftz or {}).items():
            for g, v in groups.items():
                cur = raft.setdefault(g, {"applied": 0, "committed": 0})
                cur["applied"] = max(cur["applied"], v.get("applied", 0))
                cur["committed"] = max(cur["committed"], v.get("committed", 0))
    for i in range(3):
        ticks += int(open(os.path.join(d, "n%d.ticks" % i)).read().strip() or 0)
    for i in range(3):
        j = json.load(open(os.path.join(d, "n%d.jsz.json" % i)))
        for acc in j.get("account_details") or []:
            for s in acc.get("stream_detail") or []:
                st = s.get("state", {})
                a = assets.setdefault(("stream", s["name"]), collections.Counter())
                a["records"] = max(a["records"], st.get("last_seq", 0))
                a["msgs_max"] = max(a["msgs_max"], st.get("messages", 0))
                a["group"] = s.get("stream_raft_group") or a.get("group") or ""
                # 2.10+ name the durables' groups in the stream, 2.9 in each consumer
                cgroups = {g["name"]: g["raft_group"] for g in s.get("consumer_raft_groups") or []}
                for c in s.get("consumer_detail") or []:
                    b = assets.setdefault(("durable", s["name"] + " > " + c["name"]), collections.Counter())
                    b["records"] = max(b["records"], c.get("ack_floor", {}).get("consumer_seq", 0))
                    b["delivered"] = max(b["delivered"], c.get("delivered", {}).get("consumer_seq", 0))
                    b["redelivered"] = max(b["redelivered"], c.get("num_redelivered", 0))
                    b["group"] = (c.get("consumer_raft_group") or cgroups.get(c["name"])
                                  or b.get("group") or "")
    for a in assets.values():
        g = a.get("group")
        a["raft"] = raft.get(g, {}).get("applied", 0) if g else 0
    meta = raft.get("_meta_", {}).get("applied", 0)
    return {"assets": assets, "ticks": ticks, "meta": meta, "has_raft": bool(raft),
            "at": int(open(os.path.join(d, "at_ms")).read())}

def kind(name):
    if name.startswith("stream KV_sendat_claims"): return "claims: creates + outcomes"
    if name.startswith("stream KV_sendat_members"): return "member entries"
    if name.startswith("stream KV_sendat_leases"): return "lease records"
    if name.startswith("stream KV_"): return "other buckets"
    # a work-queue stream's appends with no new message: the removal of acked messages (the
    # raw loop's own stream, which gets nothing but acks in its window, shows as many)
    if name.startswith("stream SENDAT_TASKS"): return "task stream: moves, retries, removals"
    if name.startswith("stream SENDAT_DLQ"): return "dead letters"
    if name.startswith("durable "): return "level durables: acks, deliveries"
    if name.startswith("stream RAWJS"): return "raw stream: removals"
    return "?"

def diff(a, b):
    rows = []
    for key in sorted(set(a["assets"]) | set(b["assets"])):
        x, y = a["assets"].get(key, collections.Counter()), b["assets"].get(key, collections.Counter())
        rec = y["records"] - x["records"]
        # a durable made between the snapshots counts from 0; one deleted shows nothing after
        if key not in b["assets"]:
            continue
        r = (y["raft"] - x["raft"]) if y.get("group") == x.get("group") or key not in a["assets"] else y["raft"]
        extra = ""
        if key[0] == "durable":
            extra = "delivered %d redelivered %d" % (y["delivered"] - x["delivered"], y["redelivered"] - x["redelivered"])
        if rec or r or (key[0] == "durable" and y["delivered"] != x["delivered"]):
            rows.append(("%s %s" % key, rec, r, extra))
    rows.append(("meta group (assets made/removed)", 0, b["meta"] - a["meta"], ""))
    return rows

def table(title, a, b, deliveries):
    rows = diff(a, b)
    tot_rec = sum(r[1] for r in rows if r[1] > 0)
    tot_raft = sum(r[2] for r in rows if r[2] > 0)
    cpu_s = (b["ticks"] - a["ticks"]) / hz
    print("-- %s: %.1f s, servers' CPU %.2f s = %.0f us per delivery" % (
        title, (b["at"] - a["at"]) / 1000, cpu_s, 1e6 * cpu_s / max(deliveries, 1)))
    print("%-58s %9s %7s %6s %9s %7s %6s  %s" % ("asset", "records", "/task", "share",
          "raft", "/task", "share", ""))
    for name, rec, r, extra in rows:
        print("%-58s %9d %7.3f %5.1f%% %9s %7s %6s  %s" % (
            name[:58], rec, rec / max(deliveries, 1), 100.0 * max(rec, 0) / max(tot_rec, 1),
            r if b["has_raft"] else "-", "%.3f" % (r / max(deliveries, 1)) if b["has_raft"] else "-",
            "%.1f%%" % (100.0 * max(r, 0) / max(tot_raft, 1)) if b["has_raft"] else "-", extra))
    print("%-58s %9d %7.3f %6s %9s %7s" % ("total", tot_rec, tot_rec / max(deliveries, 1), "",
          tot_raft if b["has_raft"] else "-", "%.3f" % (tot_raft / max(deliveries, 1)) if b["has_raft"] else "-"))
    by = collections.Counter()
    for name, rec, r, extra in rows:
        by[kind(name) if not name.startswith("meta") else "meta group"] += r if b["has_raft"] else rec
    print("   by kind (%s per task):" % ("raft appends" if b["has_raft"] else "records"),
          ", ".join("%s %.3f" % (k, v / max(deliveries, 1)) for k, v in by.most_common() if v))
    print()
    return cpu_s

# the profile: every sample given to the first kind its stack (root first) reaches
KINDS = [
    ("raft: replication, WAL", ("(*raft).", "(*appendEntry)")),
    ("stream: store a message", ("(*stream).processJetStreamMsg", "(*stream).processClusteredInboundMsg",
                                 "(*jetStream).applyStreamEntries", "(*stream).processInboundJetStreamMsg")),
    ("consumer: acks", ("(*consumer).processAck", "(*consumer).processAckMsg", "(*consumer).processReplicatedAck",
                        "(*consumer).ackMsg", "(*consumer).processTerm", "(*consumer).processNak")),
    ("consumer: in-progress", ("(*consumer).progressUpdate", "(*consumer).processInProgress")),
    ("consumer: deliveries", ("(*consumer).processNextMsgRequest", "(*consumer).getNextMsg",
                              "(*consumer).loopAndGatherMsgs", "(*consumer).deliverMsg",
                              "(*jetStream).applyConsumerEntries", "(*consumer).processNextMsgReq")),
    ("consumer: state written to disk", ("encodeConsumerState", "(*consumerFileStore).flushLoop")),
    ("store: flush and sync", ("flushPendingMsgs", "writeFileWithOptionalSync", "(*fileStore).syncBlocks")),
    ("KV / direct get / API", ("(*stream).processDirectGetRequest", "(*stream).processDirectGetLastBySubjectRequest",
                               "(*Server).jsStreamInfoRequest", "(*Server).jsConsumerInfoRequest",
                               "(*Server).jsConsumerCreateRequest", "(*Server).jsonResponse")),
    ("internal send loop (acks, replies)", ("(*Server).internalSendLoop", "(*Server).internalLoop")),
    ("client and route I/O", ("(*client).readLoop", "(*client).writeLoop", "(*client).flushOutbound",
                              "(*client).processInboundMsg", "(*client).flushClients")),
    ("garbage collection", ("runtime.gcBgMarkWorker", "runtime.gcDrain", "runtime.bgsweep", "runtime.bgscavenge")),
    ("Go scheduler, timers", ("runtime.schedule", "runtime.findRunnable", "runtime.mcall", "runtime.park_m",
                              "runtime.sysmon", "runtime.checkTimers")),
]
def classify(stack):
    """The first kind of KINDS whose functions any frame of the stack names (raft first: a
    leader's proposal is counted as raft work, not as the stream's)."""
    for name, keys in KINDS:
        for f in stack:
            if any(k in f for k in keys):
                return name
    return "other"

def profiles(tag, us_per_delivery):
    files = sorted(glob.glob(os.path.join(out, tag + ".n*.pb.gz")))
    if not files:
        return
    try:
        import pprof_top
    except Exception as e:
        print("(no profile read: %s)" % e); return
    by, total, funcs = collections.Counter(), 0, collections.Counter()
    for f in files:
        try:
            samples = pprof_top.load(f)
        except Exception as e:
            print("(profile %s unreadable: %s)" % (f, e)); continue
        for w, stack in samples:
            total += w
            by[classify(stack)] += w
            if stack: funcs[stack[0]] += w
    if not total:
        return
    print("-- %s: CPU profile of the 3 nodes, %.2f s of samples, by kind (share, and that share"
          " of the window's %.0f us of CPU per delivery)" % (tag, total / 1e9, us_per_delivery))
    for k, w in by.most_common():
        print("   %5.1f%% %6.0f us  %s" % (100.0 * w / total, us_per_delivery * w / total, k))
    print("   top functions (flat):")
    for f, w in funcs.most_common(12):
        print("   %5.1f%%  %s" % (100.0 * w / total, f))
    print()

meta = dict(l.strip().split("=", 1) for l in open(os.path.join(out, "meta.txt")) if "=" in l)
print("== %s, %s" % (meta.get("nats_server"), meta.get("n")))
sa, sb, sc = load("sendat_A"), load("sendat_B"), load("sendat_C")
ahead = table("sendat, booking done -> 5 s before due (A->B)", sa, sb, n)
burst = table("sendat, the burst (B->C)", sb, sc, n)
# the wait's CPU per second (heartbeats, member beats, watchers) goes on during the burst too
idle = ahead / max((sb["at"] - sa["at"]) / 1000, 1e-3) * (sc["at"] - sb["at"]) / 1000
print("the burst less the wait's rate (%.3f CPU s per s): %.0f us per delivery" % (
    ahead / max((sb["at"] - sa["at"]) / 1000, 1e-3), 1e6 * (burst - idle) / n))
print()
table("sendat, A->C", sa, sc, n)
profiles("sendat", 1e6 * burst / n)
held = collections.Counter()
for f in glob.glob(os.path.join(out, "sendat_due", "n*.jsz.json")):
    try:
        j = json.load(open(f))
    except ValueError:
        continue
    for acc in j.get("account_details") or []:
        for s in acc.get("stream_detail") or []:
            for c in s.get("consumer_detail") or []:
                k = s["name"] + " > " + c["name"]
                held[k, "ack_pending"] = max(held[k, "ack_pending"], c.get("num_ack_pending", 0))
                held[k, "pending"] = max(held[k, "pending"], c.get("num_pending", 0))
if held:
    print("at the due time (-200 ms), held unacked / not yet delivered:", ", ".join(
        "%s %d / %d" % (k, held[k, "ack_pending"], held[k, "pending"])
        for k in sorted({k for k, _ in held}) if held[k, "ack_pending"] or held[k, "pending"]))
    print()
rb, rc = load("raw_B"), load("raw_C")
if rb and rc:
    raw = table("raw pull+POST+ack loop, stored -> all acked", rb, rc, n)
    print("burst CPU per delivery, sendat B->C / raw: %.2f x; less the wait's rate: %.2f x" % (
        burst / raw if raw else 0, (burst - idle) / raw if raw else 0))
    print()
    profiles("raw", 1e6 * raw / n)
for f in ("consumer_counters.txt", "raw.json"):
    p = os.path.join(out, f)
    if os.path.exists(p):
        print("%s: %s" % (f, " ".join(open(p).read().split())))
PY
echo "took $(( ($(now_ms) - started) / 1000 )) s; dumps and the table in $OUT"
