/* Catch-up after an outage. The fleet shares a cursor per shard in the meta bucket ("cursor",
 * "cursor.<k>"): every window of the shard before it is known drained. Each pass looks at the
 * windows from the cursor up to now, pulls any that still hold tasks (oldest first, since targets
 * are pulled in the order added) and moves the cursor past windows that are empty and a full window
 * in the past. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "log.h"
#include "pull_lookup.h"
#include "pull.h"

#define PROBE_MAX_WINDOWS 512
/* a window over this long gets no new tasks (members' clocks agree) */
#define QUIET_AFTER_MS 60000

/* Whether window w holds tasks on any level. A window over for a minute and found empty is
 * remembered as such: looking again every probe cost the server a scan each time. */
static int
window_holds_tasks(struct puller *p, struct served *sv, int64_t w, int64_t now_ms)
{
    const struct sa_layout *l = &p->c->n->layout;
    char filter[SA_SUBJECT_MAX];
    int holds;

    for (int i = 0; i < PULL_QUIET_WINDOWS; i++)
        if (sv->quiet[i] == w)
            return 0;
    sa_layout_window_all_filter(filter, sizeof(filter), sv->shard, w);
    holds = lookup_holds_tasks(p, sv, filter);
    if (!holds && w + l->window_ms + QUIET_AFTER_MS <= now_ms)
        sv->quiet[sv->quiet_next++ % PULL_QUIET_WINDOWS] = w;
    return holds;
}

static int
read_cursor(struct puller *p, const char *key, int64_t *cursor, uint64_t *rev)
{
    kvEntry *e = NULL;

    if (kvStore_Get(&e, p->c->n->meta, key) != NATS_OK)
        return -1;
    *cursor = strtoll(kvEntry_ValueString(e), NULL, 10);
    *rev = kvEntry_Revision(e);
    kvEntry_Destroy(e);
    return 0;
}

/* Pulls every slot of window w that started before now_ms and still holds tasks. */
static void
enter_slots(struct puller *p, struct served *sv, int64_t w, int64_t now_ms)
{
    const struct sa_layout *l = &p->c->n->layout;
    struct sa_err err = {0};

    for (int64_t s = w; s < w + l->window_ms && s <= now_ms; s += l->slot_ms)
        if (targets_find(p, sv, w, s) < 0 && lookup_slot_holds_tasks(p, sv, w, s) &&
            targets_add(p, sv, w, s, &err) != SA_OK)
            sa_log(SA_LOG_WARN, "catch_up_failed", "stream=%s slot=%" PRId64 " error=\"%s\"",
                   sv->stream, s, err.msg);
}

/* A window is entered once: its level pulled, and its slots that began already if they hold
 * tasks. A window pulled already (the current one, at start) is first looked at as a whole,
 * so a member starting late in an empty window does not scan the stream once per slot. */
static void
probe_window(struct puller *p, struct served *sv, int64_t w, int64_t now_ms)
{
    struct sa_err err = {0};
    int pulled = targets_find(p, sv, w, 0) >= 0;

    if (w <= sv->done_until_ms && pulled)
        return; /* entered already and still pulled */
    if (!window_holds_tasks(p, sv, w, now_ms)) {
        if (pulled && w > sv->done_until_ms)
            sv->done_until_ms =
                w; /* nothing in any slot of it yet: slots to come are added by the clock */
        return;
    }
    if (targets_add(p, sv, w, 0, &err) != SA_OK)
        sa_log(SA_LOG_WARN, "catch_up_failed", "stream=%s window=%" PRId64 " error=\"%s\"",
               sv->stream, w, err.msg);
    enter_slots(p, sv, w, now_ms);
    if (w > sv->done_until_ms)
        sv->done_until_ms = w;
}

static void
advance_cursor(struct puller *p, const char *key, int64_t cursor, uint64_t rev, int64_t to)
{
    char text[24];
    uint64_t nrev;

    snprintf(text, sizeof(text), "%" PRId64, to);
    if (kvStore_UpdateString(&nrev, p->c->n->meta, key, text, rev) == NATS_OK)
        sa_log(SA_LOG_DEBUG, "cursor", "key=%s from=%" PRId64 " to=%" PRId64, key, cursor, to);
}

static void
probe_shard(struct puller *p, struct served *sv, int64_t now_ms)
{
    const struct sa_layout *l = &p->c->n->layout;
    int64_t cursor, w, current = sa_layout_window(l, now_ms), to;
    char key[32];
    uint64_t rev;
    int n = 0;

    sa_layout_meta_key(key, sizeof(key), "cursor", sv->shard);
    if (read_cursor(p, key, &cursor, &rev) != 0)
        return;
    to = cursor;
    for (w = cursor; w <= current && n < PROBE_MAX_WINDOWS; w += l->window_ms, n++) {
        probe_window(p, sv, w, now_ms);
        if (to == w && w + 2 * l->window_ms < now_ms && targets_find(p, sv, w, 0) < 0 &&
            !window_holds_tasks(p, sv, w, now_ms))
            to = w + l->window_ms; /* empty and a whole window behind: nobody needs it again */
    }
    if (to != cursor)
        advance_cursor(p, key, cursor, rev, to);
}

void
targets_probe(struct puller *p, int64_t now_ms)
{
    for (int k = 0; k < p->nsv; k++)
        probe_shard(p, &p->sv[k], now_ms);
}
