#!/usr/bin/env python3
"""Helpers for bench/run.sh (standard library only).

  analyze.py timed OUT.json CMD...       runs CMD, writes wall/user/sys seconds and peak RSS
  analyze.py lateness ARRIVALS N         lateness of each task from the sink's records
  analyze.py report WORK RESULTS_DIR     merges WORK/facts/*.kv, prints the table, writes JSON

The JSON is a summary: a list longer than LIST_MAX (a dump of ids or records) is replaced by
its length, so a result stays small whatever a scenario recorded.

The sink writes "<arrival ms> <webhook-id>" lines; a generated task id starts with its due
time in ms, so lateness = arrival - due needs nothing else.
"""
import json
import os
import resource
import subprocess
import sys
import time

LIST_MAX = 100


def cmd_timed(out, argv):
    t0 = time.monotonic()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    rc = subprocess.call(argv)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(out, "w") as f:
        json.dump({"rc": rc, "wall_s": round(wall, 3),
                   "user_s": round(after.ru_utime - before.ru_utime, 3),
                   "sys_s": round(after.ru_stime - before.ru_stime, 3),
                   "max_rss_mb": round(after.ru_maxrss / 1024, 1)}, f)
    return rc


def pct(sorted_vals, p):
    if not sorted_vals:
        return None
    i = min(len(sorted_vals) - 1, max(0, int(round(p * (len(sorted_vals) - 1)))))
    return sorted_vals[i]


def lateness(path, expect):
    first = {}
    total = 0
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) != 2:
                continue
            at, tid = float(parts[0]), parts[1]
            total += 1
            if tid not in first or at < first[tid]:
                first[tid] = at
    late, dues, arrivals = [], [], []
    for tid, at in first.items():
        head = tid.split("-", 1)[0]
        if not head.isdigit():
            continue
        due = int(head)
        late.append(at - due)
        dues.append(due)
        arrivals.append(at)
    late.sort()
    r = {"expected": expect, "received": total, "unique": len(first),
         "duplicates": total - len(first), "missing": max(0, expect - len(first))}
    if late:
        first_at, last_at = min(arrivals), max(arrivals)
        due_min, due_max = min(dues), max(dues)
        r.update({
            "lateness_ms": {"min": round(late[0], 1), "p50": round(pct(late, 0.50), 1),
                            "p90": round(pct(late, 0.90), 1), "p99": round(pct(late, 0.99), 1),
                            "max": round(late[-1], 1),
                            "mean": round(sum(late) / len(late), 1)},
            "first_delivery_lateness_ms": round(first_at - due_min, 1),
            "due_to_last_delivery_s": round((last_at - due_max) / 1000, 3),
            "first_to_last_delivery_s": round((last_at - first_at) / 1000, 3),
            "due_span_s": round((due_max - due_min) / 1000, 3),
        })
        span = (last_at - due_min) / 1000
        r["deliveries_per_s_from_due"] = round(len(late) / span) if span > 0 else None
        span = (last_at - first_at) / 1000
        r["deliveries_per_s_first_to_last"] = round(len(late) / span) if span > 0 else None
    return r


def read_facts(path):
    facts = {}
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if "=" not in line:
                continue
            k, v = line.split("=", 1)
            try:
                facts[k] = json.loads(v)
            except ValueError:
                facts[k] = v
    return facts


def g(d, *path, default=None):
    for p in path:
        if not isinstance(d, dict) or p not in d:
            return default
        d = d[p]
    return d


def num(v, fmt="{:,.0f}"):
    if v is None or v == "":
        return "-"
    if isinstance(v, (int, float)):
        return fmt.format(v)
    return str(v)


def verdict(ok):
    if ok is None:
        return ""
    return "ok" if ok else "MISSED"


def shrink(v):
    """v with every list longer than LIST_MAX replaced by a note of its length."""
    if isinstance(v, dict):
        return {k: shrink(x) for k, x in v.items()}
    if isinstance(v, list):
        if len(v) > LIST_MAX:
            return "(%d items left out)" % len(v)
        return [shrink(x) for x in v]
    return v


def mem_per_task(d, n):
    """Server memory per waiting task in bytes: the RSS it grew by, over n."""
    before, after = g(d, "server_rss_mb_before"), g(d, "server_rss_mb")
    if not n or before is None or after is None:
        return None
    return (after - before) * 1024 * 1024 / n


def native_rows(res, row, raw):
    """The server's own scheduler (ADR-51) beside sendat's burst, spread and waiting tasks."""
    note = g(res, "native", "note")
    nb, ns, nw = res.get("native_burst", {}), res.get("native_spread", {}), res.get("native_waiting", {})
    if note and not (nb or ns or nw):
        row("native: the server's own scheduler", note)
        return
    if nb:
        lat = g(nb, "lat", default={}) or {}
        dps = g(lat, "deliveries_per_s_from_due")
        raw_post = g(raw, "pull_post_ack", "rate")
        sendat = g(res, "burst", "lat", "deliveries_per_s_from_due")
        row("native burst: deliveries/s (due to last, %s schedules)" % num(g(nb, "n")), num(dps),
            "%s pull+POST+ack" % num(raw_post))
        row("native burst: ratio to raw pull+POST+ack / sendat's burst to it",
            "%s / %s" % (num(dps / raw_post if dps and raw_post else None, "{:.2f}"),
                         num(sendat / dps if dps and sendat else None, "{:.2f}")), "1.00")
        row("native burst: lateness p50/p90/p99/max (ms)", "/".join(
            num(g(lat, "lateness_ms", k)) for k in ("p50", "p90", "p99", "max")))
        row("native burst: first delivery after due (ms)", num(g(lat, "first_delivery_lateness_ms"), "{:.1f}"))
        row("native burst: missing / duplicates", "%s / %s" % (num(g(lat, "missing")), num(g(lat, "duplicates"))))
    if ns:
        lat = g(ns, "lat", default={}) or {}
        n = g(ns, "n")
        row("native spread: lateness p50/p99/max (ms)", "/".join(
            num(g(lat, "lateness_ms", k)) for k in ("p50", "p99", "max")))
        row("native spread: missing / duplicates", "%s / %s" % (num(g(lat, "missing")), num(g(lat, "duplicates"))))
        client = (g(ns, "client", "pull_post_ack", "cpu_us_per_msg") or 0) * (g(ns, "client", "pull_post_ack", "msgs") or 0) / 1e6
        scpu = g(ns, "server_cpu_s")
        per = (client + scpu) * 1e6 / n if n and scpu is not None else None
        s = res.get("spread", {})
        sendat = ((g(s, "consumer_cpu_s") or 0) + (g(s, "server_cpu_s") or 0)) * 1e6 / g(s, "n") if g(s, "n") else None
        row("native spread: CPU us per task (client + server)", num(per, "{:.0f}"))
        row("spread: CPU per task, sendat / native", num(sendat / per if sendat and per else None, "{:.1f}"))
    if nw:
        n = g(nw, "n")
        row("native waiting: schedules/s (%s due tomorrow)" % num(n), num(g(nw, "client", "schedule", "rate")),
            "%s pub+msgid" % num(g(raw, "pub_async_msgid", "rate")))
        msgs, byts = g(nw, "stream", "msgs"), g(nw, "stream", "bytes")
        row("native waiting: stored bytes per schedule", num(byts / msgs if msgs else None))
        row("waiting: server memory per task, sendat / native (B)", "%s / %s" % (
            num(mem_per_task(res.get("bulk", {}), g(res, "bulk", "n"))), num(mem_per_task(nw, n))))


def report(work, results_dir):
    facts_dir = os.path.join(work, "facts")
    res = {}
    for name in sorted(os.listdir(facts_dir)):
        if name.endswith(".kv"):
            res[name[:-3]] = read_facts(os.path.join(facts_dir, name))
    meta = res.pop("meta", {})
    res = shrink(res)
    out = {"meta": meta, "scenarios": res}
    raw = g(res, "raw", "raw", default={}) or {}
    raw_pub = g(raw, "pub_async", "rate")
    sealed = g(res, "raw", "sealed", "sealed_bytes")
    rows = []

    def row(name, value, raw_limit="", target="", ok=None):
        rows.append((name, value, raw_limit, target, verdict(ok)))

    b = res.get("bulk", {})
    if b:
        rate = g(b, "rate")
        ratio = rate / raw_pub if rate and raw_pub else None
        row("bulk: tasks/s (%s tasks)" % num(g(b, "n")), num(rate),
            "%s pub, %s pub+msgid" % (num(raw_pub), num(g(raw, "pub_async_msgid", "rate"))),
            ">= 0.9 x raw pub", ratio is not None and ratio >= 0.9)
        row("bulk: ratio to raw async publish", num(ratio, "{:.2f}"), "1.00", ">= 0.90",
            ratio is not None and ratio >= 0.9)
        raw_id = g(raw, "pub_async_msgid", "rate")
        row("bulk: ratio to raw publish with Msg-Id + header (the shape of bookings naming an id)",
            num(rate / raw_id if rate and raw_id else None, "{:.2f}"), "1.00")
        bpt = g(b, "bytes_per_task")
        row("bulk: broker bytes per task", num(bpt), "sealed %s" % num(sealed), "<= 2 x sealed",
            bpt is not None and sealed is not None and bpt <= 2 * sealed)
        prod = (g(b, "producer", "user_s") or 0) + (g(b, "producer", "sys_s") or 0)
        n = g(b, "n") or 0
        row("bulk: CPU us per task producer / server",
            "%s / %s" % (num(prod * 1e6 / n if n else None, "{:.1f}"),
                         num((g(b, "server_cpu_s") or 0) * 1e6 / n if n else None, "{:.1f}")),
            "%s / %s pub" % (num(g(raw, "pub_async", "cpu_us_per_msg"), "{:.1f}"),
                             num(g(raw, "pub_async", "server_cpu_us_per_msg"), "{:.1f}")))
        row("bulk: server RSS after (MB)", num(g(b, "server_rss_mb"), "{:.0f}"))
    a = res.get("api", {})
    if a:
        single, batch, cli = g(a, "single_rate"), g(a, "batch_rate"), g(a, "cli_rate")
        row("api: POST /v1/tasks one at a time, keep-alive (tasks/s)", num(single), "",
            ">= 2,000", single is not None and single >= 2000)
        ratio = batch / cli if batch and cli else None
        row("api: POST /v1/batches (tasks/s, %s lines)" % num(g(a, "batch_n")), num(batch),
            "%s schedule --batch" % num(cli), ">= 0.8 x schedule --batch",
            ratio is not None and ratio >= 0.8)
        row("api: batch ratio to schedule --batch of the same file", num(ratio, "{:.2f}"))
    bu = res.get("burst", {})
    if bu:
        lat = g(bu, "lat", default={}) or {}
        n = g(bu, "n")
        dps = g(lat, "deliveries_per_s_from_due")
        row("burst: tasks due at one instant", num(n), "", "100,000")
        raw_post = g(raw, "pull_post_ack", "rate")
        row("burst: deliveries/s (due to last)", num(dps), "%s pull+POST+ack, %s pull+ack" % (
            num(raw_post), num(g(raw, "pull_ack", "rate"))), ">= 40,000", dps is not None and dps >= 40000)
        row("burst: ratio to raw pull+POST+ack", num(dps / raw_post if dps and raw_post else None, "{:.2f}"), "1.00")
        row("burst: deliveries/s (first to last)", num(g(lat, "deliveries_per_s_first_to_last")))
        row("burst: due -> last delivery (s)", num(g(lat, "due_to_last_delivery_s"), "{:.2f}"))
        p99 = g(lat, "lateness_ms", "p99")
        row("burst: lateness p50/p90/p99/max (ms)", "/".join(num(g(lat, "lateness_ms", k)) for k in
                                                         ("p50", "p90", "p99", "max")),
            "", "p99 <= 2,500", p99 is not None and p99 <= 2500)
        fd = g(lat, "first_delivery_lateness_ms")
        row("burst: first delivery after due (ms)", num(fd, "{:.1f}"), "", "<= 10", fd is not None and fd <= 10)
        row("burst: missing / duplicates", "%s / %s" % (num(g(lat, "missing")), num(g(lat, "duplicates"))),
            "", "0 / 0", g(lat, "missing") == 0 and g(lat, "duplicates") == 0)
        row("burst: CPU s consumers / server", "%s / %s" % (num(g(bu, "consumer_cpu_s"), "{:.1f}"),
                                                            num(g(bu, "server_cpu_s"), "{:.1f}")))
        row("burst: peak RSS MB consumer max / server", "%s / %s" % (num(g(bu, "consumer_rss_mb"), "{:.0f}"),
                                                                     num(g(bu, "server_rss_mb"), "{:.0f}")))
        row("burst: moved (re-published) / sent", "%s / %s" % (num(g(bu, "moved")), num(g(bu, "sent"))))
    fo = res.get("failover", {})
    if fo:
        lat = g(fo, "lat", default={}) or {}
        mx, missing = g(lat, "lateness_ms", "max"), g(lat, "missing")
        row("failover: tasks due at once (a consumer killed -9 at due + 30 ms)", num(g(fo, "n")))
        row("failover: lateness p50/p99/max (ms)", "/".join(num(g(lat, "lateness_ms", k)) for k in
                                                        ("p50", "p99", "max")),
            "", "max <= 5,000", mx is not None and mx <= 5000)
        row("failover: missing / resent (same webhook-id)", "%s / %s" % (num(missing), num(g(lat, "duplicates"))),
            "", "0 missing", missing == 0)
    for key, what in (("leader_tasks", "the task stream's"), ("leader_claims", "the claims bucket's")):
        lo = res.get(key, {})
        if not lo:
            continue
        lat = g(lo, "lat", default={}) or {}
        mx, missing, dup = g(lat, "lateness_ms", "max"), g(lat, "missing"), g(lat, "duplicates")
        extra = max(0, (g(lat, "unique") or 0) - (g(lo, "n") or 0))
        row("%s: tasks due at once, %s leader killed -9 at the due time (%s, led %s)" % (
            key, what, g(lo, "killed", default="?"), g(lo, "killed_led", default="?")), num(g(lo, "n")))
        row("%s: lateness p50/p99/max (ms)" % key, "/".join(num(g(lat, "lateness_ms", k)) for k in
                                                     ("p50", "p99", "max")),
            "", "max <= 5,000", mx is not None and mx <= 5000)
        row("%s: delivered / missing / sent twice (same id) / extra ids" % key, "%s / %s / %s / %s" % (
            num(g(lat, "unique")), num(missing), num(dup), num(extra)),
            "", "n / 0 / 0 / 0", missing == 0 and dup == 0 and extra == 0)
    ro = res.get("rolling", {})
    if ro:
        lat = g(ro, "lat", default={}) or {}
        mx, missing = g(lat, "lateness_ms", "max"), g(lat, "missing")
        row("rolling: tasks / seconds (each consumer restarted in turn)",
            "%s / %s" % (num(g(ro, "n")), num(g(ro, "seconds"))))
        row("rolling: worst lateness (ms; p50/p99 %s)" % "/".join(
            num(g(lat, "lateness_ms", k)) for k in ("p50", "p99")), num(mx))
        row("rolling: missing / duplicates", "%s / %s" % (num(missing), num(g(lat, "duplicates"))),
            "", "0 / 0", missing == 0 and g(lat, "duplicates") == 0)
        row("rolling: stop took (ms) / tasks handed back from inboxes",
            "%s / %s" % ("+".join(num(v) for v in g(ro, "stop_ms", default=[]) or []),
                         num(g(ro, "handed_back"))))
    s = res.get("spread", {})
    if s:
        lat = g(s, "lat", default={}) or {}
        p99, mx = g(lat, "lateness_ms", "p99"), g(lat, "lateness_ms", "max")
        row("spread: tasks / seconds", "%s / %s" % (num(g(s, "n")), num(g(s, "seconds"))), "", "60,000 / 60")
        row("spread: lateness p50/p99/max (ms)", "/".join(num(g(lat, "lateness_ms", k)) for k in ("p50", "p99", "max")),
            "", "p99 <= 20, max <= 100", p99 is not None and mx is not None and p99 <= 20 and mx <= 100)
        mm, mmax = g(s, "claims", "moves_mean"), g(s, "claims", "moves_max")
        row("spread: re-publishes per task mean/max", "%s / %s" % (num(mm, "{:.2f}"), num(mmax)),
            "%s repub async, %s sync" % (num(g(raw, "pull_repub_async_ack", "rate")),
                                         num(g(raw, "pull_repub_sync_ack", "rate"))),
            "<= 1.0 / <= 2", mm is not None and mmax is not None and mm <= 1.0 and mmax <= 2)
        row("spread: missing / duplicates", "%s / %s" % (num(g(lat, "missing")), num(g(lat, "duplicates"))),
            "", "0 / 0", g(lat, "missing") == 0 and g(lat, "duplicates") == 0)
        row("spread: CPU s consumers / server", "%s / %s" % (num(g(s, "consumer_cpu_s"), "{:.1f}"),
                                                             num(g(s, "server_cpu_s"), "{:.1f}")))
        n, ccpu, scpu = g(s, "n"), g(s, "consumer_cpu_s"), g(s, "server_cpu_s")
        per_task = (ccpu + scpu) * 1e6 / n if n and ccpu is not None and scpu is not None else None
        row("spread: CPU us per task (consumers + server)", num(per_task, "{:.0f}"))
        for phase, label, target in (("pull_post_ack", "raw pull+POST+ack", 3),
                                     ("pull_post_ack_paced", "raw, paced alike", None)):
            raw_cost = (g(raw, phase, "cpu_us_per_msg") or 0) + (g(raw, phase, "server_cpu_us_per_msg") or 0)
            ratio = per_task / raw_cost if per_task and raw_cost else None
            ok = ratio <= target if target and ratio is not None else None  # no raw run: no verdict
            row("spread: CPU per task, x %s" % label, num(ratio, "{:.1f}"),
                num(raw_cost or None, "{:.1f}") + " us", "<= %d" % target if target else "", ok)
    i = res.get("idle", {})
    if i:
        worst = g(i, "consumer_cpu_pct_max")
        row("idle: CPU %% per consumer (%s tasks waiting, %s s)" % (num(g(i, "backlog")), num(g(i, "seconds"))),
            num(worst, "{:.2f}"), "", "<= 0.5 %", worst is not None and worst <= 0.5)
        row("idle: server CPU %% (after %s s of consumer start: %s CPU s)" % (
            num(g(i, "settle_s")), num(g(i, "server_cpu_s_consumers_start"), "{:.1f}")),
            num(g(i, "server_cpu_pct"), "{:.2f}"))
    h = res.get("huge", {})
    if h:
        row("10M far ahead: tasks/s", num(g(h, "rate")), num(raw_pub))
        row("10M far ahead: bytes per task / server RSS MB", "%s / %s" % (num(g(h, "bytes_per_task")),
                                                                          num(g(h, "server_rss_mb"))))
    native_rows(res, row, raw)
    j = res.get("junk", {})
    if j:
        lat = g(j, "lat", default={}) or {}
        mx, missing = g(lat, "lateness_ms", "max"), g(lat, "missing")
        row("junk: junk messages in the window / valid tasks in it", "%s / %s" % (
            num(g(j, "n")), num(g(j, "valid"))), "", "100,000")
        row("junk: shape / published before the consumers started", "%s / %s" % (
            g(j, "shape", default="sealed"), "yes" if g(j, "before_consumers") else "no"))
        row("junk: server CPU s / wall s from the junk to the last valid task", "%s / %s" % (
            num(g(j, "server_cpu_s")), num(g(j, "server_wall_s"))))
        row("junk: valid lateness p50/p99/max (ms)", "/".join(num(g(lat, "lateness_ms", k)) for k in
                                                         ("p50", "p99", "max")),
            "", "max <= 1,000", mx is not None and mx <= 1000)
        row("junk: valid missing", num(missing), "", "0", missing == 0)
        row("junk: parked / unknown key met / dead-lettered", "%s / %s / %s" % (
            num(g(j, "parked")), num(g(j, "key_waits")), num(g(j, "dead"))))
        row("junk: whole log lines of the junk / consumer log bytes", "%s / %s" % (
            num(g(j, "log_lines_per_event")), num(g(j, "log_bytes"))))
    k = res.get("sink", {})
    if k:
        row("sink capacity (req/s, keep-alive)", num(g(k, "rate")), "", "> 50,000", (g(k, "rate") or 0) > 50000)
    if raw:
        row("raw: pull+ack / pull+repub+ack async / sync (msgs/s)", "%s / %s / %s" % (
            num(g(raw, "pull_ack", "rate")), num(g(raw, "pull_repub_async_ack", "rate")),
            num(g(raw, "pull_repub_sync_ack", "rate"))))
        row("raw: pull+POST+ack to the sink (msgs/s; CPU us per msg client / server)", "%s; %s / %s" % (
            num(g(raw, "pull_post_ack", "rate")), num(g(raw, "pull_post_ack", "cpu_us_per_msg"), "{:.1f}"),
            num(g(raw, "pull_post_ack", "server_cpu_us_per_msg"), "{:.1f}")))
        row("raw: the same paced as the spread (msgs/s; CPU us per msg client / server)", "%s; %s / %s" % (
            num(g(raw, "pull_post_ack_paced", "rate")),
            num(g(raw, "pull_post_ack_paced", "cpu_us_per_msg"), "{:.1f}"),
            num(g(raw, "pull_post_ack_paced", "server_cpu_us_per_msg"), "{:.1f}")))
        row("raw: KV create sync / pipelined (keys/s)", "%s / %s" % (
            num(g(raw, "kv_create_sync", "rate")), num(g(raw, "kv_create_async", "rate"))))

    widths = [max(len(r[c]) for r in rows + [("figure", "sendat", "raw limit", "target", "")]) for c in range(5)]
    line = "  ".join("{:<%d}" % w for w in widths)
    print("server: %s%s" % (meta.get("nats_server", "?"), ", 3-node cluster" if str(meta.get("cluster")) == "1" else ""))
    print(line.format("figure", "sendat", "raw limit", "target", "").rstrip())
    print(line.format(*("-" * w for w in widths)).rstrip())
    for r in rows:
        print(line.format(*r).rstrip())
    out["table"] = [dict(zip(("figure", "sendat", "raw_limit", "target", "verdict"), r)) for r in rows]
    os.makedirs(results_dir, exist_ok=True)
    path = os.path.join(results_dir, "%s.json" % meta.get("stamp", time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())))
    with open(path, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")
    print("\nresults: %s" % path)
    return 0


def main(argv):
    if len(argv) >= 3 and argv[1] == "timed":
        return cmd_timed(argv[2], argv[3:])
    if len(argv) == 4 and argv[1] == "lateness":
        print(json.dumps(lateness(argv[2], int(argv[3])), sort_keys=True))
        return 0
    if len(argv) == 4 and argv[1] == "report":
        return report(argv[2], argv[3])
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
