/* The in-memory end of the timing wheel: a min-heap by due time of tasks this consumer holds
 * (only what is due within its ack wait), fed from the puller thread through an inbox. */
#ifndef WHEEL_H
#define WHEEL_H

#include <stddef.h>
#include <stdint.h>

#include <nats/nats.h>

#include "held.h"
#include "sa_err.h"

struct wheel;

typedef void (*wheel_wakeup_fn)(void *arg);

/* A wheel whose held messages are answered (in progress, nak at release) through nc, and
 * which calls wake(arg) when a task is posted. */
enum sa_code wheel_new(struct wheel **out, natsConnection *nc, wheel_wakeup_fn wake, void *arg,
                       struct sa_err *err) SA_MUST_CHECK;

/* Naks and frees whatever is still held (the fleet gets it at once). */
void wheel_free(struct wheel *w);

enum wheel_post {
    WHEEL_TAKEN, /* the wheel owns h now */
    WHEEL_HELD,  /* a message with the same h->seq is held already */
    WHEEL_NOMEM, /* out of memory */
};

/* Any thread: hands h to the wheel and wakes the owner, taking ownership (WHEEL_TAKEN);
 * otherwise takes nothing. WHEEL_HELD is a redelivery of a task this process still holds or
 * sends: the copy it holds settles it. */
enum wheel_post wheel_post(struct wheel *w, struct held *h);

/* Any thread: wakes the owner thread (to look at a flag such as consumer.reload). */
void wheel_wake(struct wheel *w);

/* Tasks held or waiting in the inbox (any thread). */
size_t wheel_count(struct wheel *w);

/* Owner thread only from here on. Moves the inbox into the heap; SA_ENOMEM if it cannot grow
 * (the tasks stay in the inbox and are retried next time). */
enum sa_code wheel_take_inbox(struct wheel *w, struct sa_err *err) SA_MUST_CHECK;

/* Owner thread: puts a popped task back, to fire at fire_ms (a provider limit deferred it;
 * marks it deferred). */
enum sa_code wheel_defer(struct wheel *w, struct held *h, int64_t fire_ms,
                         struct sa_err *err) SA_MUST_CHECK;

/* The earliest fire time held, or INT64_MAX. */
int64_t wheel_next_due(const struct wheel *w);

/* The earliest held task, left in place, or NULL. */
const struct held *wheel_peek(const struct wheel *w);

/* Removes and returns the earliest held task if it is due at now_ms, else NULL. */
struct held *wheel_pop_due(struct wheel *w, int64_t now_ms);

/* Marks in progress every held task not touched for interval_ms, so the ack wait does not
 * expire while it waits for its due time. */
void wheel_touch(struct wheel *w, int64_t now_ms, int64_t interval_ms);

/* Naks every held task (SIGTERM: the fleet takes them over at once). Returns how many. */
size_t wheel_release_all(struct wheel *w);

/* Destroys h's message without acking (after ack/nak), frees h and forgets its sequence in
 * its wheel, and its id among those claimed here (wheel_claiming). */
void held_free(struct held *h);

/* Owner thread, before h's first "sending" claim write: the wheel counts h's task id among the
 * ids this process claims, until held_free. A "sending" claim that names this very process
 * is a send under way here only while a held task counted for its id lives; else the copy
 * that wrote it is gone (its answer was lost, and it was handed back), and the claim is stale. */
void wheel_claiming(struct held *h);

/* Owner thread: 1 if a held task other than h is counted for h's task id (another copy of the
 * task is claimed or sent here), or if that cannot be known (a count that found no memory, a
 * task posted to no wheel); 0 if no copy but h is. */
int wheel_claimed_elsewhere(const struct held *h);

#endif
