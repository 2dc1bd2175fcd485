/* Level durables made ahead of their time. Making a replicated durable costs the cluster a
 * Raft group: 0.3-0.7 s on a loaded 3-node loopback cluster, and 5 s (a timeout) for some
 * while a node is down, so the puller must not make them on its own thread while tasks wait
 * (three shards of 2 s slots took it 1.5 s of every 2). One thread per served shard makes the
 * durables of the levels starting within PREPARE_AHEAD_SLOTS slots; the puller asks whether a
 * level's durable is made and, for a level still to start, waits for it instead. */
#ifndef PREPARE_H
#define PREPARE_H

#include <nats/nats.h>

#include "consumer.h"

#define PREPARE_AHEAD_SLOTS 3
/* A slot found empty is looked at until this long after its end (pull_prepare.c: make) */
#define EMPTY_FINAL_MS 2000

enum prepare_state {
    PREPARE_NOT_YET,        /* not made (or not lately): the puller makes it if it must */
    PREPARE_MADE,           /* made lately */
    PREPARE_EMPTY,          /* a slot nobody marked (pull_marks.h): no durable; looked at again */
    PREPARE_EMPTY_FOR_GOOD, /* and still none EMPTY_FINAL_MS after the slot's end */
};

struct prepare;

/* Makes level (window, slot)'s durable in stream unless it exists (any thread). */
natsStatus prepare_durable(struct consumer *c, int shard, const char *stream, int64_t window,
                           int64_t slot);

/* Starts one thread per shard in c->served. */
enum sa_code prepare_start(struct prepare **out, struct consumer *c,
                           struct sa_err *err) SA_MUST_CHECK;

/* Whether the durable of (window, slot) in shard is made, or the slot empty (any thread). */
enum prepare_state prepare_ready(struct prepare *pr, int shard, int64_t window, int64_t slot);

/* Stops and joins the threads (NULL: nothing). */
void prepare_stop(struct prepare *pr);

#endif
