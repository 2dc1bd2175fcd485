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

struct prepare;

/* Makes level (window, slot)'s durable in stream unless it exists (any thread). */
natsStatus prepare_durable(struct consumer *c, int shard, const char *stream, int64_t window,
                           int64_t slot);

/* Starts one thread per shard in c->served. */
enum sa_code prepare_start(struct prepare **out, struct consumer *c,
                           struct sa_err *err) SA_MUST_CHECK;

/* Whether the durable of (window, slot) in shard is made (any thread). */
int prepare_ready(struct prepare *pr, int shard, int64_t window, int64_t slot);

/* Stops and joins the threads (NULL: nothing). */
void prepare_stop(struct prepare *pr);

#endif
