/* Level marks as the fleet uses them (marks.h). */
#include <inttypes.h>

#include "log.h"
#include "marks.h"
#include "timeparse.h"

int
marks_slot_used(struct consumer *c, int shard, int64_t slot)
{
    struct sa_err err = {0};
    enum sa_code rc;

    if (!c->n->marks || slot + c->n->layout.slot_ms + MARKS_KEEP_MS <= sa_now_ms())
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
        *next = sa_layout_slot(l, now_ms - MARKS_KEEP_MS) - l->window_ms;
    for (; *next + l->slot_ms + MARKS_KEEP_MS <= now_ms; *next += l->slot_ms)
        if (sa_marks_drop(c->n->marks, shard, *next, &err) != SA_OK) {
            sa_log(SA_LOG_DEBUG, "level_mark_drop_failed", "shard=%d slot=%" PRId64 " error=\"%s\"",
                   shard, *next, err.msg);
            return;
        }
}
