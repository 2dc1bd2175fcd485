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

#define LEADERS_SERVERS_MAX 16
#define LEADERS_NAME_LEN 64

struct leaders;

/* A shard's task stream or claims bucket stream, as its info said. */
struct leaders_asset {
    char stream[80];
    char leader[LEADERS_NAME_LEN]; /* "" while it has none */
    int peers;                     /* followers */
    char peer[LEADERS_SERVERS_MAX][LEADERS_NAME_LEN];
    int settled; /* a leader, and every follower online and current */
};

/* The move among n assets of one kind (a[k]: shard k's), partner[k] being shard k's asset of
 * the other kind: an asset led by a server over its share (ceil(n / servers), servers: every
 * leader and follower named) to its follower that leads fewest below the share, and of those
 * one whose partner that follower leads (a shard's stream and bucket together, as `sendat init`
 * placed them). 1 with *which and to (LEADERS_NAME_LEN) set; 0 if the leaders are spread or no
 * follower can take one. */
int leaders_pick(const struct leaders_asset *a, const struct leaders_asset *partner, int n,
                 int *which, char *to);

/* Starts the thread, which takes a turn every interval_ms (SENDAT_LEADER_BALANCE). interval_ms
 * 0: off, *out is NULL. SA_ENOMEM if the thread cannot start. */
enum sa_code leaders_start(struct leaders **out, struct consumer *c, int64_t interval_ms,
                           struct sa_err *err) SA_MUST_CHECK;

/* Stops the thread (a move in progress finishes within its bounds) and frees it. NULL is fine.
 * Call before the connection closes. */
void leaders_stop(struct leaders *l);

#endif
