/* See asyncpub.h. A value is found again from its PubAck by the address of the message the
 * library hands back, which is the one published; it is put in the map before the publish,
 * since the PubAck may come first. */
#include <stdlib.h>
#include <string.h>

#include "asyncpub.h"
#include "natsconn.h"
#include "shutdown.h"

static void
on_ack(jsCtx *js, natsMsg *msg, jsPubAck *pa, jsPubAckErr *pae, void *closure)
{
    struct asyncpub *ap = closure;
    void *val;

    (void)js;
    pthread_mutex_lock(&ap->lock);
    val = ap->closed ? NULL : seqset_take(&ap->flying, (uint64_t)(uintptr_t)msg);
    if (val)
        ap->done(ap->arg, val, msg, pa, pae);
    pthread_mutex_unlock(&ap->lock);
    natsMsg_Destroy(msg);
}

enum sa_code
asyncpub_init(struct asyncpub *ap, natsConnection *nc, int64_t max_pending, int64_t stall_ms,
              asyncpub_fn done, void *arg, const char *what, struct sa_err *err)
{
    jsOptions o;
    natsStatus s;

    memset(ap, 0, sizeof(*ap));
    jsOptions_Init(&o);
    o.PublishAsync.AckHandler = on_ack;
    o.PublishAsync.AckHandlerClosure = ap;
    o.PublishAsync.MaxPending = max_pending;
    o.PublishAsync.StallWait = stall_ms;
    s = natsConnection_JetStream(&ap->js, nc, &o);
    if (s != NATS_OK)
        return sa_nats_fail(err, s, 0, what);
    pthread_mutex_init(&ap->lock, NULL);
    ap->done = done;
    ap->arg = arg;
    return SA_OK;
}

enum sa_code
asyncpub_send(struct asyncpub *ap, natsMsg **msg, jsPubOptions *po, void *val, const char *what,
              struct sa_err *err)
{
    uint64_t key = (uint64_t)(uintptr_t)*msg;
    enum seqset_put put;
    natsStatus s;

    pthread_mutex_lock(&ap->lock);
    put = seqset_put(&ap->flying, key, val);
    pthread_mutex_unlock(&ap->lock);
    if (put != SEQSET_ADDED)
        return sa_fail(err, SA_ENOMEM, "no memory for a publish in flight (%s)", what);
    s = js_PublishMsgAsync(ap->js, msg, po); /* takes *msg on success */
    if (s == NATS_OK) {
        atomic_store(&ap->published, 1);
        return SA_OK;
    }
    pthread_mutex_lock(&ap->lock);
    seqset_remove(&ap->flying, key);
    pthread_mutex_unlock(&ap->lock);
    return sa_nats_fail(err, s, 0, what);
}

size_t
asyncpub_pending(struct asyncpub *ap)
{
    size_t n;

    pthread_mutex_lock(&ap->lock);
    n = ap->flying.len;
    pthread_mutex_unlock(&ap->lock);
    return n;
}

size_t
asyncpub_give_up(struct asyncpub *ap, int (*pick)(void *val))
{
    uint64_t *keys = NULL;
    size_t n = 0;

    pthread_mutex_lock(&ap->lock);
    if (!ap->closed && ap->flying.len)
        keys = malloc(ap->flying.len * sizeof(*keys));
    for (size_t i = 0; keys && i < ap->flying.cap; i++) /* first the keys: taking moves slots */
        if (ap->flying.slot[i].key && pick(ap->flying.slot[i].val))
            keys[n++] = ap->flying.slot[i].key;
    for (size_t i = 0; i < n; i++)
        ap->done(ap->arg, seqset_take(&ap->flying, keys[i]), NULL, NULL, NULL);
    pthread_mutex_unlock(&ap->lock);
    free(keys);
    return n;
}

int
asyncpub_close(struct asyncpub *ap, int64_t timeout_ms)
{
    jsPubOptions po;
    int left;

    jsPubOptions_Init(&po);
    po.MaxWait = timeout_ms > 0 ? timeout_ms : 1; /* 0 would be no deadline */
    js_PublishAsyncComplete(ap->js, &po);
    pthread_mutex_lock(&ap->lock); /* waits for a callback under way */
    left = (int)ap->flying.len;
    ap->closed = 1;
    pthread_mutex_unlock(&ap->lock);
    return left;
}

void
asyncpub_take_all(struct asyncpub *ap, void (*take)(void *arg, void *val), void *arg)
{
    pthread_mutex_lock(&ap->lock);
    ap->closed = 1;
    for (size_t i = 0; i < ap->flying.cap; i++)
        if (ap->flying.slot[i].key)
            take(arg, ap->flying.slot[i].val);
    seqset_free(&ap->flying);
    pthread_mutex_unlock(&ap->lock);
}

struct owned {
    struct asyncpub *ap;
    void *owner;
};

static void
release(struct asyncpub *ap, void *owner)
{
    pthread_mutex_destroy(&ap->lock);
    free(owner);
}

static void
release_late(void *p)
{
    struct owned *o = p;

    release(o->ap, o->owner);
    free(o);
}

void
asyncpub_destroy(struct asyncpub *ap, void *owner)
{
    struct owned *o;

    pthread_mutex_lock(&ap->lock);
    ap->closed = 1; /* a PubAck still on its way finds nothing */
    seqset_free(&ap->flying);
    pthread_mutex_unlock(&ap->lock);
    if (sa_js_quiesce(ap->js, atomic_load(&ap->published), SA_QUIESCE_MS) == SA_OK) {
        jsCtx_Destroy(ap->js);
        release(ap, owner);
        return;
    }
    jsCtx_Destroy(ap->js);
    o = malloc(sizeof(*o));
    if (!o)
        return; /* left to the exit: never freed under a running handler */
    o->ap = ap;
    o->owner = owner;
    sa_free_late(release_late, o);
}
