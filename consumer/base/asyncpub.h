/* Asynchronous JetStream publishes whose PubAcks find what each was for: a JetStream context
 * of its own, a map from each published message to the caller's value, and one lock. The claim
 * queue (claimq.c: claim writes) and the mover (mover.c: moves down a level) are built on it. */
#ifndef ASYNCPUB_H
#define ASYNCPUB_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include <nats/nats.h>

#include "sa_err.h"
#include "seqset.h"

/* A PubAck (pa) or its error (pae) for the message published with val; called on a nats.c
 * thread with the publisher's lock held, once per value, never after asyncpub_close. */
typedef void (*asyncpub_fn)(void *arg, void *val, natsMsg *msg, jsPubAck *pa, jsPubAckErr *pae);

struct asyncpub {
    jsCtx *js;
    pthread_mutex_t lock;
    struct seqset flying; /* published message address -> val */
    int closed;           /* no more callbacks */
    atomic_int published; /* a publish went out: nats.c's map of pending ones exists */
    asyncpub_fn done;
    void *arg;
};

/* At most max_pending in flight (a publish past it waits up to stall_ms). */
enum sa_code asyncpub_init(struct asyncpub *ap, natsConnection *nc, int64_t max_pending,
                           int64_t stall_ms, asyncpub_fn done, void *arg, const char *what,
                           struct sa_err *err) SA_MUST_CHECK;

/* Publishes *msg with po and remembers val for its PubAck. SA_OK: *msg is taken (NULL). An
 * error: nothing is remembered and *msg is still the caller's. */
enum sa_code asyncpub_send(struct asyncpub *ap, natsMsg **msg, jsPubOptions *po, void *val,
                           const char *what, struct sa_err *err) SA_MUST_CHECK;

/* Publishes not answered yet. */
size_t asyncpub_pending(struct asyncpub *ap);

/* Hands every value in flight that pick(val) chooses to done at once as unanswered (pa and pae
 * NULL); should its PubAck come after all, it finds nothing. For publishes that went out on a
 * connection that broke (their server was killed): their answers may never come. Returns how
 * many it handed over. */
size_t asyncpub_give_up(struct asyncpub *ap, int (*pick)(void *val));

/* Waits up to timeout_ms for the PubAcks, then stops calling done; returns how many were left. */
int asyncpub_close(struct asyncpub *ap, int64_t timeout_ms);

/* Stops calling done and hands every value still in flight to take(arg, val). */
void asyncpub_take_all(struct asyncpub *ap, void (*take)(void *arg, void *val), void *arg);

/* Ends the JetStream context and frees owner (the heap block ap sits in); values still in
 * flight must have been taken. No PubAck handler runs after it (sa_js_quiesce); should one
 * still be under way after 5 s, owner is freed by sa_nats_shutdown instead (shutdown.h). */
void asyncpub_destroy(struct asyncpub *ap, void *owner);

#endif
