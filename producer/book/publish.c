/* The producer's single write per task (docs/architecture.md, "The wheel: levels on subjects":
 * scheduling costs one publish per task, nothing is indexed; a
 * grouped task adds its membership write, group.c), one
 * at a time or many in flight with PubAck bookkeeping. A task whose slot the fleet takes up
 * later than a slot from now is booked straight into that slot, so no consumer moves it; one
 * due sooner goes to its window level, and one already past due to the current window so it is
 * sent at once, never into a window the fleet has already drained.
 * An id the producer generated goes out without a Nats-Msg-Id (booking_msgid). A duplicate
 * PubAck under a task's own id is never taken as success: it is read back
 * (dupcheck.h), by the single publish at once, and for the many in flight by the caller from a
 * queue. */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dupcheck.h"
#include "group.h"
#include "publish.h"
#include "shutdown.h"
#include "tasklimit.h"
#include "timeparse.h"

#define FAILURES_KEPT 100

struct flying { /* a message in flight and the input line it came from; msg NULL: a free slot */
    const natsMsg *msg;
    long line;
};

struct dup { /* a duplicate PubAck waiting to be read back */
    long line;
    uint64_t seq;
    natsMsg *msg;
    struct dup *next;
};

struct publisher {
    struct sa_nats *n;
    jsCtx *js;
    pthread_mutex_t lock;
    long acked, duplicates, failed;
    char failures[FAILURES_KEPT][200];
    long failure_lines[FAILURES_KEPT]; /* the line of each failure kept */
    struct flying *flying;             /* open addressing by message address, at most half full */
    size_t n_flying, mask;
    struct dup *dups, **dups_tail;
    int published; /* a publish went out (publishing thread only) */
};

/* The task's message, once its level may take it: a slot level's mark exists first. */
static enum sa_code
build_msg(natsMsg **msg, struct sa_nats *n, const struct sa_task *t, const uint8_t *env, size_t len,
          int64_t now, struct sa_err *err)
{
    const struct sa_layout *l = &n->layout;
    char subject[SA_SUBJECT_MAX], sched[SA_I64_TEXT];
    int64_t at = t->due_ms > now ? t->due_ms : now, slot = sa_layout_book_slot(l, t->due_ms, now);
    int shard = sa_layout_shard_of(l, t->id);
    enum sa_code rc;
    natsStatus s;

    *msg = NULL;
    if (slot) /* no move later: one publish is the task's whole way down */
        sa_layout_slot_subject(subject, sizeof(subject), shard, sa_layout_window(l, at), slot,
                               t->id);
    else
        sa_layout_window_subject(subject, sizeof(subject), shard, sa_layout_window(l, at), t->id);
    if ((rc = sa_marks_before_publish_at(n->marks, l, shard, slot, now, NULL, err)) != SA_OK)
        return rc;
    sa_layout_i64(sched, now);
    s = natsMsg_Create(msg, subject, NULL, (const char *)env, (int)len);
    if (s == NATS_OK)
        s = natsMsgHeader_Set(*msg, "Sendat-Scheduled", sched);
    if (s == NATS_OK)
        return SA_OK;
    natsMsg_Destroy(*msg);
    *msg = NULL;
    return sa_nats_fail(err, s, 0, subject);
}

/* The Nats-Msg-Id a booking goes out with: a derived msgid if there is one, none for an id the
 * producer generated (unique by itself: no dedupe entry to pay for while the task waits; a
 * second copy of the same booking is sent once by the claim ledger), else the task's id (the
 * id the user gave, or a series occurrence's), so a re-run within the dedupe window is read
 * back instead of stored again. */
static const char *
booking_msgid(const struct sa_task *t, const char *msgid)
{
    if (msgid)
        return msgid;
    return t->id_generated ? NULL : t->id;
}

enum sa_code
publish_task(struct sa_nats *n, const struct sa_keyring *ring, const struct sa_task *t,
             const char *msgid, struct sa_err *err)
{
    uint8_t *env = NULL;
    size_t env_len = 0;
    natsMsg *msg = NULL;
    jsPubOptions po;
    jsPubAck *pa = NULL;
    jsErrCode jerr = 0;
    enum sa_code rc = sa_task_seal(ring, t, &env, &env_len, err);
    natsStatus s;

    if (rc != SA_OK)
        return rc;
    rc = build_msg(&msg, n, t, env, env_len, sa_now_ms(), err);
    jsPubOptions_Init(&po);
    po.MsgId = booking_msgid(t, msgid);
    if (rc != SA_OK)
        goto out;
    s = js_PublishMsg(&pa, n->js, msg, &po, &jerr);
    if (s != NATS_OK) {
        rc = sa_nats_fail(err, s, jerr, natsMsg_GetSubject(msg));
        goto out;
    }
    if (pa->Duplicate && !msgid && (rc = dupcheck_verify(n, ring, t, pa->Sequence, err)) == SA_OK)
        rc = SA_EEXIST; /* this very task was stored before */
out:
    jsPubAck_Destroy(pa);
    natsMsg_Destroy(msg);
    free(env);
    return rc;
}

/* The first slot to look at for msg (Fibonacci hashing of its address). */
static size_t
home(const struct publisher *p, const natsMsg *msg)
{
    return (size_t)((uint64_t)(uintptr_t)msg * 0x9E3779B97F4A7C15u >> 32) & p->mask;
}

/* Under the lock: the input line msg was published for, forgotten (0 if unknown). The slots
 * after it move up where their probe allows, so no later lookup stops at a hole. */
static long
take_line(struct publisher *p, const natsMsg *msg)
{
    size_t i, j;
    long line;

    if (!p->flying)
        return 0;
    i = home(p, msg);
    while (p->flying[i].msg != msg) {
        if (!p->flying[i].msg)
            return 0;
        i = (i + 1) & p->mask;
    }
    line = p->flying[i].line;
    for (j = (i + 1) & p->mask; p->flying[j].msg; j = (j + 1) & p->mask)
        if (((j - home(p, p->flying[j].msg)) & p->mask) >= ((j - i) & p->mask)) {
            p->flying[i] = p->flying[j];
            i = j;
        }
    p->flying[i].msg = NULL;
    p->n_flying--;
    return line;
}

/* Under the lock: a table of 2^bits slots holding what is in flight; 0, or -1 out of memory. */
static int
resize(struct publisher *p, unsigned bits)
{
    struct flying *old = p->flying;
    size_t old_cap = old ? p->mask + 1 : 0, i;

    p->flying = calloc((size_t)1 << bits, sizeof(*p->flying));
    if (!p->flying) {
        p->flying = old;
        return -1;
    }
    p->mask = ((size_t)1 << bits) - 1;
    for (size_t k = 0; k < old_cap; k++)
        if (old[k].msg) {
            for (i = home(p, old[k].msg); p->flying[i].msg; i = (i + 1) & p->mask)
                ;
            p->flying[i] = old[k];
        }
    free(old);
    return 0;
}

/* Under the lock. */
static void
fail_line(struct publisher *p, long line, const char *what)
{
    if (p->failed < FAILURES_KEPT) {
        snprintf(p->failures[p->failed], sizeof(p->failures[0]), "line %ld: %.180s", line, what);
        p->failure_lines[p->failed] = line;
    }
    p->failed++;
}

/* Under the lock: keeps msg (and its seq) for publisher_next_dup; 0, or -1 out of memory. */
static int
queue_dup(struct publisher *p, long line, uint64_t seq, natsMsg *msg)
{
    struct dup *d = calloc(1, sizeof(*d));

    if (!d)
        return -1;
    d->line = line;
    d->seq = seq;
    d->msg = msg;
    *p->dups_tail = d;
    p->dups_tail = &d->next;
    return 0;
}

static void
on_ack(jsCtx *js, natsMsg *msg, jsPubAck *pa, jsPubAckErr *pae, void *closure)
{
    struct publisher *p = closure;
    long line;

    (void)js;
    pthread_mutex_lock(&p->lock);
    line = take_line(p, msg);
    if (!strncmp(natsMsg_GetSubject(msg), "$KV.", 4)) {
        /* a group membership: not a task, counted only when it fails */
        if (pae)
            fail_line(p, line, pae->ErrText ? pae->ErrText : natsStatus_GetText(pae->Err));
    } else if (pae) {
        fail_line(p, line, pae->ErrText ? pae->ErrText : natsStatus_GetText(pae->Err));
    } else if (pa && pa->Duplicate) {
        p->duplicates++;
        if (queue_dup(p, line, pa->Sequence, msg) == 0)
            msg = NULL; /* the queue's now */
        else
            fail_line(p, line, "no memory to read back a duplicate PubAck");
    } else {
        p->acked++;
    }
    pthread_mutex_unlock(&p->lock);
    natsMsg_Destroy(msg); /* the handler owns the published message */
}

enum sa_code
publisher_new(struct publisher **out, struct sa_nats *n, int max_pending, struct sa_err *err)
{
    struct publisher *p = calloc(1, sizeof(*p));
    jsOptions o;
    natsStatus s;

    *out = NULL;
    if (!p)
        return sa_fail(err, SA_ENOMEM, "no memory for the publisher");
    pthread_mutex_init(&p->lock, NULL);
    p->dups_tail = &p->dups;
    jsOptions_Init(&o);
    o.PublishAsync.MaxPending = max_pending;
    o.PublishAsync.AckHandler = on_ack;
    o.PublishAsync.AckHandlerClosure = p;
    o.PublishAsync.StallWait = 30000;
    s = natsConnection_JetStream(&p->js, n->nc, &o);
    if (s != NATS_OK) {
        free(p);
        return sa_nats_fail(err, s, 0, "JetStream context");
    }
    p->n = n;
    *out = p;
    return SA_OK;
}

/* Remembers msg's line before it is published: its PubAck may come first. Past half full the
 * table grows to a quarter full; nats.c's max_pending bounds what is in flight, so it stops. */
static enum sa_code
fly(struct publisher *p, const natsMsg *msg, long line, struct sa_err *err)
{
    unsigned bits = 0;
    size_t i;
    int ok = 1;

    pthread_mutex_lock(&p->lock);
    if (2 * (p->n_flying + 1) > p->mask + 1) {
        while (((size_t)1 << bits) < 4 * (p->n_flying + 1))
            bits++;
        ok = resize(p, bits) == 0;
    }
    if (ok) {
        for (i = home(p, msg); p->flying[i].msg; i = (i + 1) & p->mask)
            ;
        p->flying[i].msg = msg;
        p->flying[i].line = line;
        p->n_flying++;
    }
    pthread_mutex_unlock(&p->lock);
    return ok ? SA_OK : sa_fail(err, SA_ENOMEM, "no memory for a publish in flight");
}

/* Publishes *msg asynchronously, remembering that it came from input line `line` until its
 * PubAck; takes *msg in every case. */
static enum sa_code
send_tracked(struct publisher *p, natsMsg **msg, jsPubOptions *po, long line, const char *what,
             struct sa_err *err)
{
    enum sa_code rc = fly(p, *msg, line, err);
    natsStatus s = rc == SA_OK ? js_PublishMsgAsync(p->js, msg, po) : NATS_OK; /* takes *msg */

    if (rc == SA_OK && s == NATS_OK)
        p->published = 1;

    if (rc == SA_OK && s != NATS_OK) {
        pthread_mutex_lock(&p->lock);
        take_line(p, *msg);
        pthread_mutex_unlock(&p->lock);
        rc = sa_nats_fail(err, s, 0, what);
    }
    natsMsg_Destroy(*msg);
    *msg = NULL;
    return rc;
}

enum sa_code
publisher_send(struct publisher *p, const struct sa_task *t, const uint8_t *env, size_t len,
               int64_t now, long line, struct sa_err *err)
{
    natsMsg *msg = NULL, *member = NULL;
    jsPubOptions po;
    enum sa_code rc = SA_OK;

    if (!t->cron) /* a full task stream takes nothing new; a series was admitted before */
        rc = tasklimit_admit(p->n, sa_layout_shard_of(&p->n->layout, t->id), len, err);
    if (rc == SA_OK) /* its level's mark first */
        rc = build_msg(&msg, p->n, t, env, len, now, err);

    /* A grouped task's membership goes before the task, so a group cancel that finds the task
     * stored finds its membership too. Ungrouped tasks pay nothing. */
    if (rc == SA_OK && t->group[0] && (rc = group_member_msg(&member, t, err)) == SA_OK)
        rc = send_tracked(p, &member, NULL, line, "publish group member", err);
    if (rc != SA_OK) {
        natsMsg_Destroy(msg);
        return rc;
    }
    jsPubOptions_Init(&po);
    po.MsgId = booking_msgid(t, NULL);
    return send_tracked(p, &msg, &po, line, "publish", err);
}

int
publisher_next_dup(struct publisher *p, long *line, uint64_t *seq, natsMsg **msg)
{
    struct dup *d;

    pthread_mutex_lock(&p->lock);
    d = p->dups;
    if (d) {
        p->dups = d->next;
        if (!p->dups)
            p->dups_tail = &p->dups;
    }
    pthread_mutex_unlock(&p->lock);
    if (!d)
        return 0;
    *line = d->line;
    *seq = d->seq;
    *msg = d->msg;
    free(d);
    return 1;
}

enum sa_code
publisher_finish(struct publisher *p, int64_t timeout_ms, struct sa_err *err)
{
    jsPubOptions po;
    natsStatus s;

    jsPubOptions_Init(&po);
    po.MaxWait = timeout_ms;
    s = js_PublishAsyncComplete(p->js, &po);
    return s == NATS_OK ? SA_OK : sa_nats_fail(err, s, 0, "waiting for the last PubAcks");
}

void
publisher_counts(struct publisher *p, long *acked, long *duplicates, long *failed)
{
    pthread_mutex_lock(&p->lock);
    *acked = p->acked;
    *duplicates = p->duplicates;
    *failed = p->failed;
    pthread_mutex_unlock(&p->lock);
}

const char *
publisher_failure(struct publisher *p, long i, long *line)
{
    long kept;

    pthread_mutex_lock(&p->lock);
    kept = p->failed < FAILURES_KEPT ? p->failed : FAILURES_KEPT;
    pthread_mutex_unlock(&p->lock);
    if (i < 0 || i >= kept)
        return NULL;
    if (line)
        *line = p->failure_lines[i];
    return p->failures[i];
}

void
publisher_free(struct publisher *p)
{
    uint64_t seq;
    natsMsg *msg;
    long line;

    if (!p)
        return;
    if (sa_js_quiesce(p->js, p->published, SA_QUIESCE_MS) != SA_OK) {
        jsCtx_Destroy(p->js);
        return; /* a PubAck handler still under way holds p: left to the exit */
    }
    jsCtx_Destroy(p->js);
    while (publisher_next_dup(p, &line, &seq, &msg))
        natsMsg_Destroy(msg);
    free(p->flying);
    pthread_mutex_destroy(&p->lock);
    free(p);
}
