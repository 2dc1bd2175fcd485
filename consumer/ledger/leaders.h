/* The leader balance: fleet housekeeping that keeps the shards' leaders spread over the
 * servers after a failover moved them (issue 25.4). `sendat init --shards N --replicas 3` puts
 * shard k's leaders on the k-th server; a server that stops hands its leaderships to the
 * others and, back again, leads nothing. Once a turn, one member of the fleet (the meta
 * record "leaders", compare-and-set like the sweep's) reads the leaders of the shards' task
 * streams and claims buckets and, when a server leads more of either than its share while a
 * current peer leads fewer, asks one leader to step down to that peer. */
#ifndef LEADERS_H
#define LEADERS_H

#include "consumer.h"

struct leaders;

/* Starts the thread, which takes a turn every interval_ms (SENDAT_LEADER_BALANCE). interval_ms
 * 0: off, *out is NULL. SA_ENOMEM if the thread cannot start. */
enum sa_code leaders_start(struct leaders **out, struct consumer *c, int64_t interval_ms,
                           struct sa_err *err) SA_MUST_CHECK;

/* Stops the thread (a move in progress finishes within its bounds) and frees it. NULL is fine.
 * Call before the connection closes. */
void leaders_stop(struct leaders *l);

#endif
