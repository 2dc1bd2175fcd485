/* Whether a level holds tasks, asked of the broker without pulling: the puller's clock
 * (pull_targets.c) and its catch-up (pull_probe.c) both ask, and neither asks the other. */
#include <stdio.h>

#include "pull_lookup.h"

int
lookup_holds_tasks(struct puller *p, const struct served *sv, const char *filter)
{
    jsDirectGetMsgOptions o;
    natsMsg *m = NULL;
    natsStatus s;

    jsDirectGetMsgOptions_Init(&o);
    o.Sequence = 1;
    o.NextBySubject = filter;
    s = js_DirectGetMsg(&m, p->c->n->js, sv->stream, NULL, &o);
    natsMsg_Destroy(m);
    return s != NATS_NOT_FOUND; /* on doubt, pull: an empty level costs an open request */
}

enum level_state
lookup_level_undone(struct puller *p, const struct served *sv, int64_t w, int64_t s)
{
    jsConsumerInfo *ci = NULL;
    char durable[32];
    enum level_state state;

    sa_layout_durable(durable, sizeof(durable), w, s);
    if (js_GetConsumerInfo(&ci, p->c->n->js, sv->stream, durable, NULL, NULL) != NATS_OK)
        return LEVEL_UNKNOWN;
    state = ci->NumPending > 0 || ci->NumAckPending > 0 ? LEVEL_UNDONE : LEVEL_DONE;
    jsConsumerInfo_Destroy(ci);
    return state;
}

int
lookup_slot_holds_tasks(struct puller *p, const struct served *sv, int64_t w, int64_t s)
{
    char filter[SA_SUBJECT_MAX];
    enum level_state state = lookup_level_undone(p, sv, w, s);

    if (state != LEVEL_UNKNOWN)
        return state == LEVEL_UNDONE;
    sa_layout_level_filter(filter, sizeof(filter), sv->shard, w, s);
    return lookup_holds_tasks(p, sv, filter);
}
