/* Catch-up after an outage. The fleet shares a cursor in the meta bucket: every window before
 * it is known drained. Each pass looks at the windows from the cursor up to now, pulls any
 * that still hold tasks (oldest first, since targets are pulled in the order added) and moves
 * the cursor past windows that are empty and a full window in the past. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "log.h"
#include "pull.h"

#define PROBE_MAX_WINDOWS 512

int
targets_holds_tasks(struct puller *p, const char *filter)
{
    jsDirectGetMsgOptions o;
    natsMsg *m = NULL;
    natsStatus s;

    jsDirectGetMsgOptions_Init(&o);
    o.Sequence = 1;
    o.NextBySubject = filter;
    s = js_DirectGetMsg(&m, p->c->n->js, SA_TASKS_STREAM, NULL, &o);
    natsMsg_Destroy(m);
    return s != NATS_NOT_FOUND; /* on doubt, pull: an empty level costs one fetch */
}

static int
read_cursor(struct puller *p, int64_t *cursor, uint64_t *rev)
{
    kvEntry *e = NULL;

    if (kvStore_Get(&e, p->c->n->meta, "cursor") != NATS_OK)
        return -1;
    *cursor = strtoll(kvEntry_ValueString(e), NULL, 10);
    *rev = kvEntry_Revision(e);
    kvEntry_Destroy(e);
    return 0;
}

/* Pulls every slot of window w that started before now_ms and still holds tasks. */
static void
enter_slots(struct puller *p, int64_t w, int64_t now_ms)
{
    const struct sa_layout *l = &p->c->n->layout;
    char filter[SA_SUBJECT_MAX];
    struct sa_err err = {0};

    for (int64_t s = w; s < w + l->window_ms && s <= now_ms; s += l->slot_ms) {
        sa_layout_level_filter(filter, sizeof(filter), w, s);
        if (targets_find(p, w, s) < 0 && targets_holds_tasks(p, filter) && targets_add(p, w, s, &err) != SA_OK)
            sa_log(SA_LOG_WARN, "catch_up_failed", "slot=%" PRId64 " error=\"%s\"", s, err.msg);
    }
}

static void
probe_window(struct puller *p, int64_t w, int64_t now_ms)
{
    char filter[SA_SUBJECT_MAX];
    struct sa_err err = {0};

    if (w <= p->done_until_ms && targets_find(p, w, 0) >= 0)
        return; /* entered already and still pulled */
    sa_layout_window_all_filter(filter, sizeof(filter), w);
    if (targets_find(p, w, 0) < 0 && !targets_holds_tasks(p, filter))
        return;
    if (targets_add(p, w, 0, &err) != SA_OK)
        sa_log(SA_LOG_WARN, "catch_up_failed", "window=%" PRId64 " error=\"%s\"", w, err.msg);
    enter_slots(p, w, now_ms);
    if (w > p->done_until_ms)
        p->done_until_ms = w;
}

static void
advance_cursor(struct puller *p, int64_t cursor, uint64_t rev, int64_t to)
{
    char text[24];
    uint64_t nrev;

    snprintf(text, sizeof(text), "%" PRId64, to);
    if (kvStore_UpdateString(&nrev, p->c->n->meta, "cursor", text, rev) == NATS_OK)
        sa_log(SA_LOG_DEBUG, "cursor", "from=%" PRId64 " to=%" PRId64, cursor, to);
}

void
targets_probe(struct puller *p, int64_t now_ms)
{
    const struct sa_layout *l = &p->c->n->layout;
    int64_t cursor, w, current = sa_layout_window(l, now_ms), to;
    uint64_t rev;
    char filter[SA_SUBJECT_MAX];
    int n = 0;

    if (read_cursor(p, &cursor, &rev) != 0)
        return;
    to = cursor;
    for (w = cursor; w <= current && n < PROBE_MAX_WINDOWS; w += l->window_ms, n++) {
        probe_window(p, w, now_ms);
        sa_layout_window_all_filter(filter, sizeof(filter), w);
        if (to == w && w + 2 * l->window_ms < now_ms && targets_find(p, w, 0) < 0 && !targets_holds_tasks(p, filter))
            to = w + l->window_ms; /* empty and a whole window behind: nobody needs it again */
    }
    if (to != cursor)
        advance_cursor(p, cursor, rev, to);
}
