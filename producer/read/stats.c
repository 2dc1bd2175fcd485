/* The figures behind `sendat stats` and `GET /v1/stats`: the backlog by window and slot (from
 * the stream's per-subject counts, less the cancelled tasks, whose claims are read), here, and
 * what the fleet is doing and what its sweep found (stats_fleet.c), gathered in one document.
 * The backlog must be read; the fleet's figures are left out when they cannot be. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "claimscan.h"
#include "stats.h"
#include "stats_fleet.h"
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

enum sa_code
stats_collect(struct sa_nats *n, json_t **out, struct sa_err *err)
{
    json_t *doc = json_object();
    enum sa_code rc = backlog(n, doc, err);

    if (rc != SA_OK) {
        json_decref(doc);
        return rc;
    }
    stats_fleet_add(n, doc);
    json_object_set_new(doc, "layout",
                        json_pack("{s:I, s:I, s:i}", "window_ms", (json_int_t)n->layout.window_ms,
                                  "slot_ms", (json_int_t)n->layout.slot_ms, "shards",
                                  n->layout.shards));
    json_object_set_new(doc, "sweep", stats_fleet_sweep(n));
    *out = doc;
    return SA_OK;
}
