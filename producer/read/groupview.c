/* The group views (see groupview.h). Members are read with an ordered consumer over the groups
 * bucket (values: due times; the entry's time: when it was booked), their states with
 * claimscan_states, and the figures summed per group in memory. The list orders groups by
 * their keys alone and reads the claims of one page's groups only: with 200,000 members in 140
 * groups a page of 10 took 2.3 s where reading every claim took 4.8 s. States: no claim or one
 * being sent is "waiting", "retrying" is "failed" (an attempt failed; another follows),
 * then "sent", "dead", "cancelled". */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "claimscan.h"
#include "groupview.h"
#include "timeparse.h"

#define WAIT_MS 5000 /* the longest wait for the next key */

enum state { WAITING, FAILED, SENT, DEAD, CANCELLED, STATES };

static const char *const state_names[STATES] = {"waiting", "failed", "sent", "dead", "cancelled"};

struct member {
    char group[SA_ID_MAX + 1];
    char id[SA_ID_MAX + 1];
    int64_t due, booked;
    enum state state;
};

struct members {
    struct member *m;
    size_t len, cap;
};

struct figures {
    const char *group;
    long count[STATES], tasks;
    int64_t first, last, next, booked;
    size_t lo, hi; /* its members: m[lo..hi) of the list sorted by group */
};

static enum state
state_of(enum sa_claim_state s)
{
    switch (s) {
    case SA_CLAIM_SENT:
        return SENT;
    case SA_CLAIM_RETRYING:
        return FAILED;
    case SA_CLAIM_DEAD:
        return DEAD;
    case SA_CLAIM_CANCELLED:
    case SA_CLAIM_SKIPPED:
        return CANCELLED;
    default:
        return WAITING;
    }
}

/* Adds the member of key (value: its due time; booked: when the entry was stored). */
static int
add(struct members *l, const char *key, const char *value, int64_t booked)
{
    const char *dot = strchr(key, '.');
    struct member *m;

    if (!dot || dot == key || !sa_layout_id_valid(dot + 1) || (size_t)(dot - key) > SA_ID_MAX)
        return 0;
    if (l->len == GROUPVIEW_MEMBERS_MAX)
        return -1;
    if (l->len == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 1024;
        void *p = realloc(l->m, cap * sizeof(*l->m));
        if (!p)
            return -1;
        l->m = p;
        l->cap = cap;
    }
    m = &l->m[l->len++];
    snprintf(m->group, sizeof(m->group), "%.*s", (int)(dot - key), key);
    snprintf(m->id, sizeof(m->id), "%s", dot + 1);
    m->due = strtoll(value ? value : "0", NULL, 10);
    m->booked = booked;
    m->state = WAITING;
    return 0;
}

/* The members of group (NULL: of every group), each "waiting" until read_states. */
static enum sa_code
read_members(struct sa_nats *n, const char *group, struct members *out, struct sa_err *err)
{
    kvStore *kv = NULL;
    kvWatcher *w = NULL;
    kvEntry *e = NULL;
    kvWatchOptions o;
    char filter[SA_ID_MAX + 4];
    natsStatus s = js_KeyValue(&kv, n->js, SA_GROUPS_BUCKET);
    enum sa_code rc = SA_OK;

    if (s != NATS_OK)
        return sa_nats_fail(err, s, 0, "bind " SA_GROUPS_BUCKET " (run sendat init)");
    kvWatchOptions_Init(&o);
    o.IgnoreDeletes = true;
    snprintf(filter, sizeof(filter), "%s.>", group ? group : "*");
    s = kvStore_Watch(&w, kv, filter, &o);
    while (s == NATS_OK && (s = kvWatcher_Next(&e, w, WAIT_MS)) == NATS_OK && e) {
        if (kvEntry_Operation(e) == kvOp_Put &&
            add(out, kvEntry_Key(e), kvEntry_ValueString(e), kvEntry_Created(e) / 1000000) != 0)
            rc = sa_fail(err, SA_ENOMEM, "more than %d group members to read",
                         GROUPVIEW_MEMBERS_MAX);
        kvEntry_Destroy(e);
        if (rc != SA_OK)
            break;
    }
    if (rc == SA_OK && s != NATS_OK)
        rc = sa_nats_fail(err, s, 0, "list groups");
    kvWatcher_Destroy(w);
    kvStore_Destroy(kv);
    return rc;
}

/* The newest GROUPVIEW_LIST_SCAN members the bucket stores, from the messages last - SCAN + 1
 * to last of its stream, through an ordered consumer that starts there (a member's key is
 * written once, so each message is one member). */
static enum sa_code
read_newest(struct sa_nats *n, uint64_t last, struct members *out, struct sa_err *err)
{
    static const char prefix[] = "$KV." SA_GROUPS_BUCKET ".";
    jsSubOptions so;
    natsSubscription *sub = NULL;
    natsMsg *m = NULL;
    jsMsgMetaData *meta = NULL;
    const char *op = NULL;
    natsStatus s;
    enum sa_code rc = SA_OK;

    jsSubOptions_Init(&so);
    so.Stream = "KV_" SA_GROUPS_BUCKET;
    so.Ordered = true;
    so.Config.DeliverPolicy = js_DeliverByStartSequence;
    so.Config.OptStartSeq = last - GROUPVIEW_LIST_SCAN + 1;
    s = js_SubscribeSync(&sub, n->js, "$KV." SA_GROUPS_BUCKET ".>", NULL, &so, NULL);
    while (s == NATS_OK && rc == SA_OK &&
           (s = natsSubscription_NextMsg(&m, sub, WAIT_MS)) == NATS_OK) {
        s = natsMsg_GetMetaData(&meta, m);
        if (s == NATS_OK && (natsMsgHeader_Get(m, "KV-Operation", &op) != NATS_OK || !op) &&
            add(out, natsMsg_GetSubject(m) + strlen(prefix), natsMsg_GetData(m),
                meta->Timestamp / 1000000) != 0)
            rc = sa_fail(err, SA_ENOMEM, "no memory for the group members");
        if (s == NATS_OK && (meta->Sequence.Stream >= last || meta->NumPending == 0))
            s = NATS_NOT_FOUND; /* read to the end */
        jsMsgMetaData_Destroy(meta);
        meta = NULL;
        natsMsg_Destroy(m);
        op = NULL;
    }
    natsSubscription_Destroy(sub);
    if (rc == SA_OK && s != NATS_NOT_FOUND && s != NATS_TIMEOUT) /* the last one expired */
        rc = sa_nats_fail(err, s, 0, "list groups");
    return rc;
}

/* Every group's members, or the newest GROUPVIEW_LIST_SCAN (*truncated = 1) when the bucket
 * stores more: a listing's work is bounded however many groups there are. */
static enum sa_code
read_listed(struct sa_nats *n, struct members *out, int *truncated, struct sa_err *err)
{
    jsStreamInfo *si = NULL;
    jsErrCode jerr = 0;
    natsStatus s = js_GetStreamInfo(&si, n->js, "KV_" SA_GROUPS_BUCKET, NULL, &jerr);
    uint64_t msgs = 0, last = 0;

    *truncated = 0;
    if (s != NATS_OK)
        return sa_nats_fail(err, s, jerr, "bind " SA_GROUPS_BUCKET " (run sendat init)");
    msgs = si->State.Msgs;
    last = si->State.LastSeq;
    jsStreamInfo_Destroy(si);
    if (msgs <= GROUPVIEW_LIST_SCAN)
        return read_members(n, NULL, out, err);
    *truncated = 1;
    return read_newest(n, last, out, err);
}

/* The states of the members m[lo..hi) of each of the count groups f, from their claims in one
 * pipelined pass (claims: how many members that is). */
static enum sa_code
read_states(struct sa_nats *n, struct member *m, const struct figures *f, size_t count,
            size_t claims, struct sa_err *err)
{
    const char **ids = NULL;
    struct member **of = NULL;
    enum sa_claim_state *states = NULL;
    enum sa_code rc = SA_OK;
    size_t k = 0;

    if (claims == 0)
        return SA_OK;
    ids = calloc(claims, sizeof(*ids));
    of = calloc(claims, sizeof(*of));
    states = calloc(claims, sizeof(*states));
    if (!ids || !of || !states)
        rc = sa_fail(err, SA_ENOMEM, "no memory to read %zu claims", claims);
    for (size_t g = 0; rc == SA_OK && g < count; g++)
        for (size_t i = f[g].lo; i < f[g].hi && k < claims; i++, k++) {
            ids[k] = m[i].id;
            of[k] = &m[i];
        }
    if (rc == SA_OK)
        rc = claimscan_states(n, ids, k, states, err);
    for (size_t i = 0; rc == SA_OK && i < k; i++)
        of[i]->state = state_of(states[i]);
    free(ids);
    free(of);
    free(states);
    return rc;
}

static int
by_group(const void *a, const void *b)
{
    return strcmp(((const struct member *)a)->group, ((const struct member *)b)->group);
}

static void
tally(struct figures *f, const struct member *m)
{
    if (!f->tasks || m->due < f->first)
        f->first = m->due;
    if (!f->tasks || m->due > f->last)
        f->last = m->due;
    if (m->booked > f->booked)
        f->booked = m->booked;
    if (m->state == WAITING && (!f->next || m->due < f->next))
        f->next = m->due;
    f->count[m->state]++;
    f->tasks++;
}

/* f's figures summed again from its members m[lo..hi) (once their states are read). */
static void
retally(struct figures *f, const struct member *m)
{
    *f = (struct figures){.group = f->group, .lo = f->lo, .hi = f->hi};
    for (size_t i = f->lo; i < f->hi; i++)
        tally(f, &m[i]);
}

static json_t *
time_json(int64_t ms)
{
    char at[40];

    if (!ms)
        return json_null();
    sa_time_format(at, sizeof(at), ms);
    return json_string(at);
}

static json_t *
figures_json(const struct figures *f)
{
    json_t *j = json_pack("{s:s, s:I}", "group", f->group, "tasks", (json_int_t)f->tasks);

    for (int s = 0; s < STATES; s++)
        json_object_set_new(j, state_names[s], json_integer(f->count[s]));
    json_object_set_new(j, "first_due", time_json(f->first));
    json_object_set_new(j, "last_due", time_json(f->last));
    json_object_set_new(j, "next_send", time_json(f->next));
    json_object_set_new(j, "booked", time_json(f->booked));
    return j;
}

static int
newest_first(const void *a, const void *b)
{
    const struct figures *x = a, *y = b;

    if (x->booked != y->booked)
        return (x->booked < y->booked) - (x->booked > y->booked);
    return strcmp(x->group, y->group);
}

/* A cursor "<booked_ms>.<group>" into *after (booked INT64_MAX: from the start). */
static enum sa_code
parse_cursor(const char *cursor, struct figures *after, struct sa_err *err)
{
    char *end = NULL;

    memset(after, 0, sizeof(*after));
    after->booked = INT64_MAX;
    after->group = "";
    if (!cursor || !*cursor)
        return SA_OK;
    after->booked = strtoll(cursor, &end, 10);
    if (end == cursor || *end != '.' || !sa_layout_id_valid(end + 1))
        return sa_fail_field(err, SA_EINVAL, "cursor", "cursor is not one this server gave");
    after->group = end + 1;
    return SA_OK;
}

/* Sums the members (sorted by group) into figures, one per group; returns how many. */
static size_t
sum_groups(struct members *l, struct figures *f)
{
    size_t k = 0;

    qsort(l->m, l->len, sizeof(*l->m), by_group);
    for (size_t i = 0; i < l->len; i++) {
        if (i == 0 || strcmp(l->m[i].group, l->m[i - 1].group) != 0)
            f[k++] = (struct figures){.group = l->m[i].group, .lo = i};
        tally(&f[k - 1], &l->m[i]);
        f[k - 1].hi = i + 1;
    }
    return k;
}

/* The page after cursor in f (count groups, newest first): *start and the number of groups,
 * up to limit and, past the first group, up to GROUPVIEW_PAGE_CLAIMS members; *claims gets
 * how many members the page has. */
static size_t
choose_page(const struct figures *f, size_t count, const struct figures *after, long limit,
            size_t *start, size_t *claims)
{
    size_t i = 0, given = 0;

    *claims = 0;
    while (i < count && newest_first(&f[i], after) <= 0)
        i++;
    *start = i;
    for (; i < count && (long)given < limit; i++, given++) {
        size_t size = f[i].hi - f[i].lo;

        if (given && *claims + size > GROUPVIEW_PAGE_CLAIMS)
            break;
        *claims += size;
    }
    return given;
}

enum sa_code
groupview_list(struct sa_nats *n, long limit, const char *cursor, json_t *out,
               char next[GROUPVIEW_CURSOR_MAX], int *truncated, struct sa_err *err)
{
    struct members l = {0};
    struct figures after, *f = NULL;
    size_t count = 0, given = 0, start = 0, claims = 0;
    enum sa_code rc = parse_cursor(cursor, &after, err);

    next[0] = '\0';
    if (rc == SA_OK)
        rc = read_listed(n, &l, truncated, err);
    if (rc == SA_OK && l.len && !(f = calloc(l.len, sizeof(*f))))
        rc = sa_fail(err, SA_ENOMEM, "no memory to sum %zu group members", l.len);
    if (rc == SA_OK && f) {
        count = sum_groups(&l, f);
        qsort(f, count, sizeof(*f), newest_first);
        given = choose_page(f, count, &after, limit, &start, &claims);
        rc = read_states(n, l.m, &f[start], given, claims, err); /* this page's claims only */
    }
    for (size_t i = start; rc == SA_OK && i < start + given; i++) {
        retally(&f[i], l.m);
        json_array_append_new(out, figures_json(&f[i]));
    }
    if (rc == SA_OK && given && start + given < count)
        snprintf(next, GROUPVIEW_CURSOR_MAX, "%" PRId64 ".%s", f[start + given - 1].booked,
                 f[start + given - 1].group);
    free(f);
    free(l.m);
    return rc;
}

static int
by_due(const void *a, const void *b)
{
    const struct member *x = a, *y = b;

    if (x->due != y->due)
        return (x->due > y->due) - (x->due < y->due);
    return strcmp(x->id, y->id);
}

/* The group's tasks after cursor "<due_ms>.<id>", up to limit, into tasks; the next cursor. */
static enum sa_code
task_page(struct members *l, long limit, const char *cursor, json_t *tasks, json_t **next,
          struct sa_err *err)
{
    struct member after = {.due = INT64_MIN};
    char *end = NULL, text[GROUPVIEW_CURSOR_MAX];
    size_t i;
    long given = 0;

    *next = json_null();
    if (cursor && *cursor) {
        after.due = strtoll(cursor, &end, 10);
        if (end == cursor || *end != '.' || !sa_layout_id_valid(end + 1))
            return sa_fail_field(err, SA_EINVAL, "cursor", "cursor is not one this server gave");
        snprintf(after.id, sizeof(after.id), "%s", end + 1);
    }
    qsort(l->m, l->len, sizeof(*l->m), by_due);
    for (i = 0; i < l->len && given < limit; i++) {
        if (by_due(&l->m[i], &after) <= 0)
            continue;
        json_array_append_new(tasks, json_pack("{s:s, s:o, s:s}", "id", l->m[i].id, "due",
                                               time_json(l->m[i].due), "state",
                                               state_names[l->m[i].state]));
        given++;
    }
    if (given == limit && i < l->len) {
        snprintf(text, sizeof(text), "%" PRId64 ".%s", l->m[i - 1].due, l->m[i - 1].id);
        *next = json_string(text);
    }
    return SA_OK;
}

enum sa_code
groupview_show(struct sa_nats *n, const char *group, long limit, const char *cursor, json_t **out,
               struct sa_err *err)
{
    struct members l = {0};
    struct figures f = {.group = group};
    json_t *tasks = NULL, *next = NULL;
    enum sa_code rc = SA_OK;

    *out = NULL;
    if (!sa_layout_id_valid(group))
        return sa_fail_field(err, SA_EINVAL, "group", "group name: 1-64 of A-Z a-z 0-9 _ -");
    rc = read_members(n, group, &l, err);
    if (rc == SA_OK && l.len == 0)
        rc = sa_fail(err, SA_ENOTFOUND, "no group %s (nobody booked it, or its members expired)",
                     group);
    f.hi = l.len;
    if (rc == SA_OK)
        rc = read_states(n, l.m, &f, 1, l.len, err);
    for (size_t i = 0; rc == SA_OK && i < l.len; i++)
        tally(&f, &l.m[i]);
    tasks = json_array();
    if (rc == SA_OK)
        rc = task_page(&l, limit, cursor, tasks, &next, err);
    if (rc == SA_OK) {
        *out = figures_json(&f);
        json_object_set_new(
            *out, "cancel",
            json_pack("{s:I, s:I, s:I}", "will_cancel",
                      (json_int_t)(f.count[WAITING] + f.count[FAILED] + f.count[DEAD]),
                      "already_cancelled", (json_int_t)f.count[CANCELLED], "already_sent",
                      (json_int_t)f.count[SENT]));
        json_object_set_new(*out, "members", tasks);
        json_object_set_new(*out, "next_cursor", next);
    } else {
        json_decref(tasks);
    }
    free(l.m);
    return rc;
}
