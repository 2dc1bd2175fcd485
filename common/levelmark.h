/* Level marks (design notes, "Empty slots get no durable"): a key per slot level of each shard
 * that says something was published into the slot. The fleet makes a slot's durable only once
 * its mark exists, so a slot nobody booked into costs the broker nothing: on nats-server 2.9
 * making a level durable and pulling it first walk the subjects of every stored task (with a
 * million tasks waiting, one new slot every 10 s cost the server 15-20 % of a core), and a
 * work-queue stream refuses a durable that starts anywhere but at the stream's start.
 *
 * The rule that keeps every task read: whoever publishes into a slot level makes sure its mark
 * exists first (sa_marks_before_publish), and fails the publish if it cannot. The fleet looks
 * for the marks of the slots it takes up until 2 s after each ends; a mark is never changed,
 * and is purged a minute after its slot. Tasks stored before `sendat init` made the bucket
 * have no marks: marks decide nothing for a shard until those are gone ("since"). A task
 * published into a slot without a mark all the same (an older sendat, a hand-made publish) is
 * found by the catch-up probe once its window is no longer pulled: late, not lost. */
#ifndef SA_LEVELMARK_H
#define SA_LEVELMARK_H

#include <nats/nats.h>
#include <stdint.h>

#include "sa_err.h"
#include "layout.h"

#define SA_LEVELS_BUCKET "sendat_levels"

struct sa_marks;

/* Binds the levels bucket: *out NULL (and SA_OK) if it does not exist (a deployment whose
 * `sendat init` predates it: no marks, every slot gets its durable as before). */
enum sa_code sa_marks_open(struct sa_marks **out, jsCtx *js, struct sa_err *err) SA_MUST_CHECK;
void sa_marks_close(struct sa_marks *m);

/* Before publishing to subject: if it is a slot level, its mark exists once this returns
 * SA_OK (a process remembers the slots it made sure of while they end more than a lead and a
 * slot after now_ms), and *made (if not NULL) says whether this call made it. A window level,
 * or m NULL: nothing to do. Any failure must stop the publish. */
enum sa_code sa_marks_before_publish(struct sa_marks *m, const struct sa_layout *l,
                                     const char *subject, int64_t now_ms, int *made,
                                     struct sa_err *err) SA_MUST_CHECK;
/* The same for a subject the caller just wrote from (shard, slot), slot 0 a window level:
 * the producer's booking, which need not read its own subject back. */
enum sa_code sa_marks_before_publish_at(struct sa_marks *m, const struct sa_layout *l, int shard,
                                        int64_t slot, int64_t now_ms, int *made,
                                        struct sa_err *err) SA_MUST_CHECK;

/* Whether (shard, slot) has a mark: SA_OK, SA_ENOTFOUND, or the broker's failure. */
enum sa_code sa_marks_exists(struct sa_marks *m, int shard, int64_t slot,
                             struct sa_err *err) SA_MUST_CHECK;

/* When the bucket was made, the last sequence of shard's task stream (key "since.<shard>"):
 * tasks stored up to it were booked without marks, so marks decide nothing for the shard
 * until its stream's first sequence is past it. SA_ENOTFOUND if not written. */
enum sa_code sa_marks_since(struct sa_marks *m, int shard, uint64_t *since,
                            struct sa_err *err) SA_MUST_CHECK;
/* Writes shard's "since" as last unless one is written (`sendat init`). */
enum sa_code sa_marks_start(struct sa_marks *m, int shard, uint64_t last,
                            struct sa_err *err) SA_MUST_CHECK;

/* Deletes the mark of (shard, slot) with everything stored under its key, so no delete
 * marker stays (nothing there: nothing to do). */
enum sa_code sa_marks_drop(struct sa_marks *m, int shard, int64_t slot,
                           struct sa_err *err) SA_MUST_CHECK;

#endif
