/* Level marks as the fleet uses them (pull_marks.h). */
#include <inttypes.h>

#include "log.h"
#include "pull_marks.h"
#include "timeparse.h"

/* Whether marks decide for shard yet (pull_marks.h, struct marks_gate). */
static int
in_force(struct consumer *c, struct marks_gate *g, int shard, const char *stream)
{
    jsStreamInfo *si = NULL;
    uint64_t since = 0;
    int64_t now = sa_now_ms();

    if (g->in_force || now < g->next_ms)
        return g->in_force;
    g->next_ms = now + MARKS_GATE_EVERY_MS;
    if (sa_marks_since(c->n->marks, shard, &since, NULL) != SA_OK ||
        js_GetStreamInfo(&si, c->n->js, stream, NULL, NULL) != NATS_OK)
        return 0;
    g->in_force = si->State.Msgs == 0 || si->State.FirstSeq > since;
    jsStreamInfo_Destroy(si);
    if (g->in_force)
        sa_log(SA_LOG_INFO, "level_marks_in_force", "stream=%s since=%" PRIu64, stream, since);
    return g->in_force;
}

int
marks_slot_used(struct consumer *c, struct marks_gate *g, int shard, const char *stream,
                int64_t slot)
{
    struct sa_err err = {0};
    enum sa_code rc;

    if (!c->n->marks || slot + c->n->layout.slot_ms + c->cfg.marks_keep_ms <= sa_now_ms() ||
        !in_force(c, g, shard, stream))
        return 1;
    rc = sa_marks_exists(c->n->marks, shard, slot, &err);
    if (rc != SA_OK && rc != SA_ENOTFOUND)
        sa_log(SA_LOG_DEBUG, "level_mark_unknown", "shard=%d slot=%" PRId64 " error=\"%s\"", shard,
               slot, err.msg);
    return rc != SA_ENOTFOUND;
}

void
marks_drop_over(struct consumer *c, int shard, int64_t *next, int64_t now_ms)
{
    const struct sa_layout *l = &c->n->layout;
    struct sa_err err = {0};

    if (!c->n->marks)
        return;
    if (!*next)
        *next = sa_layout_slot(l, now_ms - c->cfg.marks_keep_ms) - l->window_ms;
    for (; *next + l->slot_ms + c->cfg.marks_keep_ms <= now_ms; *next += l->slot_ms)
        if (sa_marks_drop(c->n->marks, shard, *next, &err) != SA_OK) {
            sa_log(SA_LOG_DEBUG, "level_mark_drop_failed", "shard=%d slot=%" PRId64 " error=\"%s\"",
                   shard, *next, err.msg);
            return;
        }
}
