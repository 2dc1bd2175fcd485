/* Listing tasks by due time. Each window of the range is walked in every shard with direct
 * gets "next by subject" (sendat.task.<W>.> or sendat.shard.<k>.<W>.>, its window and slot
 * levels alike), every task opened
 * with the key ring for its due time, and the window's tasks sorted by (due, id). A page reads
 * whole windows: the cursor "<due_ms>.<id>" names the last task given, and the next page starts
 * again at its window and skips what is not after it. A task moving down to its slot can be seen
 * twice in a walk; the copies sort side by side and are given once. Each task's state comes
 * from its claim (read for a window at once): a cancelled task is left out unless asked for,
 * as it waits in the stream until its due time but will never be sent. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "claimscan.h"
#include "content.h"
#include "task.h"
#include "tasklist.h"
#include "timeparse.h"

#define WINDOW_TASKS_MAX 200000

struct item {
    int64_t due;
    int slot, channel;
    const char *state; /* its claim's, as tasklist_filter names it */
    char id[SA_ID_MAX + 1];
    char host[256];
    char group[SA_ID_MAX + 1];
    json_t *content; /* full: what it would send (content.h), else NULL */
};

struct walk {
    struct item *items;
    size_t count, cap;
    int full;
    const struct tasklist_filter *f;
};

/* Forgets the items (a window read, given out). */
static void
walk_clear(struct walk *w)
{
    for (size_t i = 0; i < w->count; i++)
        json_decref(w->items[i].content);
    w->count = 0;
}

static int
by_due(const void *a, const void *b)
{
    const struct item *x = a, *y = b;

    if (x->due != y->due)
        return (x->due > y->due) - (x->due < y->due);
    return strcmp(x->id, y->id);
}

/* The host of a URL, without user info or port. */
static void
url_host(char *out, size_t cap, const char *url)
{
    const char *p = url ? strstr(url, "://") : NULL, *at;
    size_t len;

    out[0] = '\0';
    if (!p)
        return;
    p += 3;
    len = strcspn(p, "/?#");
    at = memchr(p, '@', len);
    if (at) {
        len -= (size_t)(at + 1 - p);
        p = at + 1;
    }
    len = p[0] == '[' ? strcspn(p, "]") + 1 : strcspn(p, ":/?#");
    snprintf(out, cap, "%.*s", (int)len, p);
}

static enum sa_code
keep(struct walk *w, const struct sa_place *p, const struct sa_task *t, struct sa_err *err)
{
    struct item *it;

    if (w->count == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 256;
        struct item *grown =
            w->count >= WINDOW_TASKS_MAX ? NULL : realloc(w->items, cap * sizeof(*it));
        if (!grown)
            return sa_fail(err, SA_ENOMEM, "a window holds more than %d tasks to list",
                           WINDOW_TASKS_MAX);
        w->items = grown;
        w->cap = cap;
    }
    it = &w->items[w->count++];
    it->due = t->due_ms;
    it->slot = p->slot != 0;
    it->channel = t->channel;
    snprintf(it->id, sizeof(it->id), "%s", p->id);
    snprintf(it->group, sizeof(it->group), "%s", t->group);
    it->content = NULL;
    it->state = NULL;
    if (w->full) {
        it->content = json_object();
        content_add(it->content, t);
    }
    url_host(it->host, sizeof(it->host), t->channel == SA_CHANNEL_WEBHOOK ? t->url : NULL);
    if (w->f && w->f->host && strcasecmp(it->host, w->f->host) != 0) {
        json_decref(it->content);
        w->count--; /* another host's task */
    }
    return SA_OK;
}

/* Reads the tasks of window in shard k due in [from, to] (of group, if not NULL) into w. */
static enum sa_code
read_shard_window(struct sa_nats *n, const struct sa_keyring *ring, int k, int64_t window,
                  int64_t from, int64_t to, const char *group, struct walk *w, struct sa_err *err)
{
    char filter[SA_SUBJECT_MAX], stream[32];
    jsDirectGetMsgOptions o;
    natsMsg *m = NULL;
    natsStatus s;
    uint64_t seq = 0;
    enum sa_code rc = SA_OK;

    sa_layout_window_all_filter(filter, sizeof(filter), k, window);
    sa_layout_stream(stream, sizeof(stream), k);
    jsDirectGetMsgOptions_Init(&o);
    o.NextBySubject = filter;
    while (rc == SA_OK) {
        struct sa_place p;
        struct sa_task *t = NULL;
        o.Sequence = seq + 1;
        if ((s = js_DirectGetMsg(&m, n->js, stream, NULL, &o)) != NATS_OK)
            return s == NATS_NOT_FOUND ? SA_OK : sa_nats_fail(err, s, 0, "direct get of a window");
        seq = natsMsg_GetSequence(m);
        if (sa_layout_parse_subject(&p, natsMsg_GetSubject(m), NULL) == SA_OK &&
            sa_task_open(ring, p.id, (const uint8_t *)natsMsg_GetData(m),
                         (size_t)natsMsg_GetDataLength(m), &t, NULL) == SA_OK &&
            t->due_ms >= from && t->due_ms <= to && (!group || !strcmp(t->group, group)))
            rc = keep(w, &p, t, err);
        sa_task_free(t);
        natsMsg_Destroy(m);
        m = NULL;
    }
    return rc;
}

static const char *
state_name(enum sa_claim_state s)
{
    switch (s) {
    case SA_CLAIM_RETRYING:
        return "failed";
    case SA_CLAIM_CANCELLED:
    case SA_CLAIM_SKIPPED:
        return "cancelled";
    case SA_CLAIM_SENT:
        return "sent";
    case SA_CLAIM_DEAD:
        return "dead";
    default:
        return "waiting";
    }
}

int
tasklist_state_valid(const char *state)
{
    return !strcmp(state, "waiting") || !strcmp(state, "failed") || !strcmp(state, "cancelled");
}

/* Whether an item of state passes the filter: the state asked for, else any but cancelled
 * (such a task waits in the stream until a consumer meets it at its due time, but will never
 * be sent). */
static int
state_passes(const struct tasklist_filter *f, const char *state)
{
    return f && f->state ? !strcmp(f->state, state) : strcmp(state, "cancelled") != 0;
}

/* Reads the claims of w's tasks: each gets its state, and those the filter does not take are
 * left out. */
static enum sa_code
filter_states(struct sa_nats *n, struct walk *w, struct sa_err *err)
{
    const char **ids = NULL;
    enum sa_claim_state *states = NULL;
    size_t kept = 0;
    enum sa_code rc = SA_OK;

    if (w->count == 0)
        return SA_OK;
    ids = calloc(w->count, sizeof(*ids));
    states = calloc(w->count, sizeof(*states));
    if (!ids || !states) {
        rc = sa_fail(err, SA_ENOMEM, "no memory to check %zu claims", w->count);
        goto out;
    }
    for (size_t i = 0; i < w->count; i++)
        ids[i] = w->items[i].id;
    if ((rc = claimscan_states(n, ids, w->count, states, err)) != SA_OK)
        goto out;
    for (size_t i = 0; i < w->count; i++) {
        w->items[i].state = state_name(states[i]);
        if (!state_passes(w->f, w->items[i].state))
            json_decref(w->items[i].content);
        else
            w->items[kept++] = w->items[i];
    }
    w->count = kept;
out:
    free(ids);
    free(states);
    return rc;
}

/* Reads window's tasks of every shard due in [from, to] (of group, if not NULL) into w, as
 * w's filter takes them. */
static enum sa_code
read_window(struct sa_nats *n, const struct sa_keyring *ring, int64_t window, int64_t from,
            int64_t to, const char *group, struct walk *w, struct sa_err *err)
{
    enum sa_code rc = SA_OK;

    for (int k = 0; k < n->layout.shards && rc == SA_OK; k++)
        rc = read_shard_window(n, ring, k, window, from, to, group, w, err);
    return rc == SA_OK ? filter_states(n, w, err) : rc;
}

static json_t *
item_json(const struct item *it)
{
    char due[40];
    json_t *j;

    sa_time_format(due, sizeof(due), it->due);
    j = json_pack("{s:s, s:s, s:s, s:s, s:s}", "id", it->id, "due", due, "level",
                  it->slot ? "slot" : "window", "channel",
                  it->channel == SA_CHANNEL_EMAIL ? "email" : "webhook", "state",
                  it->state ? it->state : "waiting");
    if (it->host[0])
        json_object_set_new(j, "host", json_string(it->host));
    if (it->group[0])
        json_object_set_new(j, "group", json_string(it->group));
    if (it->content)
        json_object_update(j, it->content);
    return j;
}

static enum sa_code
parse_cursor(const char *cursor, struct item *after, struct sa_err *err)
{
    char *end = NULL;

    memset(after, 0, sizeof(*after));
    after->due = INT64_MIN;
    if (!cursor || !*cursor)
        return SA_OK;
    after->due = strtoll(cursor, &end, 10);
    if (end == cursor || *end != '.' || (end[1] && !sa_layout_id_valid(end + 1)))
        return sa_fail_field(err, SA_EINVAL, "cursor",
                             "cursor is not one this server gave"); /* "T.": from T */
    snprintf(after->id, sizeof(after->id), "%s", end + 1);
    return SA_OK;
}

/* Appends w's items after *after to out, up to limit in all; the last one given becomes
 * *after. Returns 1 once the page is full (more may follow). */
static int
give(struct walk *w, struct item *after, long limit, json_t *out)
{
    if (w->count > 0) /* no items yet: no array either, and qsort takes none */
        qsort(w->items, w->count, sizeof(*w->items), by_due);
    for (size_t i = 0; i < w->count; i++) {
        if (by_due(&w->items[i], after) <= 0)
            continue;
        if ((long)json_array_size(out) == limit)
            return 1;
        json_array_append_new(out, item_json(&w->items[i]));
        *after = w->items[i];
    }
    return (long)json_array_size(out) == limit;
}

enum sa_code
tasklist_page(struct sa_nats *n, const struct sa_keyring *ring, int64_t from_ms, int64_t to_ms,
              long limit, const char *cursor, const struct tasklist_filter *f, int with_content,
              json_t *out, char next[TASKLIST_CURSOR_MAX], struct sa_err *err)
{
    struct walk w = {.full = with_content, .f = f};
    const char *group = f ? f->group : NULL;
    struct item after;
    int64_t step = n->layout.window_ms;
    enum sa_code rc = parse_cursor(cursor, &after, err);
    int full = 0;

    next[0] = '\0';
    if (rc != SA_OK)
        return rc;
    if (f && f->state && !tasklist_state_valid(f->state))
        return sa_fail_field(err, SA_EINVAL, "state", "state must be waiting, failed or cancelled");
    if (to_ms < from_ms)
        return sa_fail_field(err, SA_EINVAL, "to", "to is before from");
    if (to_ms - from_ms > TASKLIST_RANGE_MAX_MS)
        return sa_fail_field(err, SA_EINVAL, "to", "to is more than 31 days after from");
    for (int64_t win = sa_layout_window(&n->layout, after.due > from_ms ? after.due : from_ms);
         rc == SA_OK && !full && win <= to_ms; win += step) {
        walk_clear(&w);
        rc = read_window(n, ring, win, from_ms, to_ms, group, &w, err);
        if (rc == SA_OK)
            full = give(&w, &after, limit, out);
    }
    walk_clear(&w);
    free(w.items);
    if (rc == SA_OK && full)
        snprintf(next, TASKLIST_CURSOR_MAX, "%" PRId64 ".%s", after.due, after.id);
    return rc;
}
