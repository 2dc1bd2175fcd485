/* The chain of a recurring series (invariant 4): before an occurrence is acked, its successor
 * is published with the deterministic Msg-Id "<next_ms>-<series>", so the chain neither breaks
 * (published before the ack) nor forks (a second publish is dropped as a duplicate). */
#ifndef CONSUMER_SERIES_H
#define CONSUMER_SERIES_H

#include "consumer.h"
#include "held.h"

/* Publishes the next occurrence of h's series unless it is the last, past --until, or the
 * series was cancelled. SA_OK when there is nothing to do; on failure the caller naks h. */
enum sa_code series_continue(struct consumer *c, struct held *h, struct sa_err *err) SA_MUST_CHECK;

/* The next occurrence of t's series as a new task in *out, or *out = NULL when the series ends
 * at t (its count, --until, or no later fire). Pure: no broker. SA_EINVAL for an index or
 * not-after that cannot move on (tests/fuzz/fuzz_task.c calls it on every decoded series). */
enum sa_code series_next_task(const struct sa_task *t, struct sa_task **out,
                              struct sa_err *err) SA_MUST_CHECK;

/* Whether the task (or its series) is in the cancel map. */
int series_cancelled(struct consumer *c, const struct sa_task *t);

/* Whether t is an occurrence of a paused series (`pause.<series>` in the cancel map): due
 * while paused, it is skipped, and the chain goes on. */
int series_paused(struct consumer *c, const struct sa_task *t);

#endif
