/* Whether another instance of the fleet lives, by its own answers only: a request on its
 * liveness subject, sendat.alive.<instance>, and what the answers before it said. Dead is "no
 * responders" (the server knows no connection listening there) for LIVENESS_GRACE_MS on end
 * with no answer and no listener between, or no answer of any kind for LIVENESS_STALE_MS (a
 * hung process); one answer clears it, and after our own reconnect nobody is judged for 5 s.
 * Nothing any client writes into a bucket enters into it (issue 24.2, docs/architecture.md
 * "Holders are processes"). Used by the puller thread and the main thread: what the probes
 * found is kept under a lock. */
#ifndef LIVENESS_H
#define LIVENESS_H

#include <stddef.h>

#include "sa_err.h"
#include "natsconn.h"

#define LIVENESS_INSTANCE_MAX 24
#define LIVENESS_GRACE_MS 3000  /* "no responders" this long, no answer between: dead */
#define LIVENESS_STALE_MS 20000 /* no answer at all this long: hung, dead */

struct liveness;

enum liveness_verdict {
    LIVENESS_ALIVE,  /* it answered */
    LIVENESS_UNSURE, /* not (yet) dead: ask again later, never guess */
    LIVENESS_DEAD,
};

enum sa_code liveness_new(struct liveness **out, struct sa_nats *n,
                          struct sa_err *err) SA_MUST_CHECK;

/* "sendat.alive.<instance>" into out. */
void liveness_subject(char *out, size_t n, const char *instance);

/* 1 if instance answers a probe now (nothing is recorded). */
int liveness_answers(struct liveness *l, const char *instance);

/* Probes instance and weighs the answer with those before it. */
enum liveness_verdict liveness_judge(struct liveness *l, const char *instance);

/* 1 if instance answered one of our probes (of the last 64 instances that did). */
int liveness_heard(struct liveness *l, const char *instance);

/* 1 while instance's probes go unanswered and it is not dead yet. */
int liveness_suspected(struct liveness *l, const char *instance);

void liveness_free(struct liveness *l);

#endif
