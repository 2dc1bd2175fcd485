/* The figures behind `sendat stats` and `GET /v1/stats`: the backlog by window and slot (from
 * the stream's per-subject counts, less the cancelled tasks, whose claims are read), the level
 * durables with their pending, unacked and waiting pulls (what the fleet is doing now), the
 * dead-letter count, the fleet members alive (the members bucket, whose TTL forgets the dead), and
 * what the consumers' sweep found that no level would ever read (the meta record "sweep"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "claimscan.h"
#include "lateness.h"
#include "stats.h"
#include "sweeprec.h"
#include "timeparse.h"

#define LEVELS_MAX 4096

#define SCAN_MAX 200000 /* the most tasks whose claims one stats call reads */

struct level {
    int64_t window, slot;
    uint64_t tasks, cancelled;
};

/* A task seen in the stream, to have its claim read: its level (index) and how many messages. */
struct seen_task {
    int level;
    uint64_t msgs;
    char id[SA_ID_MAX + 1];
};

static int
by_time(const void *a, const void *b)
{
    const struct level *x = a, *y = b;
    int64_t tx = x->slot ? x->slot : x->window, ty = y->slot ? y->slot : y->window;

    return (tx > ty) - (tx < ty);
}

/* The backlog as the shards' streams are read: levels, and totals over every shard. */
struct tally {
    struct level *lv;
    int count;
    struct seen_task *seen; /* grown as needed, up to SCAN_MAX */
    size_t seen_count, seen_cap;
    int unchecked; /* more tasks than SCAN_MAX: some cancelled ones may be counted */
    json_t *shards;
    uint64_t msgs, bytes;
    int64_t now;
};

/* Producers book tasks due more than lead + slot ahead straight into their slot, so a backlog a
 * day ahead sits in thousands of slots: slots of windows starting after the next one are
 * counted under their window (both levels), which keeps the list as short as it was. */
static void
add_level(struct tally *t, const struct sa_layout *l, const struct sa_place *p, uint64_t msgs)
{
    int64_t slot = p->window > sa_layout_window(l, t->now) + l->window_ms ? 0 : p->slot;
    int k;

    for (k = 0; k < t->count && (t->lv[k].window != p->window || t->lv[k].slot != slot); k++)
        ;
    if (k == t->count && t->count < LEVELS_MAX)
        t->lv[t->count++] = (struct level){p->window, slot, 0, 0};
    if (k < LEVELS_MAX)
        t->lv[k].tasks += msgs;
    if (k < LEVELS_MAX && t->seen_count == t->seen_cap && t->seen_cap < SCAN_MAX) {
        size_t cap = t->seen_cap ? t->seen_cap * 2 : 1024;
        void *grown = realloc(t->seen, (cap < SCAN_MAX ? cap : SCAN_MAX) * sizeof(*t->seen));
        if (grown) {
            t->seen = grown;
            t->seen_cap = cap < SCAN_MAX ? cap : SCAN_MAX;
        }
    }
    if (k < LEVELS_MAX && t->seen_count < t->seen_cap) {
        struct seen_task *s = &t->seen[t->seen_count++];
        s->level = k;
        s->msgs = msgs;
        snprintf(s->id, sizeof(s->id), "%s", p->id);
    } else {
        t->unchecked = 1;
    }
}

/* Takes the cancelled tasks (by their claims) out of the levels' counts: they wait in the stream
 * until a consumer meets them at their due time, but will never be sent. */
static enum sa_code
drop_cancelled(struct sa_nats *n, struct tally *t, struct sa_err *err)
{
    const char **ids = calloc(t->seen_count + 1, sizeof(*ids));
    enum sa_claim_state *states = calloc(t->seen_count + 1, sizeof(*states));
    enum sa_code rc = SA_OK;

    if (!ids || !states) {
        rc = sa_fail(err, SA_ENOMEM, "stats: no memory to check %zu claims", t->seen_count);
        goto out;
    }
    for (size_t i = 0; i < t->seen_count; i++)
        ids[i] = t->seen[i].id;
    if ((rc = claimscan_states(n, ids, t->seen_count, states, err)) != SA_OK)
        goto out;
    for (size_t i = 0; i < t->seen_count; i++) {
        struct level *l = &t->lv[t->seen[i].level];
        if (states[i] != SA_CLAIM_CANCELLED)
            continue;
        l->cancelled += t->seen[i].msgs;
        l->tasks -= t->seen[i].msgs < l->tasks ? t->seen[i].msgs : l->tasks;
    }
out:
    free(ids);
    free(states);
    return rc;
}

static json_int_t
cancelled_total(const struct tally *t)
{
    json_int_t n = 0;

    for (int i = 0; i < t->count; i++)
        n += (json_int_t)t->lv[i].cancelled;
    return n;
}

static json_t *
levels_json(struct level *lv, int count)
{
    json_t *list = json_array();
    char at[40];

    qsort(lv, (size_t)count, sizeof(*lv), by_time);
    for (int i = 0; i < count; i++) {
        sa_time_format(at, sizeof(at), lv[i].slot ? lv[i].slot : lv[i].window);
        json_array_append_new(list, json_pack("{s:s, s:s, s:I, s:I}", "level",
                                              lv[i].slot ? "slot" : "window", "start", at, "tasks",
                                              (json_int_t)lv[i].tasks, "cancelled",
                                              (json_int_t)lv[i].cancelled));
    }
    return list;
}

/* Tasks in levels that start before now + ahead_ms (a window's tasks are counted by its start:
 * the stream knows levels, not due times). */
static json_int_t
starting_within(const struct tally *t, int64_t ahead_ms)
{
    json_int_t n = 0;

    for (int i = 0; i < t->count; i++)
        if ((t->lv[i].slot ? t->lv[i].slot : t->lv[i].window) < t->now + ahead_ms)
            n += (json_int_t)t->lv[i].tasks;
    return n;
}

/* One shard's stream: its per-subject counts added to t's levels, its figures to t's shards. */
static enum sa_code
shard_backlog(struct sa_nats *n, int k, struct tally *t, struct sa_err *err)
{
    jsOptions o;
    jsStreamInfo *si = NULL;
    struct sa_place p;
    char stream[32], subjects[SA_SUBJECT_MAX];
    json_t *one;
    natsStatus s;

    sa_layout_stream(stream, sizeof(stream), k);
    sa_layout_stream_subjects(subjects, sizeof(subjects), k);
    jsOptions_Init(&o);
    o.Stream.Info.SubjectsFilter = subjects;
    s = js_GetStreamInfo(&si, n->js, stream, &o, NULL);
    if (s != NATS_OK)
        return sa_nats_fail(err, s, 0, stream);
    for (int i = 0; si->State.Subjects && i < si->State.Subjects->Count; i++) {
        const jsStreamStateSubject *sub = &si->State.Subjects->List[i];
        if (sa_layout_parse_subject(&p, sub->Subject, NULL) == SA_OK)
            add_level(t, &n->layout, &p, sub->Msgs);
    }
    t->msgs += si->State.Msgs;
    t->bytes += si->State.Bytes;
    one = json_pack("{s:i, s:s, s:I, s:I}", "shard", k, "stream", stream, "tasks",
                    (json_int_t)si->State.Msgs, "bytes", (json_int_t)si->State.Bytes);
    if (si->Cluster && si->Cluster->Leader) /* a single server leads nothing */
        json_object_set_new(one, "leader", json_string(si->Cluster->Leader));
    json_array_append_new(t->shards, one);
    jsStreamInfo_Destroy(si);
    return SA_OK;
}

static enum sa_code
backlog(struct sa_nats *n, json_t *doc, struct sa_err *err)
{
    struct tally t = {
        .lv = calloc(LEVELS_MAX, sizeof(struct level)), .shards = json_array(), .now = sa_now_ms()};
    enum sa_code rc = SA_OK;

    if (!t.lv || !t.shards) {
        free(t.lv);
        free(t.seen);
        json_decref(t.shards);
        return sa_fail(err, SA_ENOMEM, "stats: no memory");
    }
    for (int k = 0; k < n->layout.shards && rc == SA_OK; k++)
        rc = shard_backlog(n, k, &t, err);
    if (rc == SA_OK)
        rc = drop_cancelled(n, &t, err);
    free(t.seen);
    if (rc != SA_OK) {
        free(t.lv);
        json_decref(t.shards);
        return rc;
    }
    json_object_set_new(doc, "tasks", json_integer((json_int_t)t.msgs));
    json_object_set_new(doc, "cancelled", json_integer(cancelled_total(&t)));
    json_object_set_new(doc, "cancelled_checked", json_boolean(!t.unchecked));
    json_object_set_new(doc, "bytes", json_integer((json_int_t)t.bytes));
    json_object_set_new(doc, "shards", t.shards);
    json_object_set_new(doc, "starting_within",
                        json_pack("{s:I, s:I, s:I}", "minute", starting_within(&t, 60000), "hour",
                                  starting_within(&t, 3600000), "day",
                                  starting_within(&t, 86400000)));
    json_object_set_new(doc, "levels", levels_json(t.lv, t.count));
    free(t.lv);
    return SA_OK;
}

/* The start of the level a durable serves ("w<ms>" or "s<ms>"), 0 for another name. */
static int64_t
durable_start(const jsConsumerInfo *ci)
{
    const char *name = ci->Name ? ci->Name : "";

    return (name[0] == 'w' || name[0] == 's') ? strtoll(name + 1, NULL, 10) : 0;
}

static int
is_park(const jsConsumerInfo *ci)
{
    return ci->Name && !strcmp(ci->Name, SA_PARK_DURABLE);
}

/* Levels by their start, the park (what did not open: consumer/wheel/park.h) last. */
static int
by_start(const void *a, const void *b)
{
    const jsConsumerInfo *ca = *(jsConsumerInfo *const *)a, *cb = *(jsConsumerInfo *const *)b;
    int64_t x = is_park(ca) ? INT64_MAX : durable_start(ca),
            y = is_park(cb) ? INT64_MAX : durable_start(cb);

    return (x > y) - (x < y);
}

/* One shard's level durables in time order, added to out; past ones with nothing left are
 * only counted in *idle. */
static void
shard_pulling(struct sa_nats *n, int k, json_t *out, json_int_t *idle)
{
    jsConsumerInfoList *list = NULL;
    char at[40], stream[32];

    sa_layout_stream(stream, sizeof(stream), k);
    if (js_Consumers(&list, n->js, stream, NULL, NULL) != NATS_OK || !list)
        return;
    qsort(list->List, (size_t)list->Count, sizeof(list->List[0]), by_start);
    for (int i = 0; i < list->Count; i++) {
        jsConsumerInfo *ci = list->List[i];
        if (is_park(ci) && !ci->NumPending && !ci->NumAckPending)
            continue; /* nothing parked: not a level, not worth a line */
        if (!is_park(ci) && durable_start(ci) < sa_now_ms() - n->layout.window_ms &&
            !ci->NumPending && !ci->NumAckPending) {
            (*idle)++;
            continue;
        }
        if (is_park(ci))
            snprintf(at, sizeof(at), "-");
        else
            sa_time_format(at, sizeof(at), durable_start(ci));
        json_array_append_new(out, json_pack("{s:i, s:s, s:s, s:s, s:I, s:I, s:I}", "shard", k,
                                             "durable", ci->Name, "level",
                                             is_park(ci)                      ? "park"
                                             : ci->Name && ci->Name[0] == 's' ? "slot"
                                                                              : "window",
                                             "start", at, "pending", (json_int_t)ci->NumPending,
                                             "unacked", (json_int_t)ci->NumAckPending, "waiting",
                                             (json_int_t)ci->NumWaiting));
    }
    jsConsumerInfoList_Destroy(list);
}

/* The level durables of every shard, each shard's in time order. */
static json_t *
pulling(struct sa_nats *n, json_t *doc)
{
    json_t *out = json_array();
    json_int_t idle = 0;

    for (int k = 0; k < n->layout.shards; k++)
        shard_pulling(n, k, out, &idle);
    json_object_set_new(doc, "idle_past_durables", json_integer(idle));
    return out;
}

static json_t *
dead_letters(struct sa_nats *n)
{
    jsStreamInfo *si = NULL;
    json_t *out = json_null();

    if (js_GetStreamInfo(&si, n->js, SA_DLQ_STREAM, NULL, NULL) == NATS_OK)
        out = json_integer((json_int_t)si->State.Msgs);
    jsStreamInfo_Destroy(si);
    return out;
}

/* One member from its entry: name, instance, its last beat and, from the JSON after the
 * instance id, what it holds, has in flight and has sent, retried and dead-lettered. */
static json_t *
member(const char *name, kvEntry *e)
{
    const char *value = kvEntry_ValueString(e), *space = strchr(value, ' ');
    int64_t beat_ms = kvEntry_Created(e) / 1000000;
    json_t *facts = space ? json_loads(space + 1, 0, NULL) : NULL;
    json_t *out;
    char at[40];

    sa_time_format(at, sizeof(at), beat_ms);
    out = json_pack("{s:s, s:s%, s:s, s:I}", "name", name, "instance", value,
                    space ? (size_t)(space - value) : strlen(value), "last_beat", at, "beat_age_ms",
                    (json_int_t)(sa_now_ms() - beat_ms));
    if (json_is_object(facts))
        json_object_update(out, facts);
    json_decref(facts);
    return out;
}

static json_t *
members(struct sa_nats *n)
{
    kvStore *kv = NULL;
    kvKeysList keys = {0};
    json_t *out = json_array();

    if (js_KeyValue(&kv, n->js, SA_MEMBERS_BUCKET) != NATS_OK)
        return out;
    if (kvStore_Keys(&keys, kv, NULL) == NATS_OK) {
        for (int i = 0; i < keys.Count; i++) {
            kvEntry *e = NULL;
            if (strncmp(keys.Keys[i], SA_MEMBERS_RESCUE_PREFIX,
                        strlen(SA_MEMBERS_RESCUE_PREFIX)) && /* a lock, not a member */
                kvStore_Get(&e, kv, keys.Keys[i]) == NATS_OK)
                json_array_append_new(out, member(keys.Keys[i], e));
            kvEntry_Destroy(e);
        }
    }
    kvKeysList_Destroy(&keys);
    kvStore_Destroy(kv);
    return out;
}

#define HOUR_MINUTES 60

struct hour {
    json_int_t minute; /* the current wall-clock minute */
    json_int_t sent[HOUR_MINUTES], retried[HOUR_MINUTES], dead[HOUR_MINUTES]; /* [0]: now */
    json_int_t dispatch[LATENESS_BUCKETS + 1], delivery[LATENESS_BUCKETS + 1];
};

static void
add_buckets(json_int_t sum[], json_t *list)
{
    for (size_t i = 0; i < LATENESS_BUCKETS + 1 && i < json_array_size(list); i++)
        sum[i] += json_integer_value(json_array_get(list, i));
}

/* Adds one member's minutes and lateness (its beat's facts) to the fleet's hour, and takes
 * them out of the member's own object. */
static void
add_member_hour(struct hour *h, json_t *m)
{
    json_int_t minute = json_integer_value(json_object_get(m, "minute"));
    json_t *per = json_object_get(m, "per_minute");

    for (size_t j = 0; j < json_array_size(per); j++) {
        json_int_t age = h->minute - (minute - (json_int_t)j);
        json_t *c = json_array_get(per, j);

        if (age < 0 || age >= HOUR_MINUTES)
            continue;
        h->sent[age] += json_integer_value(json_array_get(c, 0));
        h->retried[age] += json_integer_value(json_array_get(c, 1));
        h->dead[age] += json_integer_value(json_array_get(c, 2));
    }
    add_buckets(h->dispatch, json_object_get(m, "dispatch"));
    add_buckets(h->delivery, json_object_get(m, "delivery"));
    for (const char **k = (const char *[]){"minute", "per_minute", "dispatch", "delivery", NULL};
         *k; k++)
        json_object_del(m, *k);
}

static json_t *
int_list(const json_int_t *v, size_t n)
{
    json_t *out = json_array();

    for (size_t i = 0; i < n; i++)
        json_array_append_new(out, json_integer(v[i]));
    return out;
}

/* The fleet's last hour from its members' beats: sent, retried and dead-lettered per minute
 * (newest first), and the dispatch and delivery lateness by bucket (bounds_ms, then one past
 * the last bound). */
static json_t *
delivery(json_t *members)
{
    struct hour h = {.minute = sa_now_ms() / 60000};
    json_t *minutes = json_array(), *bounds = json_array();
    size_t i;
    json_t *m;
    char at[40];

    json_array_foreach(members, i, m) add_member_hour(&h, m);
    for (int a = 0; a < HOUR_MINUTES; a++) {
        sa_time_format(at, sizeof(at), (h.minute - a) * 60000);
        json_array_append_new(minutes,
                              json_pack("{s:s, s:I, s:I, s:I}", "minute", at, "sent", h.sent[a],
                                        "retried", h.retried[a], "dead", h.dead[a]));
    }
    for (int b = 0; b < LATENESS_BUCKETS; b++)
        json_array_append_new(bounds, json_integer(lateness_bounds_ms[b]));
    return json_pack("{s:o, s:o, s:o, s:o}", "minutes", minutes, "bounds_ms", bounds, "dispatch",
                     int_list(h.dispatch, LATENESS_BUCKETS + 1), "delivery",
                     int_list(h.delivery, LATENESS_BUCKETS + 1));
}

/* One shard's sweep record, or NULL if it was never swept. */
static json_t *
sweep_shard(struct sa_nats *n, int k, struct sa_sweep_record *r)
{
    kvEntry *e = NULL;
    json_t *out = NULL;
    char at[40], key[32];

    sa_layout_meta_key(key, sizeof(key), SA_SWEEP_KEY, k);
    if (kvStore_Get(&e, n->meta, key) == NATS_OK &&
        sa_sweep_record_parse(r, kvEntry_ValueString(e), NULL) == SA_OK) {
        sa_time_format(at, sizeof(at), r->last_run_ms);
        out = json_pack("{s:i, s:I, s:s, s:I, s:I}", "shard", k, "found", (json_int_t)r->found,
                        "last_run", at, "next_seq", (json_int_t)r->next_seq, "checked",
                        (json_int_t)r->checked);
    }
    kvEntry_Destroy(e);
    return out;
}

/* The sweep of one shard as it is (null: never swept); of several, what they found and
 * looked at in all, the oldest last run, and each swept shard's record under "shards" (null if
 * none was swept; while a shard was never swept there is no last_run). */
static json_t *
sweep(struct sa_nats *n)
{
    struct sa_sweep_record r;
    json_t *shards = json_array(), *out;
    json_int_t found = 0, checked = 0;
    int64_t oldest = INT64_MAX;
    char at[40];

    for (int k = 0; k < n->layout.shards; k++) {
        json_t *one = sweep_shard(n, k, &r);
        if (!one) {
            oldest = INT64_MIN; /* never swept */
            continue;
        }
        found += (json_int_t)r.found;
        checked += (json_int_t)r.checked;
        oldest = r.last_run_ms < oldest ? r.last_run_ms : oldest;
        json_array_append_new(shards, one);
    }
    if (json_array_size(shards) == 0 || n->layout.shards == 1) {
        out = json_array_size(shards) ? json_incref(json_array_get(shards, 0)) : json_null();
        json_object_del(out, "shard");
        json_decref(shards);
        return out;
    }
    out = json_pack("{s:I, s:I, s:o}", "found", found, "checked", checked, "shards", shards);
    if (oldest != INT64_MIN) {
        sa_time_format(at, sizeof(at), oldest);
        json_object_set_new(out, "last_run", json_string(at));
    }
    return out;
}

enum sa_code
stats_collect(struct sa_nats *n, json_t **out, struct sa_err *err)
{
    json_t *doc = json_object();
    enum sa_code rc = backlog(n, doc, err);

    if (rc != SA_OK) {
        json_decref(doc);
        return rc;
    }
    json_object_set_new(doc, "pulling", pulling(n, doc));
    json_object_set_new(doc, "dead_letters", dead_letters(n));
    json_object_set_new(doc, "members", members(n));
    json_object_set_new(doc, "delivery", delivery(json_object_get(doc, "members")));
    json_object_set_new(doc, "layout",
                        json_pack("{s:I, s:I, s:i}", "window_ms", (json_int_t)n->layout.window_ms,
                                  "slot_ms", (json_int_t)n->layout.slot_ms, "shards",
                                  n->layout.shards));
    json_object_set_new(doc, "sweep", sweep(n));
    *out = doc;
    return SA_OK;
}
