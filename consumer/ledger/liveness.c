/* Liveness by an instance's own answers (see liveness.h): probes on sendat.alive.<instance>
 * and, per instance, since when they have gone unanswered. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "liveness.h"
#include "timeparse.h"

#define PROBE_WAIT_MS 250 /* a live member answers in milliseconds; no answer: unsure */
#define SETTLE_MS 5000    /* after our own reconnect, others may not have resubscribed yet */
#define SUSPECTS_MAX 64   /* instances whose probes go unanswered, with since when */
#define HEARD_KEPT 64     /* instances that answered, for rescues (members.c) */

struct liveness {
    struct sa_nats *n;
    pthread_mutex_t lock;
    long reconnects;    /* the connection's count at the last judgement */
    int64_t settled_ms; /* no one is judged dead before this (our reconnect) */
    struct suspect {
        char instance[LIVENESS_INSTANCE_MAX];
        int64_t fail_ms; /* first unanswered probe since its last answer */
        int64_t gone_ms; /* first "no responders" since its last answer or timeout (0: none) */
        int64_t last_ms; /* the latest probe */
    } suspects[SUSPECTS_MAX];
    char heard[HEARD_KEPT][LIVENESS_INSTANCE_MAX]; /* instances that answered our probes */
    int heard_next;
};

void
liveness_subject(char *out, size_t n, const char *instance)
{
    snprintf(out, n, "sendat.alive.%s", instance);
}

enum sa_code
liveness_new(struct liveness **out, struct sa_nats *n, struct sa_err *err)
{
    struct liveness *l = calloc(1, sizeof(*l));

    *out = NULL;
    if (!l)
        return sa_fail(err, SA_ENOMEM, "no memory for the liveness record");
    l->n = n;
    l->reconnects = atomic_load(n->reconnects);
    pthread_mutex_init(&l->lock, NULL);
    *out = l;
    return SA_OK;
}

/* PROBE_SILENT: someone listens on the subject but no answer came in time (hung, or slow);
 * PROBE_UNSURE: our own connection failed the request, which says nothing about the other. */
enum probe { PROBE_ANSWERED, PROBE_GONE, PROBE_SILENT, PROBE_UNSURE };

/* Asks instance whether it lives: the server says "no responders" once its connection is
 * gone. */
static enum probe
probe(struct liveness *l, const char *instance)
{
    char subject[96];
    natsMsg *reply = NULL;
    natsStatus s;

    if (natsConnection_Status(l->n->nc) != NATS_CONN_STATUS_CONNECTED)
        return PROBE_UNSURE;
    liveness_subject(subject, sizeof(subject), instance);
    s = natsConnection_Request(&reply, l->n->nc, subject, "", 0, PROBE_WAIT_MS);
    natsMsg_Destroy(reply);
    if (s == NATS_OK)
        return PROBE_ANSWERED;
    if (s == NATS_NO_RESPONDERS)
        return PROBE_GONE;
    if (s == NATS_TIMEOUT && natsConnection_Status(l->n->nc) == NATS_CONN_STATUS_CONNECTED)
        return PROBE_SILENT;
    return PROBE_UNSURE;
}

/* Our own reconnect: streaks seen before it say nothing (we were away, the others may still
 * be coming back). Under lock. */
static void
settle(struct liveness *l, int64_t now_ms)
{
    long r = atomic_load(l->n->reconnects);

    if (r == l->reconnects)
        return;
    l->reconnects = r;
    l->settled_ms = now_ms + SETTLE_MS;
    memset(l->suspects, 0, sizeof(l->suspects));
}

static struct suspect *
suspect_of(struct liveness *l, const char *instance, int add)
{
    struct suspect *oldest = &l->suspects[0];

    for (int i = 0; i < SUSPECTS_MAX; i++) {
        struct suspect *x = &l->suspects[i];

        if (x->instance[0] && !strcmp(x->instance, instance))
            return x;
        if (x->last_ms < oldest->last_ms)
            oldest = x;
    }
    if (!add)
        return NULL;
    memset(oldest, 0, sizeof(*oldest));
    snprintf(oldest->instance, sizeof(oldest->instance), "%s", instance);
    return oldest;
}

static int
heard_from(struct liveness *l, const char *instance)
{
    for (int i = 0; i < HEARD_KEPT; i++)
        if (!strcmp(l->heard[i], instance))
            return 1;
    return 0;
}

/* What a probe's answer means with those before it, under lock. Dead only by the instance's
 * own silence: "no responders" for LIVENESS_GRACE_MS with no answer and no listener between
 * (a member that lost its connection for a moment is back well before), or no answer of any
 * kind for LIVENESS_STALE_MS (a hung process). One answer clears all. */
static enum liveness_verdict
weigh(struct liveness *l, const char *instance, enum probe p, int64_t now_ms)
{
    struct suspect *x;

    if (p == PROBE_ANSWERED) {
        if ((x = suspect_of(l, instance, 0)))
            memset(x, 0, sizeof(*x));
        if (!heard_from(l, instance)) {
            snprintf(l->heard[l->heard_next], LIVENESS_INSTANCE_MAX, "%s", instance);
            l->heard_next = (l->heard_next + 1) % HEARD_KEPT;
        }
        return LIVENESS_ALIVE;
    }
    if (p == PROBE_UNSURE || now_ms < l->settled_ms)
        return LIVENESS_UNSURE;
    x = suspect_of(l, instance, 1);
    /* a streak starts, or one whose last probe is long past starts again */
    if (!x->last_ms || now_ms - x->last_ms > LIVENESS_STALE_MS) {
        x->fail_ms = now_ms;
        x->gone_ms = 0;
    }
    x->last_ms = now_ms;
    if (p == PROBE_SILENT)
        x->gone_ms = 0; /* someone listens there: connected, maybe slow */
    else if (!x->gone_ms)
        x->gone_ms = now_ms;
    if ((x->gone_ms && now_ms - x->gone_ms >= LIVENESS_GRACE_MS) ||
        now_ms - x->fail_ms >= LIVENESS_STALE_MS)
        return LIVENESS_DEAD;
    return LIVENESS_UNSURE;
}

enum liveness_verdict
liveness_judge(struct liveness *l, const char *instance)
{
    enum probe p;
    enum liveness_verdict v;

    pthread_mutex_lock(&l->lock);
    settle(l, sa_now_ms());
    pthread_mutex_unlock(&l->lock);
    p = probe(l, instance);
    pthread_mutex_lock(&l->lock);
    settle(l, sa_now_ms()); /* a reconnect while the probe was out */
    v = weigh(l, instance, p, sa_now_ms());
    pthread_mutex_unlock(&l->lock);
    return v;
}

int
liveness_answers(struct liveness *l, const char *instance)
{
    return probe(l, instance) == PROBE_ANSWERED;
}

int
liveness_heard(struct liveness *l, const char *instance)
{
    int heard;

    pthread_mutex_lock(&l->lock);
    heard = heard_from(l, instance);
    pthread_mutex_unlock(&l->lock);
    return heard;
}

int
liveness_suspected(struct liveness *l, const char *instance)
{
    int suspected;

    pthread_mutex_lock(&l->lock);
    suspected = suspect_of(l, instance, 0) != NULL;
    pthread_mutex_unlock(&l->lock);
    return suspected;
}

void
liveness_free(struct liveness *l)
{
    if (!l)
        return;
    pthread_mutex_destroy(&l->lock);
    free(l);
}
