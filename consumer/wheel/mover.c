/* Moves a not-yet-due task one level down without a round trip per task: the copy is
 * published asynchronously and the original acked from the PubAck handler, only once the copy
 * is stored (invariant 1). A sync publish per move held the puller to about 4,300 moves a
 * second; pipelined it is the broker's async publish rate. The lock is held while an
 * original is acked, so once mover_wait has closed the mover no ack can race the puller's
 * subscriptions being destroyed. */
#include <stdlib.h>

#include "asyncpub.h"
#include "jspull.h"
#include "log.h"
#include "mover.h"

#define MOVE_ACK_WAIT_MS 10000
#define STALL_WAIT_MS 5000
#define MOVES_IN_FLIGHT 4096
#define FULL_NAK_MS 5000 /* a full stream frees room only as tasks are sent: not at once */

struct mover {
    struct consumer *c;
    struct asyncpub pub; /* published copy -> its original */
    natsConnection *nc;  /* acks go to the original's reply subject */
    struct counters *k;
};

/* Under pub's lock, so once mover_wait has closed the mover no ack can race the puller's
 * subscriptions being destroyed. */
static void
on_done(void *arg, void *val, natsMsg *msg, jsPubAck *pa, jsPubAckErr *pae)
{
    struct mover *m = arg;
    natsMsg *orig = val;

    (void)pa;
    if (pae && sa_nats_is_full(pae->ErrCode, pae->ErrText)) {
        /* the stream is past even the consumers' headroom: the original stays, unacked */
        atomic_fetch_add(&m->k->stream_full, 1);
        sa_log(SA_LOG_WARN, "move_refused_full", "subject=%s error=\"%s\" again_in_ms=%d",
               natsMsg_GetSubject(msg), pae->ErrText, FULL_NAK_MS);
        sa_jspull_ack(m->nc, orig, SA_JSPULL_NAK, FULL_NAK_MS);
    } else if (pae) {
        sa_log(SA_LOG_WARN, "move_failed", "subject=%s error=\"%s\"", natsMsg_GetSubject(msg),
               pae->ErrText ? pae->ErrText : natsStatus_GetText(pae->Err));
        sa_jspull_ack(m->nc, orig, SA_JSPULL_NAK, 0);
    } else {
        /* a duplicate is stored too: the first stands */
        if (sa_jspull_ack(m->nc, orig, SA_JSPULL_ACK, 0) != NATS_OK)
            sa_log(SA_LOG_WARN, "move_ack_failed", "subject=%s", natsMsg_GetSubject(msg));
        atomic_fetch_add(
            sa_layout_is_park(natsMsg_GetSubject(msg), NULL) ? &m->k->parked : &m->k->moved, 1);
    }
    natsMsg_Destroy(orig);
}

enum sa_code
mover_new(struct mover **out, struct consumer *c, struct sa_err *err)
{
    struct mover *m = calloc(1, sizeof(*m));
    enum sa_code rc;

    *out = NULL;
    if (!m)
        return sa_fail(err, SA_ENOMEM, "no memory for the mover");
    m->c = c;
    m->nc = c->n->nc;
    m->k = &c->counters;
    rc = asyncpub_init(&m->pub, c->n->nc, MOVES_IN_FLIGHT, STALL_WAIT_MS, on_done, m,
                       "JetStream context for moves", err);
    if (rc != SA_OK) {
        free(m);
        return rc;
    }
    *out = m;
    return SA_OK;
}

enum sa_code
mover_send(struct mover *m, natsMsg **orig, const char *subject, const char *msgid,
           const struct relay_meta *meta, struct sa_err *err)
{
    natsMsg *copy = NULL;
    jsPubOptions po;
    enum sa_code rc = relay_build(m->c, &copy, subject, natsMsg_GetData(*orig),
                                  natsMsg_GetDataLength(*orig), meta, err);

    if (rc != SA_OK)
        return rc;
    jsPubOptions_Init(&po);
    po.MsgId = msgid;
    po.MaxWait = MOVE_ACK_WAIT_MS;
    rc = asyncpub_send(&m->pub, &copy, &po, *orig, subject, err);
    if (rc == SA_OK) {
        *orig = NULL;
        return SA_OK;
    }
    natsMsg_Destroy(copy);
    return rc;
}

int
mover_wait(struct mover *m, int64_t timeout_ms)
{
    return asyncpub_close(&m->pub, timeout_ms); /* the puller's subscriptions close next */
}

static void
drop_original(void *arg, void *val)
{
    (void)arg;
    natsMsg_Destroy(val); /* unacked: redelivered to the fleet */
}

void
mover_free(struct mover *m)
{
    if (!m)
        return;
    asyncpub_take_all(&m->pub, drop_original, NULL);
    asyncpub_destroy(&m->pub, m); /* frees m */
}
